//! Agents: the end points that live on hosts (traffic sources, sinks, transport senders and
//! receivers). The engine calls an agent when it starts, stops, receives a packet or a timer it
//! set fires; the agent answers through an [`AgentCtx`]. A transport protocol is an agent pair,
//! so the TCP family plugs in without changes to the engine.

use crate::engine::prefetch::prefetch_lines;
use crate::engine::{to_secs, Rng, Time};
use crate::net::packet::{Packet, PacketArena, PacketId};
use crate::stats::flow_counters::FlowCounters;
use crate::stats::series::VarSeries;
use crate::stats::FlowStats;

/// What an agent asks of the engine during one call.
#[derive(Default)]
pub struct AgentEffects {
    pub(crate) outbox: Vec<PacketId>,
    pub(crate) timers: Vec<(Time, u64)>,
    /// (port, token): call `on_timer(token)` once the port next sends a packet.
    pub(crate) port_waits: Vec<(u32, u64)>,
}

/// The engine's answer to "which port leads to `dst` from here, and how many packets wait
/// there (discipline and device queue)?"; None where it cannot tell (no route, no ports).
pub type PortBacklog<'a> = &'a mut dyn FnMut(u32) -> Option<(u32, usize)>;

/// The engine's side of an agent call.
pub struct AgentCtx<'a> {
    pub now: Time,
    /// The host this agent lives on.
    pub node: u32,
    /// This agent's id (use as `src_agent` of packets it sends).
    pub agent: u32,
    /// Rate of the host's first-hop link.
    pub first_hop_rate_bps: u64,
    pub rng: &'a mut Rng,
    pub(crate) packets: &'a mut PacketArena,
    pub(crate) flows: &'a mut FlowCounters,
    pub(crate) traces: &'a mut VarSeries,
    pub(crate) effects: &'a mut AgentEffects,
    /// Whether senders should trace every window change (`[simulation] trace_every_change`).
    pub trace_every_change: bool,
    /// Port occupancy toward a destination, for an agent that holds its data while the
    /// port is full (a gateway's back-pressure); None outside the packet engine.
    pub(crate) backlog: Option<PortBacklog<'a>>,
}

impl<'a> AgentCtx<'a> {
    /// Hands a packet to the network at this host. `created` is set to now and `src`,
    /// `src_agent` to this agent; the caller fills in the rest.
    pub fn send(&mut self, mut packet: Packet) {
        packet.created = self.now;
        packet.src = self.node;
        packet.src_agent = self.agent;
        let id = self.packets.alloc(packet);
        self.effects.outbox.push(id);
    }

    /// Calls `on_timer(token)` at `at` (never earlier than now).
    pub fn set_timer(&mut self, at: Time, token: u64) {
        self.effects.timers.push((at.max(self.now), token));
    }

    /// The counters of `flow`, for transports to record RTTs, retransmissions and the like.
    pub fn flow(&mut self, flow: u32) -> &mut FlowStats {
        &mut self.flows[flow as usize]
    }

    /// Records `bytes` of new application data accepted in order by a receiver.
    pub fn goodput(&mut self, flow: u32, bytes: u64) {
        self.flows[flow as usize].goodput_bytes += bytes;
    }

    /// Appends a point to the per-flow trace table (cwnd, window, rate, ...).
    pub fn trace(&mut self, flow: u32, name: &str, value: f64) {
        self.traces.push(to_secs(self.now), flow, name, value);
    }

    /// How many packets and timers this call has asked for so far: an agent that hosts inner
    /// agents (a gateway) takes a mark before calling one and rewrites what it added.
    pub(crate) fn mark(&self) -> (usize, usize) {
        (self.effects.outbox.len(), self.effects.timers.len())
    }

    /// The port toward `dst` and the packets waiting in it, if the engine tells.
    pub(crate) fn backlog_toward(&mut self, dst: u32) -> Option<(u32, usize)> {
        self.backlog.as_mut().and_then(|f| f(dst))
    }

    /// Asks for `on_timer(token)` when `port` next hands a packet to its link.
    pub(crate) fn wake_when_port_sends(&mut self, port: u32, token: u64) {
        self.effects.port_waits.push((port, token));
    }

    /// How many trace points exist so far (see [`AgentCtx::prefix_traces_since`]).
    pub(crate) fn trace_mark(&self) -> usize {
        self.traces.len()
    }

