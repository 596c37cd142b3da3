//! The PEP gateway benchmark (issue 17's speed target): Byun's chapter-4 configuration
//! [Byun07, §3], `scenarios/satellite_http.toml` (400 HTTP connections split by the PEP gateway,
//! RED before the PEP watching the transmit queue, 20 Mb/s regulator, GEO downlink), 20
//! simulated minutes on one core. Reports wall time, events per second, peak memory and the
//! memory the run added per concurrent split connection (the run's growth over the 400
//! connections open at once, trace tables included).
//!
//! Also reports the split connections the PEP opened and retired (a connection is retired once
//! its FIN has passed and the client has acknowledged everything).
//!
//! Usage: `fairgate-bench-pep [SECONDS] [KEY=VALUE ...]` (default 1200 s; overrides as with
//! `fairgate run --set`, e.g. `flows[0].source.fin="none"`). Build in release mode.

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
    let mut overrides = vec![format!("simulation.duration={secs}s")];
    overrides.extend(std::env::args().skip(2));
    let scenario = match parse(SCENARIO, &overrides) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
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
    let last = |name: &str| {
        let t = sim.traces();
        let var = t.names.iter().position(|n| n == name)? as u32;
        let at = t.var.iter().rposition(|&v| v == var)?;
        Some(t.value[at])
    };
    if let (Some(opened), Some(retired)) = (last("pep.splits_opened"), last("pep.splits_retired")) {
        println!("splits              {opened} opened, {retired} retired");
    }
    let slot = std::mem::size_of::<Option<fairgate_core::gateway::SplitConnection>>();
    println!("split state         {slot} B inline per connection slot (plus its buffers)");
    if let (Some(start), Some(peak)) = (before, peak_rss_mib()) {
        println!("peak memory (RSS)   {peak:.1} MiB");
        let per_conn = (peak - start) * 1024.0 / CONNECTIONS;
        println!("per split conn      {per_conn:.1} KiB (run's growth / 400 open connections)");
    }
}
