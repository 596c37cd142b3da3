//! Scale ladder: TCP NewReno dumbbells (10 Mb/s bottleneck, 60 s simulated) at 10, 1,000,
//! 10,000 and 100,000 flows. Reports, per rung, scenario build time, run time, events per
//! second, peak RSS and RSS per flow; build and run time both as wall and as CPU time (the
//! latter holds on a loaded machine, where wall time does not), and CPU time per event. Each rung runs in a child process so peak RSS is its own.
//! After the run it takes the series out (where the samples logged during the run become the
//! dense series the tables hold) and reports the CPU time that takes and the peak RSS with
//! them.
//!
//! Usage: `fairgate-scale [FLOWS...] [--duration SECONDS] [--sample-interval SECONDS]
//! [--trace-every-change]` (defaults: the ladder above, 60 s, a sample every 10 s, windows
//! traced at the samples only). A sample interval longer than the run leaves one sample, at the
//! start: the difference to the default is what sampling costs.

#[path = "support/ladder.rs"]
mod ladder;

use fairgate_core::net::packet::Packet;
use ladder::{build_rung, cpu_s, scenario, Options};
use std::process::Command;
use std::time::Instant;

const LADDER: [u64; 4] = [10, 1_000, 10_000, 100_000];
const MIB: f64 = 1024.0 * 1024.0;

fn rss_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// One rung in this process; prints one table row.
fn rung(flows: u64, options: Options) {
    let text = scenario(flows, options);
    let started = Instant::now();
    let cpu_started = cpu_s();
    let mut sim = build_rung("fairgate-scale", flows, &text);
    let build_s = started.elapsed().as_secs_f64();
    let build_cpu_s = cpu_s() - cpu_started;
    let rss_built = rss_kib("VmRSS:");
    let started = Instant::now();
    let cpu_started = cpu_s();
    sim.run();
    let run_s = started.elapsed().as_secs_f64();
    let run_cpu_s = cpu_s() - cpu_started;
    let violations = sim.conservation_violations();
    assert!(
        violations.is_empty(),
        "conservation violated: {violations:?}"
    );
    let events = sim.events_processed();
    let peak = rss_kib("VmHWM:");
    let packets_mib = (sim.arena_high_water() * std::mem::size_of::<Packet>()) as f64 / MIB;
    let cpu_started = cpu_s();
    let series = (sim.take_series(), sim.take_class_series());
    let series_cpu_s = cpu_s() - cpu_started;
    let series_mib = rss_kib("VmHWM:") as f64 / 1024.0;
    drop(series);
    println!(
        "{flows:>8} {build_s:>9.3} {build_cpu_s:>9.3} {run_s:>9.2} {run_cpu_s:>9.3} {events:>12} {:>9.3} {:>9.3} {:>8.1} {:>8.1} {:>10.2} {packets_mib:>9.1} {series_cpu_s:>10.3} {series_mib:>10.1}",
        events as f64 / run_s / 1e6,
        run_cpu_s * 1e6 / events as f64,
        rss_built as f64 / 1024.0,
        peak as f64 / 1024.0,
        peak as f64 / flows as f64,
    );
}

const USAGE: &str =
    "usage: fairgate-scale [FLOWS...] [--duration SECONDS] [--sample-interval SECONDS]";

/// Removes `--flag VALUE` from `args` and returns the value (None when the flag is absent).
fn take_seconds(args: &mut Vec<String>, flag: &str) -> Option<f64> {
    let i = args.iter().position(|a| a == flag)?;
    let value = args
        .get(i + 1)
        .and_then(|d| d.parse().ok())
        .filter(|s: &f64| s.is_finite() && *s > 0.0)
        .unwrap_or_else(|| {
            eprintln!("{USAGE}");
            std::process::exit(2)
        });
    args.drain(i..=i + 1);
    Some(value)
}

/// Removes `flag` from `args`; whether it was there.
fn take_flag(args: &mut Vec<String>, flag: &str) -> bool {
    let before = args.len();
    args.retain(|a| a != flag);
    args.len() != before
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let options = Options {
        duration: take_seconds(&mut args, "--duration").unwrap_or(60.0),
        sample_interval: take_seconds(&mut args, "--sample-interval").unwrap_or(10.0),
        trace_every_change: take_flag(&mut args, "--trace-every-change"),
    };
    let Options {
        duration,
        sample_interval,
        trace_every_change,
    } = options;
    if let [flag, flows] = &args[..] {
        if flag == "--rung" {
            rung(flows.parse().expect("a flow count"), options);
            return;
        }
    }
    let ladder: Vec<u64> = if args.is_empty() {
        LADDER.to_vec()
    } else {
        args.iter().filter_map(|a| a.parse().ok()).collect()
    };
    println!(
        "TCP NewReno dumbbells, 10 Mb/s bottleneck, {duration} s simulated, a sample every \
         {sample_interval} s{}; pkts MiB: the packet arena at its high-water mark ({} bytes a packet)",
        match trace_every_change {
            true => ", every window change traced",
            false => "",
        },
        std::mem::size_of::<Packet>()
    );
    println!(
        "{:>8} {:>9} {:>9} {:>9} {:>9} {:>12} {:>9} {:>9} {:>8} {:>8} {:>10} {:>9} {:>10} {:>10}",
        "flows",
        "build s",
        "build cpu",
        "run s",
        "run cpu",
        "events",
        "Mev/s",
        "cpu us/ev",
        "RSS MiB",
        "peak MiB",
        "KiB/flow",
        "pkts MiB",
        "series cpu",
        "+series MiB"
    );
    let me = std::env::current_exe().expect("the benchmark's own path");
    for flows in ladder {
        let status = Command::new(&me)
            .args([
                "--rung",
                &flows.to_string(),
                "--duration",
                &duration.to_string(),
                "--sample-interval",
                &sample_interval.to_string(),
            ])
            .args(trace_every_change.then_some("--trace-every-change"))
            .status()
            .expect("the rung starts");
        if !status.success() {
            eprintln!("fairgate-scale: the rung with {flows} flows failed");
            std::process::exit(status.code().unwrap_or(1));
        }
    }
}
