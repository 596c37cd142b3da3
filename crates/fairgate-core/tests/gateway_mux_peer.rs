//! `send_buffer`, `flush_period` and `flow_control` at the peer gateway of a multiplexed leg
//! (`scenarios/satellite_mux.toml` with options on gw2): the leg's receiver advertises
//! min(leg rwnd - unflushed bytes, the smallest free send buffer of the connections it feeds,
//! the flow-control window), refuses segments beyond it, and every byte still arrives once
//! with the accounting kept at both gateways; a bound that never binds changes nothing.

use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;

mod gateway_support;
use gateway_support::trace_all;

const MUX: &str = include_str!("../../../scenarios/satellite_mux.toml");
/// Smaller files than the scenario's.
const SMALL: [&str; 2] = [
    "flows[0].source.app={kind=\"file\",size=100000}",
    "simulation.duration=\"40s\"",
];
/// A 128 kb/s last hop behind gw2, so that bytes pile up at the peer (the leg runs at T1).
const SLOW: &str = "links[2].rate=\"128kbps\"";
const SIZES: [u64; 4] = [100_000, 100_000, 100_000, 30_000];

fn run(overrides: &[&str]) -> Simulation {
    let all: Vec<String> = SMALL
        .iter()
        .chain(overrides)
        .map(|s| s.to_string())
        .collect();
    let scenario = parse(MUX, &all).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    for (flow, size) in SIZES.into_iter().enumerate() {
        assert_eq!(sim.flow_stats()[flow].goodput_bytes, size, "flow {flow}");
    }
    sim
}

/// Samples of `name` summed over flows at each sample time: (time, sum).
fn summed(sim: &Simulation, name: &str) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (t, _, v) in trace_all(sim, name) {
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 += v,
            _ => out.push((t, v)),
        }
    }
    out
}

fn most(samples: &[(f64, f64)]) -> f64 {
    samples.iter().map(|s| s.1).fold(0.0, f64::max)
}

#[test]
fn a_bounded_send_buffer_at_the_peer_caps_the_bytes_held_there() {
    let free = run(&[SLOW]);
    let bounded = run(&[SLOW, "nodes[2].gateway.send_buffer=20000"]);
    let unsent_free = most(&summed(&free, "gw2.send_buffer"));
    let unsent = trace_all(&bounded, "gw2.send_buffer");
    let worst = unsent.iter().map(|s| s.2).fold(0.0, f64::max);
    eprintln!("gw2 unsent bytes, most of one connection: {worst} (unbounded, all: {unsent_free})");
    assert!(unsent_free > 200_000.0, "{unsent_free}");
    assert!(worst <= 20_000.0 && worst > 5_000.0, "{worst}");
    // The leg's window is the free room of the fullest buffer, never more than the bound.
    let window = trace_all(&bounded, "gw2.in_leg0.advertised_window");
    assert!(window.len() > 20);
    assert!(window.iter().all(|w| w.2 <= 20_000.0), "{window:?}");
    assert!(
        window.iter().any(|w| w.2 < 12_000.0),
        "the buffers never bound the window"
    );
    // The bytes wait at gateway 1 instead (more held there, over the run's samples).
    let total =
        |sim: &Simulation| -> f64 { summed(sim, "gw1.pep_buffer").iter().map(|s| s.1).sum() };
    let (held1, held1_free) = (total(&bounded), total(&free));
    assert!(held1 > 1.2 * held1_free, "{held1} vs {held1_free}");
    cross_gateway_accounting(&bounded);
}

/// What the leg acknowledged for a connection has reached gw2 at every sample.
fn cross_gateway_accounting(sim: &Simulation) {
    for flow in 0..4u32 {
        let of = |name: &str| {
            let all = trace_all(sim, name).into_iter();
            all.filter(|s| s.1 == flow).map(|s| s.2).collect::<Vec<_>>()
        };
        let (r1, h1, r2) = (
            of("gw1.relayed_bytes"),
            of("gw1.pep_buffer"),
            of("gw2.relayed_bytes"),
        );
        for i in 0..r1.len().min(r2.len()) {
            assert!(r2[i] >= r1[i] - h1[i], "flow {flow}, sample {i}");
        }
    }
}

