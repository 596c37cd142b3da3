//! A sample reuses the rows of the ports and agents the engine has not called into since the
//! last one. These tests run scenarios with several discipline kinds (FIFO, RED, fair queueing,
//! AQMs with internal state, a fair-queueing gateway), transports, a gateway and workloads that
//! share state between agents, twice: once reusing rows and once re-reading every object at
//! every sample; every table must come out the same.

mod results_support;

use fairgate_core::engine::secs;
use fairgate_core::results::{collect, Results};
use fairgate_core::scenario::{build, parse};
use results_support::tables_as_text;

fn run(text: &str, overrides: &[&str], every_object: bool) -> Results {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    if every_object {
        sim.sample_every_object();
    }
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

/// Runs to the end in pieces, reading the series at every pause (which expands the samples
/// logged so far into them), and collects.
fn run_in_steps(text: &str, overrides: &[&str], pauses: &[f64]) -> Results {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    let mut rows = 0;
    for &pause in pauses {
        sim.run_until(secs(pause));
        let read = sim.queue_series().time.len() + sim.traces().len();
        assert!(read >= rows, "the series only grow");
        rows = read;
    }
    sim.run();
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

fn assert_same_tables(a: &Results, b: &Results, how: &str) {
    assert!(a.queue_series.rows() > 0, "the scenario takes samples");
    assert!(a.flow_series.rows() > 0, "the scenario takes samples");
    assert!(a.traces.rows() > 0, "the agents trace variables");
    for ((name, a), (_, b)) in tables_as_text(a).iter().zip(tables_as_text(b).iter()) {
        assert!(a == b, "{name} differs {how}");
    }
}

fn assert_same_both_ways(text: &str, overrides: &[&str]) {
    let reused = run(text, overrides, false);
    let read = run(text, overrides, true);
    assert_same_tables(&reused, &read, "between reused and re-read samples");
}

fn scenario(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/");
    std::fs::read_to_string(format!("{root}{path}")).expect("a shipped scenario")
}

/// A dumbbell of TCP and CBR flows whose bottleneck discipline the test chooses.
const DUMBBELL: &str = r#"
name = "sampling"
[simulation]
duration = "6s"
seed = 3
sample_interval = "10ms"
[topology]
kind = "dumbbell"
senders = 6
bottleneck = { rate = "5Mbps", delay = "10ms", queue = { kind = "fifo", limit = 40 } }
access = { rate = "100Mbps", delay = "1ms", queue = { kind = "fifo", limit = 1000 } }
[[flows]]
name = "tcp{i}"
count = 5
src = "s{i}"
dst = "d{i}"
start = { dist = "uniform", min = "0s", max = "2s" }
source = { kind = "tcp", cc = "newreno", timestamps = false, delayed_ack = false }
[[flows]]
name = "cbr"
src = "s5"
dst = "d5"
start = "1s"
stop = "4s"
source = { kind = "cbr", rate = "2Mbps", size = 1000 }
"#;

#[test]
fn bottleneck_disciplines_give_the_same_series_both_ways() {
    for queue in [
        r#"{ kind = "red", limit = 60, min_th = 5, max_th = 15, w_q = 0.002, max_p = 0.1 }"#,
        r#"{ kind = "fq" }"#,
        r#"{ kind = "stochastic_fq" }"#,
        r#"{ kind = "drr" }"#,
        r#"{ kind = "pi" }"#,
        r#"{ kind = "blue" }"#,
        r#"{ kind = "sfb" }"#,
        r#"{ kind = "fred" }"#,
        r#"{ kind = "avq" }"#,
    ] {
        let bottleneck = format!(
            "topology.bottleneck={{ rate = \"5Mbps\", delay = \"10ms\", queue = {queue} }}"
        );
        assert_same_both_ways(DUMBBELL, &[&bottleneck]);
    }
}

#[test]
fn a_device_queue_under_the_discipline_gives_the_same_series_both_ways() {
    // A packet leaving the device queue is counted as a departure; the engine then refills
    // the queue from the discipline, which marks the port.
    for device_queue in ["1", "3"] {
        let red =
            r#"{ kind = "red", limit = 60, min_th = 5, max_th = 15, w_q = 0.002, max_p = 0.1 }"#;
        let bottleneck = format!(
            "topology.bottleneck={{ rate = \"5Mbps\", delay = \"10ms\", queue = {red}, \
             device_queue = {device_queue} }}"
        );
        assert_same_both_ways(DUMBBELL, &[&bottleneck]);
    }
}

#[test]
fn traces_of_every_window_change_interleave_the_same_way() {
    assert_same_both_ways(DUMBBELL, &["simulation.trace_every_change=true"]);
}

#[test]
fn a_gateway_with_red_gives_the_same_series_both_ways() {
    let text = scenario("satellite_pep.toml");
    assert_same_both_ways(&text, &["simulation.duration=\"8s\""]);
}

#[test]
fn workloads_sharing_state_between_agents_give_the_same_series_both_ways() {
    let text = scenario("satellite_http.toml");
    assert_same_both_ways(
        &text,
        &[
            "simulation.duration=\"40s\"",
            "simulation.sample_interval=\"500ms\"",
        ],
    );
}

#[test]
fn fair_queueing_with_packet_pair_gives_the_same_series_both_ways() {
    let text = scenario("keshav/s1.toml");
    assert_same_both_ways(&text, &["simulation.duration=\"60s\""]);
}

#[test]
fn a_web_workload_over_host_pools_gives_the_same_series_both_ways() {
    // Only the flow's own client agent samples the pool's open connections, which the other
    // clients and the servers change without a call into it.
    let text = r#"
name = "pools"
[simulation]
duration = "20s"
seed = 11
sample_interval = "10ms"
[topology]
kind = "dumbbell"
senders = 8
bottleneck = { rate = "20Mbps", delay = "10ms", queue = { kind = "fifo", limit = 200 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "web"
src = "s0"
dst = "d0"
source = { kind = "web", sessions = 64, start_window = "5s", think = { dist = "exponential", mean = "1s" }, tcp = { cc = "reno", timestamps = false, delayed_ack = false }, servers = { hosts = "s{i}", count = 8 }, clients = { hosts = "d{i}", count = 8 } }
"#;
    assert_same_both_ways(text, &[]);
}

#[test]
fn transports_started_late_and_stopped_early_give_the_same_series_both_ways() {
    let text = format!(
        "{DUMBBELL}{}",
        r#"
[[flows]]
name = "late{i}"
count = 3
src = "s{i}"
dst = "d{i}"
start = "3.5s"
source = { kind = "tcp", cc = "reno", timestamps = false, delayed_ack = false }
[[flows]]
name = "early{i}"
count = 3
src = "s{i}"
dst = "d{i}"
start = "0.5s"
stop = "2.5s"
source = { kind = "tcp", cc = "sack", timestamps = true, delayed_ack = true }
"#
    );
    assert_same_both_ways(&text, &[]);
}

#[test]
fn a_run_paused_and_read_in_steps_gives_the_tables_of_one_run() {
    // Every pause expands the samples logged so far; the agents' own trace rows written
    // between two samples must still land between them.
    for overrides in [&[][..], &["simulation.trace_every_change=true"][..]] {
        let whole = run(DUMBBELL, overrides, false);
        let pauses = [0.0, 0.0, 0.005, 0.01, 1.0, 1.0, 2.345, 4.0, 5.99];
        let paused = run_in_steps(DUMBBELL, overrides, &pauses);
        assert_same_tables(&whole, &paused, "between one run and a paused one");
    }
}
