//! Weighted Round Robin, [Vaidyanathan99, §2.2]: backlogged queues
//! are visited in round-robin order and each visit sends up to `weight` packets. (The text's
//! WRR derives weights from known or estimated mean packet lengths; here the weights are given.)
//! Also the engine of Nagle's per-source round robin (`nagle.rs`). Papers: J. Nagle, "On
//! packet switches with infinite storage", IEEE Trans. Commun. 1987; M. Katevenis et al.,
//! "Weighted round-robin cell multiplexing", IEEE JSAC 1991.
//!
//! Decisions:
//! - A queue of weight w sends round(w) packets per visit, at least 1.
//! - Dropping is the `buffer` manager's (default drop-tail, 50 packets), or, with
//!   `drop_longest = true`, the tail of the queue holding the most packets (Nagle's rule).

use crate::config::ScenarioError;
use crate::net::packet::PacketId;
use crate::qdisc::buffer::{BufferManager, BufferSpec, End, FlowQueues, Victim};
use crate::qdisc::classify::FlowKey;
use crate::qdisc::structures::flow_table::{
    apply_buffer_manager, notify, validate_weights, ActiveList, FlowTable, Managed,
};
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// `queue = { kind = "wrr", weights = [1.0, 3.0] }`
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WrrConfig {
    pub classify: FlowKey,
    pub weights: Vec<f64>,
    pub buffer: BufferSpec,
}

impl QdiscConfig for WrrConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        validate_weights(path, &self.weights)?;
        self.buffer.validate(&format!("{path}.buffer"))
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Wrr::new(
            FlowTable::new(self.classify, self.weights.clone()),
            self.buffer.build(),
            None,
        ))
    }
}

pub struct Wrr {
    table: FlowTable,
    active: ActiveList,
    /// Packets the front queue has sent in its current visit.
    sent_in_visit: u64,
    manager: Box<dyn BufferManager>,
    /// Nagle's rule: drop the tail of the longest queue beyond this many packets.
    longest_limit: Option<u64>,
    name: &'static str,
}

impl Wrr {
    pub fn new(
        table: FlowTable,
        manager: Box<dyn BufferManager>,
        longest_limit: Option<u64>,
    ) -> Self {
        Wrr {
            table,
            active: ActiveList::default(),
            sent_in_visit: 0,
            manager,
            longest_limit,
            name: "wrr",
        }
    }

    pub fn rename(&mut self, name: &'static str) {
        self.name = name;
    }

    fn per_visit(&self, q: u32) -> u64 {
        (self.table.weight_of(q).round() as u64).max(1)
    }

    fn drop_from_longest(&mut self, limit: u64, arrival: PacketId, ctx: &mut QdiscCtx) {
        while self.table.total_packets() as u64 > limit {
            let Some(q) = self.table.longest(false) else {
                return;
            };
            let Some(victim) = self.table.take(q, End::Tail, ctx) else {
                return;
            };
            if victim == arrival {
                ctx.drop(victim, DropReason::Overflow);
            } else {
                ctx.drop_because(victim, DropReason::PushOut, "nagle_longest");
            }
        }
    }

    fn end_visit(&mut self) {
        self.sent_in_visit = 0;
    }
}

impl Managed for Wrr {
    fn parts(&mut self) -> (&mut dyn BufferManager, &FlowTable) {
        (self.manager.as_mut(), &self.table)
    }
    fn discard(&mut self, victim: Victim, ctx: &mut QdiscCtx) {
        if let Some(packet) = self.table.take(victim.queue, victim.end, ctx) {
            ctx.drop_with(packet, victim.reason, victim.cause);
        }
    }
}

impl Qdisc for Wrr {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let p = ctx.packets.get(packet);
        let size = p.size;
        let q = self.table.queue_of(p);
        self.table.push(q, packet, size);
        self.active.activate(q);
        match self.longest_limit {
            Some(limit) => self.drop_from_longest(limit, packet, ctx),
            None => apply_buffer_manager(self, q, ctx),
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let q = self.active.front()?;
            if self.table.len_packets(q) == 0 {
                self.active.retire_front();
                self.end_visit();
                continue;
            }
            let packet = self.table.take(q, End::Head, ctx)?;
            self.sent_in_visit += 1;
            if self.table.len_packets(q) == 0 {
                self.active.retire_front();
                self.end_visit();
            } else if self.sent_in_visit >= self.per_visit(q) {
                self.active.rotate();
                self.end_visit();
            }
            if self.longest_limit.is_none() {
                notify(self, q);
            }
            return Some(packet);
        }
    }

    fn peek(&self) -> Option<PacketId> {
        self.active.iter().find_map(|q| self.table.queue(q).front())
    }

    fn len_packets(&self) -> usize {
        self.table.total_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.table.total_bytes()
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn weights_set_packets_per_visit() {
        // Weights 1 and 3: A B B B A B B B ...
        let mut h = Harness::new();
        let mut q = Wrr::new(
            FlowTable::new(FlowKey::Flow, vec![1.0, 3.0]),
            BufferSpec::default().build(),
            None,
        );
        let mut flow_of = std::collections::HashMap::new();
        for _ in 0..6 {
            for flow in [0, 1] {
                let id = h.packet(flow, 100);
                flow_of.insert(id, flow);
                h.enqueue(&mut q, id);
            }
        }
        let order: Vec<u32> = (0..8)
            .map(|_| {
                let peeked = q.peek();
                let p = h.dequeue(&mut q).unwrap();
                assert_eq!(peeked, Some(p));
                flow_of[&p]
            })
            .collect();
        assert_eq!(order, vec![0, 1, 1, 1, 0, 1, 1, 1]);
    }
}
