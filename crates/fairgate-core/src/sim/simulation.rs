//! The run loop: events in, packets through ports and links, agents called, counters kept.

mod access;
mod floor;
mod measure;
mod pieces;
mod prefetch;
mod sampling;

use super::progress::{describe, ProgressGuard};
use crate::config::error::ScenarioError;
use crate::engine::events::Lookahead;
use crate::engine::{tx_time, Event, EventQueue, Rng, Time};
use crate::net::agent::{Agent, AgentCtx, AgentEffects};
use crate::net::node::Node;
use crate::net::packet::{PacketArena, PacketId};
use crate::net::routing::{RoutingTable, NO_ROUTE};
use crate::qdisc::{DropReason, Effects, QdiscCtx};
use crate::sim::port::Port;
use crate::stats::causes::{Cause, CauseCursor};
use crate::stats::events::{DropEvent, EventAction, EventLimit, EventLog};
use crate::stats::flow_counters::FlowCounters;
use crate::stats::log_room::LogRoom;
use crate::stats::phases::PhaseLog;
use crate::stats::sample_log::Series;
use crate::stats::series::ClassSeries;
use crate::stats::window::Window;
pub use floor::Footprint;
use std::cell::RefCell;

/// Whether a flow carries data or the acknowledgements of another flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowRole {
    Data,
    Ack,
}

impl FlowRole {
    pub fn as_str(self) -> &'static str {
        match self {
            FlowRole::Data => "data",
            FlowRole::Ack => "ack",
        }
    }
}

/// What a flow is, as opposed to what happened to it.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    pub name: String,
    pub src: u32,
    pub dst: u32,
    /// The source kind ("cbr", "tcp", ...).
    pub kind: String,
    pub role: FlowRole,
    /// For an ACK flow, the data flow it acknowledges.
    pub parent: Option<u32>,
    pub start: Time,
    pub stop: Option<Time>,
}

/// An agent and where it lives. `repr(C)`: what every call reads fills the first cache line
/// (the only one the run loop hints), the start and stop times the second.
#[repr(C, align(64))]
pub struct AgentSlot {
    pub agent: Box<dyn Agent>,
    pub rng: Rng,
    pub node: u32,
    /// The flow its samples are filed under.
    pub flow: u32,
    pub first_hop_rate_bps: u64,
    pub start: Time,
    pub stop: Option<Time>,
}

/// Everything a built scenario hands to the engine.
pub struct SimParts {
    pub nodes: Vec<Node>,
    pub ports: Vec<Port>,
    pub agents: Vec<AgentSlot>,
    pub flows: Vec<FlowInfo>,
    pub end: Time,
    pub sample_interval: Option<Time>,
    pub trace_every_change: bool,
    /// The measurement window of the summaries: warmup and optional end.
    pub window_start: Time,
    pub window_stop: Option<Time>,
    /// `[simulation] record_drops`: which drop and mark events to keep.
    pub record_drops: Option<EventLimit>,
    /// `[simulation] phase_edges`: where the per-phase summary cuts the run.
    pub phase_edges: Vec<Time>,
    /// The room the logs no estimate sizes may take (checked at each sample).
    pub log_room: Option<LogRoom>,
}

/// A simulation ready to run.
pub struct Simulation {
    now: Time,
    end: Time,
    events: EventQueue,
    packets: PacketArena,
    nodes: Vec<Node>,
    ports: Vec<Port>,
    routes: RoutingTable,
    agents: Vec<AgentSlot>,
    flow_info: Vec<FlowInfo>,
    flow_stats: FlowCounters,
    /// Per node, the agent of a gateway node, which may take over transit packets.
    gateway_of: Vec<Option<u32>>,
    sample_interval: Option<Time>,
    trace_every_change: bool,
    /// Behind a cell so the series can be expanded from the log when read.
    series: RefCell<Series>,
    qdisc_effects: Effects,
    agent_effects: AgentEffects,
    packet_hops: u64,
    progress: ProgressGuard,
    failure: Option<String>,
    /// The failure as an error in the scenario, when a value of the scenario caused it.
    failure_cause: Option<ScenarioError>,
    log_room: Option<LogRoom>,
    window: Window,
    drop_log: EventLog,
    phases: PhaseLog,
    sampler: sampling::Sampler,
    /// Whether the run loop keeps a [`Lookahead`] for deep cache hints.
    looks_ahead: bool,
    /// Per agent, its first hop and its peer, for the deep hints (empty without them).
    agent_routes: Vec<prefetch::AgentRoute>,
    /// The ports whose last arrival was dropped, for the deep hints (empty without them).
    dropping: crate::stats::touched::Touched,
}

