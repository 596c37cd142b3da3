//! What a run reports: per-flow and per-port tables, the time series, and `summary.json`.
//!
//! Every table is columnar so the bindings hand each column to numpy whole. `summary.json` holds
//! what is one value per run (totals, fairness, conservation); the per-flow and per-port rows
//! are only in the tables, so the summary stays small at any number of flows.
//! The schema is documented in `docs/results.md`.

use crate::engine::to_secs;
use crate::qdisc::DropReason;
use crate::sim::{FlowRole, Simulation};
use crate::stats::jain_index;
use crate::stats::series::VarSeries;
use crate::stats::window::Snapshot;
use serde_json::{json, Map, Value};

mod drops;
mod phases;
mod rates;

/// One column of a table.
#[derive(Clone, Debug)]
pub enum Column {
    F64(Vec<f64>),
    U64(Vec<u64>),
    Str(Vec<String>),
    /// Category codes into a list of names (ports, flows, variable names in long series).
    Cat {
        codes: Vec<u32>,
        categories: Vec<String>,
    },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::Str(v) => v.len(),
            Column::Cat { codes, .. } => codes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn json(&self, row: usize) -> Value {
        match self {
            Column::F64(v) if v[row].is_finite() => json!(v[row]),
            Column::F64(_) => Value::Null,
            Column::U64(v) => json!(v[row]),
            Column::Str(v) => json!(v[row]),
            Column::Cat { codes, categories } => categories
                .get(codes[row] as usize)
                .map_or(Value::Null, |name| json!(name)),
        }
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub columns: Vec<(String, Column)>,
}

impl Table {
    fn push(&mut self, name: &str, column: Column) {
        if let Column::Cat { codes, categories } = &column {
            debug_assert!(
                codes.iter().all(|&c| (c as usize) < categories.len()),
                "column `{name}` names a code past its {} categories",
                categories.len()
            );
        }
        self.columns.push((name.to_string(), column));
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, c)| c.len())
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// Rows as JSON objects, keys in column order.
    pub fn records(&self) -> Vec<Value> {
        (0..self.rows())
            .map(|r| {
                let mut m = Map::new();
                for (name, col) in &self.columns {
                    m.insert(name.clone(), col.json(r));
                }
                Value::Object(m)
            })
            .collect()
    }
}

/// Everything a finished (or paused) run reports.
pub struct Results {
    pub summary: Value,
    pub flows: Table,
    pub ports: Table,
    pub queue_series: Table,
    pub flow_series: Table,
    pub qdisc_state: Table,
    pub traces: Table,
    pub transfers: Table,
    pub drops: Table,
    pub class_series: Table,
    pub phase_classes: Table,
    pub phase_ports: Table,
}

