//! Byun's PEP queue chain with buffer flow control: RED at the receive queue watching the
//! transmit queue across the PEP, marks turned into window decrements, the advertised window
//! never above min(free PEP buffer, MaxRcvWind), nothing dropped after the PEP, and neutral
//! flow control equal to a plain PEP.

use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;

mod gateway_support;
use gateway_support::trace_all as trace;

const PEP: &str = include_str!("../../../scenarios/satellite_pep.toml");
const FC3: &str = "nodes[2].gateway.flow_control={preset=\"fc3\"}";

fn run(overrides: &[&str]) -> Simulation {
    run_measured(overrides).0
}

/// The run and the transmit rate (b/s) after the first 10 s.
fn run_measured(overrides: &[&str]) -> (Simulation, f64) {
    let mut o: Vec<String> = vec!["simulation.duration=\"30s\"".into()];
    o.extend(overrides.iter().map(|s| s.to_string()));
    let scenario = parse(PEP, &o).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until(fairgate_core::engine::secs(10.0));
    let before = port(&sim, "pep->regulator").stats.departures_bytes;
    sim.run();
    let after = port(&sim, "pep->regulator").stats.departures_bytes;
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    (sim, (after - before) as f64 * 8.0 / 20.0)
}

fn port<'a>(sim: &'a Simulation, name: &str) -> &'a fairgate_core::sim::port::Port {
    sim.ports().iter().find(|p| p.name == name).unwrap()
}

#[test]
fn marks_become_window_decrements_and_the_window_respects_the_free_buffer() {
    let (sim, rate) = run_measured(&[
        FC3,
        "links[1].queue.ecn=true",
        "links[1].queue.mark_forced=true",
    ]);
    let window = trace(&sim, "pep.advertised_window");
    let held = trace(&sim, "pep.pep_buffer");
    let limit = trace(&sim, "pep.pep_limit");
    let marks = trace(&sim, "pep.fc_marks");
    assert!(window.len() > 1000);
    for ((w, h), l) in window.iter().zip(&held).zip(&limit) {
        let free = (l.2 - h.2).max(0.0);
        assert!(
            w.2 <= free.min(16_000.0),
            "window {} with B {} and {} held at {} s",
            w.2,
            l.2,
            h.2,
            w.0
        );
    }
    let total_marks: f64 = marks
        .iter()
        .filter(|m| (m.0 - 30.0).abs() < 1e-9)
        .map(|m| m.2)
        .sum();
    assert!(total_marks > 0.0, "RED never marked");
    assert!(limit.iter().any(|l| l.2 < 625_000.0 * 0.5), "B never fell");
    let receive = port(&sim, "internet->pep");
    let transmit = port(&sim, "pep->regulator");
    assert!(receive.stats.marks.iter().sum::<u64>() > 0);
    assert_eq!(
        transmit.stats.drops_total(),
        0,
        "nothing is dropped after the PEP"
    );
    assert_eq!(
        receive.stats.drops_total(),
        0,
        "marked packets are accepted"
    );
    eprintln!("FC3: transmit rate {:.2} Mb/s after 10 s", rate / 1e6);
    assert!(rate > 0.1 * 20e6, "transmit rate {rate}");
}

#[test]
fn drop_marking_before_the_pep_keeps_the_transmit_queue_lossless_and_busy() {
    let (sim, rate) = run_measured(&[]);
    let receive = port(&sim, "internet->pep");
    let transmit = port(&sim, "pep->regulator");
    assert!(
        receive.stats.drops_total() > 0,
        "RED dropped nothing before the PEP"
    );
    assert_eq!(
        transmit.stats.drops_total(),
        0,
        "nothing is dropped after the PEP"
    );
    eprintln!(
        "drop marking: transmit rate {:.2} Mb/s after 10 s",
        rate / 1e6
    );
    assert!(rate > 0.7 * 20e6, "transmit rate {rate}");
}