impl Simulation {
    pub fn new(parts: SimParts) -> Self {
        let sampler = sampling::Sampler::new(parts.ports.len(), parts.agents.len());
        let port_to: Vec<u32> = parts.ports.iter().map(|p| p.to).collect();
        let routes = RoutingTable::compute(&parts.nodes, &port_to);
        let flow_stats = FlowCounters::new(parts.flows.len());
        let progress = ProgressGuard::new(parts.agents.len() + parts.ports.len());
        let gateway_of = gateway_agents(&parts.nodes, &parts.agents);
        let looks_ahead = prefetch::looks_ahead(parts.agents.len(), parts.ports.len());
        let classes = ClassSeries::new(&data_flow_classes(&parts.flows));
        let phases = PhaseLog::new(parts.phase_edges, &data_flow_classes(&parts.flows));
        let mut sim = Simulation {
            now: 0,
            end: parts.end,
            events: EventQueue::default(),
            packets: PacketArena::default(),
            nodes: parts.nodes,
            ports: parts.ports,
            routes,
            agents: parts.agents,
            flow_info: parts.flows,
            flow_stats,
            gateway_of,
            sample_interval: parts.sample_interval,
            trace_every_change: parts.trace_every_change,
            series: RefCell::new(Series {
                classes,
                ..Series::default()
            }),
            qdisc_effects: Effects::default(),
            agent_effects: AgentEffects::default(),
            packet_hops: 0,
            progress,
            failure: None,
            failure_cause: None,
            log_room: parts.log_room,
            window: Window {
                start: parts.window_start,
                stop: parts.window_stop,
                ..Window::default()
            },
            drop_log: EventLog::new(parts.record_drops),
            phases,
            sampler,
            looks_ahead: false,
            agent_routes: Vec::new(),
            dropping: crate::stats::touched::Touched::default(),
        };
        sim.set_looks_ahead(looks_ahead);
        sim.prepare();
        sim
    }

