//! The paper's GFR network [Goyal98, §4] at cell level: per VC a source local switch, the
//! pair of backbone switches and a destination local switch; TCP senders live on the source
//! local switches and receivers on the destination ones.
//!
//! Path of a data segment: the source edge segments it onto its VC (AAL5) into the local
//! port (x km) -> backbone switch 1, whose output buffer runs the configured discipline onto
//! the backbone link (y km) -> backbone switch 2 -> egress port (x km) -> the destination edge
//! reassembles it and hands it to the receiver. ACKs travel the mirror path on unbounded
//! FIFOs. Decisions: docs/models/gfr.md (hosts sit on their local switches; no host link).

use super::aal5::{cells_for, Reassembler, CELL_BYTES};
use super::config::AtmConfig;
use super::gfr::FGcra;
use super::port::{CellPort, CellQueue};
use crate::engine::rng::stream;
use crate::engine::{secs, Event, EventQueue, Rng, Time, PS_PER_SEC};
use crate::net::agent::{Agent, AgentCtx, AgentEffects};
use crate::net::packet::{flags, Packet, PacketArena, PacketId};
use crate::qdisc::Effects;
use crate::stats::flow_counters::FlowCounters;
use crate::stats::series::VarSeries;
use crate::stats::FlowStats;
use crate::traffic::SourceEnv;
use crate::transport::tcp::receiver::{Reply, TcpReceiver};
use crate::transport::tcp::sender::TcpSender;
use rand::Rng as _;

/// Data direction (0) and ACK direction (1).
pub const FWD: usize = 0;
pub const REV: usize = 1;

/// Where a port's cells go next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Backbone(usize),
    Egress(usize),
    Reassemble(usize),
}

/// A TCP end; receivers stay typed so the measurement can read the data they hold.
pub(super) enum End {
    Sender(Box<TcpSender>),
    Receiver(Box<TcpReceiver>),
}

impl End {
    fn agent(&mut self) -> &mut dyn Agent {
        match self {
            End::Sender(s) => s.as_mut(),
            End::Receiver(r) => r.as_mut(),
        }
    }
}

/// An agent and where it lives.
pub(super) struct Home {
    agent: End,
    rng: Rng,
    vc: usize,
    side: usize,
}

/// Totals for the conservation check and the benchmark.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub cells_created: u64,
    pub cells_reassembled: u64,
    pub cells_dropped: u64,
    pub backbone_cells: u64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_lost: u64,
}

/// Per-VC counters in the data direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VcCounters {
    pub frames: u64,
    pub tagged_frames: u64,
    /// Cells dropped at the backbone buffer, by CLP.
    pub cells_dropped: [u64; 2],
    pub packets_lost: u64,
}

/// Occupancy samples of the backbone buffer, and the goodput at the window's start.
#[derive(Default)]
pub struct Samples {
    pub time: Vec<f64>,
    pub vc: Vec<u32>,
    pub cells: Vec<u64>,
    pub window_start: Option<(Time, Vec<u64>)>,
}

pub struct Network {
    pub(super) now: Time,
    pub(super) end: Time,
    warmup: Time,
    sample_interval: Time,
    events: EventQueue,
    pub(super) packets: PacketArena,
    pub(super) ports: Vec<CellPort>,
    next: Vec<Next>,
    /// [side]: backbone port; access and egress ports by VC.
    backbone: [usize; 2],
    access: [Vec<usize>; 2],
    egress: [Vec<usize>; 2],
    reassembly: [Vec<Reassembler>; 2],
    taggers: Vec<Option<FGcra>>,
    homes: Vec<Home>,
    pub(super) flows: FlowCounters,
    /// VC of each flow (data and ACK flows alike).
    pub(super) flow_vc: Vec<usize>,
    traces: VarSeries,
    agent_effects: AgentEffects,
    qdisc_effects: Effects,
    llc_snap: bool,
    next_frame: u64,
    pub(super) counters: Counters,
    pub(super) vc_counters: Vec<VcCounters>,
    pub(super) samples: Samples,
}

impl Network {
    pub fn new(c: &AtmConfig) -> Self {
        let n = c.spec.vcs.len();
        let mut net = Network {
            now: 0,
            end: secs(c.duration),
            warmup: secs(c.warmup),
            sample_interval: secs(c.sample_interval),
            events: EventQueue::default(),
            packets: PacketArena::default(),
            ports: Vec::new(),
            next: Vec::new(),
            backbone: [0; 2],
            access: [Vec::new(), Vec::new()],
            egress: [Vec::new(), Vec::new()],
            reassembly: std::array::from_fn(|_| (0..n).map(|_| Reassembler::default()).collect()),
            taggers: c
                .spec
                .vcs
                .iter()
                .map(|vc| {
                    c.spec
                        .tagging
                        .map(|t| FGcra::new(vc.mcr, t.tolerance_cells))
                })
                .collect(),
            homes: Vec::new(),
            flows: FlowCounters::default(),
            flow_vc: Vec::new(),
            traces: VarSeries::default(),
            agent_effects: AgentEffects::default(),
            qdisc_effects: Effects::default(),
            llc_snap: c.spec.llc_snap,
            next_frame: 0,
            counters: Counters::default(),
            vc_counters: vec![VcCounters::default(); n],
            samples: Samples::default(),
        };
        net.build_ports(c);
        net.build_agents(c);
        net.events.schedule(0, Event::Sample);
        net
    }

