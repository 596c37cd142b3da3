//! Whole-scenario benchmark (issue 2): 100 Poisson flows over a 3-hop chain until 10 million
//! packets have been offered; reports packet-hops and events per second and peak memory.
//!
//! Usage: `fairgate-bench [PACKETS]` (default 10,000,000). Build in release mode.

mod support;

use fairgate_core::scenario::{build, parse};
use std::time::Instant;
use support::peak_rss_mib;

const FLOWS: u64 = 100;
const LINK_BPS: f64 = 1e9;
const LOAD: f64 = 0.9;
const PACKET_BYTES: f64 = 1000.0;

fn scenario(packets: u64) -> String {
    let total_pps = LINK_BPS * LOAD / (PACKET_BYTES * 8.0);
    let duration = packets as f64 / total_pps;
    let per_flow_bps = LINK_BPS * LOAD / FLOWS as f64;
    format!(
        r#"
name = "bench-chain"
[simulation]
duration = {duration}
seed = 1
sample_interval = "1s"
[topology]
kind = "chain"
hops = 3
bottleneck = {{ rate = "1Gbps", delay = "5ms", queue = {{ kind = "fifo", limit = 200 }} }}
access = {{ rate = "10Gbps", delay = "1ms", queue = {{ kind = "fifo", limit = 1000 }} }}
[[flows]]
name = "p{{i}}"
count = {FLOWS}
src = "src"
dst = "dst"
source = {{ kind = "poisson", rate = {per_flow_bps}, size = {PACKET_BYTES} }}
"#
    )
}

fn main() {
    let packets: u64 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 10_000_000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: fairgate-bench [PACKETS], PACKETS a positive integer");
            std::process::exit(2);
        }
    };
    let scenario = parse(&scenario(packets), &[]).expect("the benchmark scenario is valid");
    let mut sim = build(&scenario).expect("the benchmark scenario builds");
    let started = Instant::now();
    sim.run();
    let wall = started.elapsed().as_secs_f64();
    let violations = sim.conservation_violations();
    assert!(
        violations.is_empty(),
        "conservation violated: {violations:?}"
    );
    let offered: u64 = sim.flow_stats().iter().map(|s| s.offered_pkts).sum();
    let hops = sim.packet_hops();
    let events = sim.events_processed();
    println!("scenario            100 Poisson flows, 3-hop chain (5 links per path), load {LOAD}");
    println!("packets offered     {offered}");
    println!("packet-hops         {hops}");
    println!("events              {events}");
    println!("wall time           {wall:.3} s");
    println!("packet-hops/s       {:.3} M", hops as f64 / wall / 1e6);
    println!("events/s            {:.3} M", events as f64 / wall / 1e6);
    println!("arena high water    {} packets", sim.arena_high_water());
    println!("events pending      {}", sim.events_pending());
    if let Some(mib) = peak_rss_mib() {
        println!("peak memory (RSS)   {mib:.1} MiB");
    }
}