    fn prepare(&mut self) {
        for (i, slot) in self.agents.iter().enumerate() {
            self.events
                .schedule(slot.start, Event::AgentStart { agent: i as u32 });
            if let Some(stop) = slot.stop {
                self.events
                    .schedule(stop, Event::AgentStop { agent: i as u32 });
            }
        }
        for port in 0..self.ports.len() {
            self.with_qdisc(port, |q, ctx| q.init(ctx));
            if sampling::reads_as_zero(&self.ports[port]) {
                self.sampler.port_reads_as_zero(port);
            }
        }
        if self.sample_interval.is_some() {
            self.events.schedule(0, Event::Sample);
        }
        if self.window.start > 0 {
            self.events.schedule(self.window.start, Event::WindowEdge);
        }
        if let Some(stop) = self.window.stop {
            self.events.schedule(stop, Event::WindowEdge);
        }
        for &edge in &self.phases.edges {
            self.events.schedule(edge, Event::PhaseEdge);
        }
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn end(&self) -> Time {
        self.end
    }

    pub fn routes(&self) -> &RoutingTable {
        &self.routes
    }

    /// Runs every event up to and including `until` (capped at the scenario's end). A run
    /// that stops making progress in time ends early with `failure()` set.
    pub fn run_until(&mut self, until: Time) {
        self.run_observing(until, |_, _| {});
    }

    /// [`Self::run_until`], showing `observe` each event just before it runs (a benchmark
    /// records the run's event sequence this way; observing never changes a result).
    pub fn run_observing(&mut self, until: Time, observe: impl FnMut(&Self, &Event)) {
        if self.failure.is_some() {
            return;
        }
        let until = until.min(self.end);
        if self.looks_ahead {
            let mut lookahead = Lookahead::default();
            self.run_loop(until, &mut lookahead, observe);
            lookahead.put_back(&mut self.events);
        } else {
            self.run_loop(until, &mut prefetch::HeapOnly, observe);
        }
        if self.failure.is_none() {
            self.now = self.now.max(until);
        }
    }

    /// The run loop, compiled once per way of taking the next event from the queue (chosen
    /// per simulation, see [`prefetch::looks_ahead`]).
    #[inline(never)]
    fn run_loop<P: prefetch::Pending>(
        &mut self,
        until: Time,
        pending: &mut P,
        mut observe: impl FnMut(&Self, &Event),
    ) {
        while let Some(t) = pending.peek_time(&mut self.events) {
            if t > until {
                break;
            }
            let (time, event) = pending.pop(&mut self.events).expect("peeked");
            pending.hint(self);
            self.now = time;
            if !self.progress.advance(time) {
                let culprit = describe(
                    &event,
                    &self.ports,
                    &self.agents,
                    &self.flow_info,
                    &self.packets,
                );
                self.failure = Some(self.progress.stalled(culprit));
                return;
            }
            observe(self, &event);
            self.dispatch(event);
            if self.failure.is_some() {
                return;
            }
        }
    }

    /// Chooses whether the run loop keeps a [`Lookahead`] for deep cache hints, overriding the
    /// choice [`Self::new`] made from the number of agents and ports. The way events are taken
    /// never changes a result; tests and benchmarks compare the two ways with this.
    pub fn set_looks_ahead(&mut self, on: bool) {
        self.looks_ahead = on;
        self.events.use_calendar(on);
        self.agent_routes = if on {
            prefetch::agent_routes(&self.agents, &self.flow_info, &mut self.routes)
        } else {
            Vec::new()
        };
        self.dropping = crate::stats::touched::Touched::new(if on { self.ports.len() } else { 0 });
    }

    /// Why the run stopped early, if it did (then its results are not valid).
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The failure as an error in the scenario (its field and message), when a value of the
    /// scenario caused it.
    pub fn failure_cause(&self) -> Option<&ScenarioError> {
        self.failure_cause.as_ref()
    }

    /// The scenario field to blame for the failure, when a value of the scenario caused it.
    pub fn failure_field(&self) -> Option<&str> {
        self.failure_cause.as_ref().map(|cause| cause.path.as_str())
    }

    /// Runs to the scenario's end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    pub fn finished(&self) -> bool {
        self.now >= self.end
    }

    #[inline(always)]
    fn dispatch(&mut self, event: Event) {
        match event {
            Event::TxDone { port } => self.tx_done(port as usize),
            Event::Arrive { port, packet } => self.arrive(port as usize, packet),
            Event::LinkArrive { port } => self.link_arrive(port as usize),
            Event::Deliver { packet } => {
                let node = self.packets.get(packet).dst;
                self.deliver(node, packet)
            }
            Event::AgentTimer { agent, token } => {
                self.with_agent(agent as usize, |a, ctx| a.on_timer(token, ctx))
            }
            Event::AgentStart { agent } => self.with_agent(agent as usize, |a, ctx| a.start(ctx)),
            Event::AgentStop { agent } => self.with_agent(agent as usize, |a, ctx| a.stop(ctx)),
            Event::QdiscTimer { port } => self.qdisc_timer(port as usize),
            Event::Sample => self.sample(),
            Event::WindowEdge => self.window_edge(),
            Event::PhaseEdge => self.close_phase(),
        }
    }

