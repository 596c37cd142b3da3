//! Cache hints for the events to come. With many flows every event touches the state of a
//! flow or a port that has left the caches since its last event, and reaches it through a
//! chain of dependent loads (port, its discipline, the in-flight queue's head, the packet, the
//! next port or the receiving agent).
//!
//! A simulation small enough for the caches (see [`looks_ahead`]) takes events straight from
//! the heap and hints two stages: the record (agent slot, a port's hot fields) of the event
//! after next, and what the next event reaches through its record. A larger one keeps a
//! [`Lookahead`] of the earliest events in front of the heap and walks each event's chain one
//! link per round, several events ahead, so a link's line has arrived by the round that reads
//! through it: the record of the event 8 ahead; 6 ahead the objects behind the record (agent
//! and flow counters, or discipline), or the packet a link delivers, or the port a sender
//! sends to its peer through (kept per agent, see [`AgentRoute`]); 4 ahead the packet a busy
//! link sends next, the delivered-to agent or a sender's congestion control and the lines its
//! port's discipline reads on an enqueue, or where an arriving packet goes on (the routing
//! anchor of its destination, or the slot of the agent it is delivered to and the whole
//! packet); 2 ahead the port or agent a packet goes to next (with the drop counters of the
//! packet's flow when that port's discipline dropped its last arrival), or the ring slot a
//! sender's packet takes in its port's discipline; 1 ahead the discipline behind that port.
//! A port whose discipline lets arrivals pass (an empty FIFO) has none of its discipline's
//! lines fetched. The choice is made once per simulation, so each run loop is compiled for
//! its own way and the small one is the plain heap's. Hints never change a result.
//!
//! Each hint names the lines its event reads, not whole objects: an agent says which of its
//! lines ([`crate::net::Agent::prefetch`]), a slot is one line, a flow's counters one line per
//! role (a sender's, a delivery's, a drop's), a link's arrival two lines of its port, a
//! sending port four (five for a port whose queue holds packets, with its integrals); a TCP
//! sink's start reads nothing behind its slot.

use super::{AgentSlot, FlowInfo, Simulation};
use crate::engine::events::{EventQueue, Lookahead, LOOKAHEAD};
use crate::engine::prefetch::{prefetch, prefetch_at, prefetch_lines};
use crate::engine::{Event, Time};
use crate::net::agent::AGENT_HINT_BYTES;
use crate::net::packet::PacketId;
use crate::net::routing::{RoutingTable, NO_ROUTE};

/// Bytes of a discipline hinted at most (the fields an event handler reads first).
const OBJECT_BYTES: usize = 512;

const _: () = assert!(
    std::mem::offset_of!(AgentSlot, start) == 64,
    "what a call reads of an agent slot fills its first line, the one hinted"
);

/// Events hinted ahead with a lookahead.
const DEPTH: usize = 8;
const _: () = assert!(DEPTH < LOOKAHEAD, "the lookahead names the events hinted");

/// Agents and ports from which a simulation looks ahead. Below, their state mostly stays in
/// the caches, where the plain heap and the two-stage hints cost less: on the scale ladder
/// (six objects a flow) the lookahead cost 15 % more CPU per event at 2,000 flows and saved
/// 5-15 % from 3,000 flows on.
const LOOK_AHEAD_FROM: usize = 16_000;

/// Whether a simulation of `agents` and `ports` keeps a [`Lookahead`].
pub(super) fn looks_ahead(agents: usize, ports: usize) -> bool {
    agents + ports >= LOOK_AHEAD_FROM
}

/// How a run loop takes its next event and hints the ones to come.
pub(super) trait Pending {
    /// When the next event is due.
    fn peek_time(&mut self, queue: &mut EventQueue) -> Option<Time>;
    fn pop(&mut self, queue: &mut EventQueue) -> Option<(Time, Event)>;
    fn hint(&self, sim: &Simulation);
}

/// Events straight from the heap.
pub(super) struct HeapOnly;

impl Pending for HeapOnly {
    #[inline(always)]
    fn peek_time(&mut self, queue: &mut EventQueue) -> Option<Time> {
        queue.peek_time()
    }

    #[inline(always)]
    fn pop(&mut self, queue: &mut EventQueue) -> Option<(Time, Event)> {
        queue.pop()
    }

    #[inline(always)]
    fn hint(&self, sim: &Simulation) {
        sim.prefetch_two_ahead();
    }
}

impl Pending for Lookahead {
    #[inline(always)]
    fn peek_time(&mut self, queue: &mut EventQueue) -> Option<Time> {
        Lookahead::peek_time(self, queue)
    }

