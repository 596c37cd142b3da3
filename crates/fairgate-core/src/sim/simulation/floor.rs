//! Where an event's unavoidable memory accesses go: the record it names (an agent's slot, a
//! port, a packet) and the object behind that record (the agent, the port's discipline). The
//! `fairgate-floor` benchmark records these addresses over a whole run and replays only those
//! loads, which bounds from below what any layout of the same state can cost per event.

use super::Simulation;
use crate::engine::Event;

/// The addresses an event cannot avoid reading, 0 where it has none: up to two records it
/// names directly, and the object it reaches through the first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    pub records: [usize; 2],
    pub object: usize,
}

fn address_of<T: ?Sized>(value: &T) -> usize {
    (value as *const T).cast::<u8>() as usize
}

impl Simulation {
    /// The [`Footprint`] of `event` in the current state (call it before the event runs).
    pub fn footprint(&self, event: &Event) -> Footprint {
        match *event {
            Event::AgentTimer { agent, .. }
            | Event::AgentStart { agent }
            | Event::AgentStop { agent } => self.agent_footprint(agent as usize),
            Event::TxDone { port } | Event::LinkArrive { port } | Event::QdiscTimer { port } => {
                self.port_footprint(port as usize, 0)
            }
            Event::Arrive { port, packet } => {
                self.port_footprint(port as usize, self.packets.address(packet))
            }
            Event::Deliver { packet } => {
                let agent = self.packets.get(packet).dst_agent as usize;
                let mut footprint = self.agent_footprint(agent);
                footprint.records = [self.packets.address(packet), footprint.records[0]];
                footprint
            }
            Event::Sample | Event::WindowEdge | Event::PhaseEdge => Footprint::default(),
        }
    }

    fn agent_footprint(&self, agent: usize) -> Footprint {
        self.agents
            .get(agent)
            .map_or_else(Footprint::default, |slot| Footprint {
                records: [address_of(slot), 0],
                object: address_of(&*slot.agent),
            })
    }

    fn port_footprint(&self, port: usize, also: usize) -> Footprint {
        self.ports
            .get(port)
            .map_or_else(Footprint::default, |p| Footprint {
                records: [address_of(p), also],
                object: address_of(&*p.qdisc),
            })
    }
}