    /// A packet arriving at `node`: a gateway there may take a transit packet over; else route
    /// it. A packet addressed to `node` is delivered without reading the node's gateway entry
    /// (with many hosts, one more cold line per delivery).
    fn forward(&mut self, node: u32, packet: PacketId) {
        let p = self.packets.get(packet);
        if p.dst == node {
            self.deliver(node, packet);
            return;
        }
        if let Some(gateway) = self.gateway_of[node as usize] {
            if self.agents[gateway as usize].agent.claims(p) {
                self.hand_over(gateway as usize, packet);
                return;
            }
        }
        self.route(node, packet);
    }

    /// Delivers a packet addressed to `node`, else queues it at the next port.
    fn route(&mut self, node: u32, packet: PacketId) {
        let dst = self.packets.get(packet).dst;
        if dst == node {
            self.deliver(node, packet);
            return;
        }
        let port = self.routes.next_port(node, dst);
        if port == NO_ROUTE {
            self.discard(packet, DropReason::NoRoute, None);
            return;
        }
        self.enqueue(port as usize, packet);
    }

    fn enqueue(&mut self, port: usize, packet: PacketId) {
        if self.ports[port].passes(self.packets.get(packet).size, self.now) {
            self.pass_to_link(port, packet);
            return;
        }
        let monitored = self.monitored_view(port);
        {
            let p = self.packets.get_mut(packet);
            p.enqueued = self.now;
            p.hops += 1;
            let size = p.size as u64;
            let port = &mut self.ports[port];
            port.integrate(self.now);
            port.stats.arrivals_pkts += 1;
            port.stats.arrivals_bytes += size;
        }
        let live = self.packets.live();
        self.with_qdisc_view(port, monitored, |q, ctx| q.enqueue(packet, ctx));
        self.note_dropping(port, self.packets.live() < live);
        if self.ports[port].busy(self.now) {
            self.fill_device(port);
        }
        let p = &mut self.ports[port];
        let (packets, bytes) = p.queue_lengths();
        p.stats.note_length(packets, bytes);
        self.kick(port);
    }

    /// An arrival that skips the discipline onto the idle link ([`Port::passes`]): every
    /// counter is kept as if the discipline had taken it and handed it straight back, the
    /// packet counting as queued for that instant (so in the maximum queue length).
    fn pass_to_link(&mut self, port: usize, packet: PacketId) {
        let p = self.packets.get_mut(packet);
        p.enqueued = self.now;
        p.hops += 1;
        let size = p.size;
        let port_record = &mut self.ports[port];
        port_record.integrate(self.now);
        let stats = &mut port_record.stats;
        stats.arrivals_pkts += 1;
        stats.arrivals_bytes += u64::from(size);
        stats.note_length(1, u64::from(size));
        self.sampler.port_called(port);
        self.note_dropping(port, false);
        self.transmit(port, packet);
    }

    /// Moves packets from the discipline into the device queue while it has room; a pull
    /// that finds the discipline empty starts the discipline's idle period.
    fn fill_device(&mut self, port: usize) {
        if !self.ports[port].device.enabled() {
            return;
        }
        self.ports[port].integrate(self.now);
        while self.ports[port].device.has_room() {
            let Some(packet) = self.with_qdisc(port, |q, ctx| q.dequeue(ctx)) else {
                self.ports[port].device.note_starved(self.now);
                return;
            };
            let p = &mut self.ports[port];
            p.device.push(packet);
            p.stats.max_device_pkts = p.stats.max_device_pkts.max(p.device.len() as u64);
        }
    }

    /// The next packet for the free link: the device queue's head, else the discipline's
    /// (a packet for an idle link skips the empty ring, as in ns-3's point-to-point device).
    fn next_for_link(&mut self, port: usize) -> Option<PacketId> {
        match self.ports[port].device.pop() {
            Some(packet) => Some(packet),
            None => self.with_qdisc(port, |q, ctx| q.dequeue(ctx)),
        }
    }

