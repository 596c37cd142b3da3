//! Keshav's buffer data structures (seed 004 chapter 3): identical decisions on the same
//! trace, and the orderings of figures 3.5-3.7 on open-loop workloads.

use fairgate_core::classify::FlowKey;
use fairgate_core::qdisc::sched::keshav::study::{
    fq_trace, record_port, replay, sweep, StudyRow, Workload,
};
use fairgate_core::qdisc::sched::keshav::STRUCTURES;
use fairgate_core::scenario::parse;

/// N on/off sources on a 10 Mb/s line, 1000-byte packets: each "window" is a burst of W
/// packets sent back to back at 100 Mb/s, then a silence; FQ with B buffers.
fn bursty(n: u32, b: u32, window: u32, silence_ms: f64) -> Workload {
    let on_ms = window as f64 * 0.08;
    let text = format!(
        r#"
name = "keshav-study"
[simulation]
duration = "4s"
seed = 11
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "1ms"
duplex = false
queue = {{ kind = "fq", classify = "flow", limit = {b}, drop = "largest_bid", charge_dropped = true }}
[[flows]]
name = "s{{i}}"
count = {n}
src = "a"
dst = "b"
start = {{ dist = "uniform", min = "0s", max = "{silence_ms}ms" }}
source = {{ kind = "onoff", rate = "100Mbps", size = 1000, on = "{on_ms}ms", off = {{ dist = "exponential", mean = "{silence_ms}ms" }} }}
"#
    );
    Workload {
        scenario: parse(&text, &[]).unwrap_or_else(|e| panic!("{e}")),
        port: "a->b".into(),
        link_rate_bps: 10_000_000,
        classify: FlowKey::Flow,
    }
}

#[test]
fn the_four_structures_make_fqs_decisions() {
    let w = bursty(8, 20, 5, 20.0);
    let events = record_port(&w.scenario, &w.port).unwrap();
    let (ops, fq_departures, fq_drops) = fq_trace(&events, 20, w.classify, w.link_rate_bps);
    assert!(
        fq_drops.len() > 100,
        "the workload must overflow: {}",
        fq_drops.len()
    );
    for name in STRUCTURES {
        let r = replay(name, &ops, 20).unwrap();
        assert_eq!(r.departures, fq_departures, "{name}");
        assert_eq!(r.discards, fq_drops, "{name}");
    }
}

fn row<'a>(rows: &'a [StudyRow], name: &str) -> &'a StudyRow {
    rows.iter().find(|r| r.structure == name).unwrap()
}

#[test]
fn orderings_of_seed_004_figures_3_5_to_3_7() {
    // Overload: 16 sources, windows of 8, B = 32 (W N = 128 > B), offered load about 1.2.
    let over = sweep(&[(16, 32)], |n, b| Ok(bursty(n, b, 8, 80.0))).unwrap();
    // Underload: 4 sources, windows of 4, B = 64 (W N = 16 <= B): no drops.
    let under = sweep(&[(4, 64)], |n, b| Ok(bursty(n, b, 4, 40.0))).unwrap();
    for r in over.iter().chain(&under) {
        eprintln!(
            "N={} B={} {:5} inserts {} mean {:.3} max {} instr {:.2} drops {}",
            r.conversations,
            r.buffers,
            r.structure,
            r.inserts,
            r.mean_ops_per_insert,
            r.max_ops_per_insert,
            r.mean_instructions_per_insert,
            r.drops
        );
    }
    assert!(row(&over, "perc").drops > 0);
    assert_eq!(row(&under, "perc").drops, 0);
    let mean = |rows: &[StudyRow], name| row(rows, name).mean_ops_per_insert;
    assert!(mean(&over, "perc") < mean(&over, "heap"));
    assert!(mean(&over, "perc") < mean(&over, "tree"));
    // Underload (zone I): LINK needs fewer operations than TREE and HEAP, and the fewest
    // instructions of all four once table 3.2's cost per operation is applied. (PERC needs
    // even fewer raw operations: a conversation's new tail rarely moves in the tail heap.)
    for name in ["tree", "heap"] {
        assert!(mean(&under, "link") < mean(&under, name), "{name}");
    }
    let instructions = |name| row(&under, name).mean_instructions_per_insert;
    for name in ["tree", "heap", "perc"] {
        assert!(instructions("link") < instructions(name), "{name}");
    }
}
