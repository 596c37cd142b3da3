//! A harness for driving an agent by hand in unit tests: calls at set times, the packets it
//! sent and the timers it asked for.

use crate::engine::{rng, Rng, Time};
use crate::net::agent::{AgentCtx, AgentEffects};
use crate::net::{Packet, PacketArena};
use crate::stats::flow_counters::FlowCounters;
use crate::stats::series::VarSeries;

pub struct AgentHarness {
    pub now: Time,
    pub packets: PacketArena,
    pub flows: FlowCounters,
    pub traces: VarSeries,
    pub rng: Rng,
    effects: AgentEffects,
    /// Every timer requested so far: (time, token).
    pub timers: Vec<(Time, u64)>,
}

impl AgentHarness {
    pub fn new(flows: usize) -> Self {
        AgentHarness {
            now: 0,
            packets: PacketArena::default(),
            flows: FlowCounters::new(flows),
            traces: VarSeries::default(),
            rng: rng::stream(1, "agent-harness"),
            effects: AgentEffects::default(),
            timers: Vec::new(),
        }
    }

    /// Runs `f` with a context at `now`; returns the packets sent during the call.
    pub fn call(&mut self, f: impl FnOnce(&mut AgentCtx)) -> Vec<Packet> {
        let mut ctx = AgentCtx {
            now: self.now,
            node: 0,
            agent: 0,
            first_hop_rate_bps: 1,
            rng: &mut self.rng,
            packets: &mut self.packets,
            flows: &mut self.flows,
            traces: &mut self.traces,
            effects: &mut self.effects,
            trace_every_change: true,
            backlog: None,
        };
        f(&mut ctx);
        self.timers.append(&mut self.effects.timers);
        let sent: Vec<Packet> = self
            .effects
            .outbox
            .iter()
            .map(|&id| *self.packets.get(id))
            .collect();
        for id in self.effects.outbox.drain(..) {
            self.packets.free(id);
        }
        sent
    }
}