    /// Starts a transmission if the link is free, else makes sure one is due when it frees.
    fn kick(&mut self, port: usize) {
        let p = &mut self.ports[port];
        if !p.busy(self.now) {
            self.start_tx(port);
        } else if !p.tx_scheduled && (p.has_queued() || !p.device.is_empty()) {
            p.tx_scheduled = true;
            let at = p.busy_until;
            self.events
                .schedule(at, Event::TxDone { port: port as u32 });
        }
    }

    /// Dequeues the next packet and hands it to the (free) link.
    fn start_tx(&mut self, port: usize) {
        self.ports[port].integrate(self.now);
        let Some(packet) = self.next_for_link(port) else {
            return;
        };
        self.transmit(port, packet);
    }

    /// Hands `packet`, out of the discipline, to the free link of `port`.
    fn transmit(&mut self, port: usize, packet: PacketId) {
        if let Some((agent, token)) = self.ports[port].next_waiting() {
            self.events
                .schedule(self.now, Event::AgentTimer { agent, token });
        }
        let header = self.packets.get(packet);
        let p = &mut self.ports[port];
        let tx = tx_time(header.size, p.link.rate_bps);
        p.busy_until = self.now.saturating_add(tx);
        p.stats.busy_ps += tx as u128;
        p.stats.wait_ps += (self.now - header.enqueued) as u128;
        p.stats.departures_pkts += 1;
        p.stats.departures_bytes += header.size as u64;
        self.packet_hops += 1;
        if p.link.loses(header) {
            p.stats.drops_pkts[DropReason::LinkLoss as usize] += 1;
            p.stats.drops_bytes[DropReason::LinkLoss as usize] += header.size as u64;
            self.discard(packet, DropReason::LinkLoss, Some(port as u32));
        } else {
            p.in_transit += 1;
            let at = p
                .busy_until
                .saturating_add(p.link.propagation(header, p.busy_until));
            if !p.link.preserves_order() {
                let event = Event::Arrive {
                    port: port as u32,
                    packet,
                };
                self.events.schedule(at, event);
            } else {
                if p.in_flight.is_empty() {
                    self.events
                        .schedule(at, Event::LinkArrive { port: port as u32 });
                }
                p.in_flight.push_back((at, packet));
            }
        }
        self.fill_device(port);
        self.kick(port);
    }

    /// The link frees: an arrival at this very time may already have started the next
    /// transmission, so this only kicks.
    fn tx_done(&mut self, port: usize) {
        self.ports[port].tx_scheduled = false;
        self.kick(port);
    }

    fn arrive(&mut self, port: usize, packet: PacketId) {
        let p = &mut self.ports[port];
        p.in_transit -= 1;
        p.stats.delivered_pkts += 1;
        let node = p.to;
        self.forward(node, packet);
    }

    #[inline(always)]
    fn link_arrive(&mut self, port: usize) {
        let p = &mut self.ports[port];
        let (_, packet) = p
            .in_flight
            .pop_front()
            .expect("a packet in flight at LinkArrive");
        if let Some(&(next, _)) = p.in_flight.front() {
            self.events
                .schedule(next, Event::LinkArrive { port: port as u32 });
        }
        self.arrive(port, packet);
    }

    fn deliver(&mut self, node: u32, packet: PacketId) {
        let agent = self.packets.get(packet).dst_agent as usize;
        debug_assert_eq!(
            self.agents[agent].node, node,
            "packet delivered to the wrong host"
        );
        self.hand_over(agent, packet);
    }

    /// Frees `packet`, counts it as delivered and gives it to `agent`.
    fn hand_over(&mut self, agent: usize, packet: PacketId) {
        let header = *self.packets.get(packet);
        self.packets.free(packet);
        self.flow_stats[header.flow as usize].record_delivery(
            header.size,
            self.now - header.created,
            self.now,
        );
        self.with_agent(agent, |a, ctx| a.on_packet(&header, ctx));
    }

    /// Frees a dropped packet and charges the drop to its flow.
    fn discard(&mut self, packet: PacketId, reason: DropReason, port: Option<u32>) {
        self.discard_because(packet, reason, None, port);
    }

