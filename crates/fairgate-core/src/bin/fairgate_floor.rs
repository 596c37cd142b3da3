//! Memory-latency floor of the scale ladder. Runs a ladder rung (the dumbbells of
//! `fairgate-scale`) once plainly for its CPU time per event, once recording each event's
//! [`Footprint`] (the record it names and the object behind it), then replays only those loads
//! on a replica of the touched memory: the same pages in the same order, each line at its
//! offset, without the gaps between them (so the replica is a lower bound). Each event's object
//! load waits for its record; `serial` replays also make each event wait for the previous one,
//! as the engine does (the event queue's own loads left out), with no hints or with the engine's hints (the record of event i+2 and
//! the object of event i+1, reached through its record) or deeper ones; `independent` lets
//! events overlap as far as the CPU's window reaches. Figures are CPU ns per event, the best of
//! three passes of at least 0.3 s each.
//!
//! Usage: `fairgate-floor [FLOWS...] [--duration SECONDS]` (defaults: 1,000 and 100,000, 60 s).

#[path = "support/ladder.rs"]
mod ladder;

use fairgate_core::engine::prefetch::prefetch;
use fairgate_core::sim::{Footprint, Simulation};
use ladder::{build_rung, cpu_s, scenario, Options};
use std::hint::black_box;

const PAGE_WORDS: usize = 512;
const NONE: u32 = u32::MAX;
const PASSES: usize = 3;
const PASS_CPU_S: f64 = 0.3;

/// An event's loads as word indices into the replica ([`NONE`] where it has none).
#[derive(Clone, Copy)]
struct Loads {
    records: [u32; 2],
    object: u32,
}

/// How far ahead a serial replay hints: (record of event i+n, object of event i+m).
type Ahead = Option<(usize, usize)>;

fn built(flows: u64, duration: f64) -> Simulation {
    let options = Options {
        duration,
        sample_interval: 10.0,
        trace_every_change: false,
    };
    build_rung("fairgate-floor", flows, &scenario(flows, options))
}

fn plain_us_per_event(flows: u64, duration: f64) -> f64 {
    let mut sim = built(flows, duration);
    let started = cpu_s();
    sim.run();
    (cpu_s() - started) * 1e6 / sim.events_processed() as f64
}

fn recorded(flows: u64, duration: f64) -> Vec<Footprint> {
    let mut sim = built(flows, duration);
    let mut trace = Vec::new();
    let end = sim.end();
    sim.run_observing(end, |sim, event| trace.push(sim.footprint(event)));
    trace
}

/// The replica of every page the trace touches (its words, of which the first page-aligned
/// one starts page 0), the page count, and the trace as word indices from that first word.
fn replica(trace: &[Footprint]) -> (Vec<u64>, usize, Vec<Loads>) {
    let mut pages: Vec<usize> = trace
        .iter()
        .flat_map(|f| [f.records[0], f.records[1], f.object])
        .filter(|&a| a != 0)
        .map(|a| a >> 12)
        .collect();
    pages.sort_unstable();
    pages.dedup();
    let word = |address: usize| -> u32 {
        if address == 0 {
            return NONE;
        }
        let page = pages
            .binary_search(&(address >> 12))
            .expect("a touched page");
        (page * PAGE_WORDS + (address & 4095) / 8) as u32
    };
    let loads = trace
        .iter()
        .map(|f| Loads {
            records: [word(f.records[0]), word(f.records[1])],
            object: word(f.object),
        })
        .collect();
    (vec![1; (pages.len() + 1) * PAGE_WORDS], pages.len(), loads)
}

fn word_at(memory: &[u64], index: u32, dependency: u64) -> u64 {
    memory[index as usize + dependency as usize]
}

fn hint(memory: &[u64], loads: &[Loads], ahead: Ahead, i: usize, zero: u64) {
    let Some((record_ahead, object_ahead)) = ahead else {
        return;
    };
    if let Some(later) = loads.get(i + record_ahead) {
        for &r in later.records.iter().filter(|&&r| r != NONE) {
            prefetch(&memory[r as usize]);
        }
    }
    if let Some(sooner) = loads.get(i + object_ahead) {
        if sooner.object != NONE && sooner.records[0] != NONE {
            let through = word_at(memory, sooner.records[0], 0) & zero;
            prefetch(&memory[sooner.object as usize + through as usize]);
        }
    }
}

/// Replays the loads; `serial` chains each event to the previous one. Returns a checksum.
fn replay(memory: &[u64], loads: &[Loads], ahead: Ahead, serial: bool) -> u64 {
    let zero = black_box(0u64);
    let (mut chain, mut sum) = (0u64, 0u64);
    for (i, event) in loads.iter().enumerate() {
        hint(memory, loads, ahead, i, zero);
        let mut value = chain;
        for &r in event.records.iter().filter(|&&r| r != NONE) {
            value = value.wrapping_add(word_at(memory, r, chain));
        }
        if event.object != NONE {
            value = value.wrapping_add(word_at(memory, event.object, value & zero));
        }
        sum = sum.wrapping_add(value);
        if serial {
            chain = value & zero;
        }
    }
    sum
}

/// CPU ns per event of the best of [`PASSES`] passes, each repeating the replay for at
/// least [`PASS_CPU_S`] (the thread's CPU clock advances in scheduler ticks).
fn ns_per_event(memory: &[u64], loads: &[Loads], ahead: Ahead, serial: bool) -> f64 {
    (0..PASSES)
        .map(|_| {
            let started = cpu_s();
            let mut replays = 0;
            while replays == 0 || cpu_s() - started < PASS_CPU_S {
                black_box(replay(memory, loads, ahead, serial));
                replays += 1;
            }
            (cpu_s() - started) * 1e9 / (replays * loads.len()) as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn rung(flows: u64, duration: f64) {
    let plain = plain_us_per_event(flows, duration);
    let trace = recorded(flows, duration);
    let (words, pages, loads) = replica(&trace);
    drop(trace);
    let misaligned = words.as_ptr() as usize % 4096;
    let skip = (4096 - misaligned) % 4096 / 8;
    let memory = &words[skip..skip + pages * PAGE_WORDS];
    let modes: [(Ahead, bool); 5] = [
        (None, false),
        (None, true),
        (Some((2, 1)), true),
        (Some((8, 4)), true),
        (Some((16, 8)), true),
    ];
    let figures: Vec<String> = modes
        .iter()
        .map(|&(ahead, serial)| format!("{:>9.1}", ns_per_event(memory, &loads, ahead, serial)))
        .collect();
    println!(
        "{flows:>8} {:>10} {:>9.1} {:>10.1} {}",
        loads.len(),
        pages as f64 * 4096.0 / (1024.0 * 1024.0),
        plain * 1e3,
        figures.join(" ")
    );
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let duration = take_duration(&mut args, "fairgate-floor");
    let rungs: Vec<u64> = if args.is_empty() {
        vec![1_000, 100_000]
    } else {
        args.iter().filter_map(|a| a.parse().ok()).collect()
    };
    println!(
        "CPU ns per event: the full run, then replays of its records and objects only \
         (best of {PASSES}); hints (record ahead, object ahead)"
    );
    println!(
        "{:>8} {:>10} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "flows", "events", "MiB", "full run", "indep", "serial", "(2,1)", "(8,4)", "(16,8)"
    );
    for flows in rungs {
        rung(flows, duration);
    }
}

/// Removes `--duration SECONDS` from `args` and returns it (60 s without one); exits with
/// status 2 and the usage of `program` when the value is missing or not a number.
fn take_duration(args: &mut Vec<String>, program: &str) -> f64 {
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
