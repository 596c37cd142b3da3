//! Keshav's packet-buffering data structures for fair queueing (\[Keshav91],
//! chapter 3 sections 3.3-3.5 and appendix 3.A; S. Keshav, "On the
//! efficient implementation of fair queueing", Internetworking: Research and Experience 2(3),
//! 1991): one bounded-heap interface, four implementations that count their elementary
//! operations, and the trace-driven study of figures 3.5-3.7 (`study.rs`).
//!
//! The bounded heap: `insert` places the item, then, while more than `capacity` items are held,
//! discards the item with the largest tag (possibly the new one); `get_min` removes and returns
//! the smallest. Items are ordered by (tag, seq), a total order, so every implementation makes
//! the same decisions.
//!
//! Decisions (the text is silent):
//! - Elementary operations: one link followed (LINK, TREE) or one exchange (HEAP, PERC); the
//!   discards inside `insert` are counted as part of it. Splicing a
//!   node out or in costs no traversal. `get_min` costs are counted separately.
//! - The capacity is in packets.

pub mod double_heap;
pub mod link;
pub mod perc;
pub mod study;
pub mod tree;

/// One buffered packet: its bid, an arrival number that breaks ties and identifies it, and
/// its conversation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Item {
    pub tag: f64,
    pub seq: u64,
    pub conv: u32,
}

impl Item {
    pub fn before(&self, other: &Item) -> bool {
        self.tag
            .total_cmp(&other.tag)
            .then(self.seq.cmp(&other.seq))
            .is_lt()
    }
}

/// Operation counts of one structure.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    pub inserts: u64,
    /// Elementary operations inside `insert` (discards included).
    pub insert_ops: u64,
    /// The most elementary operations one `insert` took.
    pub max_insert_ops: u64,
    pub get_min_ops: u64,
}

impl Cost {
    pub fn mean_insert_ops(&self) -> f64 {
        if self.inserts == 0 {
            0.0
        } else {
            self.insert_ops as f64 / self.inserts as f64
        }
    }

    /// Books one insert that took `ops` operations.
    pub fn insert(&mut self, ops: u64) {
        self.inserts += 1;
        self.insert_ops += ops;
        self.max_insert_ops = self.max_insert_ops.max(ops);
    }
}

/// Keshav's bounded heap.
pub trait BoundedHeap {
    /// Inserts `item`; returns the item discarded to stay within capacity, if any.
    fn insert(&mut self, item: Item) -> Option<Item>;
    fn get_min(&mut self) -> Option<Item>;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn cost(&self) -> Cost;
    fn name(&self) -> &'static str;
}

/// The four structures, by name: "link", "tree", "heap", "perc".
pub fn build(name: &str, capacity: usize) -> Option<Box<dyn BoundedHeap>> {
    Some(match name {
        "link" => Box::new(link::Link::new(capacity)),
        "tree" => Box::new(tree::Tree::new(capacity)),
        "heap" => Box::new(double_heap::DoubleHeap::new(capacity)),
        "perc" => Box::new(perc::Perc::new(capacity)),
        _ => return None,
    })
}

pub const STRUCTURES: [&str; 4] = ["link", "tree", "heap", "perc"];

/// Instructions per elementary operation, [Keshav91, tab. 3.2] ("dynamic cost", measured on a
/// RISC machine): LINK 5, TREE 18, HEAP 88, PERC 96.
pub fn instructions_per_operation(name: &str) -> f64 {
    match name {
        "link" => 5.0,
        "tree" => 18.0,
        "heap" => 88.0,
        "perc" => 96.0,
        _ => f64::NAN,
    }
}