    fn discard_because(
        &mut self,
        packet: PacketId,
        reason: DropReason,
        cause: Option<Cause>,
        port: Option<u32>,
    ) {
        let p = self.packets.get(packet);
        if self.drop_log.enabled() {
            let index = self.arrival_counter(port);
            let event = DropEvent::of(p, self.now, port, reason, index);
            self.drop_log.record(DropEvent { cause, ..event });
        }
        let stats = &mut self.flow_stats[p.flow as usize];
        stats.dropped_pkts[reason as usize] += 1;
        stats.dropped_bytes += p.size as u64;
        self.packets.free(packet);
    }

    /// The packets that have arrived at `port` so far (0 without a port), for the events table.
    fn arrival_counter(&self, port: Option<u32>) -> u64 {
        port.map_or(0, |p| self.ports[p as usize].stats.arrivals_pkts)
    }

    fn qdisc_timer(&mut self, port: usize) {
        if self.ports[port].timer_at != Some(self.now) {
            return;
        }
        self.ports[port].timer_at = None;
        self.ports[port].integrate(self.now);
        self.with_qdisc(port, |q, ctx| q.on_timer(ctx));
        self.fill_device(port);
        self.kick(port);
    }

    fn with_qdisc<R>(
        &mut self,
        port: usize,
        f: impl FnOnce(&mut dyn crate::qdisc::Qdisc, &mut QdiscCtx) -> R,
    ) -> R {
        let monitored = self.monitored_view(port);
        self.with_qdisc_view(port, monitored, f)
    }

    fn monitored_view(&self, port: usize) -> Option<crate::qdisc::QueueView> {
        let m = self.ports[port].monitor?;
        Some(self.ports[m as usize].view(self.now))
    }

    fn with_qdisc_view<R>(
        &mut self,
        port: usize,
        monitored: Option<crate::qdisc::QueueView>,
        f: impl FnOnce(&mut dyn crate::qdisc::Qdisc, &mut QdiscCtx) -> R,
    ) -> R {
        let p = &mut self.ports[port];
        let idle_since = p.idle_since(self.now);
        let mut ctx = QdiscCtx {
            now: self.now,
            packets: &mut self.packets,
            rng: &mut p.rng,
            link_rate_bps: p.link.rate_bps,
            monitored,
            idle_since,
            effects: &mut self.qdisc_effects,
        };
        let result = f(p.qdisc.as_mut(), &mut ctx);
        p.refresh_pass();
        self.sampler.port_called(port);
        self.apply_qdisc_effects(port);
        result
    }

    fn apply_qdisc_effects(&mut self, port: usize) {
        if !self.qdisc_effects.dirty {
            return;
        }
        self.qdisc_effects.dirty = false;
        let mut drops = std::mem::take(&mut self.qdisc_effects.drops);
        let mut named = std::mem::take(&mut self.qdisc_effects.drop_causes);
        let mut causes = CauseCursor::new(&named);
        for (i, &(packet, reason)) in drops.iter().enumerate() {
            let size = self.packets.get(packet).size as u64;
            let p = &mut self.ports[port];
            p.stats.drops_pkts[reason as usize] += 1;
            p.stats.drops_bytes[reason as usize] += size;
            let cause = causes.at(i);
            if let Some(cause) = cause {
                p.causes.count_drop(cause, reason);
            }
            self.discard_because(packet, reason, cause, Some(port as u32));
        }
        drops.clear();
        named.clear();
        self.qdisc_effects.drops = drops;
        self.qdisc_effects.drop_causes = named;
        let marks = std::mem::take(&mut self.qdisc_effects.marks);
        for (total, m) in self.ports[port].stats.marks.iter_mut().zip(marks) {
            *total += m;
        }
        let mut causes = CauseCursor::new(&self.qdisc_effects.mark_causes);
        for (i, (packet, reason)) in self.qdisc_effects.marked.drain(..).enumerate() {
            let cause = causes.at(i);
            if let Some(cause) = cause {
                self.ports[port].causes.count_mark(cause, reason);
            }
            let event = DropEvent::of(
                self.packets.get(packet),
                self.now,
                Some(port as u32),
                reason,
                self.ports[port].stats.arrivals_pkts,
            );
            self.drop_log.record(DropEvent {
                cause,
                action: EventAction::Mark,
                ..event
            });
        }
        self.qdisc_effects.mark_causes.clear();
        if let Some(at) = self.qdisc_effects.timer.take() {
            // A timer never fires at the instant it was set, so a discipline cannot loop.
            let at = at.max(self.now + 1);
            self.ports[port].timer_at = Some(at);
            self.events
                .schedule(at, Event::QdiscTimer { port: port as u32 });
        }
    }

