//! Byun's chapter-4 testbed with its HTTP population (`scenarios/satellite_http.toml`): the PEP
//! gateway splits every one of the connections the HTTP flows multiplex (one split connection
//! per packet `conn`, retired when it has closed and holds nothing), the transmit queue is kept
//! near full by the population, RED drops only before the PEP, and conservation holds.

use fairgate_core::engine::secs;
use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;

mod gateway_support;
use gateway_support::{trace, trace_all};

const SCENARIO: &str = include_str!("../../../scenarios/satellite_http.toml");

fn port<'a>(sim: &'a Simulation, name: &str) -> &'a fairgate_core::sim::port::Port {
    sim.ports().iter().find(|p| p.name == name).unwrap()
}

/// The scenario run for `duration` s; returns it and the transmit rate (b/s) over its last
/// `window` seconds.
fn run(duration: f64, window: f64) -> (Simulation, f64) {
    let o = vec![format!("simulation.duration=\"{duration}s\"")];
    let scenario = parse(SCENARIO, &o).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until(secs(duration - window));
    let before = port(&sim, "pep->regulator").stats.departures_bytes;
    sim.run();
    let after = port(&sim, "pep->regulator").stats.departures_bytes;
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    (sim, (after - before) as f64 * 8.0 / window)
}

/// The scenario run to its end with `overrides`.
fn run_with(overrides: &[&str]) -> Simulation {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(SCENARIO, &o).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    sim
}

/// The sum over flows of trace `name` at time `at`.
fn total_at(sim: &Simulation, name: &str, at: f64) -> f64 {
    let samples = trace_all(sim, name);
    assert!(!samples.is_empty(), "{name} is not traced");
    samples
        .iter()
        .filter(|s| (s.0 - at).abs() < 1e-9)
        .map(|s| s.2)
        .sum()
}

#[test]
fn the_pep_splits_every_http_connection_and_red_drops_only_before_it() {
    let (sim, rate) = run(120.0, 40.0);
    // About 200 connections from 80 s on keep the regulator busy most of the time (16.1 Mb/s
    // measured with RED 4 dropping before the PEP; Byun's steady state at 400: 19.8 Mb/s).
    assert!(rate > 0.75 * 20e6, "transmit rate {rate} b/s");
    let receive = port(&sim, "internet->pep");
    let transmit = port(&sim, "pep->regulator");
    assert!(receive.stats.drops_total() > 0, "RED never dropped");
    assert_eq!(
        transmit.stats.drops_total(),
        0,
        "nothing dropped after the PEP"
    );
    // Every byte the servers' connections got acknowledged by the PEP was relayed, and the
    // PEP's per-flow totals (over live and retired connections) cover what left it.
    let relayed = total_at(&sim, "pep.relayed_bytes", 120.0);
    let held = total_at(&sim, "pep.pep_buffer", 120.0);
    assert!(relayed > 0.0);
    assert!(relayed >= held);
    let flows: std::collections::BTreeSet<u32> = trace_all(&sim, "pep.relayed_bytes")
        .iter()
        .map(|s| s.1)
        .collect();
    assert_eq!(flows.len(), 20, "one traced row per HTTP flow");
    // The population: 20 connections per 10 s, all open.
    let population = total_at(&sim, "population", 120.0);
    assert!((230.0..=260.0).contains(&population), "{population}");
    // The FIN riding each response's last segment lets the PEP retire its split once the
    // clients have acknowledged everything: it holds about the pages in transfer, not every
    // connection ever made.
    let last = |name: &str| trace(&sim, name).last().unwrap().1;
    let (opened, retired) = (last("pep.splits_opened"), last("pep.splits_retired"));
    eprintln!("splits opened {opened}, retired {retired}, population {population}");
    assert!(retired > 0.0);
    assert!(opened - retired <= population, "{opened} - {retired}");
}

#[test]
fn every_split_is_retired_once_the_population_stops() {
    let sim = run_with(&["simulation.duration=\"150s\"", "flows[0].stop=\"60s\""]);
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    let last = |name: &str| trace(&sim, name).last().unwrap().1;
    let (opened, retired) = (last("pep.splits_opened"), last("pep.splits_retired"));
    eprintln!("splits opened {opened}, retired {retired}");
    assert!(opened > 100.0, "{opened}");
    assert_eq!(opened, retired);
}

#[test]
fn without_a_fin_the_pep_keeps_every_split() {
    let sim = run_with(&[
        "simulation.duration=\"40s\"",
        "flows[0].source.fin=\"none\"",
    ]);
    let last = |name: &str| trace(&sim, name).last().unwrap().1;
    assert!(last("pep.splits_opened") > 40.0);
    assert_eq!(last("pep.splits_retired"), 0.0);
}

#[test]
fn the_first_connections_are_traced_one_by_one() {
    let sim = run_with(&[
        "simulation.duration=\"40s\"",
        "nodes[2].gateway.trace_connections=5",
    ]);
    let names = &sim.traces().names;
    let held: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("pep.conn") && n.ends_with(".pep_buffer"))
        .collect();
    let of_flow = trace_all(&sim, "pep.pep_buffer");
    let mut traced = std::collections::BTreeSet::new();
    for name in &held {
        for (t, flow, bytes) in trace_all(&sim, name) {
            traced.insert((flow, name.to_string()));
            let flow_held = of_flow
                .iter()
                .find(|s| s.1 == flow && (s.0 - t).abs() < 1e-9);
            assert!(bytes <= flow_held.unwrap().2, "{name} at {t} s");
        }
    }
    assert_eq!(traced.len(), 5, "{traced:?}");
}

#[test]
fn the_same_seed_gives_the_same_run() {
    let a = run(30.0, 10.0);
    let b = run(30.0, 10.0);
    assert_eq!(a.1, b.1);
    assert_eq!(a.0.events_processed(), b.0.events_processed());
}

#[test]
fn a_split_whose_rhs_gives_up_is_retired_and_counted() {
    // 10% loss on the 1 Mb/s return link: some client's last ACK is lost after it has taken
    // its whole object and retired the connection, so the RHS retransmits into nothing and,
    // after its `max_retries`, gives up; the split is retired then, counted as abandoned.
    let sim = run_with(&[
        "simulation.duration=\"150s\"",
        "flows[0].stop=\"60s\"",
        "links[3].reverse.loss=0.1",
        "nodes[2].gateway.rhs.max_retries=2",
    ]);
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    let last = |name: &str| trace(&sim, name).last().unwrap().1;
    let (opened, retired) = (last("pep.splits_opened"), last("pep.splits_retired"));
    let abandoned = last("pep.splits_abandoned");
    eprintln!("splits opened {opened}, retired {retired}, abandoned {abandoned}");
    assert!(abandoned > 0.0 && abandoned < 0.2 * opened, "{abandoned}");
    assert_eq!(opened, retired);
    assert!(!sim.flow_stats()[0].aborted, "the source's own connections");
}