    fn build_ports(&mut self, c: &AtmConfig) {
        let n = c.spec.vcs.len();
        let cell_time = (PS_PER_SEC as f64 / c.spec.links.cell_rate).round() as Time;
        let delay = |km: f64| secs(km * c.spec.links.us_per_km * 1e-6);
        let mcrs: Vec<f64> = c.spec.vcs.iter().map(|v| v.mcr).collect();
        let zs: Vec<Option<f64>> = c.spec.vcs.iter().map(|v| v.z).collect();
        for side in [FWD, REV] {
            let key = |what: &str| stream(c.seed, &format!("atm:{what}:{side}"));
            let queue = if side == FWD {
                CellQueue::backbone(&c.spec.buffer, &mcrs, &zs)
            } else {
                CellQueue::unbounded(n)
            };
            self.backbone[side] = self.add_port(
                CellPort::new(
                    queue,
                    cell_time,
                    delay(c.spec.links.backbone_km),
                    key("backbone"),
                ),
                Next::Egress(side),
            );
            for _ in 0..n {
                let local = delay(c.spec.links.local_km);
                let access = CellPort::new(CellQueue::unbounded(n), cell_time, local, key("a"));
                let id = self.add_port(access, Next::Backbone(side));
                self.access[side].push(id);
                let egress = CellPort::new(CellQueue::unbounded(n), cell_time, local, key("e"));
                let id = self.add_port(egress, Next::Reassemble(side));
                self.egress[side].push(id);
            }
        }
    }

    fn add_port(&mut self, port: CellPort, next: Next) -> usize {
        self.ports.push(port);
        self.next.push(next);
        self.ports.len() - 1
    }

    fn build_agents(&mut self, c: &AtmConfig) {
        let n = c.spec.vcs.len() as u32;
        let mut starts = stream(c.seed, "atm:start");
        let payload_bps = (c.spec.links.cell_rate * 48.0 * 8.0) as u64;
        for (vc, spec) in c.spec.vcs.iter().enumerate() {
            for _ in 0..spec.tcps {
                let k = self.homes.len() as u32;
                let start = secs(c.spec.start_spread * starts.random::<f64>());
                let env = SourceEnv {
                    flow: k,
                    ack_flow: Some(k + 1),
                    src_node: vc as u32,
                    dst_node: n + vc as u32,
                    sender_agent: k,
                    receiver_agent: k + 1,
                    first_hop_rate_bps: payload_bps,
                    start,
                    stop: None,
                };
                let reply = Reply {
                    ack_flow: k + 1,
                    dst: vc as u32,
                    dst_agent: k,
                };
                let sender = TcpSender::new(&c.spec.tcp, &env);
                let receiver = TcpReceiver::new(c.spec.tcp.receiver_params(), reply);
                self.add_agent(End::Sender(Box::new(sender)), vc, FWD, c.seed);
                self.add_agent(End::Receiver(Box::new(receiver)), vc, REV, c.seed);
                self.events.schedule(start, Event::AgentStart { agent: k });
            }
        }
    }

    fn add_agent(&mut self, agent: End, vc: usize, side: usize, seed: u64) {
        let k = self.homes.len();
        let rng = stream(seed, &format!("atm:agent:{k}"));
        self.homes.push(Home {
            agent,
            rng,
            vc,
            side,
        });
        self.flows.push(FlowStats::default());
        self.flow_vc.push(vc);
    }

    pub fn run(&mut self) {
        while !self.run_for(std::time::Duration::MAX) {}
    }

