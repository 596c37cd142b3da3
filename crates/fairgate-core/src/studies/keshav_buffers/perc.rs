//! PERC: per-conversation FIFO queues, a min-heap keyed on each conversation's head bid and a
//! max-heap keyed on each conversation's tail bid (bids increase within a conversation, so the
//! smallest item is some head and the largest some tail). Insert appends to the conversation's
//! tail and re-keys it in the max-heap (and the min-heap if the queue was empty); get_min and
//! the discard work on the roots. O(log N) for N conversations. [Keshav91, §3.4].

use super::{BoundedHeap, Cost, Item};
use crate::qdisc::structures::heap::{IndexedHeap, Key};
use std::collections::VecDeque;

pub struct Perc {
    capacity: usize,
    queues: Vec<VecDeque<Item>>,
    heads: IndexedHeap,
    tails: IndexedHeap,
    len: usize,
    cost: Cost,
}

fn key(item: &Item) -> Key {
    Key {
        tag: item.tag,
        seq: item.seq,
    }
}

impl Perc {
    pub fn new(capacity: usize) -> Self {
        Perc {
            capacity,
            queues: Vec::new(),
            heads: IndexedHeap::min(),
            tails: IndexedHeap::max(),
            len: 0,
            cost: Cost::default(),
        }
    }

    fn exchanges(&self) -> u64 {
        self.heads.exchanges + self.tails.exchanges
    }

    fn rekey(&mut self, conv: u32) {
        let queue = &self.queues[conv as usize];
        match (queue.front(), queue.back()) {
            (Some(head), Some(tail)) => {
                let (h, t) = (key(head), key(tail));
                if self.heads.key_of(conv) != Some(h) {
                    self.heads.set(conv, h);
                }
                self.tails.set(conv, t);
            }
            _ => {
                self.heads.remove(conv);
                self.tails.remove(conv);
            }
        }
    }
}

impl BoundedHeap for Perc {
    fn insert(&mut self, item: Item) -> Option<Item> {
        let before = self.exchanges();
        let conv = item.conv as usize;
        if self.queues.len() <= conv {
            self.queues.resize_with(conv + 1, VecDeque::new);
        }
        self.queues[conv].push_back(item);
        self.len += 1;
        self.rekey(item.conv);
        let mut discarded = None;
        if self.len > self.capacity {
            if let Some((_, victim)) = self.tails.top() {
                discarded = self.queues[victim as usize].pop_back();
                self.len -= 1;
                self.rekey(victim);
            }
        }
        self.cost.insert(self.exchanges() - before);
        discarded
    }

    fn get_min(&mut self) -> Option<Item> {
        let before = self.exchanges();
        let (_, conv) = self.heads.top()?;
        let item = self.queues[conv as usize].pop_front();
        self.len -= 1;
        self.rekey(conv);
        self.cost.get_min_ops += self.exchanges() - before;
        item
    }

    fn len(&self) -> usize {
        self.len
    }

    fn cost(&self) -> Cost {
        self.cost
    }

    fn name(&self) -> &'static str {
        "perc"
    }
}
