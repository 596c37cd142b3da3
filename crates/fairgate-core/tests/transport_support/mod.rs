//! Helpers shared by the transport end-to-end tests.
#![allow(dead_code)]

use fairgate_core::engine::{secs, tx_time};
use fairgate_core::scenario::{build, parse};
use fairgate_core::stats::FlowStats;
use fairgate_core::Simulation;

/// The inline source table `source`; a TCP one with the options the hand-computed figures of
/// these tests assume added where it does not set them: one ACK per segment, no option bytes,
/// 10 ms ticks (fairgate's TCP defaults before they became ns-3's).
pub fn classic(source: &str) -> String {
    if !source.contains("kind = \"tcp\"") {
        return source.to_string();
    }
    let pinned = [
        ("timestamps", "false"),
        ("delayed_ack", "false"),
        ("granularity", "\"10ms\""),
    ];
    let body = source.trim().strip_suffix('}').expect("an inline table");
    let mut out = body.trim_end().to_string();
    for (key, value) in pinned {
        if !source.contains(&format!("{key} =")) {
            out.push_str(&format!(", {key} = {value}"));
        }
    }
    out + " }"
}

/// Two hosts `a` and `b` joined by one duplex link; `source` is the flow's inline table (see
/// [`classic`] for a TCP one).
pub fn two_hosts(rate: &str, delay: &str, limit: u64, duration: &str, source: &str) -> String {
    let source = classic(source);
    format!(
        r#"
name = "transport"
[simulation]
duration = "{duration}"
trace_every_change = true
sample_interval = "100ms"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "{rate}"
delay = "{delay}"
queue = {{ kind = "fifo", limit = {limit} }}
[[flows]]
name = "f"
src = "a"
dst = "b"
source = {source}
"#
    )
}

pub fn build_sim(text: &str, overrides: &[&str]) -> Simulation {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    build(&scenario).unwrap_or_else(|e| panic!("{e}"))
}

pub fn assert_conserved(sim: &Simulation) {
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
}

/// Builds, runs to the end and checks conservation.
pub fn run(text: &str, overrides: &[&str]) -> Simulation {
    let mut sim = build_sim(text, overrides);
    sim.run();
    assert_conserved(&sim);
    sim
}

pub fn stats(sim: &Simulation, flow: usize) -> &FlowStats {
    &sim.flow_stats()[flow]
}

/// Every traced point `(time, value)` of `name` for `flow`.
pub fn trace(sim: &Simulation, flow: u32, name: &str) -> Vec<(f64, f64)> {
    let t = sim.traces();
    let Some(var) = t.names.iter().position(|n| n == name) else {
        return Vec::new();
    };
    (0..t.len())
        .filter(|&i| t.owner[i] == flow && t.var[i] as usize == var)
        .map(|i| (t.time[i], t.value[i]))
        .collect()
}

/// Goodput of `flow` in bits per second of payload between `from` and `to` seconds.
pub fn goodput_between(sim: &mut Simulation, flow: usize, from: f64, to: f64) -> f64 {
    sim.run_until(secs(from));
    let start = sim.flow_stats()[flow].goodput_bytes;
    sim.run_until(secs(to));
    let end = sim.flow_stats()[flow].goodput_bytes;
    (end - start) as f64 * 8.0 / (to - from)
}

/// Seconds to serialise `bytes` at `rate_bps`.
pub fn tx(bytes: u32, rate_bps: u64) -> f64 {
    tx_time(bytes, rate_bps) as f64 / 1e12
}

/// The index of the link `from->to`.
pub fn port(sim: &Simulation, name: &str) -> usize {
    sim.ports()
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_else(|| panic!("no port {name}"))
}
