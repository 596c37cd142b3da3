//! The trace-driven study of [Keshav91, ch. 3] (figures 3.3-3.7): record the arrivals and
//! departures at an FQ port in any scenario, replay them through FQ to get the bid of every
//! packet (the tags Keshav's buffer sees), replay that insert/get_min trace through LINK, TREE,
//! HEAP and PERC, and report mean and maximum elementary operations per insertion; sweep this
//! over (N conversations, B buffers).
//!
//! Decisions:
//! - The recorded port keeps the discipline the scenario gives it; the replay runs FQ with
//!   `limit = B`, the chapter 3 drop rule (largest bid) and the dropped packets charged
//!   (chapter 3's implementation leaves F^a as set at arrival), so the bounded heap of
//!   capacity B sees exactly the tags and departures FQ produced. For the study's own
//!   workloads the port is configured that way, so the replay equals the simulation.
//! - The workload is whatever scenario the caller builds for each (N, B); \[Keshav91] used N
//!   Tahoe TCP sources of maximum window W, which the caller supplies once the TCP family is
//!   available.

use super::{build, instructions_per_operation, Cost, Item, STRUCTURES};
use crate::config::error::check;
use crate::config::units::{MAX_DURATION_S, MAX_DURATION_WORDS};
use crate::engine::time::to_secs;
use crate::engine::Time;
use crate::net::packet::PacketArena;
use crate::net::packet::{Packet, PacketId};
use crate::qdisc::classify::FlowKey;
use crate::qdisc::sched::fq::{FqConfig, FqDrop};
use crate::qdisc::{Effects, Limit, Qdisc, QdiscCtx, QdiscEnv};
use crate::scenario::budget::MemoryLimit;
use crate::scenario::{Scenario, ScenarioError};
use crate::stats::conservation_brief::brief;
use crate::studies::StudyError;
use std::sync::{Arc, Mutex};

/// The most conversations a point may have: the study builds a node and a link per
/// conversation, and 100,000 flows is the scale the engine is built and measured for.
pub const MAX_CONVERSATIONS: u32 = 100_000;

/// The largest window of [`tahoe_workload`], in packets: its 960-byte segments must fit the
/// 16-bit receive window that Tahoe (without window scaling) advertises.
pub const MAX_TAHOE_WINDOW: u32 = 65_535 / 960;

/// What happened at the recorded port.
#[derive(Clone, Copy, Debug)]
pub enum PortEvent {
    Arrival { time: Time, packet: Packet },
    Departure { time: Time },
}

/// One operation on the bounded heap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HeapOp {
    Insert(Item),
    GetMin,
}

/// What one recorded event costs through the study: the event, its heap operation, and the
/// arrival numbers the replays keep.
const BYTES_PER_RECORDED_EVENT: usize =
    std::mem::size_of::<PortEvent>() + std::mem::size_of::<HeapOp>() + 3 * 8;

/// How long a piece of a recorded run takes at most, in wall-clock time, before the study
/// checks its record and asks whether it was interrupted.
const PIECE: std::time::Duration = std::time::Duration::from_millis(200);

/// The events of a port, up to `most` of them: past that the log only notes that it is full.
struct PortLog {
    events: Vec<PortEvent>,
    most: usize,
    full: bool,
}

impl PortLog {
    fn push(&mut self, event: PortEvent) {
        if self.events.len() == self.most {
            self.full = true;
            return;
        }
        if self.events.len() == self.events.capacity() {
            let grown = (self.events.capacity() * 2).max(1024).min(self.most);
            self.events.reserve_exact(grown - self.events.len());
        }
        self.events.push(event);
    }
}

/// The study's own name for the length of its workloads' runs, in seconds.
pub const TRACE: &str = "trace_s";

/// A discipline wrapper that logs arrivals and departures and otherwise defers to `inner`.
pub struct Recorder {
    inner: Box<dyn Qdisc>,
    log: Arc<Mutex<PortLog>>,
}

impl Recorder {
    fn push(&self, event: PortEvent) {
        if let Ok(mut log) = self.log.lock() {
            log.push(event);
        }
    }
}

