//! Static shortest-path routing by hop count.
//!
//! Decisions: only routers and gateways forward transit traffic (a host is an end point, never an
//! intermediate hop); among equal-length paths the next hop through the lowest-numbered port
//! (declaration order) wins, so routes never depend on hash order.

use super::node::{Node, NodeKind};
use std::collections::VecDeque;

pub const NO_ROUTE: u32 = u32::MAX;

/// `next_port[node * n + dst]`: the output port `node` uses towards `dst`.
pub struct RoutingTable {
    n: usize,
    next_port: Vec<u32>,
}

impl RoutingTable {
    /// Computes routes; `port_to[p]` is the node at the far end of port `p`.
    pub fn compute(nodes: &[Node], port_to: &[u32]) -> Self {
        let n = nodes.len();
        let mut next_port = vec![NO_ROUTE; n * n];
        let mut incoming: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (from, node) in nodes.iter().enumerate() {
            for &p in &node.ports {
                incoming[port_to[p as usize] as usize].push((from as u32, p));
            }
        }
        for dst in 0..n {
            let dist = hops_to(dst, nodes, &incoming);
            for (node, info) in nodes.iter().enumerate() {
                if node == dst || dist[node] == usize::MAX {
                    continue;
                }
                next_port[node * n + dst] = info
                    .ports
                    .iter()
                    .copied()
                    .find(|&p| {
                        let to = port_to[p as usize] as usize;
                        dist[to] != usize::MAX && dist[to] + 1 == dist[node]
                    })
                    .unwrap_or(NO_ROUTE);
            }
        }
        RoutingTable { n, next_port }
    }

    pub fn next_port(&self, node: u32, dst: u32) -> u32 {
        self.next_port[node as usize * self.n + dst as usize]
    }

    pub fn reachable(&self, src: u32, dst: u32) -> bool {
        src == dst || self.next_port(src, dst) != NO_ROUTE
    }
}

/// Breadth-first search backwards from `dst`; a host other than the source cannot be crossed.
fn hops_to(dst: usize, nodes: &[Node], incoming: &[Vec<(u32, u32)>]) -> Vec<usize> {
    let mut dist = vec![usize::MAX; nodes.len()];
    dist[dst] = 0;
    let mut frontier = VecDeque::from([dst]);
    while let Some(v) = frontier.pop_front() {
        let may_forward = v == dst || nodes[v].kind != NodeKind::Host;
        if !may_forward {
            continue;
        }
        for &(from, _) in &incoming[v] {
            let from = from as usize;
            if dist[from] == usize::MAX {
                dist[from] = dist[v] + 1;
                frontier.push_back(from);
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, kind: NodeKind, ports: Vec<u32>) -> Node {
        Node {
            name: name.into(),
            kind,
            ports,
        }
    }

    #[test]
    fn routes_through_routers_only() {
        // h0 -> r1 -> h2, and h0 -> h3 -> h2 (a host must not forward).
        let nodes = vec![
            node("h0", NodeKind::Host, vec![0, 1]),
            node("r1", NodeKind::Router, vec![2]),
            node("h2", NodeKind::Host, vec![]),
            node("h3", NodeKind::Host, vec![3]),
        ];
        let port_to = vec![1, 3, 2, 2];
        let rt = RoutingTable::compute(&nodes, &port_to);
        assert_eq!(rt.next_port(0, 2), 0);
        assert_eq!(rt.next_port(1, 2), 2);
        assert!(!rt.reachable(2, 0));
    }
}