    /// Prefixes the names of the trace points recorded since `mark`.
    pub(crate) fn prefix_traces_since(&mut self, mark: usize, prefix: &str) {
        self.traces.prefix_since(mark, prefix);
    }

    /// Applies `edit` to every packet sent since `mark`.
    pub(crate) fn edit_sent_since(
        &mut self,
        mark: (usize, usize),
        mut edit: impl FnMut(&mut Packet),
    ) {
        for &id in &self.effects.outbox[mark.0..] {
            edit(self.packets.get_mut(id));
        }
    }

    /// The timers asked for since `mark`, as (time, token), for re-tokening.
    pub(crate) fn timers_since(&mut self, mark: (usize, usize)) -> &mut [(Time, u64)] {
        &mut self.effects.timers[mark.1..]
    }
}

/// An end point on a host.
pub trait Agent: Send {
    /// At the flow's start time.
    fn start(&mut self, _ctx: &mut AgentCtx) {}
    /// At the flow's stop time: stop producing new data.
    fn stop(&mut self, _ctx: &mut AgentCtx) {}
    /// A packet addressed to this agent arrived; the engine frees it after the call.
    fn on_packet(&mut self, packet: &Packet, ctx: &mut AgentCtx);
    /// A timer set with `ctx.set_timer` fired. Timers cannot be cancelled: an agent ignores
    /// tokens it no longer expects.
    fn on_timer(&mut self, _token: u64, _ctx: &mut AgentCtx) {}
    /// Whether this agent takes over `packet`, which crosses its node on the way elsewhere
    /// (only the agent of a gateway node is asked; see [`crate::gateway`]).
    fn claims(&self, _packet: &Packet) -> bool {
        false
    }
    /// Broken invariants this agent has found (conservation of the bytes it holds), as
    /// readable sentences; the engine reports them beside its own.
    fn violations(&self) -> Vec<String> {
        Vec::new()
    }
    /// Appends the variables sampled at the scenario's sample interval into the trace table
    /// to `out` (which arrives empty).
    fn sample(&self, _out: &mut Vec<(&'static str, f64)>) {}
    /// Whether `sample` reads only this agent's own state, which changes only through the
    /// engine's calls into it: then a sample reuses the values of an agent not called since
    /// the last sample instead of visiting it. False (visit at every sample) for an agent
    /// whose samples read state that other agents change.
    fn sample_reads_only_self(&self) -> bool {
        false
    }
    /// Whether `sample` never gives a value (a sink): a sample then never visits this agent.
    fn samples_nothing(&self) -> bool {
        false
    }
    /// A cache hint for what `sample` reads, given a few objects ahead of the sample's visit
    /// (a hint never changes a result): by default the agent's first 512 bytes; an agent
    /// whose sampled fields lie elsewhere in a larger record names them.
    fn prefetch_sample(&self) {
        prefetch_lines(self, AGENT_HINT_BYTES);
    }
    fn name(&self) -> &'static str;
    /// Moves the transfers finished so far into `out` (workloads that record transfers).
    fn drain_transfers(&mut self, _out: &mut crate::stats::transfers::TransferTable) {}
    /// Finished transfers the agent holds until they are drained.
    fn transfers_held(&self) -> usize {
        0
    }
    /// A cache hint for the lines of this record an event's call reads (a hint never changes
    /// a result): by default its first [`AGENT_HINT_BYTES`].
    fn prefetch(&self) {
        prefetch_lines(self, AGENT_HINT_BYTES);
    }
    /// [`Agent::prefetch`] for a timer event, which may read less of the record.
    fn prefetch_timer(&self) {
        self.prefetch();
    }
    /// [`Agent::prefetch`] for the start event, which may read more of the record.
    fn prefetch_start(&self) {
        self.prefetch();
    }
    /// A cache hint for the state a call reads outside this record (a boxed part), asked once
    /// [`Agent::prefetch`] has had time to bring the record in.
    fn prefetch_parts(&self) {}
    /// Whether `start` does nothing, so its event reads no more than the agent's slot (the run
    /// loop then hints nothing behind it). Answer without reading `self`: it is asked before
    /// the record is in the caches.
    fn idle_at_start(&self) -> bool {
        false
    }
}

/// Bytes of an agent's record [`Agent::prefetch`] hints unless the agent says otherwise.
pub const AGENT_HINT_BYTES: usize = 512;