    #[inline(always)]
    fn pop(&mut self, queue: &mut EventQueue) -> Option<(Time, Event)> {
        Lookahead::pop(self, queue)
    }

    #[inline(always)]
    fn hint(&self, sim: &Simulation) {
        sim.prefetch_chains(self);
    }
}

/// Where an agent's packets to the other end of its flow (its peer) go first: the output
/// port the routing table gives its node towards the peer (`NO_ROUTE` for none, or for an
/// agent without a peer elsewhere). Routes are static, so a send to the peer takes this port
/// without reading the routing table (two cold lines a send at 100,000 flows), and the hints
/// fetch it ahead.
#[derive(Clone, Copy)]
pub(super) struct AgentRoute {
    pub(super) port: u32,
    pub(super) peer: u32,
}

pub(super) fn agent_routes(
    agents: &[AgentSlot],
    flows: &[FlowInfo],
    routes: &mut RoutingTable,
) -> Vec<AgentRoute> {
    agents
        .iter()
        .map(|slot| {
            let peer = flows.get(slot.flow as usize).map_or(NO_ROUTE, |flow| {
                if flow.dst == slot.node {
                    flow.src
                } else {
                    flow.dst
                }
            });
            let port = if peer == NO_ROUTE || peer == slot.node {
                NO_ROUTE
            } else {
                routes.next_port(slot.node, peer)
            };
            AgentRoute { port, peer }
        })
        .collect()
}

/// Where a packet goes at the far end of a link: the agent it is delivered to (with the
/// packet's flow, whose delivery counters it updates), or the next port (with the flow, whose
/// drop counters a dropping discipline updates).
enum Hop {
    Agent {
        agent: usize,
        flow: u32,
    },
    /// The port and the packet's flow.
    Port {
        port: usize,
        flow: u32,
    },
}

impl Simulation {
    #[inline(never)]
    fn prefetch_chains(&self, lookahead: &Lookahead) {
        let at = |distance: usize| lookahead.ahead(distance - 1);
        if let Some(event) = at(DEPTH) {
            self.prefetch_record::<true>(event);
            self.prefetch_agent_route(event);
        }
        if let Some(event) = at(6).filter(|e| !self.starts_idle(e)) {
            self.prefetch_behind::<true>(event);
            self.prefetch_also_behind(event);
        }
        if let Some(event) = at(4).filter(|e| !self.starts_idle(e)) {
            self.prefetch_reached(event);
        }
        if let Some(event) = at(2).filter(|e| !self.starts_idle(e)) {
            self.prefetch_next_hop(event);
        }
        if let Some(event) = at(1) {
            self.prefetch_behind_next_hop(event);
        }
    }

    /// Whether `event` starts an agent whose start reads nothing behind its slot.
    fn starts_idle(&self, event: &Event) -> bool {
        match *event {
            Event::AgentStart { agent } => self
                .agents
                .get(agent as usize)
                .is_some_and(|slot| slot.agent.idle_at_start()),
            _ => false,
        }
    }

    #[inline(always)]
    fn prefetch_two_ahead(&self) {
        let (next, after) = self.events.upcoming();
        if let Some(event) = after {
            self.prefetch_record::<false>(event);
        }
        if let Some(event) = next {
            self.prefetch_behind::<false>(event);
        }
    }

    /// The record an event names. `EXACT`: only the lines the event reads (deep hints); else
    /// whole records, which measured faster for a small simulation's two-ahead hints.
    #[inline(always)]
    fn prefetch_record<const EXACT: bool>(&self, event: &Event) {
        match *event {
            Event::AgentTimer { agent, .. }
            | Event::AgentStart { agent }
            | Event::AgentStop { agent } => match self.agents.get(agent as usize) {
                Some(slot) if EXACT => prefetch(slot),
                Some(slot) => prefetch_lines(slot, usize::MAX),
                None => {}
            },
            Event::TxDone { port } | Event::QdiscTimer { port } => {
                if let Some(port) = self.ports.get(port as usize) {
                    port.prefetch_queued();
                }
            }
            Event::LinkArrive { port } => match self.ports.get(port as usize) {
                Some(port) if EXACT => port.prefetch_arrival(),
                Some(port) => port.prefetch_queued(),
                None => {}
            },
            Event::Arrive { port, packet } => {
                self.prefetch_port(port as usize);
                self.packets.prefetch(packet);
            }
            Event::Deliver { packet } => self.packets.prefetch(packet),
            _ => {}
        }
    }

