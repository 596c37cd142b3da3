//! The per-phase summary tables (`docs/results.md`, phase summary): per traffic class and per
//! port, the counters of each phase between `[simulation] phase_edges`.

use super::{f64s, ratio, u64s, Column, Table};
use crate::engine::to_secs;
use crate::sim::Simulation;
use crate::stats::phases::PhaseLog;
use crate::stats::DropReason;

/// `phase_classes` and `phase_ports`, closing the run's last phase.
pub fn phase_tables(sim: &mut Simulation) -> (Table, Table) {
    let log = sim.take_phases();
    let port_names = sim.ports().iter().map(|p| p.name.clone()).collect();
    (class_table(&log), port_table(&log, port_names))
}

/// The phase, start and end columns of rows that belong to `phases`.
fn phase_columns(t: &mut Table, log: &PhaseLog, phases: &[u32]) {
    let span = |p: &u32| log.spans[*p as usize];
    t.push("phase", u64s(phases.iter().map(|&p| p as u64)));
    t.push("start_s", f64s(phases.iter().map(|p| to_secs(span(p).0))));
    t.push("end_s", f64s(phases.iter().map(|p| to_secs(span(p).1))));
}

fn length_s(log: &PhaseLog, phase: u32) -> f64 {
    let (start, end) = log.spans[phase as usize];
    to_secs(end - start)
}

fn class_table(log: &PhaseLog) -> Table {
    let rows = &log.classes;
    let mut t = Table::default();
    let phases: Vec<u32> = rows.iter().map(|r| r.phase).collect();
    phase_columns(&mut t, log, &phases);
    t.push(
        "class",
        Column::Cat {
            codes: rows.iter().map(|r| r.class).collect(),
            categories: log.class_names.clone(),
        },
    );
    t.push("offered_pkts", u64s(rows.iter().map(|r| r.offered_pkts)));
    t.push("dropped_pkts", u64s(rows.iter().map(|r| r.dropped_pkts)));
    let drop_rate = |r: &_| {
        let r: &crate::stats::phases::ClassPhase = r;
        ratio(r.dropped_pkts as f64, r.offered_pkts as f64)
    };
    t.push("drop_rate", f64s(rows.iter().map(drop_rate)));
    t.push("offered_bytes", u64s(rows.iter().map(|r| r.offered_bytes)));
    t.push("dropped_bytes", u64s(rows.iter().map(|r| r.dropped_bytes)));
    t.push(
        "byte_loss_rate",
        f64s(
            rows.iter()
                .map(|r| ratio(r.dropped_bytes as f64, r.offered_bytes as f64)),
        ),
    );
    let bps = |bytes: u64, phase: u32| ratio(bytes as f64 * 8.0, length_s(log, phase));
    t.push(
        "throughput_bps",
        f64s(rows.iter().map(|r| bps(r.delivered_bytes, r.phase))),
    );
    t.push(
        "goodput_bps",
        f64s(rows.iter().map(|r| bps(r.goodput_bytes, r.phase))),
    );
    t
}

fn port_table(log: &PhaseLog, port_names: Vec<String>) -> Table {
    let rows = &log.ports;
    let mut t = Table::default();
    let phases: Vec<u32> = rows.iter().map(|r| r.phase).collect();
    phase_columns(&mut t, log, &phases);
    t.push(
        "port",
        Column::Cat {
            codes: rows.iter().map(|r| r.port).collect(),
            categories: port_names,
        },
    );
    let queue_drops =
        |s: &crate::stats::PortStats| s.drops_total() - s.drops_pkts[DropReason::LinkLoss as usize];
    let queue_drop_bytes = |s: &crate::stats::PortStats| {
        s.drops_bytes.iter().sum::<u64>() - s.drops_bytes[DropReason::LinkLoss as usize]
    };
    t.push(
        "arrivals_pkts",
        u64s(rows.iter().map(|r| r.stats.arrivals_pkts)),
    );
    t.push(
        "drops_pkts",
        u64s(rows.iter().map(|r| queue_drops(&r.stats))),
    );
    t.push(
        "drop_rate",
        f64s(
            rows.iter()
                .map(|r| ratio(queue_drops(&r.stats) as f64, r.stats.arrivals_pkts as f64)),
        ),
    );
    t.push(
        "arrivals_bytes",
        u64s(rows.iter().map(|r| r.stats.arrivals_bytes)),
    );
    t.push(
        "drops_bytes",
        u64s(rows.iter().map(|r| queue_drop_bytes(&r.stats))),
    );
    t.push(
        "byte_loss_rate",
        f64s(rows.iter().map(|r| {
            ratio(
                queue_drop_bytes(&r.stats) as f64,
                r.stats.arrivals_bytes as f64,
            )
        })),
    );
    t.push(
        "marks",
        u64s(rows.iter().map(|r| r.stats.marks.iter().sum())),
    );
    let seconds = |r: &crate::stats::phases::PortPhase| length_s(log, r.phase);
    t.push(
        "utilisation",
        f64s(
            rows.iter()
                .map(|r| ratio(r.busy_ps as f64 / 1e12, seconds(r))),
        ),
    );
    t.push(
        "throughput_bps",
        f64s(
            rows.iter()
                .map(|r| ratio(r.stats.departures_bytes as f64 * 8.0, seconds(r))),
        ),
    );
    t.push(
        "mean_queue_pkts",
        f64s(
            rows.iter()
                .map(|r| ratio(r.stats.queue_pkt_ps as f64 / 1e12, seconds(r))),
        ),
    );
    t
}
