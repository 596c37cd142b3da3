//! Cache hints for the events to come. With 100,000 flows every event touches the state of
//! a flow or a port that has left the caches since its last event; the hints overlap those
//! misses with the current event's work and with each other, two stages deep: the record
//! (agent slot, a port's hot fields) of the event after next, and what the next event reaches
//! through its record, whose lines the previous round hinted: its agent and the flow's
//! counters, or its discipline and the head of its link's in-flight queue. Hints never change
//! a result.

use super::Simulation;
use crate::engine::prefetch::{prefetch, prefetch_lines};
use crate::engine::Event;

/// Bytes of an agent or a discipline hinted at most (the fields an event handler reads first).
const OBJECT_BYTES: usize = 512;

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
            Event::AgentTimer { agent, .. }
            | Event::AgentStart { agent }
            | Event::AgentStop { agent } => {
                if let Some(slot) = self.agents.get(agent as usize) {
                    prefetch_lines(slot, usize::MAX);
                }
            }
            Event::TxDone { port } | Event::LinkArrive { port } | Event::QdiscTimer { port } => {
                if let Some(port) = self.ports.get(port as usize) {
                    port.prefetch_hot();
                }
            }
            Event::Arrive { port, packet } => {
                if let Some(port) = self.ports.get(port as usize) {
                    port.prefetch_hot();
                }
                self.packets.prefetch(packet);
            }
            Event::Deliver { packet } => self.packets.prefetch(packet),
            _ => {}
        }
    }

    fn prefetch_behind(&self, event: &Event) {
        match *event {
            Event::AgentTimer { agent, .. }
            | Event::AgentStart { agent }
            | Event::AgentStop { agent } => {
                if let Some(slot) = self.agents.get(agent as usize) {
                    prefetch_lines(&*slot.agent, OBJECT_BYTES);
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
            Event::LinkArrive { port } => {
                if let Some(port) = self.ports.get(port as usize) {
                    if let Some(head) = port.in_flight.front() {
                        prefetch(head);
                    }
                }
            }
            _ => {}
        }
    }
}
