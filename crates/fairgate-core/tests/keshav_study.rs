//! Keshav's buffer data structures ([Keshav91, ch. 3]): identical decisions on the same
//! trace, and the orderings of figures 3.5-3.7 on open-loop workloads.

use fairgate_core::studies::keshav_buffers::study::{
    fq_trace, onoff_workload, record_port, replay, sweep, tahoe_workload, StudyRow, Workload,
};
use fairgate_core::studies::keshav_buffers::STRUCTURES;
use fairgate_core::studies::never_interrupted;

fn bursty(n: u32, b: u32, window: u32, load: f64) -> Workload {
    onoff_workload(n, b, window, load, 4.0).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_four_structures_make_fqs_decisions() {
    let w = bursty(8, 20, 5, 2.0);
    let events = record_port(&w.scenario, &w.port, &w.length, &mut never_interrupted).unwrap();
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
    // Overload: 16 sources, windows of 8, B = 32 (W N = 128 > B), offered load 1.2.
    let over = sweep(
        &[(16, 32)],
        |n, b| Ok(bursty(n, b, 8, 1.2)),
        &mut never_interrupted,
    )
    .unwrap();
    // Underload: 4 sources, windows of 4, B = 64 (W N = 16 <= B), load 0.4: no drops.
    let under = sweep(
        &[(4, 64)],
        |n, b| Ok(bursty(n, b, 4, 0.4)),
        &mut never_interrupted,
    )
    .unwrap();
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

#[test]
fn tahoe_workload_orders_the_structures_as_seed_004_does() {
    use fairgate_core::studies::keshav_buffers::study::tahoe_workload;
    let points = [(4, 64), (16, 24)];
    let rows = sweep(
        &points,
        |n, b| tahoe_workload(n, b, 8, 200.0),
        &mut never_interrupted,
    )
    .unwrap();
    let at = |n: u32, name: &str| {
        rows.iter()
            .find(|r| r.conversations == n && r.structure == name)
            .unwrap()
            .clone()
    };
    // Underload (W x N = 32 <= B = 64): no drops, LINK cheapest, the skewed TREE dearest.
    assert_eq!(at(4, "perc").drops, 0);
    let under: Vec<f64> = ["link", "perc", "heap", "tree"]
        .iter()
        .map(|s| at(4, s).mean_ops_per_insert)
        .collect();
    assert!(under.windows(2).all(|w| w[0] < w[1]), "{under:?}");
    // Overload (W x N = 128 > B = 24): PERC cheaper than HEAP and TREE.
    assert!(at(16, "perc").drops > 0);
    let perc = at(16, "perc").mean_ops_per_insert;
    assert!(perc < at(16, "heap").mean_ops_per_insert);
    assert!(perc < at(16, "tree").mean_ops_per_insert);
}

#[test]
fn the_studys_own_parameters_are_checked_and_named() {
    let refused = |points: &[(u32, u32)], window: u32, duration_s: f64| {
        sweep(
            points,
            |n, b| tahoe_workload(n, b, window, duration_s),
            &mut never_interrupted,
        )
        .err()
        .map(|e| e.to_string())
    };
    let said = |points: &[(u32, u32)], window: u32, duration_s: f64| {
        refused(points, window, duration_s).unwrap_or_default()
    };
    assert!(said(&[(2, 4), (u32::MAX, u32::MAX)], 8, 1.0).starts_with(
        "`points[1].conversations`: got 4294967295, expected a whole number from 1 to 100000"
    ));
    assert!(said(&[(0, 4)], 8, 1.0).starts_with("`points[0].conversations`: got 0"));
    assert!(said(&[(2, 0)], 8, 1.0).starts_with("`points[0].buffers`: got 0"));
    assert!(said(&[(2, 4)], 69, 1.0)
        .starts_with("`window`: got 69, expected a whole number from 1 to 68"));
    assert!(said(&[(2, 4)], u32::MAX, 1.0).starts_with("`window`: got 4294967295"));
    assert!(said(&[(2, 4)], 8, f64::NAN).starts_with("`trace_s`: got NaN"));
    for load in [f64::NAN, -1.0, 0.0, f64::INFINITY] {
        let err = onoff_workload(2, 4, 8, load, 1.0)
            .err()
            .unwrap()
            .to_string();
        assert!(err.starts_with("`load`: got"), "{load}: {err}");
    }
    assert_eq!(refused(&[], 8, 1.0), None);
}
