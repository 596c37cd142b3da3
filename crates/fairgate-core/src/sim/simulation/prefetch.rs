//! Cache hints for the events to come. With 100,000 flows every event touches the state of
//! a flow or a port that has left the caches since its last event; the hints overlap those
//! misses with the current event's work, two stages deep: the record (agent slot, port) of
//! the event after next, and the objects behind the next event's record (its agent, its
//! discipline), whose record the previous round hinted. Hints never change a result.

use super::Simulation;
use crate::engine::prefetch::{prefetch_at, prefetch_lines};
use crate::engine::Event;

/// Bytes of an object hinted at most (the fields an event handler reads first).
const OBJECT_BYTES: usize = 256;

impl Simulation {
    pub(super) fn prefetch_upcoming(&self) {
        let (next, after) = self.events.upcoming();
        if let Some(event) = after {
            self.prefetch_record(event);
        }
        if let Some(event) = next {
            self.prefetch_behind(event);
        }
    }

    fn prefetch_record(&self, event: &Event) {
        match *event {
            Event::AgentTimer { agent, .. } | Event::AgentStart { agent } => {
                prefetch_at(&self.agents, agent as usize)
            }
            Event::TxDone { port } | Event::LinkArrive { port } => {
                if let Some(port) = self.ports.get(port as usize) {
                    prefetch_lines(port, OBJECT_BYTES);
                }
            }
            Event::Arrive { port, packet } => {
                prefetch_at(&self.ports, port as usize);
                self.packets.prefetch(packet);
            }
            Event::Deliver { packet } => self.packets.prefetch(packet),
            _ => {}
        }
    }

    fn prefetch_behind(&self, event: &Event) {
        match *event {
            Event::AgentTimer { agent, .. } | Event::AgentStart { agent } => {
                if let Some(slot) = self.agents.get(agent as usize) {
                    prefetch_lines(&*slot.agent, OBJECT_BYTES);
                }
            }
            Event::TxDone { port } | Event::LinkArrive { port } | Event::Arrive { port, .. } => {
                if let Some(port) = self.ports.get(port as usize) {
                    prefetch_lines(&*port.qdisc, OBJECT_BYTES);
                }
            }
            _ => {}
        }
    }
}
