//! The per-flow queue table every per-flow scheduler shares: class id -> queue index, one
//! FIFO of packet handles per queue with byte accounting, the list of backlogged queues, the
//! queues' weights, and the [`FlowQueues`] view a buffer manager reads.
//!
//! Decisions:
//! - A queue index, once given to a class, stays with it for the whole run (the table grows
//!   with the number of distinct classes seen, not with the number active). This keeps the
//!   index stable for schedulers whose per-flow state outlives the backlog (FQ's finish
//!   numbers, SCFQ's and start-time FQ's last finish tags).
//! - Weights are a list indexed by class id (`weights = [1.0, 2.0, 1.0]`): with the default
//!   `classify = "flow"` the class id is the flow id, i.e. the flow's position in the scenario's
//!   `[[flows]]` list (ACK flows are numbered after the data flows). Classes beyond the list
//!   weigh 1.

use super::packet_lists::{PacketLists, PacketQueue};
use crate::config::ScenarioError;
use crate::net::packet::{Packet, PacketId};
use crate::qdisc::buffer::{BufferManager, End, FlowQueues, Victim};
use crate::qdisc::classify::{mix, FlowKey};
use crate::qdisc::QdiscCtx;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for class ids that are already well spread or small integers.
#[derive(Default)]
pub struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = mix(self.0 ^ b as u64, 1);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = mix(v, 0x51ed);
    }
}

type ClassMap = HashMap<u64, u32, BuildHasherDefault<MixHasher>>;

/// Checks a weight list: every weight finite and positive.
pub fn validate_weights(path: &str, weights: &[f64]) -> Result<(), ScenarioError> {
    for (i, &w) in weights.iter().enumerate() {
        crate::config::check::positive(path, &format!("weights[{i}]"), w)?;
    }
    Ok(())
}

const NOT_BACKLOGGED: u32 = u32::MAX;
const NO_QUEUE: u32 = u32::MAX;
/// Flow ids below this are indexed directly, above it through the hash map.
const DIRECT_FLOWS: usize = 1 << 22;

#[derive(Default)]
pub struct FlowTable {
    classify: FlowKey,
    class_weights: Vec<f64>,
    index_of: ClassMap,
    /// Direct index by flow id for `classify = "flow"` (flow ids are small and dense).
    by_flow: Vec<u32>,
    /// The class and queue last seen for each flow id: packets of one flow almost always share
    /// a class, so this direct lookup spares the hash map; a class mismatch falls back to it.
    class_by_flow: Vec<(u64, u32)>,
    queues: PacketLists,
    class_of: Vec<u64>,
    weights: Vec<f64>,
    backlogged: Vec<u32>,
    backlog_slot: Vec<u32>,
    total_packets: usize,
    total_bytes: u64,
}

impl FlowTable {
    pub fn new(classify: FlowKey, class_weights: Vec<f64>) -> Self {
        FlowTable {
            classify,
            class_weights,
            ..Self::default()
        }
    }

    /// The queue index of the packet's class, created on first sight.
    pub fn queue_of(&mut self, packet: &Packet) -> u32 {
        if self.classify == FlowKey::Flow && (packet.flow as usize) < DIRECT_FLOWS {
            return self.queue_of_flow(packet.flow as usize);
        }
        let class = self.classify.id(packet);
        let flow = packet.flow as usize;
        if let Some(&(cached_class, q)) = self.class_by_flow.get(flow) {
            if q != NO_QUEUE && cached_class == class {
                return q;
            }
        }
        let q = match self.index_of.get(&class) {
            Some(&q) => q,
            None => {
                let q = self.new_queue(class);
                self.index_of.insert(class, q);
                q
            }
        };
        self.remember_class(flow, class, q);
        q
    }

    fn remember_class(&mut self, flow: usize, class: u64, q: u32) {
        if flow >= DIRECT_FLOWS {
            return;
        }
        if self.class_by_flow.len() <= flow {
            self.class_by_flow.resize(flow + 1, (0, NO_QUEUE));
        }
        self.class_by_flow[flow] = (class, q);
    }