    /// The objects behind an event's record (`EXACT` as for [`Self::prefetch_record`]).
    #[inline(always)]
    fn prefetch_behind<const EXACT: bool>(&self, event: &Event) {
        match *event {
            Event::AgentTimer { agent, .. } if EXACT => {
                if let Some(slot) = self.agents.get(agent as usize) {
                    slot.agent.prefetch_timer();
                    self.prefetch_sender_line(slot.flow);
                }
            }
            Event::AgentStop { agent } if EXACT => self.prefetch_agent(agent as usize),
            Event::AgentStart { agent } if EXACT => {
                if let Some(slot) = self.agents.get(agent as usize) {
                    slot.agent.prefetch_start();
                    self.prefetch_sender_line(slot.flow);
                }
            }
            Event::AgentTimer { agent, .. }
            | Event::AgentStart { agent }
            | Event::AgentStop { agent } => {
                if let Some(slot) = self.agents.get(agent as usize) {
                    prefetch_lines(&*slot.agent, AGENT_HINT_BYTES);
                    if let Some(stats) = self.flow_stats.get(slot.flow as usize) {
                        prefetch_lines(stats, usize::MAX);
                    }
                }
            }
            Event::TxDone { port } | Event::Arrive { port, .. } | Event::QdiscTimer { port } => {
                if let Some(port) = self.ports.get(port as usize) {
                    prefetch_lines(&*port.qdisc, OBJECT_BYTES);
                }
            }
            // Exact hints fetched the in-flight head with the port record.
            Event::LinkArrive { port } if !EXACT => {
                if let Some(head) = self
                    .ports
                    .get(port as usize)
                    .and_then(|p| p.in_flight.front())
                {
                    prefetch(head);
                }
            }
            _ => {}
        }
    }

    /// The first hop and peer of an event's agent (deep hints only).
    fn prefetch_agent_route(&self, event: &Event) {
        if let Event::AgentTimer { agent, .. }
        | Event::AgentStart { agent }
        | Event::AgentStop { agent } = *event
        {
            prefetch_at(&self.agent_routes, agent as usize);
        }
    }

    /// Beyond [`Self::prefetch_behind`] (deep hints only): the port an agent sends to its
    /// peer through, and the in-flight queue's tail of a port that sends (where its packet
    /// goes). A port whose link delivers does not call its discipline.
    fn prefetch_also_behind(&self, event: &Event) {
        match *event {
            Event::AgentTimer { agent, .. } | Event::AgentStart { agent } => {
                if let Some(route) = self.agent_routes.get(agent as usize) {
                    self.prefetch_port(route.port as usize);
                }
            }
            Event::TxDone { port } | Event::Arrive { port, .. } | Event::QdiscTimer { port } => {
                if let Some(tail) = self
                    .ports
                    .get(port as usize)
                    .and_then(|p| p.in_flight.back())
                {
                    prefetch(tail);
                }
            }
            Event::LinkArrive { port } => {
                if let Some(packet) = self.in_flight_head(port as usize) {
                    self.packets.prefetch(packet);
                }
            }
            _ => {}
        }
    }

    fn prefetch_reached(&self, event: &Event) {
        match *event {
            Event::TxDone { port } => {
                if let Some(packet) = self.ports.get(port as usize).and_then(|p| p.qdisc.peek()) {
                    self.packets.prefetch(packet);
                }
            }
            Event::LinkArrive { .. } | Event::Arrive { .. } => self.prefetch_way_on(event),
            Event::Deliver { packet } => {
                if let Some(slot) = self.agents.get(self.packets.get(packet).dst_agent as usize) {
                    prefetch(slot);
                }
            }
            Event::AgentTimer { agent, .. } | Event::AgentStart { agent } => {
                if let Some(slot) = self.agents.get(agent as usize) {
                    slot.agent.prefetch_parts();
                }
                if let Some(port) = self.first_hop(agent) {
                    self.prefetch_enqueue_into(port);
                }
            }
            _ => {}
        }
    }

    fn prefetch_next_hop(&self, event: &Event) {
        match self.hop_of(event) {
            Some(Hop::Agent { agent, flow, .. }) => {
                self.prefetch_agent(agent);
                self.prefetch_delivery(flow);
            }
            Some(Hop::Port { port, flow }) => {
                self.prefetch_port(port);
                if self.dropping.contains(port) {
                    self.prefetch_drop_line(flow);
                }
            }
            None => match *event {
                Event::Deliver { packet } => {
                    let header = self.packets.get(packet);
                    self.prefetch_agent(header.dst_agent as usize);
                    self.prefetch_delivery(header.flow);
                }
                Event::AgentTimer { agent, .. } | Event::AgentStart { agent } => {
                    if let Some(port) = self.first_hop(agent).filter(|p| !p.lets_arrivals_pass()) {
                        port.qdisc.prefetch_enqueue_slot();
                    }
                }
                _ => {}
            },
        }
    }

