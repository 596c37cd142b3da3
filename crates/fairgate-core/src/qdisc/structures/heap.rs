//! An indexed binary heap of queue indices keyed by `(tag, seq)`: the min- and max-heaps of
//! Keshav's PERC ([Keshav91, §3.4]) and the tail-bid heap of the largest-bid drop rule;
//! plus [`MinEntry`], the entry of the lazy min-heaps that order FQ's service and its
//! active finish numbers.
//!
//! Each item (a `u32` queue index) is in the heap at most once; `position` maps an item to its
//! slot so that a key can be changed or the item removed in O(log n). Ties on the tag are
//! broken by `seq` (arrival order), so the order never depends on anything but the input.
//! `exchanges` counts element swaps, Keshav's elementary operation for heaps.

use std::cmp::Ordering;

/// A heap key: the tag, then an arrival sequence number that breaks ties.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Key {
    pub tag: f64,
    pub seq: u64,
}

impl Key {
    pub fn order(&self, other: &Key) -> Ordering {
        self.tag
            .total_cmp(&other.tag)
            .then(self.seq.cmp(&other.seq))
    }

    /// One integer ordered as [`Key::order`] orders keys (the tag's IEEE bits mapped to an
    /// order-preserving unsigned integer, then the seq), so hot loops compare with one
    /// branch-free integer comparison.
    #[inline(always)]
    pub fn rank(&self) -> u128 {
        let bits = self.tag.to_bits();
        let ordered = if bits >> 63 == 1 {
            !bits
        } else {
            bits | (1 << 63)
        };
        ((ordered as u128) << 64) | self.seq as u128
    }
}

/// An entry of a lazy min-heap ([`LazyHeap`]). Users invalidate entries by remembering which
/// `seq` is current for `item`, and skip stale entries when they surface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinEntry {
    pub key: Key,
    pub item: u32,
}

/// Children per node of [`LazyHeap`]: eight children's 24-byte entries lie on three adjacent
/// cache lines, and at 100,000 entries a sift-down to the bottom waits for 6 levels instead of
/// a 4-ary heap's 9 (measurements in `docs/models/per_flow_schedulers.md`).
const ARITY: usize = 8;

/// An 8-ary min-heap of [`MinEntry`] (the lazy heaps: no positions, no decrease-key).
#[derive(Clone, Debug, Default)]
pub struct LazyHeap {
    entries: Vec<MinEntry>,
}

impl LazyHeap {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn peek(&self) -> Option<&MinEntry> {
        self.entries.first()
    }

    pub fn push(&mut self, entry: MinEntry) {
        let mut i = self.entries.len();
        self.entries.push(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if entry.key.rank() >= self.entries[parent].key.rank() {
                break;
            }
            self.entries[i] = self.entries[parent];
            i = parent;
        }
        self.entries[i] = entry;
    }

    pub fn pop(&mut self) -> Option<MinEntry> {
        let last = self.entries.pop()?;
        let Some(&top) = self.entries.first() else {
            return Some(last);
        };
        self.sift_down(last);
        Some(top)
    }

    /// Replaces the top entry by `entry` (one sift-down instead of a pop and a push).
    pub fn replace_top(&mut self, entry: MinEntry) {
        if self.entries.is_empty() {
            self.entries.push(entry);
        } else {
            self.sift_down(entry);
        }
    }

    /// Places `entry` in the hole at the root.
    fn sift_down(&mut self, entry: MinEntry) {
        let n = self.entries.len();
        let entry_rank = entry.key.rank();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut smallest = first;
            let mut smallest_rank = self.entries[first].key.rank();
            for c in first + 1..(first + ARITY).min(n) {
                let rank = self.entries[c].key.rank();
                if rank < smallest_rank {
                    smallest = c;
                    smallest_rank = rank;
                }
            }
            if smallest_rank >= entry_rank {
                break;
            }
            self.entries[i] = self.entries[smallest];
            i = smallest;
        }
        self.entries[i] = entry;
    }
}

const ABSENT: u32 = u32::MAX;

