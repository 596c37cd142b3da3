//! Workload benchmarks (issue 15): the SFG evaluation's load [Chung06, §4.1] (300 web
//! sessions, forward FTP flows stepping 10-50-100-200-400-400-200-100-50-10 in 200 s phases, 50
//! reverse FTP flows, a 10 Mb/s bottleneck, 2000 s) and Byun's HTTP load [Byun07, §3.3] (400
//! connections of U[250, 550] KB pages through 20 Mb/s, 20 minutes). Reports wall time, events
//! per second, connections made and peak memory.
//!
//! Usage: `fairgate-bench-workloads [sfg|byun]` (default both). Build in release mode.

mod support;

use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;
use std::time::Instant;
use support::peak_rss_mib;

/// Forward FTP groups (count, start s, stop s): nested so that the active count steps
/// 10, 50, 100, 200, 400, 400, 200, 100, 50, 10 over ten 200 s phases.
const FTP_GROUPS: [(u32, u32, u32); 5] = [
    (10, 0, 2000),
    (40, 200, 1800),
    (50, 400, 1600),
    (100, 600, 1400),
    (200, 800, 1200),
];

fn sfg_scenario() -> String {
    let tcp = r#"kind = "tcp", cc = "newreno", ecn = true"#;
    let mut text = String::from(
        r#"
name = "bench-sfg-load"
[simulation]
duration = "2000s"
seed = 1
sample_interval = "1s"
[topology]
kind = "dumbbell"
senders = 200
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "fifo", limit = 500 } }
access = { rate = "100Mbps", delay = "1ms" }
rtt = { dist = "uniform", min = "60ms", max = "1000ms" }
[[flows]]
name = "web{i}"
count = 10
src = "s{i}"
dst = "d{i}"
source = { kind = "web", sessions = 30, start_window = "30s", tcp = { ecn = true } }
[[flows]]
name = "rev{i}"
count = 50
src = "d{i}"
dst = "s{i}"
"#,
    );
    text += &format!("source = {{ {tcp} }}\n");
    for (g, (count, start, stop)) in FTP_GROUPS.iter().enumerate() {
        text += &format!(
            "[[flows]]\nname = \"ftp{g}.{{i}}\"\ncount = {count}\nsrc = \"s{{i}}\"\n\
             dst = \"d{{i}}\"\nstart = {start}\nstop = {stop}\nsource = {{ {tcp} }}\n"
        );
    }
    text
}

const BYUN: &str = r#"
name = "bench-byun-load"
[simulation]
duration = "1200s"
seed = 1
sample_interval = "100ms"
[[nodes]]
name = "servers"
[[nodes]]
name = "gateway"
kind = "router"
[[nodes]]
name = "clients"
[[links]]
from = "servers"
to = "gateway"
rate = "100Mbps"
delay = "30ms"
[[links]]
from = "gateway"
to = "clients"
rate = "20Mbps"
delay = "350ms"
queue = { kind = "fifo", limit = 59 }
reverse = { rate = "1Mbps" }
[[flows]]
name = "http"
src = "servers"
dst = "clients"
source = { kind = "http", connections = 400 }
"#;

fn run(label: &str, text: &str) {
    let scenario = parse(text, &[]).expect("the benchmark scenario is valid");
    let mut sim: Simulation = build(&scenario).expect("the benchmark scenario builds");
    let started = Instant::now();
    sim.run();
    let wall = started.elapsed().as_secs_f64();
    let violations = sim.conservation_violations();
    assert!(
        violations.is_empty(),
        "conservation violated: {violations:?}"
    );
    let events = sim.events_processed();
    let transfers = sim.take_transfers().rows.len();
    println!("scenario            {label}");
    println!("events              {events}");
    println!("wall time           {wall:.3} s");
    println!("events/s            {:.3} M", events as f64 / wall / 1e6);
    println!("packet-hops         {}", sim.packet_hops());
    println!("transfers finished  {transfers}");
    if let Some(mib) = peak_rss_mib() {
        println!("peak memory (RSS)   {mib:.1} MiB (whole process so far)");
    }
    println!();
}

fn main() {
    let which = std::env::args().nth(1);
    let wanted = |name: &str| which.as_deref().is_none_or(|w| w == name);
    if !matches!(which.as_deref(), None | Some("sfg") | Some("byun")) {
        eprintln!("usage: fairgate-bench-workloads [sfg|byun]");
        std::process::exit(2);
    }
    if wanted("sfg") {
        run(
            "SFG load: 300 web sessions, 10-400 FTP, 50 reverse FTP, 10 Mb/s, 2000 s",
            &sfg_scenario(),
        );
    }
    if wanted("byun") {
        run("Byun load: 400 HTTP connections, 20 Mb/s, 1200 s", BYUN);
    }
}