impl Qdisc for Recorder {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        self.push(PortEvent::Arrival {
            time: ctx.now,
            packet: *ctx.packets.get(packet),
        });
        self.inner.enqueue(packet, ctx);
    }
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let packet = self.inner.dequeue(ctx)?;
        self.push(PortEvent::Departure { time: ctx.now });
        Some(packet)
    }
    fn peek(&self) -> Option<PacketId> {
        self.inner.peek()
    }
    fn len_packets(&self) -> usize {
        self.inner.len_packets()
    }
    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
    }
    fn init(&mut self, ctx: &mut QdiscCtx) {
        self.inner.init(ctx)
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.inner.on_timer(ctx)
    }
    fn state(&self) -> Vec<(&'static str, f64)> {
        self.inner.state()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
}

/// The field a recorded run's length comes from, as its caller names it: `simulation.duration`
/// for a user's scenario (whose `memory_limit_mib` can be raised), or a study's own parameter.
pub struct RunLength<'a>(pub &'a str);

impl RunLength<'_> {
    pub const SCENARIO: RunLength<'static> = RunLength("simulation.duration");
}

/// Runs `scenario` and returns the events at `port` ("a->b"). The record may take what the
/// scenario's estimate leaves of `simulation.memory_limit_mib`; a longer one stops the run with
/// an error naming `length`. `interrupted` is asked about every 0.2 s of wall-clock time.
pub fn record_port(
    scenario: &Scenario,
    port: &str,
    length: &RunLength,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<Vec<PortEvent>, StudyError> {
    let mut sim = crate::scenario::build(scenario)?;
    let room = crate::scenario::budget::free_bytes(scenario);
    let most = (room / BYTES_PER_RECORDED_EVENT as f64) as usize;
    let log = Arc::new(Mutex::new(PortLog {
        events: Vec::new(),
        most,
        full: false,
    }));
    let shared = log.clone();
    let found = sim.wrap_qdisc(port, |inner| Box::new(Recorder { inner, log: shared }));
    if !found {
        return Err(unknown_port(&sim, port).into());
    }
    sim.run_in_pieces(PIECE, |sim| {
        if interrupted() {
            return Err(StudyError::Interrupted);
        }
        match log.lock() {
            Ok(log) if log.full => Err(too_long(scenario, port, length, &log, sim).into()),
            _ => Ok(()),
        }
    })?;
    finished_run(&sim)?;
    drop(sim);
    let log = Arc::try_unwrap(log).ok().and_then(|m| m.into_inner().ok());
    Ok(log.map(|log| log.events).unwrap_or_default())
}

/// The error for a port the scenario does not have, with the first of those it has.
fn unknown_port(sim: &crate::sim::Simulation, port: &str) -> ScenarioError {
    const SHOWN: usize = 4;
    let ports = sim.ports();
    let mut named: Vec<String> = ports
        .iter()
        .take(SHOWN)
        .map(|p| format!("{:?}", p.name))
        .collect();
    if ports.len() > SHOWN {
        named.push(format!("and {} more", ports.len() - SHOWN));
    }
    let has = if named.is_empty() {
        "it has none".to_string()
    } else {
        format!("it has {}", named.join(", "))
    };
    ScenarioError::new(
        "study.port",
        format!("got {port:?}, expected the name of a port (\"from->to\") of the scenario; {has}"),
    )
}

/// Refuses a recorded run that stopped early or broke conservation.
fn finished_run(sim: &crate::sim::Simulation) -> Result<(), StudyError> {
    if let Some(cause) = sim.failure_cause() {
        return Err(cause.clone().into());
    }
    if let Some(why) = sim.failure() {
        return Err(StudyError::Run(why.to_string()));
    }
    let broken = sim.conservation_violations();
    if broken.is_empty() {
        Ok(())
    } else {
        Err(StudyError::Run(brief(&broken)))
    }
}

/// The error of a record that outgrew its room, with the length that would fit.
fn too_long(
    scenario: &Scenario,
    port: &str,
    length: &RunLength,
    log: &PortLog,
    sim: &crate::sim::Simulation,
) -> ScenarioError {
    const MIB: f64 = 1024.0 * 1024.0;
    let now_s = to_secs(sim.now());
    let end_s = scenario.simulation.duration.secs();
    let limit = MemoryLimit::of(scenario.simulation.memory_limit_mib);
    let raise = if length.0 == RunLength::SCENARIO.0 || limit.by_process() {
        format!(", {}", limit.raise())
    } else {
        String::new()
    };
    ScenarioError::new(
        length.0,
        format!(
            "the study's record of port {port:?} reached {} arrivals and departures ({:.0} MiB) \
             at {now_s:.3} s of the run's {end_s} s, all the room the run leaves of {}; \
             expected a run of at most about {:.3e} s{raise}",
            log.events.len(),
            (log.events.len() * BYTES_PER_RECORDED_EVENT) as f64 / MIB,
            limit.words(),
            now_s,
        ),
    )
}

/// Replays port events through FQ (limit `capacity`, largest-bid drops, charged) and returns
/// the bounded-heap trace, plus FQ's own departures and drops as arrival numbers.
pub fn fq_trace(
    events: &[PortEvent],
    capacity: u64,
    classify: FlowKey,
    link_rate_bps: u64,
) -> (Vec<HeapOp>, Vec<u64>, Vec<u64>) {
    let config = FqConfig {
        limit: Limit::packets(capacity),
        drop: FqDrop::LargestBid,
        charge_dropped: true,
        classify,
        ..FqConfig::default()
    };
    let env = QdiscEnv {
        link_rate_bps,
        port: "study".into(),
    };
    let mut fq = config.build_fq(&env, None);
    let mut packets = PacketArena::default();
    let mut rng = crate::engine::rng::stream(1, "keshav-study");
    let mut effects = Effects::default();
    let mut arrival_of: Vec<u64> = Vec::new();
    let (mut ops, mut departures, mut drops) = (Vec::new(), Vec::new(), Vec::new());
    for (seq, event) in events.iter().enumerate() {
        let (time, packet) = match *event {
            PortEvent::Arrival { time, packet } => (time, Some(packet)),
            PortEvent::Departure { time } => (time, None),
        };
        let id = packet.map(|p| packets.alloc(p));
        let mut ctx = QdiscCtx {
            now: time,
            packets: &mut packets,
            rng: &mut rng,
            link_rate_bps,
            monitored: None,
            idle_since: None,
            effects: &mut effects,
        };
        if let (Some(id), Some(p)) = (id, packet) {
            let conv = fq.queue_index(&p);
            fq.enqueue(id, &mut ctx);
            if arrival_of.len() <= id as usize {
                arrival_of.resize(id as usize + 1, 0);
            }
            arrival_of[id as usize] = seq as u64;
            let tag = fq.bid_of(id);
            ops.push(HeapOp::Insert(Item {
                tag,
                seq: seq as u64,
                conv,
            }));
        } else {
            ops.push(HeapOp::GetMin);
            if let Some(out) = fq.dequeue(&mut ctx) {
                departures.push(arrival_of[out as usize]);
                packets.free(out);
            }
        }
        for (dropped, _) in effects.drops.drain(..) {
            drops.push(arrival_of[dropped as usize]);
            packets.free(dropped);
        }
        effects.drop_causes.clear();
    }
    (ops, departures, drops)
}

/// What one structure did with a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub structure: &'static str,
    pub cost: Cost,
    /// Arrival numbers of the items `get_min` returned, in order.
    pub departures: Vec<u64>,
    /// Arrival numbers of the items discarded, in order.
    pub discards: Vec<u64>,
}

