//! Page walks of the scale ladder's hints. Runs a ladder rung (the dumbbells of
//! `fairgate-scale`) recording every address the engine hints (the `hint-trace` feature) and
//! replays the addresses through a model of the data TLBs: 4 KiB pages, a 96-entry 6-way first
//! level and a 2,048-entry 16-way second level, both least recently used (the sizes of recent
//! Intel server cores). Per event it reports the distinct lines hinted, those hinted by the
//! periodic samples, and the second-level misses (each a page walk) by the region the line lies
//! in: port records, disciplines, agent slots, agents, flow counters, anything else.
//!
//! `--layout` replays the same addresses as another placement of the same records would put
//! them: `paired-counters` (each flow's counters beside those of its ACK flow), `flow-major`
//! (every port record and discipline of a flow's hosts, its agents' slots and records and its
//! counters in one block per flow). A model, not a measurement: it sees the hints only (the
//! demand loads they cover, not those they miss) and no other process; the docs
//! (`docs/engine.md`, "Page walks") hold what it found and what the machine measured.
//!
//! Usage: `cargo run --release -p fairgate-core --features hint-trace --bin fairgate-pages --
//! [FLOWS...] [--layout as-built|paired-counters|flow-major]` (defaults: 1,000 and 100,000
//! flows, as built).

#[path = "support/ladder.rs"]
#[allow(
    dead_code,
    reason = "the ladder's CPU clock serves the timing binaries, not this model"
)]
mod ladder;

use fairgate_core::engine::prefetch::trace;
use fairgate_core::engine::Event;
use fairgate_core::sim::Simulation;
use ladder::{build_rung, scenario, Options};
use std::collections::{BTreeMap, HashMap, HashSet};

const PAGE_BITS: u32 = 12;
const LINE_BITS: u32 = 6;
const LINE: usize = 1 << LINE_BITS;

/// One level of a set-associative TLB with least-recently-used replacement.
struct TlbLevel {
    sets: Vec<Vec<(usize, u64)>>,
    ways: usize,
    clock: u64,
}

impl TlbLevel {
    fn new(entries: usize, ways: usize) -> Self {
        TlbLevel {
            sets: vec![Vec::with_capacity(ways); entries / ways],
            ways,
            clock: 0,
        }
    }

    /// Whether `page` was held; it is held (most recently used) afterwards.
    fn holds(&mut self, page: usize) -> bool {
        self.clock += 1;
        let (clock, ways, count) = (self.clock, self.ways, self.sets.len());
        let set = &mut self.sets[page % count];
        if let Some(entry) = set.iter_mut().find(|entry| entry.0 == page) {
            entry.1 = clock;
            return true;
        }
        if set.len() < ways {
            set.push((page, clock));
        } else if let Some(oldest) = set.iter_mut().min_by_key(|entry| entry.1) {
            *oldest = (page, clock);
        }
        false
    }
}

/// A record of the simulation: where it lies, what it is, and the flow it belongs to.
#[derive(Clone, Copy)]
struct Record {
    start: usize,
    size: usize,
    region: &'static str,
    flow: Option<usize>,
}

/// The flow a record belongs to: a data flow's own index; an ACK flow's data flow.
fn data_flow(sim: &Simulation, flow: usize) -> usize {
    sim.flows()
        .get(flow)
        .and_then(|info| info.parent)
        .map_or(flow, |parent| parent as usize)
}

fn address_of<T: ?Sized>(value: &T) -> usize {
    (value as *const T).cast::<u8>() as usize
}

/// Every port record and discipline, agent slot and agent, and flow counters record, by start.
fn records(sim: &Simulation) -> Vec<Record> {
    let mut flow_of_node: HashMap<u32, usize> = HashMap::new();
    for (flow, info) in sim.flows().iter().enumerate() {
        if info.parent.is_none() {
            flow_of_node.entry(info.src).or_insert(flow);
            flow_of_node.entry(info.dst).or_insert(flow);
        }
    }
    let mut all = Vec::new();
    for port in sim.ports() {
        let flow = [port.from, port.to]
            .iter()
            .find_map(|node| flow_of_node.get(node).copied());
        let record = Record {
            start: address_of(port),
            size: std::mem::size_of_val(port),
            region: "port",
            flow,
        };
        all.push(record);
        all.push(Record {
            start: address_of(&*port.qdisc),
            size: std::mem::size_of_val(&*port.qdisc),
            region: "discipline",
            ..record
        });
    }
    for slot in sim.agents() {
        let flow = Some(data_flow(sim, slot.flow as usize));
        all.push(Record {
            start: address_of(slot),
            size: std::mem::size_of_val(slot),
            region: "agent slot",
            flow,
        });
        all.push(Record {
            start: address_of(&*slot.agent),
            size: std::mem::size_of_val(&*slot.agent),
            region: "agent",
            flow,
        });
    }
    for (flow, counters) in sim.flow_stats().iter().enumerate() {
        all.push(Record {
            start: address_of(counters),
            size: std::mem::size_of_val(counters),
            region: "flow counters",
            flow: Some(data_flow(sim, flow)),
        });
    }
    all.retain(|record| record.size > 0);
    all.sort_by_key(|record| record.start);
    all
}

