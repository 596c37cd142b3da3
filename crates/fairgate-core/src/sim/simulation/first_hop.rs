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

#[cfg(test)]
mod tests {
    use crate::net::routing::NO_ROUTE;
    use crate::scenario::{build, parse};

    /// h0 has two ports, h4 one; both send TCP to h3 and h3's sinks answer.
    const SCENARIO: &str = r#"
name = "first-hop"
[simulation]
duration = "2s"
[[nodes]]
name = "h0"
[[nodes]]
name = "r1"
kind = "router"
[[nodes]]
name = "h3"
[[nodes]]
name = "h4"
[[links]]
from = "h0"
to = "r1"
rate = "10Mbps"
delay = "1ms"
[[links]]
from = "h0"
to = "h3"
rate = "10Mbps"
delay = "1ms"
[[links]]
from = "r1"
to = "h3"
rate = "10Mbps"
delay = "1ms"
[[links]]
from = "h4"
to = "r1"
rate = "10Mbps"
delay = "1ms"
[[flows]]
name = "a"
src = "h0"
dst = "h3"
source = { kind = "tcp", cc = "newreno" }
[[flows]]
name = "b"
src = "h4"
dst = "h3"
source = { kind = "tcp", cc = "newreno" }
"#;

    #[test]
    fn only_agents_on_hosts_with_one_port_remember_their_first_hop() {
        let mut sim = build(&parse(SCENARIO, &[]).unwrap()).unwrap();
        sim.set_looks_ahead(true);
        sim.run();
        for (agent, route) in sim.agent_routes.iter().enumerate() {
            let node = &sim.nodes[sim.agents[agent].node as usize];
            let expected = match node.ports[..] {
                [port] => port,
                _ => NO_ROUTE,
            };
            assert_eq!(route.hop, expected, "agent {agent} on {}", node.name);
        }
        assert!(sim.agent_routes.iter().any(|r| r.hop != NO_ROUTE));
    }
}
