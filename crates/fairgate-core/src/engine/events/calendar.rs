//! Far-future events kept out of the heap: a ring of buckets of simulated time beyond a
//! horizon, and an overflow for what lies beyond the ring. Events are scheduled into the heap
//! as always; when it has grown, the lookahead reading the queue files its entries at or after
//! the horizon in their buckets (appending, a sequential write). Before the heap gives an
//! entry at or after the horizon (or when it has run empty), the next occupied bucket's
//! entries are handed over with their keys, sorted, beside the heap (`released.rs`), and the
//! horizon moves past that bucket, so every calendar
//! entry is later than every entry the lookahead holds and the order is that of all pending
//! events. A simulation with many flows holds some 100,000 retransmission timers seconds
//! ahead; the heap the run loop pops from keeps about a thousand entries at most.
//!
//! Decisions (measured, see docs/engine.md): buckets of 2^33 ps (widths from 2^31 to 2^37 ps
//! measured alike at 100,000 flows), a ring of 8,192 of them (about 70 s), an overflow heap
//! beyond it whose entries move into the ring as its window reaches them, a bitmap of occupied
//! buckets so an empty stretch of the ring is skipped a word at a time, and a drained bucket
//! frees its vector (kept capacities would add up to every event of a turn of the ring).
//! Filing at `schedule` instead (one comparison with the horizon there) gained more at scale
//! but made the small engine benchmark 2.5-3 % slower, so the plain heap's paths stay as they
//! were and the filing happens in batches, in the lookahead's refill.

use super::{time_of, Entry, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A bucket spans 2^BUCKET_BITS ps (about 8.6 ms).
const BUCKET_BITS: u32 = 33;
/// The ring holds 2^RING_BITS buckets (about 70 s, past the longest retransmission timeout).
const RING_BITS: u32 = 13;
const RING: u64 = 1 << RING_BITS;
const RING_MASK: u64 = RING - 1;

fn bucket_of(time: Time) -> u64 {
    time >> BUCKET_BITS
}

/// An entry beyond the ring, ordered by its key (the overflow holds it reversed, so its
/// earliest entry comes first).
struct Far(Entry);

impl PartialEq for Far {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}

impl Eq for Far {}

impl PartialOrd for Far {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Far {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.key.cmp(&other.0.key)
    }
}

pub(super) struct Calendar {
    /// Bucket `b` (absolute, `time >> BUCKET_BITS`) of the window `[current, current + RING)`
    /// lives at `b & RING_MASK`.
    buckets: Vec<Vec<Entry>>,
    /// One bit per ring slot: whether its bucket holds entries.
    occupied: Vec<u64>,
    /// The first bucket not yet handed to the heap; the horizon is its start.
    current: u64,
    in_ring: usize,
    overflow: BinaryHeap<Reverse<Far>>,
}

impl Default for Calendar {
    fn default() -> Self {
        Calendar {
            buckets: (0..RING).map(|_| Vec::new()).collect(),
            occupied: vec![0; (RING / 64) as usize],
            current: 0,
            in_ring: 0,
            overflow: BinaryHeap::new(),
        }
    }
}

impl Calendar {
    /// The start of the first bucket not yet handed to the heap (`Time::MAX` once past the
    /// last bucket).
    pub(super) fn horizon(&self) -> Time {
        self.current
            .checked_mul(1 << BUCKET_BITS)
            .unwrap_or(Time::MAX)
    }

    /// Moves the horizon back to the bucket of `time`; only on an empty calendar.
    pub(super) fn restart_at(&mut self, time: Time) {
        debug_assert!(self.is_empty(), "restarting a calendar with entries");
        self.current = bucket_of(time);
    }

    pub(super) fn len(&self) -> usize {
        self.in_ring + self.overflow.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves the horizon to the bucket after that of `time`; only on an empty calendar.
    pub(super) fn restart_after(&mut self, time: Time) {
        self.restart_at(time);
        self.current += 1;
    }

    /// Whether an entry at `time` belongs in the calendar (is at or after the horizon).
    pub(super) fn accepts(&self, time: Time) -> bool {
        bucket_of(time) >= self.current
    }

    /// Files an entry at or after the horizon.
    pub(super) fn file(&mut self, entry: Entry) {
        let bucket = bucket_of(time_of(entry.key));
        debug_assert!(bucket >= self.current, "an entry before the horizon");
        if bucket - self.current < RING {
            self.put_in_ring(bucket, entry);
        } else {
            self.overflow.push(Reverse(Far(entry)));
        }
    }

    fn put_in_ring(&mut self, bucket: u64, entry: Entry) {
        let slot = (bucket & RING_MASK) as usize;
        self.buckets[slot].push(entry);
        self.occupied[slot / 64] |= 1 << (slot % 64);
        self.in_ring += 1;
    }

    /// The entries of the earliest bucket holding any, taken out; the horizon moves past that
    /// bucket. None when the calendar is empty. The bucket does not keep the vector: a bucket
    /// is filled once per turn of the ring, so kept capacities would add up to every event of
    /// a turn, not the pending ones.
    pub(super) fn take_next(&mut self) -> Option<Vec<Entry>> {
        self.spill_overflow();
        if self.in_ring == 0 {
            let Reverse(Far(first)) = self.overflow.peek()?;
            self.current = bucket_of(time_of(first.key));
            self.spill_overflow();
        }
        let slot = self.next_occupied_slot();
        let bucket = self.current + ((slot as u64).wrapping_sub(self.current) & RING_MASK);
        self.current = bucket + 1;
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        let entries = std::mem::take(&mut self.buckets[slot]);
        self.in_ring -= entries.len();
        Some(entries)
    }

    /// Moves the overflow's entries that fall in the ring's window into their buckets.
    fn spill_overflow(&mut self) {
        while let Some(Reverse(Far(first))) = self.overflow.peek() {
            let bucket = bucket_of(time_of(first.key));
            if bucket - self.current >= RING {
                break;
            }
            let Some(Reverse(Far(entry))) = self.overflow.pop() else {
                break;
            };
            self.put_in_ring(bucket, entry);
        }
    }

    /// The ring slot of the earliest occupied bucket (the ring holds entries).
    fn next_occupied_slot(&self) -> usize {
        let start = (self.current & RING_MASK) as usize;
        let words = self.occupied.len();
        let first_word = start / 64;
        let in_first = self.occupied[first_word] & (!0u64 << (start % 64));
        if in_first != 0 {
            return first_word * 64 + in_first.trailing_zeros() as usize;
        }
        (1..=words)
            .map(|step| (first_word + step) % words)
            .find_map(|word| {
                let bits = self.occupied[word];
                (bits != 0).then(|| word * 64 + bits.trailing_zeros() as usize)
            })
            .expect("an occupied slot in a ring with entries")
    }

    /// Every entry, taken out; the calendar is empty afterwards.
    pub(super) fn drain(&mut self) -> Vec<Entry> {
        let mut all: Vec<Entry> = self.buckets.iter_mut().flat_map(|b| b.drain(..)).collect();
        all.extend(self.overflow.drain().map(|Reverse(Far(e))| e));
        self.occupied.fill(0);
        self.in_ring = 0;
        all
    }
}

#[cfg(test)]
#[path = "calendar_tests.rs"]
mod tests;
