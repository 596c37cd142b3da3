//! The scale ladder's scenario and CPU clock, shared by `fairgate-scale` and `fairgate-floor`.

/// A TCP NewReno dumbbell of `flows` senders (10 Mb/s bottleneck, 100 Mb/s access links,
/// starts spread over the first 5 s) simulated for `duration` seconds.
pub fn scenario(flows: u64, duration: f64) -> String {
    let limit = (flows * 2).max(100);
    format!(
        r#"
name = "scale-{flows}"
[simulation]
duration = {duration}
seed = 1
sample_interval = "10s"
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

/// Removes `--duration SECONDS` from `args` and returns it (60 s without one); exits with
/// status 2 and the usage of `program` when the value is missing or not a number.
pub fn take_duration(args: &mut Vec<String>, program: &str) -> f64 {
    let Some(i) = args.iter().position(|a| a == "--duration") else {
        return 60.0;
    };
    let duration = args
        .get(i + 1)
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("usage: {program} [FLOWS...] [--duration SECONDS]");
            std::process::exit(2)
        });
    args.drain(i..=i + 1);
    duration
}
