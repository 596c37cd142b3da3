//! What the engine measures while it runs: the periodic samples, the snapshots at the edges
//! of the measurement window and of the traffic phases, and the conservation check.

use super::Simulation;
use crate::config::error::ScenarioError;
use crate::engine::{to_secs, Event};
use crate::qdisc::DropReason;
use crate::stats::log_room::{BYTES_PER_DROP_EVENT, BYTES_PER_TRACE_ROW, BYTES_PER_TRANSFER};
use crate::stats::phases::PhaseLog;
use crate::stats::window::{Snapshot, Window};

const MIB: f64 = 1024.0 * 1024.0;

/// One log that grows with the run: the field that keeps it, what to set it to instead, and
/// the bytes it holds now.
struct GrowingLog {
    field: String,
    what: &'static str,
    fix: &'static str,
    bytes: f64,
}

impl Simulation {
    pub(super) fn sample(&mut self) {
        self.log_sample(to_secs(self.now));
        self.check_log_room();
        if let Some(interval) = self.sample_interval {
            let next = self.now.saturating_add(interval);
            if next <= self.end {
                self.events.schedule(next, Event::Sample);
            }
        }
    }

    /// Stops the run when the logs no estimate could size (every window change, every drop,
    /// every finished transfer) outgrow the room the scenario left of its memory limit,
    /// naming the largest one's field.
    fn check_log_room(&mut self) {
        let Some(room) = &self.log_room else {
            return;
        };
        let mut logs: Vec<GrowingLog> = Vec::new();
        if room.traces_every_change {
            let rows = self.series.get_mut().traces.time.len();
            logs.push(GrowingLog {
                field: "simulation.trace_every_change".into(),
                what: "window-change trace",
                fix: "false",
                bytes: rows as f64 * BYTES_PER_TRACE_ROW,
            });
        }
        if room.drops_all {
            logs.push(GrowingLog {
                field: "simulation.record_drops".into(),
                what: "drop log",
                fix: "a count N",
                bytes: self.drop_log.rows.len() as f64 * BYTES_PER_DROP_EVENT,
            });
        }
        if let Some(field) = &room.transfers {
            let rows: usize = self.agents.iter().map(|a| a.agent.transfers_held()).sum();
            logs.push(GrowingLog {
                field: field.clone(),
                what: "transfers table",
                fix: "false",
                bytes: rows as f64 * BYTES_PER_TRANSFER,
            });
        }
        let total: f64 = logs.iter().map(|log| log.bytes).sum();
        if total <= room.bytes {
            return;
        }
        let largest = logs
            .into_iter()
            .max_by(|a, b| a.bytes.total_cmp(&b.bytes))
            .expect("a log is kept");
        let message = format!(
            "the {} reached {:.1} MiB at {:.3} s (all logs {:.1} MiB), more than the {:.1} MiB \
             the scenario leaves of {}; expected a shorter run, {} = {}, {}",
            largest.what,
            largest.bytes / MIB,
            to_secs(self.now),
            total / MIB,
            room.bytes / MIB,
            room.limit.words(),
            largest.field,
            largest.fix,
            room.limit.raise()
        );
        let cause = ScenarioError::new(largest.field, message);
        self.failure = Some(cause.to_string());
        self.failure_cause = Some(cause);
    }

    /// Packets of each flow still inside the network (queued, in service or on a link).
    pub fn in_network_by_flow(&self) -> Vec<u64> {
        let mut counts = vec![0u64; self.flow_info.len()];
        for p in self.packets.iter_live() {
            counts[p.flow as usize] += 1;
        }
        counts
    }

    /// Every violated conservation law, as readable sentences (empty when all hold).
    pub fn conservation_violations(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .agents
            .iter()
            .flat_map(|slot| slot.agent.violations())
            .collect();
        let in_network = self.in_network_by_flow();
        for ((info, s), inside) in self
            .flow_info
            .iter()
            .zip(self.flow_stats.iter())
            .zip(in_network)
        {
            let accounted = s.delivered_pkts + s.dropped_total() + inside;
            if s.offered_pkts != accounted {
                out.push(format!(
                    "flow {}: offered {} != delivered {} + dropped {} + in network {}",
                    info.name,
                    s.offered_pkts,
                    s.delivered_pkts,
                    s.dropped_total(),
                    inside
                ));
            }
        }
        for port in &self.ports {
            let s = &port.stats;
            let link_losses = s.drops_pkts[DropReason::LinkLoss as usize];
            let queue_drops = s.drops_total() - link_losses;
            let held = (port.qdisc.len_packets() + port.device.len()) as u64;
            if s.arrivals_pkts != s.departures_pkts + queue_drops + held {
                out.push(format!(
                    "port {}: arrivals {} != departures {} + drops {} + queued {}",
                    port.name, s.arrivals_pkts, s.departures_pkts, queue_drops, held
                ));
            }
            if port.busy_ps(self.now) > self.now as u128 {
                out.push(format!(
                    "link {}: busy for {} ps of {} ps elapsed",
                    port.name,
                    port.busy_ps(self.now),
                    self.now
                ));
            }
            if s.departures_pkts != s.delivered_pkts + link_losses + u64::from(port.in_transit) {
                out.push(format!(
                    "link {}: departures {} != arrivals {} + losses {} + in transit {}",
                    port.name, s.departures_pkts, s.delivered_pkts, link_losses, port.in_transit
                ));
            }
        }
        out
    }

    /// Closes the time integrals at the current time.
    /// Cumulative counters now (integrals closed up to now).
    pub fn snapshot(&mut self) -> Snapshot {
        self.close_integrals();
        let now = self.now;
        Snapshot {
            ports: self.ports.iter().map(|p| p.stats.clone()).collect(),
            busy_ps: self.ports.iter().map(|p| p.busy_ps(now)).collect(),
            flows: self.flow_stats.to_vec(),
        }
    }

    pub(super) fn window_edge(&mut self) {
        let snapshot = self.snapshot();
        if self.window.at_start.is_none() && self.now == self.window.start {
            self.window.at_start = Some(snapshot);
        } else {
            self.window.at_stop = Some(snapshot);
        }
    }

    /// Closes the traffic phase that ends now (at an edge, or at the end of the run).
    pub fn close_phase(&mut self) {
        let snapshot = self.snapshot();
        self.phases.close(self.now, snapshot);
    }

    /// Closes the last phase and moves the per-phase summary out.
    pub fn take_phases(&mut self) -> PhaseLog {
        self.close_phase();
        std::mem::take(&mut self.phases)
    }

    pub fn window(&self) -> &Window {
        &self.window
    }

    pub fn close_integrals(&mut self) {
        let now = self.now;
        for port in &mut self.ports {
            port.integrate(now);
        }
    }
}