    fn prefetch_behind_next_hop(&self, event: &Event) {
        if let Some(Hop::Port { port, .. }) = self.hop_of(event) {
            if let Some(port) = self.ports.get(port) {
                self.prefetch_enqueue_into(port);
            }
        }
    }

    /// The port an agent's packets to its peer are queued at (deep hints only).
    fn first_hop(&self, agent: u32) -> Option<&crate::sim::port::Port> {
        let route = self.agent_routes.get(agent as usize)?;
        self.ports.get(route.port as usize)
    }

    /// What a packet sent into `port` reads beyond the port's record: the discipline's
    /// enqueue lines, and the in-flight queue's tail when packets are in flight (else the
    /// packet goes into the record itself, and the tail's ring is not read).
    fn prefetch_enqueue_into(&self, port: &crate::sim::port::Port) {
        if !port.lets_arrivals_pass() {
            port.qdisc.prefetch_enqueue();
        }
        if let Some(tail) = port.in_flight.back() {
            prefetch(tail);
        }
    }

    /// Where an arriving packet goes on: the routing anchor of its destination, or, when it
    /// has arrived there, the slot of the agent it is delivered to and the whole packet.
    fn prefetch_way_on(&self, event: &Event) {
        let Some((port, packet)) = self.arriving(event) else {
            return;
        };
        let header = self.packets.get(packet);
        if self.ports.get(port).is_some_and(|p| p.to == header.dst) {
            if let Some(slot) = self.agents.get(header.dst_agent as usize) {
                prefetch(slot);
            }
            self.packets.prefetch_whole(packet);
        } else {
            self.routes.prefetch_anchor(header.dst);
        }
    }

    /// The port and packet of an arrival event.
    fn arriving(&self, event: &Event) -> Option<(usize, PacketId)> {
        match *event {
            Event::LinkArrive { port } => {
                Some((port as usize, self.in_flight_head(port as usize)?))
            }
            Event::Arrive { port, packet } => Some((port as usize, packet)),
            _ => None,
        }
    }

    /// Where the packet of an arrival event goes next, as far as the tables know now.
    fn hop_of(&self, event: &Event) -> Option<Hop> {
        let (port, packet) = self.arriving(event)?;
        let node = self.ports.get(port)?.to;
        let header = self.packets.get(packet);
        if header.dst == node {
            return Some(Hop::Agent {
                agent: header.dst_agent as usize,
                flow: header.flow,
            });
        }
        let next = self.routes.known_next_port(node, header.dst);
        (next != NO_ROUTE).then_some(Hop::Port {
            port: next as usize,
            flow: header.flow,
        })
    }

    fn in_flight_head(&self, port: usize) -> Option<PacketId> {
        self.ports
            .get(port)?
            .in_flight
            .front()
            .map(|&(_, packet)| packet)
    }

    fn prefetch_port(&self, port: usize) {
        if let Some(port) = self.ports.get(port) {
            port.prefetch_hot();
        }
    }

    /// An agent's record and its flow's sender counters (a segment sent, a timeout, an RTT
    /// sample; a sink's flow is the ACK flow, whose ACKs it sends).
    fn prefetch_agent(&self, agent: usize) {
        if let Some(slot) = self.agents.get(agent) {
            slot.agent.prefetch();
            self.prefetch_sender_line(slot.flow);
        }
    }

    fn prefetch_sender_line(&self, flow: u32) {
        if let Some(stats) = self.flow_stats.get(flow as usize) {
            stats.prefetch_sender_line();
        }
    }

    /// The drop counters of `flow`, for a packet of it that a discipline about to drop
    /// arrivals is likely to drop.
    fn prefetch_drop_line(&self, flow: u32) {
        if let Some(stats) = self.flow_stats.get(flow as usize) {
            stats.prefetch_drop_line();
        }
    }

    /// Whether an arrival at `port` made its discipline drop a packet, kept for the deep
    /// hints: a discipline that drops (a full drop-tail queue) likely drops the next arrival
    /// too, whose flow's drop counters are then hinted with the port.
    #[inline(always)]
    pub(super) fn note_dropping(&mut self, port: usize, dropped: bool) {
        if self.looks_ahead && self.dropping.contains(port) != dropped {
            self.dropping.set(port, dropped);
        }
    }

    /// The delivery counters of `flow`, for a packet of it about to be delivered.
    fn prefetch_delivery(&self, flow: u32) {
        if let Some(stats) = self.flow_stats.get(flow as usize) {
            stats.prefetch_delivery_line();
        }
    }
}
