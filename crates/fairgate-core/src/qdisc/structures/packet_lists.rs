//! Many FIFO queues of packet handles threaded through one link array indexed by packet id
//! (an intrusive doubly-linked list per queue). Compared with one `VecDeque` per queue it
//! keeps no per-queue allocation and touches one record per packet, which matters when
//! hundreds of thousands of flows are backlogged.

use crate::engine::prefetch::prefetch_at;
use crate::net::packet::PacketId;
use crate::qdisc::buffer::End;

const NIL: u32 = u32::MAX;

/// A queued packet's neighbours in its queue (`prev` toward the head) and its size.
#[derive(Clone, Copy)]
pub(crate) struct Link {
    pub next: u32,
    pub prev: u32,
    pub size: u32,
}

impl Link {
    /// Stores `packet`'s link, growing the array (indexed by packet id) as needed.
    pub(crate) fn store(links: &mut Vec<Link>, packet: PacketId, link: Link) {
        if links.len() <= packet as usize {
            let blank = Link {
                next: NIL,
                prev: NIL,
                size: 0,
            };
            links.resize(packet as usize + 1, blank);
        }
        links[packet as usize] = link;
    }
}

/// One queue's ends and totals.
#[derive(Clone, Copy, Debug)]
pub struct PacketQueue {
    head: u32,
    tail: u32,
    len: u32,
    bytes: u64,
}

impl Default for PacketQueue {
    fn default() -> Self {
        PacketQueue {
            head: NIL,
            tail: NIL,
            len: 0,
            bytes: 0,
        }
    }
}

impl PacketQueue {
    pub fn front(&self) -> Option<PacketId> {
        (self.head != NIL).then_some(self.head)
    }
    pub fn back(&self) -> Option<PacketId> {
        (self.tail != NIL).then_some(self.tail)
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[derive(Default)]
pub struct PacketLists {
    links: Vec<Link>,
    queues: Vec<PacketQueue>,
}

impl PacketLists {
    pub fn add_queue(&mut self) -> u32 {
        self.queues.push(PacketQueue::default());
        (self.queues.len() - 1) as u32
    }

    pub fn with_queues(n: usize) -> Self {
        PacketLists {
            links: Vec::new(),
            queues: vec![PacketQueue::default(); n],
        }
    }

    pub fn queue(&self, q: u32) -> &PacketQueue {
        &self.queues[q as usize]
    }

    pub fn queue_count(&self) -> usize {
        self.queues.len()
    }

    /// Hints the cache that the record of queue `q` is about to be read.
    pub fn prefetch_queue(&self, q: u32) {
        prefetch_at(&self.queues, q as usize);
    }

    /// Hints the cache that the link of `packet` is about to be read.
    pub fn prefetch_link(&self, packet: PacketId) {
        prefetch_at(&self.links, packet as usize);
    }

    /// Size of a queued packet.
    pub fn size_of(&self, packet: PacketId) -> u32 {
        self.links[packet as usize].size
    }

    pub fn push(&mut self, q: u32, packet: PacketId, size: u32) {
        let queue = &mut self.queues[q as usize];
        let link = Link {
            next: NIL,
            prev: queue.tail,
            size,
        };
        Link::store(&mut self.links, packet, link);
        if queue.tail == NIL {
            queue.head = packet;
        } else {
            self.links[queue.tail as usize].next = packet;
        }
        queue.tail = packet;
        queue.len += 1;
        queue.bytes += size as u64;
    }

    /// Removes the head or tail of queue `q`.
    pub fn take(&mut self, q: u32, end: End) -> Option<PacketId> {
        let queue = &mut self.queues[q as usize];
        let packet = match end {
            End::Head => queue.head,
            End::Tail => queue.tail,
        };
        if packet == NIL {
            return None;
        }
        let Link { next, prev, size } = self.links[packet as usize];
        match end {
            End::Head => {
                queue.head = next;
                if next == NIL {
                    queue.tail = NIL;
                } else {
                    self.links[next as usize].prev = NIL;
                }
            }
            End::Tail => {
                queue.tail = prev;
                if prev == NIL {
                    queue.head = NIL;
                } else {
                    self.links[prev as usize].next = NIL;
                }
            }
        }
        queue.len -= 1;
        queue.bytes -= size as u64;
        Some(packet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_and_both_ends() {
        let mut l = PacketLists::with_queues(2);
        for (p, size) in [(5, 100), (2, 200), (9, 300)] {
            l.push(0, p, size);
        }
        l.push(1, 7, 50);
        assert_eq!((l.queue(0).len(), l.queue(0).bytes()), (3, 600));
        assert_eq!(l.take(0, End::Tail), Some(9));
        assert_eq!(l.take(0, End::Head), Some(5));
        assert_eq!(l.queue(0).front(), Some(2));
        assert_eq!(l.queue(0).back(), Some(2));
        assert_eq!(l.take(0, End::Head), Some(2));
        assert_eq!(l.take(0, End::Head), None);
        assert!(l.queue(0).is_empty());
        assert_eq!(l.size_of(7), 50);
        assert_eq!(l.take(1, End::Tail), Some(7));
    }
}
