//! Deficit Round Robin, M. Shreedhar and G. Varghese, "Efficient fair queuing using deficit
//! round robin", SIGCOMM 1995 / ToN 1996; [Vaidyanathan99, §2.2].
//!
//! Backlogged queues are visited in round-robin order. On each visit the queue's deficit
//! counter grows by its quantum (`quantum x weight`), and head packets are sent while their
//! length does not exceed the deficit, each subtracting its length; a queue that empties has
//! its deficit reset to 0 and leaves the list. Arrivals to an idle queue join the tail.
//!
//! Decisions:
//! - Default quantum 1500 bytes (one Ethernet MTU: the paper requires quantum >= the maximum
//!   packet size for O(1) work per packet); smaller quanta are accepted and still work (a
//!   queue may then be skipped for several rounds).
//! - Dropping is the `buffer` manager's (default drop-tail, 50 packets); a queue emptied by a
//!   discard loses its deficit when it next reaches the front.
//! - Default classification `flow`; weights multiply the quantum.

use crate::config::{check, ScenarioError};
use crate::net::packet::PacketId;
use crate::qdisc::buffer::{BufferManager, BufferSpec, End, FlowQueues, Victim};
use crate::qdisc::classify::FlowKey;
use crate::qdisc::structures::flow_table::{
    apply_buffer_manager, notify, validate_weights, ActiveList, FlowTable, Managed,
};
use crate::qdisc::{Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// `queue = { kind = "drr", quantum = 1500, buffer = { kind = "droptail", limit = 50 } }`
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DrrConfig {
    /// Bytes added to a queue's deficit per round (times its weight).
    pub quantum: u64,
    pub classify: FlowKey,
    pub weights: Vec<f64>,
    pub buffer: BufferSpec,
}

impl Default for DrrConfig {
    fn default() -> Self {
        DrrConfig {
            quantum: 1500,
            classify: FlowKey::Flow,
            weights: Vec::new(),
            buffer: BufferSpec::default(),
        }
    }
}

impl QdiscConfig for DrrConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "quantum", self.quantum)?;
        validate_weights(path, &self.weights)?;
        self.buffer.validate(&format!("{path}.buffer"))
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Drr::new(self))
    }
}

pub struct Drr {
    quantum: f64,
    table: FlowTable,
    active: ActiveList,
    deficit: Vec<f64>,
    /// Whether the front queue already received its quantum for the current visit.
    in_visit: bool,
    manager: Box<dyn BufferManager>,
}

impl Drr {
    pub fn new(config: &DrrConfig) -> Self {
        Drr {
            quantum: config.quantum as f64,
            table: FlowTable::new(config.classify, config.weights.clone()),
            active: ActiveList::default(),
            deficit: Vec::new(),
            in_visit: false,
            manager: config.buffer.build(),
        }
    }

    pub fn deficit_of(&self, q: u32) -> f64 {
        self.deficit.get(q as usize).copied().unwrap_or(0.0)
    }

    fn quantum_of(&self, q: u32) -> f64 {
        self.quantum * self.table.weight_of(q)
    }

    fn head_size(&self, q: u32) -> Option<f64> {
        let head = self.table.queue(q).front()?;
        Some(self.size_of(head))
    }

    /// Visits (each adding a quantum) before a head of `size` bytes fits `q`'s deficit.
    fn visits_needed(&self, q: u32, size: f64) -> u64 {
        let short = (size - self.deficit_of(q)).max(0.0);
        ((short / self.quantum_of(q)).ceil() as u64).max(1)
    }

    fn size_of(&self, packet: PacketId) -> f64 {
        self.table.size_of(packet) as f64
    }
}

impl Managed for Drr {
    fn parts(&mut self) -> (&mut dyn BufferManager, &FlowTable) {
        (self.manager.as_mut(), &self.table)
    }
    fn discard(&mut self, victim: Victim, ctx: &mut QdiscCtx) {
        if let Some(packet) = self.table.take(victim.queue, victim.end, ctx) {
            ctx.drop_with(packet, victim.reason, victim.cause);
        }
    }
}

impl Qdisc for Drr {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let p = ctx.packets.get(packet);
        let size = p.size;
        let q = self.table.queue_of(p);
        if self.deficit.len() <= q as usize {
            self.deficit.resize(q as usize + 1, 0.0);
        }
        self.table.push(q, packet, size);
        self.active.activate(q);
        apply_buffer_manager(self, q, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        loop {
            let q = self.active.front()?;
            let Some(size) = self.head_size(q) else {
                self.deficit[q as usize] = 0.0;
                self.active.retire_front();
                self.in_visit = false;
                continue;
            };
            if !self.in_visit {
                self.deficit[q as usize] += self.quantum_of(q);
                self.in_visit = true;
            }
            if size > self.deficit[q as usize] {
                self.active.rotate();
                self.in_visit = false;
                continue;
            }
            self.deficit[q as usize] -= size;
            let packet = self.table.take(q, End::Head, ctx)?;
            if self.table.len_packets(q) == 0 {
                self.deficit[q as usize] = 0.0;
                self.active.retire_front();
                self.in_visit = false;
            }
            notify(self, q);
            return Some(packet);
        }
    }

    /// O(N): replays the visits to find the first head that will fit.
    fn peek(&self) -> Option<PacketId> {
        let heads: Vec<(u32, PacketId)> = self
            .active
            .iter()
            .filter_map(|q| Some((q, self.table.queue(q).front()?)))
            .collect();
        let &(front, front_head) = heads.first()?;
        let current_fits = self.in_visit && self.size_of(front_head) <= self.deficit_of(front);
        if current_fits {
            return Some(front_head);
        }
        let n = heads.len() as u64;
        let shift = usize::from(self.in_visit);
        heads
            .iter()
            .enumerate()
            .map(|(i, &(q, head))| {
                let position = ((i + heads.len() - shift) % heads.len()) as u64;
                let step = (self.visits_needed(q, self.size_of(head)) - 1) * n + position;
                (step, head)
            })
            .min_by_key(|&(step, _)| step)
            .map(|(_, head)| head)
    }

    fn len_packets(&self) -> usize {
        self.table.total_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.table.total_bytes()
    }

    fn name(&self) -> &'static str {
        "drr"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    /// Quantum 500. A: 300, 300, 300; B: 600, 100. Round 1: A gets 500, sends 300 (200 left,
    /// next 300 does not fit); B gets 500, 600 does not fit. Round 2: A has 700, sends 300,
    /// 300 (100 left), then empties (reset to 0); B has 1000, sends 600 and 100.
    #[test]
    fn hand_trace_of_deficits() {
        let mut h = Harness::new();
        let mut q = Drr::new(&DrrConfig {
            quantum: 500,
            ..DrrConfig::default()
        });
        let a: Vec<_> = (0..3).map(|_| h.packet(0, 300)).collect();
        let b = [h.packet(1, 600), h.packet(1, 100)];
        for &id in a.iter().chain(&b) {
            h.enqueue(&mut q, id);
        }
        let mut order = Vec::new();
        let mut deficits = Vec::new();
        while let Some(expected) = q.peek() {
            let p = h.dequeue(&mut q).unwrap();
            assert_eq!(p, expected);
            order.push(p);
            deficits.push((q.deficit_of(0), q.deficit_of(1)));
        }
        assert_eq!(order, vec![a[0], a[1], a[2], b[0], b[1]]);
        assert_eq!(
            deficits,
            vec![
                (200.0, 0.0),
                (400.0, 500.0),
                (0.0, 500.0),
                (0.0, 400.0),
                (0.0, 0.0)
            ]
        );
    }
}