    fn queue_of_flow(&mut self, flow: usize) -> u32 {
        if let Some(&q) = self.by_flow.get(flow).filter(|&&q| q != NO_QUEUE) {
            return q;
        }
        if self.by_flow.len() <= flow {
            self.by_flow.resize(flow + 1, NO_QUEUE);
        }
        let q = self.new_queue(flow as u64);
        self.by_flow[flow] = q;
        q
    }

    fn new_queue(&mut self, class: u64) -> u32 {
        let q = self.queues.queue_count() as u32;
        self.queues.add_queue();
        self.class_of.push(class);
        let weight = usize::try_from(class)
            .ok()
            .and_then(|c| self.class_weights.get(c).copied())
            .unwrap_or(1.0);
        self.weights.push(weight);
        self.backlog_slot.push(NOT_BACKLOGGED);
        q
    }

    /// Number of queues ever created.
    pub fn queue_count(&self) -> usize {
        self.queues.queue_count()
    }

    pub fn queue(&self, q: u32) -> &PacketQueue {
        self.queues.queue(q)
    }

    /// Size of a queued packet.
    pub fn size_of(&self, packet: PacketId) -> u32 {
        self.queues.size_of(packet)
    }

    pub fn push(&mut self, q: u32, packet: PacketId, size: u32) {
        self.queues.push(q, packet, size);
        self.total_packets += 1;
        self.total_bytes += size as u64;
        if self.backlog_slot[q as usize] == NOT_BACKLOGGED {
            self.backlog_slot[q as usize] = self.backlogged.len() as u32;
            self.backlogged.push(q);
        }
    }

    /// Removes the head (`End::Head`) or tail packet of queue `q`.
    pub fn take(&mut self, q: u32, end: End, _ctx: &QdiscCtx) -> Option<PacketId> {
        let packet = self.queues.take(q, end)?;
        self.total_packets -= 1;
        self.total_bytes -= self.queues.size_of(packet) as u64;
        if self.queues.queue(q).is_empty() {
            self.unlist(q);
        }
        Some(packet)
    }

    fn unlist(&mut self, q: u32) {
        let slot = self.backlog_slot[q as usize] as usize;
        self.backlogged.swap_remove(slot);
        if let Some(&moved) = self.backlogged.get(slot) {
            self.backlog_slot[moved as usize] = slot as u32;
        }
        self.backlog_slot[q as usize] = NOT_BACKLOGGED;
    }

    /// The backlogged queue holding the most bytes (or packets); ties go to the lower index.
    pub fn longest(&self, by_bytes: bool) -> Option<u32> {
        let size = |q: u32| {
            let queue = self.queues.queue(q);
            if by_bytes {
                queue.bytes()
            } else {
                queue.len() as u64
            }
        };
        self.backlogged
            .iter()
            .copied()
            .max_by(|&a, &b| size(a).cmp(&size(b)).then(b.cmp(&a)))
    }

    pub fn weight_of(&self, q: u32) -> f64 {
        self.weights[q as usize]
    }
}

impl FlowQueues for FlowTable {
    fn backlogged(&self) -> &[u32] {
        &self.backlogged
    }
    fn len_packets(&self, queue: u32) -> usize {
        self.queues.queue(queue).len()
    }
    fn len_bytes(&self, queue: u32) -> u64 {
        self.queues.queue(queue).bytes()
    }
    fn weight(&self, queue: u32) -> f64 {
        self.weights[queue as usize]
    }
    fn flow_of(&self, queue: u32) -> Option<u32> {
        match self.classify {
            FlowKey::Flow => Some(self.class_of[queue as usize] as u32),
            _ => None,
        }
    }
    fn total_packets(&self) -> usize {
        self.total_packets
    }
    fn total_bytes(&self) -> u64 {
        self.total_bytes
    }
}

