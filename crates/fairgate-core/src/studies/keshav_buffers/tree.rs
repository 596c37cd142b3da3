//! TREE: an unbalanced binary search tree keyed by tag. Insert descends from the root; get_min
//! takes the leftmost node and the discard the rightmost. Monotone bids skew it toward a list.
//! [Keshav91, §3.3].

use super::{BoundedHeap, Cost, Item};

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    item: Item,
    left: u32,
    right: u32,
    parent: u32,
}

pub struct Tree {
    capacity: usize,
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    len: usize,
    cost: Cost,
}

impl Tree {
    pub fn new(capacity: usize) -> Self {
        Tree {
            capacity,
            nodes: Vec::new(),
            free: Vec::new(),
            root: NIL,
            len: 0,
            cost: Cost::default(),
        }
    }

    fn alloc(&mut self, item: Item, parent: u32) -> u32 {
        let node = Node {
            item,
            left: NIL,
            right: NIL,
            parent,
        };
        if let Some(i) = self.free.pop() {
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        }
    }

    /// The leftmost (or rightmost) node and the links followed to reach it.
    fn extreme(&self, rightmost: bool) -> (u32, u64) {
        let mut n = self.root;
        let mut ops = 0;
        loop {
            let node = self.nodes[n as usize];
            let child = if rightmost { node.right } else { node.left };
            if child == NIL {
                return (n, ops);
            }
            n = child;
            ops += 1;
        }
    }

    /// Removes a node with at most one child (an extreme node).
    fn splice(&mut self, n: u32) -> Item {
        let node = self.nodes[n as usize];
        let child = if node.left != NIL {
            node.left
        } else {
            node.right
        };
        if child != NIL {
            self.nodes[child as usize].parent = node.parent;
        }
        if node.parent == NIL {
            self.root = child;
        } else if self.nodes[node.parent as usize].left == n {
            self.nodes[node.parent as usize].left = child;
        } else {
            self.nodes[node.parent as usize].right = child;
        }
        self.free.push(n);
        self.len -= 1;
        node.item
    }

    fn place(&mut self, item: Item) -> u64 {
        if self.root == NIL {
            self.root = self.alloc(item, NIL);
            return 0;
        }
        let mut n = self.root;
        let mut ops = 0;
        loop {
            let node = self.nodes[n as usize];
            let go_left = item.before(&node.item);
            let child = if go_left { node.left } else { node.right };
            if child == NIL {
                let new = self.alloc(item, n);
                if go_left {
                    self.nodes[n as usize].left = new;
                } else {
                    self.nodes[n as usize].right = new;
                }
                return ops;
            }
            n = child;
            ops += 1;
        }
    }
}

impl BoundedHeap for Tree {
    fn insert(&mut self, item: Item) -> Option<Item> {
        let mut ops = self.place(item);
        self.len += 1;
        let mut discarded = None;
        if self.len > self.capacity {
            let (n, descent) = self.extreme(true);
            ops += descent;
            discarded = Some(self.splice(n));
        }
        self.cost.insert(ops);
        discarded
    }

    fn get_min(&mut self) -> Option<Item> {
        if self.root == NIL {
            return None;
        }
        let (n, ops) = self.extreme(false);
        self.cost.get_min_ops += ops;
        Some(self.splice(n))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn cost(&self) -> Cost {
        self.cost
    }

    fn name(&self) -> &'static str {
        "tree"
    }
}
