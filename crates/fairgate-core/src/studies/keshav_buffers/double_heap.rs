//! HEAP: Keshav's double heap ([Keshav91, app. 3.A]): a min-heap array and a max-heap array
//! over the same items, with cross-index arrays so that deleting the root of one heap can
//! delete the same item from the other. `i_min[k]` is the position in `max` of the item at
//! `min[k]`, and `i_max[k]` the position in `min` of the item at `max[k]`; every move is an
//! exchange that keeps `i_min[i_max[a]] = a` and `i_max[i_min[a]] = a`.
//!
//! Decisions: 0-based arrays (the appendix is 1-based with sentinels `min[0] = -inf`, out-of-range
//! children = +inf; bounds checks replace the sentinels); the appendix's missing size
//! decrement is done after both heaps have moved the deleted item to the last position.

use super::{BoundedHeap, Cost, Item};

/// One of the two heaps: positions hold item slots, `cross` the position in the other heap.
#[derive(Default)]
struct Side {
    heap: Vec<u32>,
    cross: Vec<u32>,
    is_max: bool,
}

pub struct DoubleHeap {
    capacity: usize,
    items: Vec<Item>,
    free: Vec<u32>,
    min: Side,
    max: Side,
    exchanges: u64,
    cost: Cost,
}

/// Which heap an operation works on.
#[derive(Clone, Copy, PartialEq)]
enum Which {
    Min,
    Max,
}

impl DoubleHeap {
    pub fn new(capacity: usize) -> Self {
        DoubleHeap {
            capacity,
            items: Vec::new(),
            free: Vec::new(),
            min: Side::default(),
            max: Side {
                is_max: true,
                ..Side::default()
            },
            exchanges: 0,
            cost: Cost::default(),
        }
    }

    fn sides(&mut self, which: Which) -> (&mut Side, &mut Side) {
        match which {
            Which::Min => (&mut self.min, &mut self.max),
            Which::Max => (&mut self.max, &mut self.min),
        }
    }

    /// `min_exchg` / `max_exchg` of the appendix.
    fn exchange(&mut self, which: Which, a: usize, b: usize) {
        let (this, other) = self.sides(which);
        this.heap.swap(a, b);
        let (ca, cb) = (this.cross[a] as usize, this.cross[b] as usize);
        other.cross.swap(ca, cb);
        this.cross.swap(a, b);
        self.exchanges += 1;
    }

    /// Whether position `a` must sit above position `b` in heap `which`.
    fn above(&self, which: Which, a: usize, b: usize) -> bool {
        let side = match which {
            Which::Min => &self.min,
            Which::Max => &self.max,
        };
        let (x, y) = (
            &self.items[side.heap[a] as usize],
            &self.items[side.heap[b] as usize],
        );
        if side.is_max {
            y.before(x)
        } else {
            x.before(y)
        }
    }

    fn sift_up(&mut self, which: Which, mut p: usize) {
        while p > 0 && self.above(which, p, (p - 1) / 2) {
            self.exchange(which, p, (p - 1) / 2);
            p = (p - 1) / 2;
        }
    }

    /// `min_adjust` / `max_adjust`: moves the item at `p` up or down to its place.
    fn adjust(&mut self, which: Which, p: usize) {
        if p > 0 && self.above(which, p, (p - 1) / 2) {
            self.sift_up(which, p);
            return;
        }
        let n = self.min.heap.len();
        let mut p = p;
        loop {
            let mut best = p;
            for child in [2 * p + 1, 2 * p + 2] {
                if child < n && self.above(which, child, best) {
                    best = child;
                }
            }
            if best == p {
                return;
            }
            self.exchange(which, p, best);
            p = best;
        }
    }

    /// Deletes the item at position `p` of heap `which` from both heaps.
    fn delete(&mut self, which: Which, p: usize) -> Item {
        let last = self.min.heap.len() - 1;
        let other = if which == Which::Min {
            Which::Max
        } else {
            Which::Min
        };
        self.exchange(which, p, last);
        let q = match which {
            Which::Min => self.min.cross[last] as usize,
            Which::Max => self.max.cross[last] as usize,
        };
        self.exchange(other, q, last);
        let slot = self.min.heap[last];
        for side in [&mut self.min, &mut self.max] {
            side.heap.pop();
            side.cross.pop();
        }
        if p < last {
            self.adjust(which, p);
        }
        if q < last {
            self.adjust(other, q);
        }
        self.free.push(slot);
        self.items[slot as usize]
    }

    /// The appendix's invariant: the cross indices are mutual inverses and both arrays are
    /// heaps.
    pub fn is_valid(&self) -> bool {
        let n = self.min.heap.len();
        let inverse = (0..n).all(|a| {
            self.max.cross[self.min.cross[a] as usize] as usize == a
                && self.min.cross[self.max.cross[a] as usize] as usize == a
                && self.min.heap[a] == self.max.heap[self.min.cross[a] as usize]
        });
        let ordered = (1..n).all(|i| {
            !self.above(Which::Min, i, (i - 1) / 2) && !self.above(Which::Max, i, (i - 1) / 2)
        });
        inverse && ordered
    }

    fn alloc(&mut self, item: Item) -> u32 {
        if let Some(slot) = self.free.pop() {
            self.items[slot as usize] = item;
            slot
        } else {
            self.items.push(item);
            (self.items.len() - 1) as u32
        }
    }
}

impl BoundedHeap for DoubleHeap {
    fn insert(&mut self, item: Item) -> Option<Item> {
        let before = self.exchanges;
        let slot = self.alloc(item);
        let n = self.min.heap.len();
        for side in [&mut self.min, &mut self.max] {
            side.heap.push(slot);
            side.cross.push(n as u32);
        }
        self.sift_up(Which::Min, n);
        self.sift_up(Which::Max, n);
        let discarded = (self.len() > self.capacity).then(|| self.delete(Which::Max, 0));
        self.cost.insert(self.exchanges - before);
        discarded
    }

    fn get_min(&mut self) -> Option<Item> {
        if self.min.heap.is_empty() {
            return None;
        }
        let before = self.exchanges;
        let item = self.delete(Which::Min, 0);
        self.cost.get_min_ops += self.exchanges - before;
        Some(item)
    }

    fn len(&self) -> usize {
        self.min.heap.len()
    }

    fn cost(&self) -> Cost {
        self.cost
    }

    fn name(&self) -> &'static str {
        "heap"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn cross_index_invariant_holds_after_every_operation(
            ops in proptest::collection::vec((any::<bool>(), 0u32..1000, 0u32..8), 1..300),
            capacity in 1usize..20,
        ) {
            let mut h = DoubleHeap::new(capacity);
            for (seq, (insert, tag, conv)) in ops.into_iter().enumerate() {
                if insert {
                    h.insert(Item { tag: tag as f64, seq: seq as u64, conv });
                } else {
                    h.get_min();
                }
                prop_assert!(h.is_valid());
                prop_assert!(h.len() <= capacity);
            }
        }
    }
}
