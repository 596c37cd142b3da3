//! The first hop of what an agent sends toward its flow's peer, remembered in the agent's
//! entry of the deep hints' table instead of read from the routing table. With many flows the
//! routing table's two reads for a packet leaving a host (the destination's anchor, then the
//! host's entry in its column) are two cold lines at every send, while the agent's entry has
//! already been hinted for its call.
//!
//! The entry names the only port of a host with one; the routing table can only answer that
//! port or "no route", so the first packet toward the peer is routed as any other and, when
//! the table answered the port, later ones go there directly. Packets to anyone but the peer,
//! and agents on hosts with several ports, are routed as before: the choice never changes a
//! result. The known hop is handed to [`Simulation::route`], so `enqueue` keeps its one call
//! site (a second one stopped the compiler inlining it into `route`: the engine benchmark
//! 2-6 % slower).

use super::Simulation;
use crate::net::routing::NO_ROUTE;

impl Simulation {
    /// The port a packet agent `agent` sends to `dst` leaves by, if the routing table has
    /// confirmed it (`NO_ROUTE` otherwise, or without deep hints).
    #[inline(always)]
    pub(super) fn known_first_hop(&self, agent: u32, dst: u32) -> u32 {
        match self.agent_routes.get(agent as usize) {
            Some(route) if route.peer == dst => route.hop,
            _ => NO_ROUTE,
        }
    }

    /// After a packet from agent `agent` on `node` to `dst` was routed through the table:
    /// remembers the agent's port as its first hop when the table chose it for the peer.
    #[cold]
    #[inline(never)]
    pub(super) fn confirm_first_hop(&mut self, agent: u32, node: u32, dst: u32) {
        let Some(route) = self.agent_routes.get(agent as usize) else {
            return;
        };
        if route.peer == dst
            && route.port != NO_ROUTE
            && self.routes.known_next_port(node, dst) == route.port
        {
            self.agent_routes[agent as usize].hop = route.port;
        }
    }
}
