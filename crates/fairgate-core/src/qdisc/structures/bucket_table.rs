//! The buckets of stochastic FQ (P. E. McKenney, "Stochastic fairness queueing", INFOCOM 1990;
//! [Vaidyanathan99, §2.2-2.3]): a FIFO of packets per bucket and McKenney's O(1) structure for
//! the longest bucket, an array indexed by queue length of doubly-linked lists of buckets plus
//! the largest non-empty length. Each arrival or departure moves one bucket between adjacent
//! lists.
//!
//! Layout: a bucket's FIFO ends, its length and its links in the length lists share one
//! 32-byte record, so serving or filling a bucket reads one cache line for both structures
//! (at 100,000 buckets the records no longer fit the second-level cache and every record is a
//! random read). Packets are threaded through one link array indexed by packet id.
//!
//! Invariants that spare writes to packets other than the one moved: a packet's `next` is
//! valid unless it is its bucket's tail, and its `prev` is valid unless it is its bucket's
//! head. Removing the head therefore never touches the new head's link, and removing the tail
//! never touches the new tail's; a single-packet bucket is recognised by its length.

use crate::engine::prefetch::prefetch_at;
use crate::net::packet::PacketId;
use crate::qdisc::buffer::End;
use crate::qdisc::structures::packet_lists::Link;

const NIL: u32 = u32::MAX;

/// One bucket: its FIFO (`head`, `tail`, `len` packets) and its neighbours in the list of
/// buckets of length `len`.
#[derive(Clone, Copy)]
#[repr(align(32))]
struct Bucket {
    head: u32,
    tail: u32,
    len: u32,
    newer: u32,
    older: u32,
}

const EMPTY: Bucket = Bucket {
    head: NIL,
    tail: NIL,
    len: 0,
    newer: NIL,
    older: NIL,
};

pub struct BucketTable {
    buckets: Vec<Bucket>,
    links: Vec<Link>,
    /// `first_of_length[l]`: the bucket of length `l` moved there last, or NIL.
    first_of_length: Vec<u32>,
    longest: usize,
    /// Elementary length-list operations (link or unlink), for cost accounting.
    pub operations: u64,
}

impl BucketTable {
    pub fn new(buckets: usize) -> Self {
        BucketTable {
            buckets: vec![EMPTY; buckets],
            links: Vec::new(),
            first_of_length: vec![NIL],
            longest: 0,
            operations: 0,
        }
    }

    pub fn bucket_count(&self) -> usize {
        self.buckets.len()
    }

    pub fn len(&self, bucket: u32) -> usize {
        self.buckets[bucket as usize].len as usize
    }

    pub fn is_empty(&self, bucket: u32) -> bool {
        self.buckets[bucket as usize].len == 0
    }

    pub fn front(&self, bucket: u32) -> Option<PacketId> {
        let b = &self.buckets[bucket as usize];
        (b.len > 0).then_some(b.head)
    }

    /// Size in bytes of a queued packet.
    pub fn size_of(&self, packet: PacketId) -> u32 {
        self.links[packet as usize].size
    }

    /// A bucket of the greatest length (the one moved to that length last), if any bucket is
    /// non-empty.
    pub fn longest(&self) -> Option<u32> {
        (self.longest > 0).then(|| self.first_of_length[self.longest])
    }

    /// Hints the cache that `bucket`'s record is about to be read.
    pub fn prefetch_bucket(&self, bucket: u32) {
        prefetch_at(&self.buckets, bucket as usize);
    }

    /// Hints the cache that serving `bucket` is near: its head packet's link, its neighbours
    /// in the length lists (its own record should already be cached) and its tail packet's
    /// link, which the next arrival to the bucket writes: a flow that sends again right after
    /// being served (a burst, or the benchmark's re-queued packet) finds it cached.
    pub fn prefetch_service(&self, bucket: u32) -> Option<PacketId> {
        let b = self.buckets.get(bucket as usize)?;
        prefetch_at(&self.buckets, b.newer as usize);
        prefetch_at(&self.buckets, b.older as usize);
        if b.len == 0 {
            return None;
        }
        prefetch_at(&self.links, b.head as usize);
        prefetch_at(&self.links, b.tail as usize);
        Some(b.head)
    }

    /// Appends `packet` of `size` bytes to `bucket`.
    pub fn push(&mut self, bucket: u32, packet: PacketId, size: u32) {
        let b = self.buckets[bucket as usize];
        let link = Link {
            next: NIL,
            prev: b.tail,
            size,
        };
        Link::store(&mut self.links, packet, link);
        if b.len == 0 {
            self.buckets[bucket as usize].head = packet;
        } else {
            self.links[b.tail as usize].next = packet;
        }
        self.buckets[bucket as usize].tail = packet;
        self.move_to_length(bucket, b.len as usize + 1);
    }

