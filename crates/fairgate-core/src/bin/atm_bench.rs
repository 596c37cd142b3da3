//! Cell-level benchmark: experiment E3 of [Goyal98, §5] (100 SACK TCPs on 5 GFR VCs, MCR set
//! B, DFBA with a 25k-cell buffer) for SECONDS of simulated time (default 60); reports cells
//! across the backbone, cells created, events, wall time and the rates.
//!
//! Usage: `fairgate-atm-bench [SECONDS]`. Build in release mode.

use fairgate_core::atm::run;
use fairgate_core::scenario;
use std::time::Instant;

fn config(seconds: f64) -> String {
    let vcs: String = [20_000, 40_000, 60_000, 80_000, 100_000]
        .iter()
        .enumerate()
        .map(|(i, mcr)| {
            format!(
                "[[atm.vcs]]\nname = \"vc{}\"\nmcr = {mcr}\ntcps = 20\n",
                i + 1
            )
        })
        .collect();
    format!(
        "[simulation]\nduration = {seconds}\nwarmup = 1\nseed = 1\nsample_interval = 0.01\n\
         [atm]\nbuffer = {{ kind = \"dfba\", limit = 25000 }}\n\
         tcp = {{ cc = \"sack\", mss = 1460, rwnd = 1048576, window_scale = 5 }}\n{vcs}"
    )
}

fn main() {
    let seconds: f64 = match std::env::args().nth(1).map(|a| a.parse()) {
        None => 60.0,
        Some(Ok(s)) if s > 1.0 => s,
        Some(_) => {
            eprintln!("usage: fairgate-atm-bench [SECONDS], SECONDS a number above 1");
            std::process::exit(2);
        }
    };
    let scenario = scenario::parse(&config(seconds), &[]).expect("the benchmark scenario parses");
    let config = scenario::atm::atm_config(&scenario).expect("the benchmark scenario is valid");
    let started = Instant::now();
    let results = match run(&config) {
        Ok(r) => r,
        Err(violation) => {
            eprintln!("conservation violated: {violation}");
            std::process::exit(1);
        }
    };
    let wall = started.elapsed().as_secs_f64();
    println!("E3 cell benchmark: {seconds} s simulated in {wall:.2} s wall");
    println!(
        "backbone cells {} ({:.3} M/s wall), cells created {} ({:.3} M/s), events {} ({:.3} M/s)",
        results.backbone_cells,
        results.backbone_cells as f64 / wall / 1e6,
        results.cells_created,
        results.cells_created as f64 / wall / 1e6,
        results.events,
        results.events as f64 / wall / 1e6
    );
    println!(
        "total goodput {:.2} Mb/s; simulated/wall {:.2}",
        results.total_goodput_mbps,
        seconds / wall
    );
}
