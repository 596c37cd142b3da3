//! A multiplexed leg whose own sender gives up (`max_retries` expiries of one segment) leaves
//! service: no connection opened afterwards joins it (a new leg opens, under `legs = N` as
//! under `connections_per_leg = N`), and the connections riding it are abandoned and retired
//! once their source has closed, as a split whose own RHS gives up is, conservation checked
//! at retirement.

use fairgate_core::Simulation;

mod gateway_support;
use gateway_support::{run, trace_all};

const MUX: &str = include_str!("../../../scenarios/satellite_mux.toml");

/// `scenarios/satellite_mux.toml` with the leg's segment starting in [100,000, 101,000) lost
/// on each of its first ten crossings and the leg's `max_retries` at 2, so leg 0 dies; the
/// short transfer starts at 30 s, after that. `mux` sets the assignment.
fn dying_leg(mux: &str) -> Simulation {
    dying_leg_with(&[mux])
}

/// [`dying_leg`] with any `extra` overrides.
fn dying_leg_with(extra: &[&str]) -> Simulation {
    let seqs: Vec<String> = (100_000..101_000).map(|s: u64| s.to_string()).collect();
    let loss = format!(
        "links[1].loss={{kind=\"seqs\",flow=\"file0\",seqs=[{}],times=10}}",
        seqs.join(",")
    );
    let mut overrides = vec![
        "nodes[1].gateway.rhs.max_retries=2",
        &loss,
        "flows[1].start=\"30s\"",
        "simulation.duration=\"60s\"",
    ];
    overrides.extend_from_slice(extra);
    run(MUX, &overrides)
}

/// Samples (time, value) of trace `name`, whatever flow it is filed under.
fn samples(sim: &Simulation, name: &str) -> Vec<(f64, f64)> {
    trace_all(sim, name)
        .into_iter()
        .map(|s| (s.0, s.2))
        .collect()
}

fn last(sim: &Simulation, name: &str) -> f64 {
    samples(sim, name).last().map_or(f64::NAN, |s| s.1)
}

fn check_dead_leg(sim: &Simulation) {
    // Leg 0 carried the three files; its sender retransmitted on 2 timeouts and gave up at
    // the third expiry; the three were abandoned and retired once their sources closed.
    let riding = samples(sim, "gw1.leg0.connections");
    let most = riding.iter().map(|c| c.1).fold(0.0, f64::max);
    assert_eq!(most, 3.0);
    assert_eq!(last(sim, "gw1.leg0.timeouts"), 2.0);
    assert_eq!(last(sim, "gw1.leg0.connections"), 0.0);
    // Once empty, the dead leg never carries a connection again.
    let emptied = riding
        .iter()
        .position(|c| c.1 == 0.0)
        .expect("leg 0 emptied");
    assert!(riding[emptied..].iter().all(|c| c.1 == 0.0), "{riding:?}");
    let timeouts = samples(sim, "gw1.leg0.timeouts");
    let gave_up = timeouts.iter().find(|t| t.1 == 2.0).map(|t| t.0);
    eprintln!(
        "leg 0: second timeout by {gave_up:?} s, empty at {} s",
        riding[emptied].0
    );
    let (opened, retired) = (
        last(sim, "gw1.splits_opened"),
        last(sim, "gw1.splits_retired"),
    );
    assert_eq!((opened, retired), (4.0, 4.0));
    assert_eq!(last(sim, "gw1.splits_abandoned"), 3.0);
    // The short transfer opened on a new leg and got every byte.
    assert!(last(sim, "gw1.leg1.records") >= 3.0);
    assert_eq!(last(sim, "gw1.leg1.timeouts"), 0.0);
    let stats = sim.flow_stats();
    assert_eq!(stats[3].goodput_bytes, 30_000);
    for (flow, s) in stats.iter().enumerate().take(3) {
        eprintln!("file{flow}: {} B delivered", s.goodput_bytes);
        assert!(s.goodput_bytes < 1_500_000, "file{flow}");
    }
}

#[test]
fn a_dead_leg_in_the_rotation_is_replaced_by_a_new_one() {
    check_dead_leg(&dying_leg("nodes[1].gateway.multiplex.legs=1"));
}

#[test]
fn a_dead_leg_counts_as_full() {
    check_dead_leg(&dying_leg(
        "nodes[1].gateway.multiplex={peer=\"gw2\",connections_per_leg=4}",
    ));
}

#[test]
fn with_two_legs_the_live_one_keeps_its_connections_and_a_new_one_takes_the_dead_ones_turn() {
    // Four files on two legs (k mod 2: files 0 and 2 on leg 0, 1 and 3 on leg 1); leg 0 dies.
    // The short transfer is connection 4, turn 0: a new leg 2 in the dead leg's place.
    let sim = dying_leg_with(&["nodes[1].gateway.multiplex.legs=2", "flows[0].count=4"]);
    assert_eq!(last(&sim, "gw1.splits_abandoned"), 2.0);
    assert_eq!(last(&sim, "gw1.leg0.connections"), 0.0);
    let stats = sim.flow_stats();
    for (flow, delivered) in [(1, 1_500_000), (3, 1_500_000), (4, 30_000)] {
        assert_eq!(stats[flow].goodput_bytes, delivered, "flow {flow}");
    }
    assert!(stats[0].goodput_bytes < 1_500_000 && stats[2].goodput_bytes < 1_500_000);
    assert!(last(&sim, "gw1.leg2.records") >= 3.0);
    assert!(trace_all(&sim, "gw1.leg3.records").is_empty());
    let (opened, retired) = (
        last(&sim, "gw1.splits_opened"),
        last(&sim, "gw1.splits_retired"),
    );
    assert_eq!((opened, retired), (5.0, 5.0));
}
