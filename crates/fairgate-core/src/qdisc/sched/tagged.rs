//! Per-flow FIFO queues served in order of a per-packet tag: the structure shared by FQ, WFQ,
//! SCFQ and start-time FQ. Tags never decrease within a flow, so the packet with the
//! smallest (tag, arrival) is always the head of its flow's queue.
//!
//! - Service order: a lazy 4-ary min-heap over the queued packets. An arrival pushes one
//!   entry (its tag is usually among the largest, so the push rarely climbs); a packet
//!   removed by a drop leaves a stale entry, skipped when it surfaces. The top is kept valid
//!   after every change, so `peek` is exact.
//! - Largest-tag victims (only when `track_tails`): Keshav's PERC max-heap over the queues'
//!   tail tags (seed 004 section 3.4), indexed so a queue can be re-keyed in O(log N).

use super::flow_table::FlowTable;
use super::heap::{IndexedHeap, Key, MinEntry, QuadHeap};
use crate::net::packet::PacketId;
use crate::qdisc::buffer::End;
use crate::qdisc::QdiscCtx;

/// What a queued packet carries: its service tag and one scheduler-defined number (the
/// packet's start tag, or its length in round units, for undoing its charge when dropped).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tagged {
    pub key: Key,
    pub aux: f64,
    pub queue: u32,
}

/// `queued[packet]` when the packet is not queued.
const NOT_QUEUED: u64 = 0;

pub struct TaggedQueues {
    pub table: FlowTable,
    tags: Vec<Tagged>,
    /// The seq of the packet's entry while it is queued, else `NOT_QUEUED`.
    queued: Vec<u64>,
    order: QuadHeap,
    tails: IndexedHeap,
    /// Whether the tail heap is kept (only largest-tag drops need it).
    track_tails: bool,
    seq: u64,
}

impl TaggedQueues {
    pub fn new(table: FlowTable, track_tails: bool) -> Self {
        TaggedQueues {
            table,
            tags: Vec::new(),
            queued: Vec::new(),
            order: QuadHeap::default(),
            tails: IndexedHeap::max(),
            track_tails,
            seq: 0,
        }
    }

    /// Appends `packet` to queue `q` with service tag `tag`; `tag` must not be below the tag
    /// of the queue's current tail.
    pub fn push(&mut self, q: u32, packet: PacketId, size: u32, tag: f64, aux: f64) {
        if self.tags.len() <= packet as usize {
            self.tags.resize(packet as usize + 1, Tagged::default());
            self.queued.resize(packet as usize + 1, NOT_QUEUED);
        }
        self.seq += 1;
        let key = Key { tag, seq: self.seq };
        self.tags[packet as usize] = Tagged { key, aux, queue: q };
        self.queued[packet as usize] = self.seq;
        self.order.push(MinEntry { key, item: packet });
        self.table.push(q, packet, size);
        if self.track_tails {
            self.tails.set(q, key);
        }
    }

    pub fn tag_of(&self, packet: PacketId) -> Tagged {
        self.tags[packet as usize]
    }

    /// Removes and returns the packet with the smallest tag and its queue.
    pub fn pop_min(&mut self, ctx: &QdiscCtx) -> Option<(u32, PacketId)> {
        let entry = *self.order.peek()?;
        let q = self.tags[entry.item as usize].queue;
        let packet = self.take(q, End::Head, ctx)?;
        debug_assert_eq!(packet, entry.item, "tags must not decrease within a flow");
        Some((q, packet))
    }

    pub fn peek_min(&self) -> Option<PacketId> {
        self.order.peek().map(|e| e.item)
    }

    /// The queue whose tail packet has the largest tag (needs `track_tails`).
    pub fn largest_tail(&self) -> Option<u32> {
        self.tails.top().map(|(_, q)| q)
    }

    /// Removes the head or tail of queue `q`.
    pub fn take(&mut self, q: u32, end: End, ctx: &QdiscCtx) -> Option<PacketId> {
        let packet = self.table.take(q, end, ctx)?;
        self.queued[packet as usize] = NOT_QUEUED;
        self.drop_stale();
        let tail_changed = end == End::Tail || self.table.queue(q).is_empty();
        if self.track_tails && tail_changed {
            match self.table.queue(q).back() {
                Some(tail) => self.tails.set(q, self.tags[tail as usize].key),
                None => {
                    self.tails.remove(q);
                }
            }
        }
        Some(packet)
    }

    fn drop_stale(&mut self) {
        while let Some(top) = self.order.peek() {
            if self.queued[top.item as usize] == top.key.seq {
                return;
            }
            self.order.pop();
        }
    }
}
