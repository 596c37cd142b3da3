//! Connections come and go, their state recycled: over 10^5 web objects, and over 10^5 HTTP
//! connections, the memory of the process at 10% of the run and at its end are within 10%,
//! and the connection slots in use stay near the number of sessions or of the population.
//! (The 10^6-object web run is a slow Python test.)

mod workload_support;

use fairgate_core::results::collect;
use fairgate_core::scenario::{build, parse};
use workload_support::trace;

const SCENARIO: &str = r#"
name = "churn"
[simulation]
duration = "60s"
seed = 2
sample_interval = "6s"
[[nodes]]
name = "server"
[[nodes]]
name = "client"
[[links]]
from = "server"
to = "client"
rate = "1Gbps"
delay = "5ms"
queue = { kind = "fifo", limit = 1000 }
[[flows]]
name = "web"
src = "server"
dst = "client"
source = { kind = "web", sessions = 1000, start_window = "1s", think = { dist = "exponential", mean = "0.5s" }, record_transfers = false }
"#;

fn rss_kib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .expect("VmRSS");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Runs `text`, returning its results and the RSS at 10% of the run and at its end.
fn run_measured(text: &str) -> (fairgate_core::results::Results, f64, f64) {
    let scenario = parse(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until(sim.end() / 10);
    let early = rss_kib();
    sim.run();
    let late = rss_kib();
    assert!(sim.conservation_violations().is_empty());
    (collect(&mut sim, "churn", 2), early, late)
}

#[test]
fn memory_is_flat_while_connections_come_and_go() {
    let (r, early, late) = run_measured(SCENARIO);
    let objects = trace(&r, "objects").last().unwrap().1;
    let open_max = trace(&r, "open_connections")
        .into_iter()
        .fold(0.0, |m, (_, v)| f64::max(m, v));
    eprintln!("{objects} objects, at most {open_max} open, RSS {early} -> {late} KiB");
    assert!(objects > 100_000.0, "{objects}");
    assert!(open_max < 2000.0 * 1.5, "{open_max} objects open at once");
    assert!(
        (late - early).abs() / early < 0.10,
        "RSS {early} -> {late} KiB"
    );
}

#[test]
fn memory_is_flat_while_an_http_population_is_replaced() {
    let text = SCENARIO.replace(
        "source = { kind = \"web\", sessions = 1000, start_window = \"1s\", think = { dist = \"exponential\", mean = \"0.5s\" }, record_transfers = false }",
        "source = { kind = \"http\", connections = 1000, page_size = 3000, think = { dist = \"exponential\", mean = \"0.2s\" }, ramp_batch = 1000, ramp_step = \"1s\", ramp_pause = \"0s\", record_transfers = false }",
    );
    assert!(text.contains("\"http\""));
    let (r, early, late) = run_measured(&text);
    let births = trace(&r, "births").last().unwrap().1;
    let population_max = trace(&r, "population")
        .into_iter()
        .fold(0.0, |m, (_, v)| f64::max(m, v));
    let open_max = trace(&r, "open_connections")
        .into_iter()
        .fold(0.0, |m, (_, v)| f64::max(m, v));
    eprintln!("{births} connections, at most {open_max} open, RSS {early} -> {late} KiB");
    assert!(births > 100_000.0, "{births}");
    assert_eq!(population_max, 1000.0);
    assert!(open_max <= 1000.0, "{open_max} objects open at once");
    assert!(
        (late - early).abs() / early < 0.10,
        "RSS {early} -> {late} KiB"
    );
}
