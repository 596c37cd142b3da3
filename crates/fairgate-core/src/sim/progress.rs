//! The engine's progress check: a run whose clock stops advancing (a source whose gap rounds
//! to 0 ps, a timer set again and again for the current instant) would loop forever. The run
//! loop counts the events at one instant and stops the run with an error naming what keeps
//! scheduling once the count passes a bound no real burst reaches (every agent and port acting
//! many times at once, plus a fixed margin).

use super::port::Port;
use super::simulation::{AgentSlot, FlowInfo};
use crate::engine::{to_secs, Event, Time};
use crate::net::packet::PacketArena;

/// Events allowed at one instant beyond `PER_ACTOR` per agent and port.
const BASE_EVENTS: u64 = 4_000_000;
const PER_ACTOR: u64 = 64;

/// Counts the events at the current instant.
#[derive(Clone, Copy, Debug)]
pub struct ProgressGuard {
    instant: Time,
    events_at_instant: u64,
    limit: u64,
}

impl ProgressGuard {
    pub fn new(actors: usize) -> Self {
        ProgressGuard {
            instant: 0,
            events_at_instant: 0,
            limit: BASE_EVENTS + PER_ACTOR * actors as u64,
        }
    }

    /// Counts one event at `time`; false once too many events happened at one instant.
    #[inline]
    pub fn advance(&mut self, time: Time) -> bool {
        if time != self.instant {
            self.instant = time;
            self.events_at_instant = 0;
            return true;
        }
        self.events_at_instant += 1;
        self.events_at_instant <= self.limit
    }

    /// The error for a run stopped at this instant, naming the event that tripped the bound.
    pub fn stalled(&self, culprit: String) -> String {
        format!(
            "the run made no progress in time: more than {} events at t = {} s without the \
             clock advancing; the last was {culprit} (a rate, size or timer that rounds to \
             0 ps keeps scheduling at the same instant)",
            self.limit,
            to_secs(self.instant)
        )
    }
}

/// Who an event belongs to, in the words of the scenario.
pub fn describe(
    event: &Event,
    ports: &[Port],
    agents: &[AgentSlot],
    flows: &[FlowInfo],
    packets: &PacketArena,
) -> String {
    let agent = |a: u32| {
        let slot = &agents[a as usize];
        format!("agent {a} of flow {:?}", flows[slot.flow as usize].name)
    };
    let port = |p: u32| format!("port {:?}", ports[p as usize].name);
    match *event {
        Event::TxDone { port: p } => format!("the end of a transmission at {}", port(p)),
        Event::Arrive { port: p, .. } | Event::LinkArrive { port: p } => {
            format!("an arrival over the link of {}", port(p))
        }
        Event::Deliver { packet } => {
            let flow = packets.get(packet).flow as usize;
            format!("a local delivery of flow {:?}", flows[flow].name)
        }
        Event::AgentTimer { agent: a, .. } => format!("a timer of {}", agent(a)),
        Event::AgentStart { agent: a } => format!("the start of {}", agent(a)),
        Event::AgentStop { agent: a } => format!("the stop of {}", agent(a)),
        Event::QdiscTimer { port: p } => format!("a queue-discipline timer at {}", port(p)),
        Event::Sample => "a sample of the series".into(),
        Event::WindowEdge => "an edge of the measurement window".into(),
        Event::PhaseEdge => "an edge between traffic phases".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_trips_only_at_one_instant() {
        let mut g = ProgressGuard::new(0);
        for t in 0..10 {
            assert!(g.advance(t));
        }
        let stuck = (0..=BASE_EVENTS + 1).all(|_| g.advance(10));
        assert!(!stuck);
        assert!(g.stalled("x".into()).contains("t = 0.00000000001 s"));
    }
}
