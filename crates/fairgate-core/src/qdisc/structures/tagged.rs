//! Per-flow FIFO queues served in order of a per-packet tag: the structure shared by FQ, WFQ,
//! SCFQ and start-time FQ. Tags never decrease within a flow, so the packet with the
//! smallest (tag, arrival) is always the head of its flow's queue.
//!
//! - Service order: a lazy 8-ary min-heap holding one entry per backlogged queue, keyed by
//!   the tag of the queue's head packet. Serving a packet re-keys the top in place (one
//!   sift-down) with the next head of the same queue; arrivals to a backlogged queue leave the
//!   heap alone. A head removed by a drop leaves a stale entry (its seq no longer matches the
//!   queue's head), skipped when it surfaces. The top is kept valid after every change, so
//!   `peek` is exact.
//! - Largest-tag victims (only when `track_tails`): Keshav's PERC max-heap over the queues'
//!   tail tags ([Keshav91, §3.4]), indexed so a queue can be re-keyed in O(log N). Tail
//!   changes are recorded and applied only when a victim is asked for, so a buffer that never
//!   overflows never pays for the heap.
//! - Uncharged head drops: `take_head_uncharged` lowers every tag still queued in the flow by
//!   the victim's charge in O(1), through a per-queue credit subtracted on every read (stored
//!   tag - credit = tag), reset when the queue empties.

use super::flow_table::FlowTable;
use super::heap::{IndexedHeap, Key, LazyHeap, MinEntry};
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

pub struct TaggedQueues {
    pub table: FlowTable,
    tags: Vec<Tagged>,
    order: LazyHeap,
    tails: IndexedHeap,
    /// Whether the tail heap is kept (only largest-tag drops need it).
    track_tails: bool,
    /// Queues whose tail changed since the tail heap was last brought up to date.
    pending_tail_queues: Vec<u32>,
    is_tail_pending: Vec<bool>,
    seq: u64,
    /// Per queue: the charge of its uncharged head drops, subtracted from its stored tags.
    credit: Vec<f64>,
}

impl TaggedQueues {
    pub fn new(table: FlowTable, track_tails: bool) -> Self {
        TaggedQueues {
            table,
            tags: Vec::new(),
            order: LazyHeap::default(),
            tails: IndexedHeap::max(),
            track_tails,
            pending_tail_queues: Vec::new(),
            is_tail_pending: Vec::new(),
            seq: 0,
            credit: Vec::new(),
        }
    }

    /// Appends `packet` to queue `q` with service tag `tag`; `tag` must not be below the tag
    /// of the queue's current tail.
    pub fn push(&mut self, q: u32, packet: PacketId, size: u32, tag: f64, aux: f64) {
        if self.tags.len() <= packet as usize {
            self.tags.resize(packet as usize + 1, Tagged::default());
        }
        if self.credit.len() <= q as usize {
            self.credit.resize(q as usize + 1, 0.0);
        }
        let was_idle = self.table.queue(q).is_empty();
        if was_idle {
            self.credit[q as usize] = 0.0;
        }
        self.seq += 1;
        let key = Key { tag, seq: self.seq };
        let credit = self.credit[q as usize];
        self.tags[packet as usize] = Tagged {
            key: Key {
                tag: tag + credit,
                seq: self.seq,
            },
            aux: aux + credit,
            queue: q,
        };
        self.table.push(q, packet, size);
        if was_idle {
            self.order.push(MinEntry { key, item: q });
        }
        self.tail_changed(q);
    }

    /// The packet's tags, less its queue's credit (valid while queued and right after it left).
    pub fn tag_of(&self, packet: PacketId) -> Tagged {
        let stored = self.tags[packet as usize];
        let credit = self.credit[stored.queue as usize];
        Tagged {
            key: Key {
                tag: stored.key.tag - credit,
                seq: stored.key.seq,
            },
            aux: stored.aux - credit,
            queue: stored.queue,
        }
    }

    /// Removes and returns the packet with the smallest tag and its queue.
    pub fn pop_min(&mut self, ctx: &QdiscCtx) -> Option<(u32, PacketId)> {
        let q = self.order.peek()?.item;
        let packet = self.table.take(q, End::Head, ctx)?;
        match self.table.queue(q).front() {
            Some(next) => self.order.replace_top(MinEntry {
                key: self.tag_of(next).key,
                item: q,
            }),
            None => {
                self.order.pop();
                self.tail_changed(q);
            }
        }
        self.drop_stale();
        Some((q, packet))
    }

    pub fn peek_min(&self) -> Option<PacketId> {
        self.order
            .peek()
            .and_then(|e| self.table.queue(e.item).front())
    }

    /// The queue whose tail packet has the largest tag (needs `track_tails`).
    pub fn largest_tail(&mut self) -> Option<u32> {
        self.apply_tail_changes();
        self.tails.top().map(|(_, q)| q)
    }

    /// Removes the head or tail of queue `q`.
    pub fn take(&mut self, q: u32, end: End, ctx: &QdiscCtx) -> Option<PacketId> {
        let packet = self.table.take(q, end, ctx)?;
        let queue = self.table.queue(q);
        if let Some(head) = queue.front().filter(|_| end == End::Head) {
            let key = self.tag_of(head).key;
            self.order.push(MinEntry { key, item: q });
        }
        if end == End::Tail || queue.is_empty() {
            self.tail_changed(q);
        }
        self.drop_stale();
        Some(packet)
    }

    /// Removes the head of queue `q` and takes `charge` off the tags of the packets behind it
    /// (and so off the order they are served in): the flow pays nothing for the victim.
    pub fn take_head_uncharged(&mut self, q: u32, charge: f64, ctx: &QdiscCtx) -> Option<PacketId> {
        self.credit[q as usize] += charge;
        self.take(q, End::Head, ctx)
    }

    /// Whether a service-order entry still names the head of its queue.
    fn is_current(&self, entry: &MinEntry) -> bool {
        self.table
            .queue(entry.item)
            .front()
            .is_some_and(|head| self.tags[head as usize].key.seq == entry.key.seq)
    }

    fn drop_stale(&mut self) {
        while let Some(top) = self.order.peek() {
            if self.is_current(top) {
                return;
            }
            self.order.pop();
        }
    }

    fn tail_changed(&mut self, q: u32) {
        if !self.track_tails {
            return;
        }
        if self.is_tail_pending.len() <= q as usize {
            self.is_tail_pending.resize(q as usize + 1, false);
        }
        if !self.is_tail_pending[q as usize] {
            self.is_tail_pending[q as usize] = true;
            self.pending_tail_queues.push(q);
        }
    }

    fn apply_tail_changes(&mut self) {
        for q in std::mem::take(&mut self.pending_tail_queues) {
            self.is_tail_pending[q as usize] = false;
            match self.table.queue(q).back() {
                Some(tail) => self.tails.set(q, self.tag_of(tail).key),
                None => {
                    self.tails.remove(q);
                }
            }
        }
    }
}