/// Replays `ops` through structure `name` of capacity `capacity`.
pub fn replay(name: &str, ops: &[HeapOp], capacity: usize) -> Option<Replay> {
    let mut heap = build(name, capacity)?;
    let (mut departures, mut discards) = (Vec::new(), Vec::new());
    for op in ops {
        match *op {
            HeapOp::Insert(item) => discards.extend(heap.insert(item).map(|i| i.seq)),
            HeapOp::GetMin => departures.extend(heap.get_min().map(|i| i.seq)),
        }
    }
    Some(Replay {
        structure: heap.name(),
        cost: heap.cost(),
        departures,
        discards,
    })
}

/// One row of the study: a structure at one (N, B) point.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyRow {
    pub conversations: u32,
    pub buffers: u32,
    pub structure: &'static str,
    pub inserts: u64,
    pub mean_ops_per_insert: f64,
    pub max_ops_per_insert: u64,
    /// Mean operations x the structure's instructions per operation (table 3.2).
    pub mean_instructions_per_insert: f64,
    pub drops: u64,
}

/// A workload for one (N, B) point: the scenario, the recorded port, the parameter its length
/// comes from, its link rate and the flow key FQ classifies by.
pub struct Workload {
    pub scenario: Scenario,
    pub port: String,
    pub length: RunLength<'static>,
    pub link_rate_bps: u64,
    pub classify: FlowKey,
}