#[test]
fn neutral_flow_control_equals_a_plain_pep() {
    // Drop mode at the receive queue (no marks reach the PEP).
    let plain = run(&[
        "nodes[2].gateway.flow_control={decr=1.0,incr=0.0,buffer=1000000000000,max_window=16000}",
    ]);
    let off = run(&[]);
    let goodput = |s: &Simulation| {
        s.flow_stats()
            .iter()
            .map(|f| f.goodput_bytes)
            .collect::<Vec<_>>()
    };
    assert_eq!(goodput(&plain), goodput(&off));
    let held = |s: &Simulation| trace(s, "pep.pep_buffer");
    assert_eq!(held(&plain), held(&off));
    let drops = port(&off, "internet->pep").stats.drops_total();
    assert!(drops > 0, "the receive queue dropped nothing");
}

#[test]
fn back_pressure_keeps_a_small_transmit_queue_lossless() {
    let small = "links[2].queue.limit=30";
    let (unguarded, _) = run_measured(&[small]);
    let drops = port(&unguarded, "pep->regulator").stats.drops_total();
    assert!(
        drops > 0,
        "a 30-packet transmit queue overflows without back-pressure"
    );
    let (guarded, rate) = run_measured(&[small, "nodes[2].gateway.transmit_limit=30"]);
    let transmit = port(&guarded, "pep->regulator");
    assert_eq!(
        transmit.stats.drops_total(),
        0,
        "nothing is dropped after the PEP"
    );
    assert!(transmit.stats.max_queue_pkts <= 30);
    eprintln!(
        "back-pressure: transmit rate {:.2} Mb/s after 10 s, {drops} drops without it",
        rate / 1e6
    );
    assert!(rate > 0.95 * 20e6, "the regulator stays busy: {rate}");
}

/// The most bytes the PEP held for all flows together at one sample.
fn most_held(sim: &Simulation) -> f64 {
    let mut per_sample = std::collections::BTreeMap::new();
    for (t, _, held) in trace(sim, "pep.pep_buffer") {
        *per_sample.entry((t * 1e6) as u64).or_insert(0.0) += held;
    }
    per_sample.values().copied().fold(0.0, f64::max)
}

#[test]
fn a_users_connections_share_one_pep_buffer_pool() {
    // The 8 transfers go to one client host (node 4): one user [Byun07, §6.1], 625 KB for all.
    let marking = ["links[1].queue.ecn=true", "links[1].queue.mark_forced=true"];
    let pooled_fc = "nodes[2].gateway.flow_control={preset=\"fc3\",pool=\"user\"}";
    let pooled = run(&[pooled_fc, marking[0], marking[1]]);
    let own = run(&[FC3, marking[0], marking[1]]);
    let user = trace(&pooled, "pep.user4.pep_buffer");
    let limit = trace(&pooled, "pep.user4.pep_limit");
    let marks = trace(&pooled, "pep.user4.fc_marks");
    assert!(
        user.len() > 100,
        "the pool is traced per user: {}",
        user.len()
    );
    assert!(marks.last().unwrap().2 > 0.0, "RED never marked");
    assert!(limit.iter().any(|l| l.2 < 0.5 * 625_000.0), "B never fell");
    // Windows already advertised may overshoot the pool by one MaxRcvWind per connection.
    for (t, _, held) in &user {
        assert!(
            *held <= 625_000.0 + 8.0 * 16_000.0,
            "{held} B held at {t} s"
        );
    }
    let summed = most_held(&pooled);
    let most_user = user.iter().map(|u| u.2).fold(0.0, f64::max);
    assert!((summed - most_user).abs() < 1.0, "{summed} {most_user}");
    eprintln!(
        "most held: per-user pool {most_user:.0} B, per-connection buffers {:.0} B",
        most_held(&own)
    );
    for w in trace(&pooled, "pep.advertised_window") {
        assert!(w.2 <= 16_000.0, "window {} at {} s", w.2, w.0);
    }
}
