//! Per-flow FIFO queues served in order of a per-packet tag: the structure shared by FQ, WFQ,
//! SCFQ and start-time FQ. It is Keshav's PERC (seed 004 section 3.4): tags increase within a
//! flow, so the smallest tag is at the head of some queue and the largest at the tail of some
//! queue; a min-heap over the queues' head tags gives the next packet to send and a max-heap
//! over their tail tags gives the largest-tag victim, both in O(log N) for N backlogged flows.

use super::flow_table::FlowTable;
use super::heap::{IndexedHeap, Key};
use crate::net::packet::PacketId;
use crate::qdisc::buffer::End;
use crate::qdisc::QdiscCtx;

/// What a queued packet carries: its service tag and one scheduler-defined number (the
/// packet's start tag, or its length in round units, for undoing its charge when dropped).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tagged {
    pub key: Key,
    pub aux: f64,
}

pub struct TaggedQueues {
    pub table: FlowTable,
    tags: Vec<Tagged>,
    heads: IndexedHeap,
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
            heads: IndexedHeap::min(),
            tails: IndexedHeap::max(),
            track_tails,
            seq: 0,
        }
    }

    /// Appends `packet` to queue `q` with service tag `tag`.
    pub fn push(&mut self, q: u32, packet: PacketId, size: u32, tag: f64, aux: f64) {
        if self.tags.len() <= packet as usize {
            self.tags.resize(packet as usize + 1, Tagged::default());
        }
        self.seq += 1;
        self.tags[packet as usize] = Tagged {
            key: Key { tag, seq: self.seq },
            aux,
        };
        self.table.push(q, packet, size);
        self.rekey(q);
    }

    pub fn tag_of(&self, packet: PacketId) -> Tagged {
        self.tags[packet as usize]
    }

    /// Removes and returns the packet with the smallest tag and its queue.
    pub fn pop_min(&mut self, ctx: &QdiscCtx) -> Option<(u32, PacketId)> {
        let (_, q) = self.heads.top()?;
        let packet = self.take(q, End::Head, ctx)?;
        Some((q, packet))
    }

    pub fn peek_min(&self) -> Option<PacketId> {
        let (_, q) = self.heads.top()?;
        self.table.queue(q).front()
    }

    /// The queue whose tail packet has the largest tag (needs `track_tails`).
    pub fn largest_tail(&self) -> Option<u32> {
        self.tails.top().map(|(_, q)| q)
    }

    /// Removes the head or tail of queue `q`, keeping both heaps in step.
    pub fn take(&mut self, q: u32, end: End, ctx: &QdiscCtx) -> Option<PacketId> {
        let packet = self.table.take(q, end, ctx)?;
        self.rekey(q);
        Some(packet)
    }

    fn rekey(&mut self, q: u32) {
        let queue = self.table.queue(q);
        match (queue.front(), queue.back()) {
            (Some(head), Some(tail)) => {
                let head_key = self.tags[head as usize].key;
                if self.heads.key_of(q) != Some(head_key) {
                    self.heads.set(q, head_key);
                }
                if self.track_tails {
                    let tail_key = self.tags[tail as usize].key;
                    self.tails.set(q, tail_key);
                }
            }
            _ => {
                self.heads.remove(q);
                self.tails.remove(q);
            }
        }
    }
}