/// Runs the study at every (N, B) point; `workload(n, b)` builds the scenario; `interrupted`
/// is asked about every 0.2 s of wall-clock time.
pub fn sweep(
    points: &[(u32, u32)],
    workload: impl Fn(u32, u32) -> Result<Workload, ScenarioError>,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<Vec<StudyRow>, StudyError> {
    check_points(points)?;
    let mut rows = Vec::new();
    for &(n, b) in points {
        let w = workload(n, b)?;
        let events = record_port(&w.scenario, &w.port, &w.length, interrupted)?;
        let (ops, _, drops) = fq_trace(&events, b as u64, w.classify, w.link_rate_bps);
        for name in STRUCTURES {
            let Some(r) = replay(name, &ops, b as usize) else {
                continue;
            };
            rows.push(StudyRow {
                conversations: n,
                buffers: b,
                structure: r.structure,
                inserts: r.cost.inserts,
                mean_ops_per_insert: r.cost.mean_insert_ops(),
                max_ops_per_insert: r.cost.max_insert_ops,
                mean_instructions_per_insert: r.cost.mean_insert_ops()
                    * instructions_per_operation(name),
                drops: drops.len() as u64,
            });
        }
    }
    Ok(rows)
}

/// Refuses a point of no conversations, more than [`MAX_CONVERSATIONS`], or no buffers,
/// naming the point, before a scenario is built from it.
fn check_points(points: &[(u32, u32)]) -> Result<(), ScenarioError> {
    for (i, &(n, b)) in points.iter().enumerate() {
        let point = format!("points[{i}]");
        let most = u64::from(MAX_CONVERSATIONS);
        check::int_in_range(&point, "conversations", u64::from(n), 1, most)?;
        check::positive_int(&point, "buffers", u64::from(b))?;
    }
    Ok(())
}

/// Refuses a trace length that is not a positive duration a scenario can run.
fn check_trace(trace_s: f64) -> Result<(), ScenarioError> {
    if trace_s > 0.0 && trace_s <= MAX_DURATION_S {
        return Ok(());
    }
    Err(ScenarioError::new(
        TRACE,
        format!("got {trace_s}, expected seconds above 0, at most {MAX_DURATION_WORDS}"),
    ))
}

/// The stand-in workload until the TCP family lands: N windowless on/off sources on a
/// 10 Mb/s line with 1000-byte packets, each "window" a burst of `window` packets sent back to
/// back at 100 Mb/s followed by an exponential silence sized for an average offered `load`
/// (fraction of the line), into an FQ port with B buffers, largest-bid drops, charged.
pub fn onoff_workload(
    n: u32,
    b: u32,
    window: u32,
    load: f64,
    trace_s: f64,
) -> Result<Workload, ScenarioError> {
    check::positive_int("", "window", u64::from(window))?;
    check::positive("", "load", load)?;
    check_trace(trace_s)?;
    let packet_ms = 0.8;
    let burst_ms = window as f64 * packet_ms / 10.0;
    let cycle_ms = n as f64 * window as f64 * packet_ms / load;
    let silence_ms = (cycle_ms - burst_ms).max(packet_ms);
    let text = format!(
        r#"
name = "keshav-study"
[simulation]
duration = "{trace_s}s"
seed = 11
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "1ms"
duplex = false
queue = {{ kind = "fq", classify = "flow", limit = {b}, drop = "largest_bid", charge_dropped = true }}
[[flows]]
name = "s{{i}}"
count = {n}
src = "a"
dst = "b"
start = {{ dist = "uniform", min = "0s", max = "{silence_ms}ms" }}
source = {{ kind = "onoff", rate = "100Mbps", size = 1000, on = "{burst_ms}ms", off = {{ dist = "exponential", mean = "{silence_ms}ms" }} }}
"#
    );
    Ok(Workload {
        scenario: crate::scenario::parse(&text, &[])?,
        port: "a->b".into(),
        length: RunLength(TRACE),
        link_rate_bps: 10_000_000,
        classify: FlowKey::Flow,
    })
}

/// Keshav's own workload (section 3.4, figure 3.2): N Tahoe ("JK") sources of maximum window
/// `window` packets, each on its own fast line (100 pkt/s, no delay), share one gateway trunk
/// of 10 pkt/s (1000-byte packets, 80 kb/s) into an FQ port with B buffers, largest-bid drops,
/// charged. ACKs return over the fast lines. Decisions: TCP segments carry 960 bytes of payload
/// plus a 40-byte header so that a packet is 1000 bytes on the wire; sources start within the
/// first second, uniformly; no Limited Transmit (RFC 3042 postdates 4.3BSD-Tahoe) and no
/// abort (the text's sources never give up).
pub fn tahoe_workload(
    n: u32,
    b: u32,
    window: u32,
    trace_s: f64,
) -> Result<Workload, ScenarioError> {
    check::int_in_range("", "window", u64::from(window), 1, MAX_TAHOE_WINDOW.into())?;
    check_trace(trace_s)?;
    let rwnd = window * 960;
    let text = format!(
        r#"
name = "keshav-study-tahoe"
[simulation]
duration = "{trace_s}s"
seed = 11
[[nodes]]
name = "gw"
kind = "router"
[[nodes]]
name = "sink"
[[nodes]]
name = "s{{i}}"
[[links]]
from = "gw"
to = "sink"
rate = 80000
queue = {{ kind = "fq", classify = "flow", limit = {b}, drop = "largest_bid", charge_dropped = true }}
reverse = {{ rate = 800000, queue = {{ kind = "fifo", limit = 100000 }} }}
[[flows]]
name = "jk{{i}}"
count = {n}
src = "s{{i}}"
dst = "sink"
start = {{ dist = "uniform", min = "0s", max = "1s" }}
source = {{ kind = "tcp", cc = "tahoe", mss = 960, rwnd = {rwnd}, limited_transmit = false, max_retries = 1000000, timestamps = false, delayed_ack = false, granularity = "10ms" }}
"#
    );
    let mut scenario_text = text.replace(
        "[[nodes]]\nname = \"s{i}\"\n",
        &(0..n)
            .map(|i| format!("[[nodes]]\nname = \"s{i}\"\n"))
            .collect::<String>(),
    );
    for i in 0..n {
        scenario_text.push_str(&format!(
            "[[links]]\nfrom = \"s{i}\"\nto = \"gw\"\nrate = 800000\nqueue = {{ kind = \"fifo\", limit = 100000 }}\n"
        ));
    }
    Ok(Workload {
        scenario: crate::scenario::parse(&scenario_text, &[])?,
        port: "gw->sink".into(),
        length: RunLength(TRACE),
        link_rate_bps: 80_000,
        classify: FlowKey::Flow,
    })
}

#[cfg(test)]
mod tests {
    use super::{PortEvent, PortLog};

    #[test]
    fn a_port_log_never_holds_or_reserves_more_than_its_room() {
        for most in [0, 1, 5, 1023, 1024, 1025, 3000] {
            let mut log = PortLog {
                events: Vec::new(),
                most,
                full: false,
            };
            for _ in 0..most + 2 {
                log.push(PortEvent::Departure { time: 0 });
                assert!(log.events.capacity() <= most.max(1), "room {most}");
            }
            assert_eq!((log.events.len(), log.full), (most, true), "room {most}");
        }
    }
}