/// Min-heap (or max-heap when built with `max`) of items keyed by [`Key`].
#[derive(Clone, Debug, Default)]
pub struct IndexedHeap {
    max: bool,
    slots: Vec<(Key, u32)>,
    position: Vec<u32>,
    pub exchanges: u64,
}

impl IndexedHeap {
    pub fn min() -> Self {
        Self::default()
    }

    pub fn max() -> Self {
        IndexedHeap {
            max: true,
            ..Self::default()
        }
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn contains(&self, item: u32) -> bool {
        self.position
            .get(item as usize)
            .is_some_and(|&p| p != ABSENT)
    }

    pub fn key_of(&self, item: u32) -> Option<Key> {
        let p = *self.position.get(item as usize)?;
        (p != ABSENT).then(|| self.slots[p as usize].0)
    }

    /// The item with the smallest key (largest for a max-heap).
    pub fn top(&self) -> Option<(Key, u32)> {
        self.slots.first().copied()
    }

    /// Inserts `item`, or changes its key if present.
    pub fn set(&mut self, item: u32, key: Key) {
        if self.contains(item) {
            let p = self.position[item as usize] as usize;
            self.slots[p].0 = key;
            self.restore(p);
            return;
        }
        if self.position.len() <= item as usize {
            self.position.resize(item as usize + 1, ABSENT);
        }
        self.slots.push((key, item));
        let p = self.slots.len() - 1;
        self.position[item as usize] = p as u32;
        self.sift_up(p);
    }

    pub fn remove(&mut self, item: u32) -> Option<Key> {
        let p = *self.position.get(item as usize)?;
        if p == ABSENT {
            return None;
        }
        let p = p as usize;
        let last = self.slots.len() - 1;
        self.swap(p, last);
        let (key, _) = self.slots.pop()?;
        self.position[item as usize] = ABSENT;
        if p < self.slots.len() {
            self.restore(p);
        }
        Some(key)
    }

    pub fn pop(&mut self) -> Option<(Key, u32)> {
        let (key, item) = self.top()?;
        self.remove(item);
        Some((key, item))
    }

    /// Items in slot order (for invariant checks).
    pub fn items(&self) -> impl Iterator<Item = (Key, u32)> + '_ {
        self.slots.iter().copied()
    }

    /// Whether every parent is ordered before its children and `position` is the inverse of
    /// the slot array.
    pub fn is_valid(&self) -> bool {
        let ordered = (1..self.slots.len()).all(|i| !self.before(i, (i - 1) / 2));
        let indexed = self
            .slots
            .iter()
            .enumerate()
            .all(|(i, &(_, item))| self.position[item as usize] as usize == i);
        let counted = self.position.iter().filter(|&&p| p != ABSENT).count() == self.slots.len();
        ordered && indexed && counted
    }