fn f64s(it: impl Iterator<Item = f64>) -> Column {
    Column::F64(it.collect())
}
fn u64s(it: impl Iterator<Item = u64>) -> Column {
    Column::U64(it.collect())
}
fn strs(it: impl Iterator<Item = String>) -> Column {
    Column::Str(it.collect())
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

fn flow_table(sim: &Simulation, delta: &Snapshot) -> Table {
    let (start, stop) = sim.window().span(sim.now());
    let info = sim.flows();
    let st = &delta.flows;
    let inside = sim.in_network_by_flow();
    let node = |i: u32| sim.nodes()[i as usize].name.clone();
    let active = |i: usize| {
        let end = info[i].stop.unwrap_or(stop).min(stop);
        to_secs(end.saturating_sub(info[i].start.max(start)))
    };
    let idx = || 0..info.len();
    let mut t = Table::default();
    t.push("flow", strs(info.iter().map(|f| f.name.clone())));
    t.push(
        "role",
        strs(info.iter().map(|f| f.role.as_str().to_string())),
    );
    t.push("kind", strs(info.iter().map(|f| f.kind.clone())));
    t.push("src", strs(info.iter().map(|f| node(f.src))));
    t.push("dst", strs(info.iter().map(|f| node(f.dst))));
    t.push("start_s", f64s(info.iter().map(|f| to_secs(f.start))));
    t.push(
        "stop_s",
        f64s(info.iter().map(|f| f.stop.map_or(f64::NAN, to_secs))),
    );
    t.push("offered_pkts", u64s(st.iter().map(|s| s.offered_pkts)));
    t.push("offered_bytes", u64s(st.iter().map(|s| s.offered_bytes)));
    t.push("delivered_pkts", u64s(st.iter().map(|s| s.delivered_pkts)));
    t.push(
        "delivered_bytes",
        u64s(st.iter().map(|s| s.delivered_bytes)),
    );
    t.push("dropped_pkts", u64s(st.iter().map(|s| s.dropped_total())));
    t.push("dropped_bytes", u64s(st.iter().map(|s| s.dropped_bytes)));
    t.push("in_network_pkts", u64s(inside.into_iter()));
    t.push("goodput_bytes", u64s(st.iter().map(|s| s.goodput_bytes)));
    t.push(
        "goodput_bps",
        f64s(idx().map(|i| ratio(st[i].goodput_bytes as f64 * 8.0, active(i)))),
    );
    t.push(
        "throughput_bps",
        f64s(idx().map(|i| ratio(st[i].delivered_bytes as f64 * 8.0, active(i)))),
    );
    t.push(
        "loss_rate",
        f64s(
            st.iter()
                .map(|s| ratio(s.dropped_total() as f64, s.offered_pkts as f64)),
        ),
    );
    let delivered_delay = |s: &crate::stats::FlowStats, ps: u64| {
        if s.delivered_pkts > 0 {
            to_secs(ps)
        } else {
            f64::NAN
        }
    };
    t.push(
        "mean_delay_s",
        f64s(
            st.iter()
                .map(|s| ratio(s.delay_sum_ps as f64 / 1e12, s.delivered_pkts as f64)),
        ),
    );
    t.push(
        "min_delay_s",
        f64s(st.iter().map(|s| delivered_delay(s, s.delay_min_ps))),
    );
    t.push(
        "max_delay_s",
        f64s(st.iter().map(|s| delivered_delay(s, s.delay_max_ps))),
    );
    t.push(
        "mean_rtt_s",
        f64s(st.iter().map(|s| ratio(s.rtt_sum, s.rtt_count as f64))),
    );
    t.push("rtt_samples", u64s(st.iter().map(|s| s.rtt_count)));
    t.push("retransmits", u64s(st.iter().map(|s| s.retransmits)));
    t.push("timeouts", u64s(st.iter().map(|s| s.timeouts)));
    t.push(
        "fast_retransmits",
        u64s(st.iter().map(|s| s.fast_retransmits)),
    );
    t.push("ecn_reactions", u64s(st.iter().map(|s| s.ecn_reactions)));
    t.push("aborted", u64s(st.iter().map(|s| u64::from(s.aborted))));
    t.push(
        "completion_s",
        f64s(st.iter().map(|s| s.completed_at.map_or(f64::NAN, to_secs))),
    );
    t
}

fn port_table(sim: &Simulation, delta: &Snapshot) -> Table {
    let ports = sim.ports();
    let ws = &delta.ports;
    let (start, stop) = sim.window().span(sim.now());
    let elapsed = to_secs(stop - start);
    let per_time = |x: u128| {
        if elapsed > 0.0 {
            x as f64 / 1e12 / elapsed
        } else {
            f64::NAN
        }
    };
    let node = |i: u32| sim.nodes()[i as usize].name.clone();
    let mut t = Table::default();
    t.push("port", strs(ports.iter().map(|p| p.name.clone())));
    t.push("from", strs(ports.iter().map(|p| node(p.from))));
    t.push("to", strs(ports.iter().map(|p| node(p.to))));
    t.push(
        "qdisc",
        strs(ports.iter().map(|p| p.qdisc.name().to_string())),
    );
    t.push("rate_bps", u64s(ports.iter().map(|p| p.link.rate_bps)));
    t.push("arrivals_pkts", u64s(ws.iter().map(|s| s.arrivals_pkts)));
    t.push("arrivals_bytes", u64s(ws.iter().map(|s| s.arrivals_bytes)));
    t.push(
        "departures_pkts",
        u64s(ws.iter().map(|s| s.departures_pkts)),
    );
    t.push(
        "departures_bytes",
        u64s(ws.iter().map(|s| s.departures_bytes)),
    );
    t.push("drops_pkts", u64s(ws.iter().map(|s| s.drops_total())));
    t.push(
        "drops_bytes",
        u64s(ws.iter().map(|s| s.drops_bytes.iter().sum())),
    );
    for reason in DropReason::ALL {
        let name = format!("drops_{}", reason.as_str());
        t.push(
            &name,
            u64s(ws.iter().map(|s| s.drops_pkts[reason as usize])),
        );
    }
    t.push("marks", u64s(ws.iter().map(|s| s.marks.iter().sum())));
    t.push(
        "utilisation",
        f64s(delta.busy_ps.iter().map(|&b| per_time(b))),
    );
    t.push(
        "throughput_bps",
        f64s(
            ws.iter()
                .map(|s| ratio(s.departures_bytes as f64 * 8.0, elapsed)),
        ),
    );
    t.push(
        "mean_queue_pkts",
        f64s(ws.iter().map(|s| per_time(s.queue_pkt_ps))),
    );
    t.push(
        "std_queue_pkts",
        f64s(ws.iter().map(|s| {
            let mean = per_time(s.queue_pkt_ps);
            (per_time(s.queue_sq_pkt_ps) - mean * mean).max(0.0).sqrt()
        })),
    );
    t.push(
        "mean_queue_bytes",
        f64s(ws.iter().map(|s| per_time(s.queue_byte_ps))),
    );
    t.push(
        "mean_device_pkts",
        f64s(ws.iter().map(|s| per_time(s.device_pkt_ps))),
    );
    t.push(
        "mean_system_pkts",
        f64s(
            ws.iter()
                .zip(&delta.busy_ps)
                .map(|(s, &b)| per_time(s.queue_pkt_ps + s.device_pkt_ps + b)),
        ),
    );
    t.push(
        "mean_wait_s",
        f64s(
            ws.iter()
                .map(|s| ratio(s.wait_ps as f64 / 1e12, s.departures_pkts as f64)),
        ),
    );
    t.push(
        "max_queue_pkts",
        u64s(ports.iter().map(|p| p.stats.max_queue_pkts)),
    );
    t.push(
        "max_queue_bytes",
        u64s(ports.iter().map(|p| p.stats.max_queue_bytes)),
    );
    t.push(
        "max_device_pkts",
        u64s(ports.iter().map(|p| p.stats.max_device_pkts)),
    );
    t.push(
        "queued_pkts",
        u64s(ports.iter().map(|p| p.qdisc.len_packets() as u64)),
    );
    t.push(
        "device_pkts",
        u64s(ports.iter().map(|p| p.device.len() as u64)),
    );
    t.push(
        "in_transit_pkts",
        u64s(ports.iter().map(|p| u64::from(p.in_transit))),
    );
    t
}

fn var_table(series: VarSeries, owner: &str, owners: Vec<String>) -> Table {
    let mut t = Table::default();
    t.push("time_s", Column::F64(series.time));
    t.push(
        owner,
        Column::Cat {
            codes: series.owner,
            categories: owners,
        },
    );
    t.push(
        "var",
        Column::Cat {
            codes: series.var,
            categories: series.names,
        },
    );
    t.push("value", Column::F64(series.value));
    t
}

/// Collects the results. The series are moved out of the simulation, so call this once, at
/// the end of the run.
pub fn collect(sim: &mut Simulation, scenario_name: &str, seed: u64) -> Results {
    let now = sim.snapshot();
    let delta = sim.window().delta(now);
    let flows = flow_table(sim, &delta);
    let ports = port_table(sim, &delta);
    let mut summary = summary(sim, &delta, scenario_name, seed);
    let (drops, drop_counts) = drops::drop_table(sim);
    summary["drop_events"] = drop_counts;
    summary["drop_causes"] = drops::port_causes(sim);
    let port_names: Vec<String> = sim.ports().iter().map(|p| p.name.clone()).collect();
    let flow_names: Vec<String> = sim.flows().iter().map(|f| f.name.clone()).collect();
    let transfers = transfer_table(sim);
    let (phase_classes, phase_ports) = phases::phase_tables(sim);
    let (qs, fs, state, traces) = sim.take_series();
    let mut queue_series = Table::default();
    queue_series.push("time_s", Column::F64(qs.time));
    queue_series.push(
        "port",
        Column::Cat {
            codes: qs.port,
            categories: port_names.clone(),
        },
    );
    queue_series.push("packets", Column::U64(qs.packets));
    queue_series.push("bytes", Column::U64(qs.bytes));
    queue_series.push("arrival_bps", Column::F64(qs.arrival_bps));
    queue_series.push("departure_bps", Column::F64(qs.departure_bps));
    let mut flow_series = Table::default();
    flow_series.push("time_s", Column::F64(fs.time));
    flow_series.push(
        "flow",
        Column::Cat {
            codes: fs.flow,
            categories: flow_names.clone(),
        },
    );
    flow_series.push("delivered_pkts", Column::U64(fs.counters.delivered_pkts));
    flow_series.push("delivered_bytes", Column::U64(fs.counters.delivered_bytes));
    flow_series.push("goodput_bytes", Column::U64(fs.counters.goodput_bytes));
    flow_series.push("dropped_pkts", Column::U64(fs.counters.dropped_pkts));
    flow_series.push("rtt_sum_s", Column::F64(fs.counters.rtt_sum_s));
    flow_series.push("rtt_samples", Column::U64(fs.counters.rtt_samples));
    flow_series.push("retransmits", Column::U64(fs.counters.retransmits));
    Results {
        summary,
        flows,
        ports,
        queue_series,
        flow_series,
        qdisc_state: var_table(state, "port", port_names),
        traces: var_table(traces, "flow", flow_names),
        transfers,
        drops,
        class_series: rates::class_series_table(sim),
        phase_classes,
        phase_ports,
    }
}

/// One row per finished transfer of a workload (`docs/results.md`, transfers).
fn transfer_table(sim: &mut Simulation) -> Table {
    let rows = sim.take_transfers().rows;
    let node = |i: u32| sim.nodes()[i as usize].name.clone();
    let flow_names: Vec<String> = sim.flows().iter().map(|f| f.name.clone()).collect();
    let class = |f: u32| sim.flows()[f as usize].kind.clone();
    let secs_or_nan = |t: Option<crate::engine::Time>| t.map_or(f64::NAN, to_secs);
    let mut t = Table::default();
    let codes = rows.iter().map(|r| r.flow).collect();
    t.push(
        "flow",
        Column::Cat {
            codes,
            categories: flow_names,
        },
    );
    t.push("class", strs(rows.iter().map(|r| class(r.flow))));
    t.push("conn", u64s(rows.iter().map(|r| r.conn as u64)));
    t.push("session", u64s(rows.iter().map(|r| r.session as u64)));
    t.push("page", u64s(rows.iter().map(|r| r.page)));
    t.push("client", strs(rows.iter().map(|r| node(r.client))));
    t.push("server", strs(rows.iter().map(|r| node(r.server))));
    t.push("bytes", u64s(rows.iter().map(|r| r.bytes)));
    t.push("request_s", f64s(rows.iter().map(|r| to_secs(r.requested))));
    t.push(
        "first_byte_s",
        f64s(rows.iter().map(|r| secs_or_nan(r.first_byte))),
    );
    t.push(
        "last_byte_s",
        f64s(rows.iter().map(|r| secs_or_nan(r.last_byte))),
    );
    t.push(
        "completed_s",
        f64s(rows.iter().map(|r| secs_or_nan(r.completed))),
    );
    let duration = |r: &crate::stats::transfers::TransferRecord| {
        secs_or_nan(r.last_byte) - to_secs(r.requested)
    };
    t.push("transfer_time_s", f64s(rows.iter().map(duration)));
    t.push("retransmits", u64s(rows.iter().map(|r| r.retransmits)));
    t.push("timeouts", u64s(rows.iter().map(|r| r.timeouts)));
    t.push("aborted", u64s(rows.iter().map(|r| r.aborted as u64)));
    t
}

/// The run as a whole: one value per key, whatever the number of flows and ports (their rows
/// are the `flows` and `ports` tables).
fn summary(sim: &Simulation, delta: &Snapshot, name: &str, seed: u64) -> Value {
    let violations = sim.conservation_violations();
    let data_goodput: Vec<f64> = sim
        .flows()
        .iter()
        .zip(&delta.flows)
        .filter(|(f, _)| f.role == FlowRole::Data)
        .map(|(_, s)| s.goodput_bytes as f64)
        .collect();
    let offered: u64 = delta.flows.iter().map(|s| s.offered_pkts).sum();
    let delivered: u64 = delta.flows.iter().map(|s| s.delivered_pkts).sum();
    let dropped: u64 = delta.flows.iter().map(|s| s.dropped_total()).sum();
    let (start, stop) = sim.window().span(sim.now());
    json!({
        "schema_version": 2,
        "fairgate_version": env!("CARGO_PKG_VERSION"),
        "scenario": name,
        "seed": seed,
        "time_s": to_secs(sim.now()),
        "duration_s": to_secs(sim.end()),
        "events": sim.events_processed(),
        "packet_hops": sim.packet_hops(),
        "window": { "start_s": to_secs(start), "end_s": to_secs(stop) },
        "totals": {
            "offered_pkts": offered,
            "delivered_pkts": delivered,
            "dropped_pkts": dropped,
            "in_network_pkts": sim.in_network_by_flow().iter().sum::<u64>(),
        },
        // Jain's index has no value over no flows (0/0): null, not a "perfectly fair" 1.
        "fairness": {
            "jain_goodput_data_flows": (!data_goodput.is_empty()).then(|| jain_index(&data_goodput))
        },
        "valid": violations.is_empty() && sim.failure().is_none(),
        "failure": sim.failure(),
        "conservation": { "ok": violations.is_empty(), "violations": violations },
    })
}
