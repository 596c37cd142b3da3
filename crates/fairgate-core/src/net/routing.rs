//! Static shortest-path routing by hop count, computed per destination on first use.
//!
//! Decisions: only routers and gateways forward transit traffic (a host is an end point,
//! never an intermediate hop); among equal-length paths the next hop through the lowest-numbered port
//! (declaration order) wins, so routes never depend on hash order. A host whose only incoming
//! link comes from one router or gateway (a stub, as in dumbbells and trees) is reached
//! through that node: its route is the router's plus the last hop, so a scenario of N hosts behind a few
//! routers keeps a few next-hop columns instead of an N x N table.

use super::node::{Node, NodeKind};
use std::collections::VecDeque;

pub const NO_ROUTE: u32 = u32::MAX;

/// Where routes towards a destination come from.
#[derive(Clone, Copy)]
struct Anchor {
    /// The node whose next-hop column serves this destination.
    node: u32,
    /// For a stub host, the anchor router's port to it; `NO_ROUTE` when `node` is the destination.
    last_port: u32,
}

/// Next-hop columns, one per anchor that was asked for.
pub struct RoutingTable {
    nodes: Vec<(NodeKind, Vec<u32>)>,
    port_to: Vec<u32>,
    incoming: Vec<Vec<(u32, u32)>>,
    anchors: Vec<Anchor>,
    column_of: Vec<u32>,
    columns: Vec<Box<[u32]>>,
}

impl RoutingTable {
    /// Prepares routing; `port_to[p]` is the node at the far end of port `p`.
    pub fn compute(nodes: &[Node], port_to: &[u32]) -> Self {
        let n = nodes.len();
        let mut incoming: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        for (from, node) in nodes.iter().enumerate() {
            for &p in &node.ports {
                incoming[port_to[p as usize] as usize].push((from as u32, p));
            }
        }
        let anchors = (0..n).map(|d| anchor_of(d, nodes, &incoming)).collect();
        RoutingTable {
            nodes: nodes.iter().map(|x| (x.kind, x.ports.clone())).collect(),
            port_to: port_to.to_vec(),
            incoming,
            anchors,
            column_of: vec![NO_ROUTE; n],
            columns: Vec::new(),
        }
    }

    /// The output port `node` uses towards `dst` (`NO_ROUTE` if none); computes the
    /// destination's column on first use.
    pub fn next_port(&mut self, node: u32, dst: u32) -> u32 {
        let anchor = self.anchors[dst as usize];
        if node == anchor.node && anchor.last_port != NO_ROUTE {
            return anchor.last_port;
        }
        let mut column = self.column_of[anchor.node as usize];
        if column == NO_ROUTE {
            column = self.columns.len() as u32;
            let computed = self.column_towards(anchor.node as usize);
            self.columns.push(computed);
            self.column_of[anchor.node as usize] = column;
        }
        self.columns[column as usize][node as usize]
    }

    /// [`Self::next_port`] without computing a missing column (`NO_ROUTE` then), for cache
    /// hints.
    pub fn known_next_port(&self, node: u32, dst: u32) -> u32 {
        let Some(anchor) = self.anchors.get(dst as usize) else {
            return NO_ROUTE;
        };
        if node == anchor.node && anchor.last_port != NO_ROUTE {
            return anchor.last_port;
        }
        match self.column_of.get(anchor.node as usize) {
            Some(&column) if column != NO_ROUTE => self.columns[column as usize]
                .get(node as usize)
                .copied()
                .unwrap_or(NO_ROUTE),
            _ => NO_ROUTE,
        }
    }

    /// A cache hint for the routes towards `dst`: its anchor.
    pub fn prefetch_anchor(&self, dst: u32) {
        crate::engine::prefetch::prefetch_at(&self.anchors, dst as usize);
    }

    pub fn reachable(&mut self, src: u32, dst: u32) -> bool {
        src == dst || self.next_port(src, dst) != NO_ROUTE
    }

    /// Bytes held by the computed columns (for memory reports).
    pub fn column_bytes(&self) -> usize {
        self.columns.len() * self.nodes.len() * std::mem::size_of::<u32>()
    }

    fn column_towards(&self, dst: usize) -> Box<[u32]> {
        let dist = hops_to(dst, &self.nodes, &self.incoming);
        let mut column = vec![NO_ROUTE; self.nodes.len()];
        for (node, (_, ports)) in self.nodes.iter().enumerate() {
            if node == dst || dist[node] == u32::MAX {
                continue;
            }
            column[node] = ports
                .iter()
                .copied()
                .find(|&p| {
                    let to = self.port_to[p as usize] as usize;
                    dist[to] != u32::MAX && dist[to] + 1 == dist[node]
                })
                .unwrap_or(NO_ROUTE);
        }
        column.into_boxed_slice()
    }
}

/// A host reached only from one router is served by that router's column.
fn anchor_of(dst: usize, nodes: &[Node], incoming: &[Vec<(u32, u32)>]) -> Anchor {
    match incoming[dst][..] {
        [(router, last_port)]
            if nodes[dst].kind == NodeKind::Host
                && nodes[router as usize].kind != NodeKind::Host =>
        {
            Anchor {
                node: router,
                last_port,
            }
        }
        _ => Anchor {
            node: dst as u32,
            last_port: NO_ROUTE,
        },
    }
}

/// Breadth-first search backwards from `dst`; a host other than the destination cannot be
/// crossed.
fn hops_to(dst: usize, nodes: &[(NodeKind, Vec<u32>)], incoming: &[Vec<(u32, u32)>]) -> Vec<u32> {
    let mut dist = vec![u32::MAX; nodes.len()];
    dist[dst] = 0;
    let mut frontier = VecDeque::from([dst]);
    while let Some(v) = frontier.pop_front() {
        let may_forward = v == dst || nodes[v].0 != NodeKind::Host;
        if !may_forward {
            continue;
        }
        for &(from, _) in &incoming[v] {
            let from = from as usize;
            if dist[from] == u32::MAX {
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
        let mut rt = RoutingTable::compute(&nodes, &port_to);
        assert_eq!(rt.next_port(0, 2), 0);
        assert_eq!(rt.next_port(1, 2), 2);
        assert!(!rt.reachable(2, 0));
    }

    #[test]
    fn stub_hosts_share_their_router_column() {
        // s0, s1 -> r2 -> r3 -> d4, d5 (and back): two routers' columns serve every host.
        let nodes = vec![
            node("s0", NodeKind::Host, vec![0]),
            node("s1", NodeKind::Host, vec![1]),
            node("r2", NodeKind::Router, vec![2, 6, 7]),
            node("r3", NodeKind::Router, vec![3, 4, 5]),
            node("d4", NodeKind::Host, vec![8]),
            node("d5", NodeKind::Host, vec![9]),
        ];
        let port_to = vec![2, 2, 3, 4, 5, 2, 0, 1, 3, 3];
        let mut rt = RoutingTable::compute(&nodes, &port_to);
        assert_eq!(rt.next_port(0, 5), 0);
        assert_eq!(rt.next_port(2, 5), 2);
        assert_eq!(rt.next_port(3, 5), 4);
        assert_eq!(rt.next_port(3, 4), 3);
        assert_eq!(rt.next_port(4, 1), 8);
        assert_eq!(rt.next_port(3, 1), 5);
        assert_eq!(rt.next_port(2, 1), 7);
        assert!(rt.reachable(0, 4));
        assert_eq!(rt.columns.len(), 2);
    }
}