    /// Runs until the end, or until about `wall` of wall time has passed (the clock is read
    /// every 4,096 events); true once the end is reached. Where a run pauses never changes
    /// its results: the caller (the Python binding) sees Ctrl-C between two calls.
    pub fn run_for(&mut self, wall: std::time::Duration) -> bool {
        let started = std::time::Instant::now();
        loop {
            for _ in 0..4096 {
                match self.events.peek_time() {
                    Some(t) if t <= self.end => {
                        let (time, event) = self.events.pop().expect("peeked");
                        self.now = time;
                        self.dispatch(event);
                    }
                    _ => {
                        self.now = self.end;
                        return true;
                    }
                }
            }
            if started.elapsed() >= wall {
                return false;
            }
        }
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::TxDone { port } => {
                self.ports[port as usize].tx_scheduled = false;
                self.kick(port as usize);
            }
            Event::LinkArrive { port } => self.link_arrive(port as usize),
            Event::AgentTimer { agent, token } => {
                self.with_agent(agent as usize, |a, ctx| a.on_timer(token, ctx))
            }
            Event::AgentStart { agent } => self.with_agent(agent as usize, |a, ctx| a.start(ctx)),
            Event::Sample => self.sample(),
            other => unreachable!("the cell network schedules no {other:?}"),
        }
    }

    fn with_agent(&mut self, agent: usize, f: impl FnOnce(&mut dyn Agent, &mut AgentCtx)) {
        let home = &mut self.homes[agent];
        let (vc, side) = (home.vc, home.side);
        let mut ctx = AgentCtx {
            now: self.now,
            node: (vc + side * self.vc_counters.len()) as u32,
            agent: agent as u32,
            first_hop_rate_bps: 0,
            rng: &mut home.rng,
            packets: &mut self.packets,
            flows: &mut self.flows,
            traces: &mut self.traces,
            effects: &mut self.agent_effects,
            trace_every_change: false,
            backlog: None,
        };
        f(home.agent.agent(), &mut ctx);
        for (at, token) in self.agent_effects.timers.drain(..) {
            let agent = agent as u32;
            self.events.schedule(at, Event::AgentTimer { agent, token });
        }
        let mut outbox = std::mem::take(&mut self.agent_effects.outbox);
        for &packet in &outbox {
            self.segment(side, vc, packet);
        }
        outbox.clear();
        self.agent_effects.outbox = outbox;
    }

    /// AAL5 at the ingress edge: the packet becomes cells queued on its VC's local port.
    fn segment(&mut self, side: usize, vc: usize, packet: PacketId) {
        let p = *self.packets.get(packet);
        let stats = &mut self.flows[p.flow as usize];
        stats.offered_pkts += 1;
        stats.offered_bytes += p.size as u64;
        self.counters.packets_sent += 1;
        let cells = cells_for(p.size, self.llc_snap);
        let frame = self.next_frame;
        self.next_frame += 1;
        let tagged = side == FWD
            && self.taggers[vc]
                .as_mut()
                .is_some_and(|g| g.tag(self.now, cells));
        if side == FWD {
            self.vc_counters[vc].frames += 1;
            self.vc_counters[vc].tagged_frames += u64::from(tagged);
        }
        self.reassembly[side][vc].segmented(frame, packet, cells);
        let port = self.access[side][vc];
        for i in 0..cells {
            let mut cell = Packet {
                flow: vc as u32,
                size: CELL_BYTES,
                aux: frame,
                created: self.now,
                ..Default::default()
            };
            if i + 1 == cells {
                cell.set(flags::EOM);
            }
            if tagged {
                cell.set(flags::CLP);
            }
            let id = self.packets.alloc(cell);
            self.counters.cells_created += 1;
            self.enqueue(port, id, vc);
        }
    }

    fn enqueue(&mut self, port: usize, cell: PacketId, vc: usize) {
        let p = &mut self.ports[port];
        p.arrivals += 1;
        let (queue, mut ctx) = p.ctx(self.now, &mut self.packets, &mut self.qdisc_effects);
        queue.enqueue(cell, vc, &mut ctx);
        if self.qdisc_effects.dirty {
            self.qdisc_effects.dirty = false;
            let mut drops = std::mem::take(&mut self.qdisc_effects.drops);
            for &(cell, _) in &drops {
                self.drop_cell(port, cell);
            }
            drops.clear();
            self.qdisc_effects.drops = drops;
            self.qdisc_effects.drop_causes.clear();
        }
        self.kick(port);
    }

    fn drop_cell(&mut self, port: usize, cell: PacketId) {
        let c = *self.packets.get(cell);
        self.packets.free(cell);
        self.ports[port].drops += 1;
        self.counters.cells_dropped += 1;
        if port == self.backbone[FWD] {
            self.vc_counters[c.flow as usize].cells_dropped[usize::from(c.has(flags::CLP))] += 1;
        }
    }

    /// Starts a transmission if the link is free, else makes sure one is due when it frees.
    fn kick(&mut self, port: usize) {
        let p = &mut self.ports[port];
        if self.now >= p.busy_until {
            self.start_tx(port);
        } else if !p.tx_scheduled && !p.queue.is_empty() {
            p.tx_scheduled = true;
            let at = p.busy_until;
            self.events
                .schedule(at, Event::TxDone { port: port as u32 });
        }
    }

    fn start_tx(&mut self, port: usize) {
        let p = &mut self.ports[port];
        let (queue, mut ctx) = p.ctx(self.now, &mut self.packets, &mut self.qdisc_effects);
        let Some(cell) = queue.dequeue(&mut ctx) else {
            return;
        };
        p.departures += 1;
        p.busy_until = self.now.saturating_add(p.cell_time);
        let at = p.busy_until.saturating_add(p.propagation);
        if p.in_flight.is_empty() {
            self.events
                .schedule(at, Event::LinkArrive { port: port as u32 });
        }
        p.in_flight.push_back((at, cell));
        if port == self.backbone[FWD] {
            self.counters.backbone_cells += 1;
        }
        self.kick(port);
    }

    fn link_arrive(&mut self, port: usize) {
        let p = &mut self.ports[port];
        let (_, cell) = p
            .in_flight
            .pop_front()
            .expect("a cell in flight at LinkArrive");
        if let Some(&(next, _)) = p.in_flight.front() {
            self.events
                .schedule(next, Event::LinkArrive { port: port as u32 });
        }
        let vc = self.packets.get(cell).flow as usize;
        match self.next[port] {
            Next::Backbone(side) => self.enqueue(self.backbone[side], cell, vc),
            Next::Egress(side) => self.enqueue(self.egress[side][vc], cell, vc),
            Next::Reassemble(side) => self.reassemble(side, vc, cell),
        }
    }

    /// AAL5 at the egress edge: a completed frame's packet goes to its agent.
    fn reassemble(&mut self, side: usize, vc: usize, cell: PacketId) {
        let c = *self.packets.get(cell);
        self.packets.free(cell);
        self.counters.cells_reassembled += 1;
        let out = self.reassembly[side][vc].cell(c.aux, c.has(flags::EOM));
        for packet in out.lost {
            let flow = self.packets.get(packet).flow as usize;
            self.flows[flow].dropped_pkts[crate::qdisc::DropReason::Frame as usize] += 1;
            self.packets.free(packet);
            self.counters.packets_lost += 1;
            if side == FWD {
                self.vc_counters[vc].packets_lost += 1;
            }
        }
        if let Some(packet) = out.delivered {
            self.deliver(packet);
        }
    }

    fn deliver(&mut self, packet: PacketId) {
        let header = *self.packets.get(packet);
        self.packets.free(packet);
        self.counters.packets_delivered += 1;
        let stats = &mut self.flows[header.flow as usize];
        stats.delivered_pkts += 1;
        stats.delivered_bytes += header.size as u64;
        let agent = header.dst_agent as usize;
        self.with_agent(agent, |a, ctx| a.on_packet(&header, ctx));
    }

    fn sample(&mut self) {
        let t = crate::engine::to_secs(self.now);
        let backbone = &self.ports[self.backbone[FWD]].queue;
        for vc in 0..self.vc_counters.len() {
            self.samples.time.push(t);
            self.samples.vc.push(vc as u32);
            self.samples.cells.push(backbone.vc_cells(vc));
        }
        if self.samples.window_start.is_none() && self.now >= self.warmup {
            let goodput = self.received_by_vc();
            self.samples.window_start = Some((self.now, goodput));
        }
        let next = self.now.saturating_add(self.sample_interval);
        if next <= self.end {
            self.events.schedule(next, Event::Sample);
        }
    }

    /// Distinct payload bytes the receivers hold so far, per VC: delivered in order plus held
    /// out of order. Measured the same way at both edges of the window, data that arrived
    /// before the window and fills a hole inside it is not credited to the window
    /// (docs/models/gfr.md, "Goodput").
    pub(super) fn received_by_vc(&self) -> Vec<u64> {
        let mut out = vec![0; self.vc_counters.len()];
        for (stats, &vc) in self.flows.iter().zip(&self.flow_vc) {
            out[vc] += stats.goodput_bytes;
        }
        for home in &self.homes {
            if let End::Receiver(r) = &home.agent {
                let held: u64 = r.out_of_order().iter().map(|&(a, b)| b - a).sum();
                out[home.vc] += held;
            }
        }
        out
    }

    /// Frames still in the network (packets segmented, not yet delivered or lost).
    pub(super) fn frames_in_network(&self) -> u64 {
        self.reassembly
            .iter()
            .flatten()
            .map(|r| r.in_network() as u64)
            .sum()
    }

    /// Cells queued or on a link.
    pub(super) fn cells_in_network(&self) -> u64 {
        self.ports
            .iter()
            .map(|p| (p.queue.len() + p.in_flight.len()) as u64)
            .sum()
    }

    pub(super) fn backbone_queue(&self) -> &CellQueue {
        &self.ports[self.backbone[FWD]].queue
    }

    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }
}
