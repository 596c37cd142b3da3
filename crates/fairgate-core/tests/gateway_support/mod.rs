//! Helpers shared by the gateway end-to-end tests.
#![allow(dead_code)]

use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;

/// Runs `scenario` with `overrides` to its end and asserts conservation held throughout.
pub fn run(scenario: &str, overrides: &[&str]) -> Simulation {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(scenario, &o).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    sim
}

/// Every sample of trace `name`: (time, owner flow, value).
pub fn trace_all(sim: &Simulation, name: &str) -> Vec<(f64, u32, f64)> {
    let t = sim.traces();
    let Some(var) = t.names.iter().position(|n| n == name) else {
        return Vec::new();
    };
    (0..t.time.len())
        .filter(|&i| t.var[i] as usize == var)
        .map(|i| (t.time[i], t.owner[i], t.value[i]))
        .collect()
}

/// The samples of trace `name` filed under flow 0: (time, value).
pub fn trace(sim: &Simulation, name: &str) -> Vec<(f64, f64)> {
    trace_all(sim, name)
        .into_iter()
        .filter(|s| s.1 == 0)
        .map(|s| (s.0, s.2))
        .collect()
}
