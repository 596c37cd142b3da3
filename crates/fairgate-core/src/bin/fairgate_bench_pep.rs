//! The PEP gateway benchmark (issue 17's speed target): Byun's chapter-4 configuration
//! [Byun07, §3], `scenarios/satellite_http.toml` (400 HTTP connections split by the PEP gateway,
//! RED before the PEP watching the transmit queue, 20 Mb/s regulator, GEO downlink), 20
//! simulated minutes on one core. Reports wall time, events per second, peak memory and the
//! memory the run added per concurrent split connection (the run's growth over the 400
//! connections open at once, trace tables included).
//!
//! Usage: `fairgate-bench-pep [SECONDS]` (default 1200). Build in release mode.

mod support;

use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;
use std::time::Instant;
use support::peak_rss_mib;

const SCENARIO: &str = include_str!("../../../../scenarios/satellite_http.toml");
const CONNECTIONS: f64 = 400.0;

fn main() {
    let seconds = std::env::args().nth(1).unwrap_or_else(|| "1200".into());
    let Ok(secs) = seconds.parse::<f64>() else {
        eprintln!("usage: fairgate-bench-pep [SECONDS], got {seconds:?}");
        std::process::exit(2);
    };
    let duration = format!("simulation.duration={secs}s");
    let scenario = parse(SCENARIO, &[duration]).expect("the benchmark scenario is valid");
    let mut sim: Simulation = build(&scenario).expect("the benchmark scenario builds");
    let before = peak_rss_mib();
    let started = Instant::now();
    sim.run();
    let wall = started.elapsed().as_secs_f64();
    let violations = sim.conservation_violations();
    assert!(
        violations.is_empty(),
        "conservation violated: {violations:?}"
    );
    let events = sim.events_processed();
    println!("scenario            Byun chapter 4: 400 HTTP connections through the PEP, {secs} s");
    println!("events              {events}");
    println!("wall time           {wall:.3} s (target < 15 s for 1200 s)");
    println!("events/s            {:.3} M", events as f64 / wall / 1e6);
    println!("packet-hops         {}", sim.packet_hops());
    if let (Some(start), Some(peak)) = (before, peak_rss_mib()) {
        println!("peak memory (RSS)   {peak:.1} MiB");
        let per_conn = (peak - start) * 1024.0 / CONNECTIONS;
        println!("per split conn      {per_conn:.1} KiB (run's growth / 400 open connections)");
    }
}