    #[inline(always)]
    fn with_agent(&mut self, agent: usize, f: impl FnOnce(&mut dyn Agent, &mut AgentCtx)) {
        let slot = &mut self.agents[agent];
        let node = slot.node;
        let (ports, routes) = (&self.ports, &mut self.routes);
        let mut backlog = |dst: u32| {
            let port = routes.next_port(node, dst);
            (port != NO_ROUTE).then(|| (port, ports[port as usize].backlog_packets()))
        };
        let mut ctx = AgentCtx {
            now: self.now,
            node,
            agent: agent as u32,
            first_hop_rate_bps: slot.first_hop_rate_bps,
            rng: &mut slot.rng,
            packets: &mut self.packets,
            flows: &mut self.flow_stats,
            traces: &mut self.series.get_mut().traces,
            effects: &mut self.agent_effects,
            trace_every_change: self.trace_every_change,
            backlog: Some(&mut backlog),
        };
        f(slot.agent.as_mut(), &mut ctx);
        self.sampler.agent_called(agent);
        for (port, token) in self.agent_effects.port_waits.drain(..) {
            self.ports[port as usize].wait(agent as u32, token);
        }
        for (at, token) in self.agent_effects.timers.drain(..) {
            let event = Event::AgentTimer {
                agent: agent as u32,
                token,
            };
            self.events.schedule(at, event);
        }
        let mut outbox = std::mem::take(&mut self.agent_effects.outbox);
        for &packet in &outbox {
            self.inject(agent, node, packet);
        }
        outbox.clear();
        self.agent_effects.outbox = outbox;
    }

    /// A packet `agent` on `node` sent: count it as offered and route it (to the agent's
    /// peer through the port the deep hints' table keeps, which the routing table gave).
    fn inject(&mut self, agent: usize, node: u32, packet: PacketId) {
        let p = self.packets.get(packet);
        let dst = p.dst;
        let stats = &mut self.flow_stats[p.flow as usize];
        stats.offered_pkts += 1;
        stats.offered_bytes += p.size as u64;
        if dst == node {
            self.events.schedule(self.now, Event::Deliver { packet });
            return;
        }
        match self.agent_routes.get(agent) {
            Some(route) if route.peer == dst && route.port != NO_ROUTE => {
                self.enqueue(route.port as usize, packet)
            }
            _ => self.route(node, packet),
        }
    }
}

/// Each flow's class for the class series: its source kind for data flows, none for ACKs.
fn data_flow_classes(flows: &[FlowInfo]) -> Vec<Option<&str>> {
    flows
        .iter()
        .map(|f| (f.role == FlowRole::Data).then_some(f.kind.as_str()))
        .collect()
}

/// The agent on each gateway node (a gateway node hosts exactly one, its gateway).
fn gateway_agents(nodes: &[Node], agents: &[AgentSlot]) -> Vec<Option<u32>> {
    let mut out = vec![None; nodes.len()];
    for (i, slot) in agents.iter().enumerate() {
        if nodes[slot.node as usize].kind == crate::net::node::NodeKind::Gateway {
            out[slot.node as usize] = Some(i as u32);
        }
    }
    out
}