    fn before(&self, a: usize, b: usize) -> bool {
        let ord = self.slots[a].0.order(&self.slots[b].0);
        if self.max {
            ord == Ordering::Greater
        } else {
            ord == Ordering::Less
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        self.slots.swap(a, b);
        self.position[self.slots[a].1 as usize] = a as u32;
        self.position[self.slots[b].1 as usize] = b as u32;
        self.exchanges += 1;
    }

    fn restore(&mut self, p: usize) {
        if p > 0 && self.before(p, (p - 1) / 2) {
            self.sift_up(p);
        } else {
            self.sift_down(p);
        }
    }

    fn sift_up(&mut self, mut p: usize) {
        while p > 0 {
            let parent = (p - 1) / 2;
            if !self.before(p, parent) {
                break;
            }
            self.swap(p, parent);
            p = parent;
        }
    }

    fn sift_down(&mut self, mut p: usize) {
        loop {
            let mut best = p;
            for child in [2 * p + 1, 2 * p + 2] {
                if child < self.slots.len() && self.before(child, best) {
                    best = child;
                }
            }
            if best == p {
                break;
            }
            self.swap(p, best);
            p = best;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(tag: f64, seq: u64) -> Key {
        Key { tag, seq }
    }

    #[test]
    fn min_and_max_order_with_ties_by_seq() {
        let mut min = IndexedHeap::min();
        let mut max = IndexedHeap::max();
        for (item, tag, seq) in [(0, 5.0, 0), (1, 3.0, 1), (2, 5.0, 2), (3, 1.0, 3)] {
            min.set(item, key(tag, seq));
            max.set(item, key(tag, seq));
        }
        let order: Vec<u32> = std::iter::from_fn(|| min.pop().map(|(_, i)| i)).collect();
        assert_eq!(order, vec![3, 1, 0, 2]);
        let order: Vec<u32> = std::iter::from_fn(|| max.pop().map(|(_, i)| i)).collect();
        assert_eq!(order, vec![2, 0, 1, 3]);
    }

    #[test]
    fn rekey_and_remove() {
        let mut h = IndexedHeap::min();
        h.set(7, key(10.0, 0));
        h.set(8, key(20.0, 1));
        h.set(7, key(30.0, 2));
        assert_eq!(h.top().map(|t| t.1), Some(8));
        assert_eq!(h.remove(8), Some(key(20.0, 1)));
        assert_eq!(h.remove(8), None);
        assert_eq!(h.pop().map(|t| t.1), Some(7));
        assert!(h.is_empty());
    }

    proptest! {
        #[test]
        fn lazy_heap_pops_in_key_order(tags in proptest::collection::vec(0u32..50, 0..200)) {
            let mut h = LazyHeap::default();
            for (seq, &tag) in tags.iter().enumerate() {
                h.push(MinEntry { key: key(tag as f64, seq as u64), item: seq as u32 });
            }
            let mut sorted: Vec<(u32, u64)> =
                tags.iter().enumerate().map(|(i, &t)| (t, i as u64)).collect();
            sorted.sort();
            let popped: Vec<(u32, u64)> = std::iter::from_fn(|| h.pop())
                .map(|e| (e.key.tag as u32, e.key.seq))
                .collect();
            prop_assert_eq!(popped, sorted);
        }

        #[test]
        fn rank_orders_as_order(a in proptest::num::f64::ANY, b in proptest::num::f64::ANY,
                                sa in 0u64..4, sb in 0u64..4) {
            let (x, y) = (key(a, sa), key(b, sb));
            prop_assert_eq!(x.rank().cmp(&y.rank()), x.order(&y));
        }

        #[test]
        fn replace_top_keeps_key_order(
            tags in proptest::collection::vec(0u32..50, 1..200),
            replacements in proptest::collection::vec(0u32..80, 0..50),
        ) {
            let mut h = LazyHeap::default();
            let mut all: Vec<(u32, u64)> = Vec::new();
            for (seq, &tag) in tags.iter().enumerate() {
                h.push(MinEntry { key: key(tag as f64, seq as u64), item: 0 });
                all.push((tag, seq as u64));
            }
            for (i, &tag) in replacements.iter().enumerate() {
                let seq = (tags.len() + i) as u64;
                let top = *h.peek().unwrap();
                let gone = (top.key.tag as u32, top.key.seq);
                all.retain(|&e| e != gone);
                h.replace_top(MinEntry { key: key(tag as f64, seq), item: 0 });
                all.push((tag, seq));
            }
            all.sort();
            let popped: Vec<(u32, u64)> = std::iter::from_fn(|| h.pop())
                .map(|e| (e.key.tag as u32, e.key.seq))
                .collect();
            prop_assert_eq!(popped, all);
        }

        #[test]
        fn index_invariant_holds_after_every_operation(
            ops in proptest::collection::vec((0u8..4, 0u32..32, 0u32..1000), 1..200)
        ) {
            let mut h = IndexedHeap::min();
            for (seq, (op, item, tag)) in ops.into_iter().enumerate() {
                match op {
                    0 | 1 => h.set(item, key(tag as f64, seq as u64)),
                    2 => { h.remove(item); }
                    _ => { h.pop(); }
                }
                prop_assert!(h.is_valid());
            }
        }
    }
}
