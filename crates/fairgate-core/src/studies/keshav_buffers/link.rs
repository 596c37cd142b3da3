//! LINK: one doubly-linked list ordered by tag, scanned from the tail (largest tag) on insert,
//! since bids within a conversation increase and most inserts land near the end. get_min takes
//! the head and the discard takes the tail, both O(1). [Keshav91, §3.3].

use super::{BoundedHeap, Cost, Item};

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    item: Item,
    prev: u32,
    next: u32,
}

pub struct Link {
    capacity: usize,
    nodes: Vec<Node>,
    free: Vec<u32>,
    head: u32,
    tail: u32,
    len: usize,
    cost: Cost,
}

impl Link {
    pub fn new(capacity: usize) -> Self {
        Link {
            capacity,
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
            cost: Cost::default(),
        }
    }

    fn alloc(&mut self, item: Item) -> u32 {
        let node = Node {
            item,
            prev: NIL,
            next: NIL,
        };
        if let Some(i) = self.free.pop() {
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// Links node `n` after `after` (or at the head when `after` is NIL).
    fn link_after(&mut self, n: u32, after: u32) {
        let next = if after == NIL {
            self.head
        } else {
            self.nodes[after as usize].next
        };
        self.nodes[n as usize].prev = after;
        self.nodes[n as usize].next = next;
        if after == NIL {
            self.head = n;
        } else {
            self.nodes[after as usize].next = n;
        }
        if next == NIL {
            self.tail = n;
        } else {
            self.nodes[next as usize].prev = n;
        }
    }

    fn unlink(&mut self, n: u32) -> Item {
        let Node { item, prev, next } = self.nodes[n as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        self.free.push(n);
        self.len -= 1;
        item
    }
}

impl BoundedHeap for Link {
    fn insert(&mut self, item: Item) -> Option<Item> {
        let mut ops = 0;
        let mut after = self.tail;
        while after != NIL && item.before(&self.nodes[after as usize].item) {
            after = self.nodes[after as usize].prev;
            ops += 1;
        }
        let n = self.alloc(item);
        self.link_after(n, after);
        self.len += 1;
        let discarded = (self.len > self.capacity).then(|| self.unlink(self.tail));
        self.cost.insert(ops);
        discarded
    }

    fn get_min(&mut self) -> Option<Item> {
        (self.head != NIL).then(|| self.unlink(self.head))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn cost(&self) -> Cost {
        self.cost
    }

    fn name(&self) -> &'static str {
        "link"
    }
}