#[test]
fn flow_control_at_the_peer_keeps_the_window_within_free_buffer_and_max_rcv_wind() {
    let sim = run(&[SLOW, "nodes[2].gateway.flow_control={buffer=40000}"]);
    let window = trace_all(&sim, "gw2.in_leg0.advertised_window");
    let held = trace_all(&sim, "gw2.in_leg0.pep_buffer");
    let limit = trace_all(&sim, "gw2.in_leg0.pep_limit");
    assert!(window.len() > 20);
    let mut closed = 0;
    for ((w, h), l) in window.iter().zip(&held).zip(&limit) {
        let free = (l.2 - h.2).max(0.0);
        assert!(
            w.2 <= free.min(16_000.0),
            "window {} with {} held at {} s",
            w.2,
            h.2,
            w.0
        );
        closed += (w.2 < 16_000.0) as u32;
    }
    assert!(closed > 0, "the buffer never bound the window");
    assert!(held.iter().all(|h| h.2 <= 40_000.0 + 16_000.0), "{held:?}");
    // The source-facing connections of gw2 have no flow control of their own.
    let own = trace_all(&sim, "gw2.pep_limit");
    assert!(own.iter().all(|l| l.2.is_nan()), "{own:?}");
    cross_gateway_accounting(&sim);
}

#[test]
fn a_flush_period_at_the_peer_caps_the_leg_at_rwnd_per_period() {
    let sim = run(&[
        "nodes[2].gateway.flush_period=\"1s\"",
        "nodes[2].gateway.lhs.rwnd=24000",
        "nodes[2].gateway.lhs.window_scale=0",
    ]);
    let relayed = summed(&sim, "gw2.relayed_bytes");
    let at = |t: f64| relayed.iter().find(|s| s.0 >= t).map_or(f64::NAN, |s| s.1);
    let rate = (at(11.0) - at(3.0)) / 8.0;
    eprintln!("leg payload through gw2, 3-11 s: {rate:.0} B/s (rwnd / period = 24000 B/s)");
    assert!(rate <= 24_000.0 && rate > 15_000.0, "{rate}");
    let window = trace_all(&sim, "gw2.in_leg0.advertised_window");
    assert!(window.iter().all(|w| w.2 <= 24_000.0));
    assert!(window.iter().any(|w| w.2 == 0.0), "the window never closed");
}

#[test]
fn a_peer_bound_that_never_binds_changes_nothing() {
    let plain = run(&[SLOW]);
    let bound = run(&[SLOW, "nodes[2].gateway.send_buffer=1000000000"]);
    assert!(trace_all(&plain, "gw2.in_leg0.advertised_window").is_empty());
    assert!(!trace_all(&bound, "gw2.in_leg0.refused").is_empty());
    assert_eq!(
        format!("{:?}", plain.flow_stats()),
        format!("{:?}", bound.flow_stats())
    );
    for name in ["gw1.pep_buffer", "gw2.pep_buffer", "gw1.leg0.cwnd", "cwnd"] {
        let (a, b) = (trace_all(&plain, name), trace_all(&bound, name));
        assert!(!a.is_empty() && a == b, "{name}");
    }
    let refused = trace_all(&bound, "gw2.in_leg0.refused");
    assert_eq!(refused.last().unwrap().2, 0.0);
    // Deterministic.
    let again = run(&[SLOW, "nodes[2].gateway.send_buffer=1000000000"]);
    let bits = |s: &Simulation| {
        s.traces()
            .value
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    };
    assert!(bits(&bound) == bits(&again));
}

#[test]
fn a_mark_on_a_leg_segment_shrinks_the_peers_leg_buffer() {
    // RED marking ECT leg segments in the T1 queue before gw2: every mark reaches the peer's
    // flow control for the leg and multiplies its B by 0.9 (FC3).
    let sim = run(&[
        "nodes[1].gateway.rhs.ecn=true",
        "links[1].queue={kind=\"red\",ecn=true,min_th=1,max_th=5,w_q=0.5,max_p=0.5,limit=100000}",
        "nodes[2].gateway.flow_control={preset=\"fc3\",buffer=200000}",
    ]);
    let last = |name: &str| trace_all(&sim, name).last().map_or(f64::NAN, |s| s.2);
    let marks = last("gw2.in_leg0.fc_marks");
    let limits = trace_all(&sim, "gw2.in_leg0.pep_limit");
    let lowest = limits.iter().map(|l| l.2).fold(f64::INFINITY, f64::min);
    eprintln!("marks {marks}, lowest B {lowest}");
    assert!(marks > 0.0, "RED never marked a leg segment");
    assert!(lowest < 200_000.0 * 0.9, "{lowest}");
    let port = sim.ports().iter().find(|p| p.name == "gw1->gw2").unwrap();
    assert_eq!(port.stats.marks.iter().sum::<u64>() as f64, marks);
}
