//! The first hop of what an agent sends toward its flow's peer, taken from the agent's entry
//! of the deep hints' table instead of the routing table. With many flows the routing table's
//! two reads for a packet leaving a host (the destination's anchor, then the host's entry in
//! its column) are two cold lines at every send, while the agent's entry has already been
//! read (or hinted) for its call.
//!
//! The entry names the only port of a host with one; the routing table can only answer that
//! port or "no route", so the first packet toward the peer is routed as any other and, when
//! the table answered the port, later ones go there directly. Packets to anyone but the peer,
//! and agents on hosts with several ports, are routed as before: the choice never changes a
//! result.

use super::Simulation;
use crate::net::packet::PacketId;
use crate::net::routing::NO_ROUTE;

impl Simulation {
    /// Routes `packet`, which agent `agent` on `node` has just sent.
    pub(super) fn route_sent(&mut self, agent: u32, node: u32, packet: PacketId) {
        let dst = self.packets.get(packet).dst;
        let Some(route) = self.agent_routes.get(agent as usize) else {
            return self.route(node, packet);
        };
        if route.peer != dst {
            return self.route(node, packet);
        }
        if route.first_hop_known {
            return self.enqueue(route.port as usize, packet);
        }
        let port = route.port;
        self.route(node, packet);
        if port != NO_ROUTE && self.routes.known_next_port(node, dst) == port {
            self.agent_routes[agent as usize].first_hop_known = true;
        }
    }
}
