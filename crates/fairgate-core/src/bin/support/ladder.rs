//! The scale ladder's scenario, its build and the CPU clock, shared by `fairgate-scale`,
//! `fairgate-floor` and `fairgate-pages`.

use fairgate_core::scenario::{build, parse_for_build};
use fairgate_core::sim::Simulation;

/// The options of a run: simulated seconds and seconds between samples.
#[derive(Clone, Copy)]
pub struct Options {
    pub duration: f64,
    pub sample_interval: f64,
    pub trace_every_change: bool,
}

/// A TCP NewReno dumbbell of `flows` senders (10 Mb/s bottleneck, 100 Mb/s access links,
/// starts spread over the first 5 s).
pub fn scenario(flows: u64, options: Options) -> String {
    let Options {
        duration,
        sample_interval,
        trace_every_change,
    } = options;
    let limit = (flows * 2).max(100);
    format!(
        r#"
name = "scale-{flows}"
[simulation]
duration = {duration}
seed = 1
sample_interval = "{sample_interval}s"
trace_every_change = {trace_every_change}
[topology]
kind = "dumbbell"
senders = {flows}
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ kind = "fifo", limit = {limit} }} }}
access = {{ rate = "100Mbps", delay = "1ms" }}
[[flows]]
name = "t{{i}}"
count = {flows}
src = "s{{i}}"
dst = "d{{i}}"
start = {{ dist = "uniform", min = "0s", max = "5s" }}
source = {{ kind = "tcp", cc = "newreno" }}
"#
    )
}

/// The simulation of the `flows`-flow rung whose scenario is `text`; a rung that cannot be
/// built ends `program` with exit code 2.
pub fn build_rung(program: &str, flows: u64, text: &str) -> Simulation {
    parse_for_build(text, &[])
        .and_then(|parsed| build(&parsed))
        .unwrap_or_else(|error| {
            eprintln!("{program}: the {flows}-flow rung cannot be built: {error}");
            std::process::exit(2)
        })
}

/// CPU seconds this process has used (user + system), which a loaded machine does not inflate:
/// the scheduler's nanosecond count of the (only) thread, else the clock ticks of
/// `/proc/self/stat` (10 ms steps, coarse for the short rungs).
pub fn cpu_s() -> f64 {
    let schedstat = std::fs::read_to_string("/proc/self/schedstat").unwrap_or_default();
    if let Some(ns) = schedstat
        .split_whitespace()
        .next()
        .and_then(|t| t.parse::<f64>().ok())
    {
        return ns / 1e9;
    }
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: Vec<f64> = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse().ok())
        .collect();
    ticks.iter().sum::<f64>() / 100.0
}