    /// Removes the head or the tail of `bucket`.
    pub fn take(&mut self, bucket: u32, end: End) -> Option<PacketId> {
        let b = self.buckets[bucket as usize];
        if b.len == 0 {
            return None;
        }
        let record = &mut self.buckets[bucket as usize];
        let packet = match end {
            End::Head => {
                if b.len > 1 {
                    record.head = self.links[b.head as usize].next;
                }
                b.head
            }
            End::Tail => {
                if b.len > 1 {
                    record.tail = self.links[b.tail as usize].prev;
                }
                b.tail
            }
        };
        self.move_to_length(bucket, b.len as usize - 1);
        Some(packet)
    }

    fn move_to_length(&mut self, bucket: u32, length: usize) {
        let old = self.buckets[bucket as usize].len as usize;
        if old > 0 {
            self.unlink(bucket, old);
        }
        self.buckets[bucket as usize].len = length as u32;
        if length > 0 {
            self.link(bucket, length);
        }
        if length > self.longest {
            self.longest = length;
        }
        while self.longest > 0 && self.first_of_length[self.longest] == NIL {
            self.longest -= 1;
        }
    }

    fn link(&mut self, bucket: u32, length: usize) {
        if self.first_of_length.len() <= length {
            self.first_of_length.resize(length + 1, NIL);
        }
        let first = self.first_of_length[length];
        let record = &mut self.buckets[bucket as usize];
        record.older = first;
        record.newer = NIL;
        if first != NIL {
            self.buckets[first as usize].newer = bucket;
        }
        self.first_of_length[length] = bucket;
        self.operations += 1;
    }

    fn unlink(&mut self, bucket: u32, length: usize) {
        let Bucket { newer, older, .. } = self.buckets[bucket as usize];
        if newer == NIL {
            self.first_of_length[length] = older;
        } else {
            self.buckets[newer as usize].older = older;
        }
        if older != NIL {
            self.buckets[older as usize].newer = newer;
        }
        self.operations += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_record_is_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<Bucket>(), 32);
    }

    #[test]
    fn fifo_order_from_both_ends() {
        let mut t = BucketTable::new(2);
        for (p, size) in [(5, 100), (2, 200), (9, 300)] {
            t.push(0, p, size);
        }
        t.push(1, 7, 50);
        assert_eq!(t.len(0), 3);
        assert_eq!(t.take(0, End::Tail), Some(9));
        assert_eq!(t.take(0, End::Head), Some(5));
        assert_eq!(t.front(0), Some(2));
        t.push(0, 4, 10);
        assert_eq!(t.take(0, End::Tail), Some(4));
        assert_eq!(t.take(0, End::Head), Some(2));
        assert_eq!(t.take(0, End::Head), None);
        assert!(t.is_empty(0));
        assert_eq!(t.size_of(7), 50);
        assert_eq!(t.take(1, End::Tail), Some(7));
        assert_eq!(t.longest(), None);
    }

    #[test]
    fn tracks_the_longest_bucket() {
        let mut t = BucketTable::new(4);
        for (p, b) in [0, 1, 1, 2, 1].into_iter().enumerate() {
            t.push(b, p as u32, 1);
        }
        assert_eq!(t.longest(), Some(1));
        t.take(1, End::Head);
        t.take(1, End::Tail);
        assert_eq!(t.len(1), 1);
        // Buckets 0, 1, 2 all hold one packet: the one moved there last (1) is first.
        assert_eq!(t.longest(), Some(1));
        for b in [0, 1, 2] {
            t.take(b, End::Head);
        }
        assert_eq!(t.longest(), None);
        // 5 pushes + 5 takes, each an unlink and/or a link: 5 + 4 + 4 + 1 = 14 operations
        // (a move from length 0 only links, a move to length 0 only unlinks).
        assert_eq!(t.operations, 14);
    }

    proptest::proptest! {
        /// Against one `VecDeque` per bucket: the same packets at both ends, the same lengths,
        /// and a longest bucket that is as long as any.
        #[test]
        fn matches_plain_queues(
            ops in proptest::collection::vec((0u8..3, 0u32..5), 1..400)
        ) {
            let mut table = BucketTable::new(5);
            let mut plain = vec![std::collections::VecDeque::new(); 5];
            let mut next_packet = 0u32;
            for (op, bucket) in ops {
                let queue = &mut plain[bucket as usize];
                match op {
                    0 => {
                        table.push(bucket, next_packet, next_packet % 7 + 1);
                        queue.push_back(next_packet);
                        next_packet += 1;
                    }
                    1 => proptest::prop_assert_eq!(table.take(bucket, End::Head), queue.pop_front()),
                    _ => proptest::prop_assert_eq!(table.take(bucket, End::Tail), queue.pop_back()),
                }
                for (b, q) in plain.iter().enumerate() {
                    proptest::prop_assert_eq!(table.len(b as u32), q.len());
                    proptest::prop_assert_eq!(table.front(b as u32), q.front().copied());
                }
                let longest = plain.iter().map(|q| q.len()).max().unwrap_or(0);
                match table.longest() {
                    Some(b) => proptest::prop_assert_eq!(table.len(b), longest),
                    None => proptest::prop_assert_eq!(longest, 0),
                }
            }
        }
    }
}