/// A per-flow scheduler that follows the buffer-manager protocol of `qdisc/buffer/mod.rs`.
pub trait Managed {
    fn parts(&mut self) -> (&mut dyn BufferManager, &FlowTable);
    /// Removes the victim and keeps the scheduler's own bookkeeping consistent.
    fn discard(&mut self, victim: Victim, ctx: &mut QdiscCtx);
}

/// Runs the protocol after the arrival was appended to `arrival_queue`: one early decision,
/// then overflow victims while over capacity, then change notifications.
pub fn apply_buffer_manager<S: Managed>(s: &mut S, arrival_queue: u32, ctx: &mut QdiscCtx) {
    let (manager, table) = s.parts();
    let early = manager.early(arrival_queue, table, ctx);
    manager.on_change(arrival_queue, table);
    if let Some(victim) = early {
        s.discard(victim, ctx);
        notify(s, victim.queue);
    }
    loop {
        let (manager, table) = s.parts();
        if !manager.over_capacity(table) || table.total_packets() == 0 {
            break;
        }
        let victim = manager.overflow(arrival_queue, table, ctx);
        if table.len_packets(victim.queue) == 0 {
            break;
        }
        s.discard(victim, ctx);
        notify(s, victim.queue);
    }
}

/// Tells the manager that `queue` changed length.
pub fn notify<S: Managed>(s: &mut S, queue: u32) {
    let (manager, table) = s.parts();
    manager.on_change(queue, table);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn classes_get_stable_indices_and_weights() {
        let mut h = Harness::new();
        let mut t = FlowTable::new(FlowKey::Flow, vec![1.0, 3.0]);
        let a = h.packet(1, 100);
        let b = h.packet(0, 200);
        let c = h.packet(1, 300);
        let qa = t.queue_of(h.packets.get(a));
        let qb = t.queue_of(h.packets.get(b));
        assert_eq!((qa, qb), (0, 1));
        assert_eq!(t.queue_of(h.packets.get(c)), qa);
        assert_eq!(t.weight_of(qa), 3.0);
        assert_eq!(t.weight_of(qb), 1.0);
        t.push(qa, a, 100);
        t.push(qb, b, 200);
        t.push(qa, c, 300);
        assert_eq!((t.total_packets(), t.total_bytes()), (3, 600));
        assert_eq!(t.longest(true), Some(qa));
        assert_eq!(t.take(qa, End::Tail, &h.ctx()), Some(c));
        assert_eq!(t.longest(true), Some(qb));
        assert_eq!(t.take(qb, End::Head, &h.ctx()), Some(b));
        assert_eq!(t.backlogged(), &[qa]);
        assert_eq!(t.flow_of(qa), Some(1));
    }
}

/// The round-robin list of queues with packets, shared by DRR, WRR, Nagle's round robin and
/// stochastic FQ. A queue emptied by a discard is left in place and skipped when it reaches
/// the front (or kept, if it refilled meanwhile), so removal is O(1).
#[derive(Default)]
pub struct ActiveList {
    order: std::collections::VecDeque<u32>,
    listed: Vec<bool>,
}

impl ActiveList {
    /// Appends `q` unless it is already listed; returns whether it was appended.
    pub fn activate(&mut self, q: u32) -> bool {
        if self.listed.len() <= q as usize {
            self.listed.resize(q as usize + 1, false);
        }
        if self.listed[q as usize] {
            return false;
        }
        self.listed[q as usize] = true;
        self.order.push_back(q);
        true
    }

    pub fn front(&self) -> Option<u32> {
        self.order.front().copied()
    }

    /// Moves the front queue to the back.
    pub fn rotate(&mut self) {
        if let Some(q) = self.order.pop_front() {
            self.order.push_back(q);
        }
    }

    /// Removes the front queue.
    pub fn retire_front(&mut self) {
        if let Some(q) = self.order.pop_front() {
            self.listed[q as usize] = false;
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.order.iter().copied()
    }

    /// The queue `i` places behind the front.
    pub fn at(&self, i: usize) -> Option<u32> {
        self.order.get(i).copied()
    }
}