/// Where each record (same order) lies in `layout`.
fn placed(all: &[Record], layout: &str) -> Vec<usize> {
    let far = 1usize << 45;
    match layout {
        "as-built" => all.iter().map(|record| record.start).collect(),
        "paired-counters" => {
            let mut counters: Vec<usize> = (0..all.len())
                .filter(|&i| all[i].region == "flow counters")
                .collect();
            let first = counters.first().map_or(0, |&i| all[i].start);
            counters.sort_by_key(|&i| (all[i].flow, all[i].start));
            let mut at: Vec<usize> = all.iter().map(|record| record.start).collect();
            let mut next = first;
            for i in counters {
                at[i] = next;
                next += all[i].size;
            }
            at
        }
        _ => {
            let mut used: HashMap<usize, usize> = HashMap::new();
            let offsets: Vec<Option<usize>> = all
                .iter()
                .map(|record| {
                    record.flow.map(|flow| {
                        let offset = used.entry(flow).or_default();
                        let here = *offset;
                        *offset += record.size;
                        here
                    })
                })
                .collect();
            let block = used
                .values()
                .copied()
                .max()
                .unwrap_or(0)
                .next_multiple_of(LINE);
            all.iter()
                .zip(offsets)
                .map(|(record, offset)| match (record.flow, offset) {
                    (Some(flow), Some(offset)) => far + flow * block + offset,
                    _ => record.start,
                })
                .collect()
        }
    }
}

/// What a replay counted.
#[derive(Default)]
struct Counts {
    events: u64,
    lines: u64,
    sample_lines: u64,
    walks: BTreeMap<&'static str, u64>,
    lines_by_region: BTreeMap<&'static str, u64>,
}

fn replay(flows: u64, layout: &str) -> Counts {
    let text = scenario(
        flows,
        Options {
            duration: 60.0,
            sample_interval: 10.0,
            trace_every_change: false,
        },
    );
    let mut sim = build_rung("fairgate-pages", flows, &text);
    let all = records(&sim);
    let at = placed(&all, layout);
    let (mut first, mut second) = (TlbLevel::new(96, 6), TlbLevel::new(2048, 16));
    let mut counts = Counts::default();
    let mut after_sample = false;
    let mut seen: HashSet<usize> = HashSet::new();
    trace::start();
    let end = sim.end();
    sim.run_observing(end, |_, event| {
        counts.events += 1;
        seen.clear();
        for address in trace::take() {
            let k = all.partition_point(|record| record.start <= address);
            let record = k.checked_sub(1).map(|k| (k, all[k]));
            let (region, moved) = match record {
                Some((k, record)) if address < record.start + record.size => {
                    (record.region, at[k] + (address - record.start))
                }
                _ => ("other", address),
            };
            if !seen.insert(moved >> LINE_BITS) {
                continue;
            }
            counts.lines += 1;
            counts.sample_lines += u64::from(after_sample);
            *counts.lines_by_region.entry(region).or_default() += 1;
            let page = moved >> PAGE_BITS;
            if !first.holds(page) && !second.holds(page) {
                *counts.walks.entry(region).or_default() += 1;
            }
        }
        after_sample = matches!(event, Event::Sample);
    });
    counts
}

fn report(flows: u64, layout: &str, counts: &Counts) {
    let per_event = |n: u64| n as f64 / counts.events.max(1) as f64;
    let walks: u64 = counts.walks.values().sum();
    println!(
        "{flows} flows, {layout}: {} events, {:.2} lines hinted per event ({:.2} by samples), {:.2} page walks per event",
        counts.events,
        per_event(counts.lines),
        per_event(counts.sample_lines),
        per_event(walks)
    );
    for (region, lines) in &counts.lines_by_region {
        let region_walks = counts.walks.get(region).copied().unwrap_or(0);
        println!(
            "  {region:14} {:6.2} lines {:6.3} walks per event",
            per_event(*lines),
            per_event(region_walks)
        );
    }
}

fn main() {
    let mut flows: Vec<u64> = Vec::new();
    let mut layout = "as-built".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--layout" {
            layout = args.next().unwrap_or_default();
        } else if let Ok(count) = arg.parse() {
            flows.push(count);
        } else {
            eprintln!("fairgate-pages: got {arg:?}, expected a flow count or --layout");
            std::process::exit(2);
        }
    }
    if !["as-built", "paired-counters", "flow-major"].contains(&layout.as_str()) {
        eprintln!(
            "fairgate-pages: --layout: got {layout:?}, expected as-built, paired-counters or flow-major"
        );
        std::process::exit(2);
    }
    if flows.is_empty() {
        flows = vec![1_000, 100_000];
    }
    for count in flows {
        report(count, &layout, &replay(count, &layout));
    }
}
