//! Soak: runs `scenarios/soak.toml` in chunks of simulated time until a number of events
//! (default 10^9) and prints, per chunk, the events so far, the event rate and the resident
//! memory, which must stay flat. At every chunk the conservation laws must hold: they compare
//! sums of the packet and byte counters, which a wrapped counter would break.
//!
//! Usage: `fairgate-soak [--events N] [--chunk SECONDS]` (defaults: 10^9 events, 100 s chunks).

use fairgate_core::engine::secs;
use fairgate_core::scenario::{build, parse_for_build};
use std::time::Instant;

const SCENARIO: &str = include_str!("../../../../scenarios/soak.toml");

fn rss_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn flag(args: &[String], name: &str, default: f64) -> f64 {
    match args.iter().position(|a| a == name) {
        None => default,
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| {
                eprintln!("usage: fairgate-soak [--events N] [--chunk SECONDS]");
                std::process::exit(2)
            }),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target = flag(&args, "--events", 1e9) as u64;
    let chunk = flag(&args, "--chunk", 100.0);
    let scenario = parse_for_build(SCENARIO, &[]).expect("the soak scenario parses");
    let mut sim = build(&scenario).expect("the soak scenario builds");
    println!(
        "{:>10} {:>14} {:>8} {:>9} {:>9}",
        "sim s", "events", "wall s", "Mev/s", "RSS MiB"
    );
    let started = Instant::now();
    let mut t = 0.0;
    let mut last = (0u64, 0.0f64);
    while sim.events_processed() < target && !sim.finished() {
        t += chunk;
        sim.run_until(secs(t));
        if let Some(why) = sim.failure() {
            panic!("the soak stopped: {why}");
        }
        let violations = sim.conservation_violations();
        assert!(
            violations.is_empty(),
            "conservation violated: {violations:?}"
        );
        let (events, wall) = (sim.events_processed(), started.elapsed().as_secs_f64());
        let rate = (events - last.0) as f64 / (wall - last.1).max(1e-9) / 1e6;
        println!(
            "{t:>10.0} {events:>14} {wall:>8.1} {rate:>9.3} {:>9.1}",
            rss_mib("VmRSS:")
        );
        last = (events, wall);
    }
    let wall = started.elapsed().as_secs_f64();
    println!(
        "done: {} events in {wall:.1} s wall ({:.3} Mev/s), {t:.0} s simulated, peak RSS {:.1} MiB",
        sim.events_processed(),
        sim.events_processed() as f64 / wall / 1e6,
        rss_mib("VmHWM:")
    );
}
