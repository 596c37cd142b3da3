//! The event queue: a 4-ary heap ordered by (time, insertion sequence), optionally a
//! calendar that keeps far-future events out of the heap, and a [`Lookahead`] a run loop
//! may keep in front of it to name the events to come.
//!
//! Ties are broken by the order in which events were scheduled, never by addresses or hash
//! order, so the same configuration and seed give the same run.

mod calendar;
mod lookahead;
mod released;

use super::time::Time;
use calendar::Calendar;
pub use lookahead::{Lookahead, LOOKAHEAD};
use released::Released;

/// Something that happens at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The link of this port finished serialising its packet.
    TxDone { port: u32 },
    /// A packet reaches the far node of `port` after propagation.
    Arrive { port: u32, packet: u32 },
    /// The packet at the head of a fixed-delay link's in-flight queue reaches the far node.
    LinkArrive { port: u32 },
    /// A packet addressed to an agent on the node that sent it.
    Deliver { packet: u32 },
    /// A timer an agent set.
    AgentTimer { agent: u32, token: u64 },
    /// An agent's start time.
    AgentStart { agent: u32 },
    /// An agent's stop time.
    AgentStop { agent: u32 },
    /// A timer a queue discipline set.
    QdiscTimer { port: u32 },
    /// Periodic sampling of queue lengths and flow counters.
    Sample,
    /// An edge of the measurement window: snapshot the cumulative counters.
    WindowEdge,
    /// An edge between traffic phases: close the phase's summary.
    PhaseEdge,
}

/// A pending event; `key` packs (time, sequence) so one comparison orders two entries.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

/// Children per node of the heap: a 4-ary heap is shallower than a binary one.
const ARITY: usize = 4;

fn time_of(key: u128) -> Time {
    (key >> 64) as Time
}

/// Pending events, earliest first; equal times come out in scheduling order (a 4-ary
/// min-heap on (time, sequence)). With [`Self::use_calendar`], a [`Lookahead`] reading the
/// queue moves the heap's entries at or after a horizon into a calendar of buckets whenever
/// the heap has grown, and hands the next bucket over sorted, beside the heap, once the heap
/// holds nothing earlier; [`Self::pop`] and [`Self::peek_time`] read the heap alone, so they are
/// for a queue whose calendar is empty (without one, or never read through a lookahead).
/// `schedule` and `pop` are exactly the plain heap's: the small simulation pays nothing.
pub struct EventQueue {
    heap: Vec<Entry>,
    next_seq: u64,
    processed: u64,
    /// Every calendar entry is at or after this time (`Time::MAX` without a calendar).
    horizon: Time,
    /// The heap's length from which a lookahead files its far entries in the calendar.
    evict_from: usize,
    calendar: Option<Box<Calendar>>,
    /// The calendar's last bucket handed over, sorted, not yet taken whole (all of it before
    /// the horizon); the lookahead takes the earlier of its first entry and the heap's top.
    released: Released,
}

/// The heap's length from which its far entries go to the calendar at least: a few cached
/// pages of entries (a few entries in the unit tests, so they file entries often).
const EVICT_FROM: usize = if cfg!(test) { 16 } else { 1024 };

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            heap: Vec::new(),
            next_seq: 0,
            processed: 0,
            horizon: Time::MAX,
            evict_from: usize::MAX,
            calendar: None,
            released: Released::default(),
        }
    }
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        let key = (time as u128) << 64 | self.next_seq as u128;
        self.next_seq += 1;
        self.push(Entry { key, event });
    }

    /// Lets a [`Lookahead`] keep the events at or after a horizon in a calendar of buckets
    /// instead of the heap (on), or puts every event back in the heap (off). Either way the
    /// events come out in the same order; a simulation with many flows pops from a much
    /// smaller heap with it.
    pub fn use_calendar(&mut self, on: bool) {
        if let Some(mut calendar) = self.calendar.take() {
            for entry in calendar.drain() {
                self.push(entry);
            }
        }
        let released: Vec<Entry> = self.released.drain().collect();
        for entry in released {
            self.push(entry);
        }
        self.horizon = Time::MAX;
        self.evict_from = usize::MAX;
        if !on {
            return;
        }
        let mut calendar = Box::<Calendar>::default();
        calendar.restart_at(self.peek_time().unwrap_or(0));
        self.horizon = calendar.horizon();
        self.evict_from = 0;
        self.calendar = Some(calendar);
    }

    /// Files the heap's entries at or after the horizon in the calendar once the heap has
    /// grown past `evict_from`, and rebuilds the heap from the rest.
    #[inline]
    fn evict_if_grown(&mut self) {
        if self.heap.len() >= self.evict_from {
            self.evict();
        }
    }

    #[inline(never)]
    fn evict(&mut self) {
        let Some(calendar) = self.calendar.as_mut() else {
            return;
        };
        self.heap.retain(|entry| {
            let far = calendar.accepts(time_of(entry.key));
            if far {
                calendar.file(*entry);
            }
            !far
        });
        for pos in (0..self.heap.len() / ARITY + 1).rev() {
            if let Some(&entry) = self.heap.get(pos) {
                self.sift_down_from(pos, entry);
            }
        }
        self.evict_from = (2 * self.heap.len()).max(EVICT_FROM);
    }

    /// Hands the calendar's earliest bucket over, sorted, beside the heap (only once the last
    /// one was taken whole); false when the calendar is empty (or there is none).
    fn release_next(&mut self) -> bool {
        let Some(calendar) = self.calendar.as_mut() else {
            return false;
        };
        let Some(entries) = calendar.take_next() else {
            return false;
        };
        self.horizon = calendar.horizon();
        self.released.fill(entries);
        true
    }

    /// With an empty calendar, moves the horizon past `time` (the heap's earliest entry, which
    /// a lookahead is about to take).
    fn move_horizon_past(&mut self, time: Time) {
        if let Some(calendar) = self.calendar.as_mut() {
            calendar.restart_after(time);
            self.horizon = calendar.horizon();
        }
    }

    pub fn peek_time(&self) -> Option<Time> {
        debug_assert!(
            self.calendar_is_empty(),
            "a calendar read without a lookahead"
        );
        self.heap.first().map(|e| time_of(e.key))
    }

    fn calendar_is_empty(&self) -> bool {
        self.calendar.as_ref().is_none_or(|c| c.is_empty()) && self.released.is_empty()
    }

    /// The next event and, as far as the queue knows now, the one after it (the smaller
    /// child of the root), for cache hints; events scheduled meanwhile may come between.
    pub fn upcoming(&self) -> (Option<&Event>, Option<&Event>) {
        let next = self.heap.first().map(|e| &e.event);
        let children = self
            .heap
            .get(1..self.heap.len().min(ARITY + 1))
            .unwrap_or(&[]);
        let after = children.iter().min_by_key(|e| e.key).map(|e| &e.event);
        (next, after)
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        debug_assert!(
            self.calendar_is_empty(),
            "a calendar read without a lookahead"
        );
        let last = self.heap.pop()?;
        self.processed += 1;
        if self.heap.is_empty() {
            return Some((time_of(last.key), last.event));
        }
        let top = self.heap[0];
        self.sift_down(last);
        Some((time_of(top.key), top.event))
    }

    /// The key of the earliest entry of the heap and the released bucket.
    #[inline(always)]
    fn first_key(&self) -> Option<u128> {
        let top = self.heap.first().map(|e| e.key);
        match (top, self.released.first_key()) {
            (Some(top), Some(released)) => Some(top.min(released)),
            (top, released) => top.or(released),
        }
    }

    /// The earliest entry of the heap and the released bucket, removed (not counted as
    /// processed).
    #[inline(always)]
    fn take_first(&mut self) -> Option<Entry> {
        match (self.heap.first(), self.released.first_key()) {
            (Some(top), Some(released)) if top.key < released => self.pop_entry(),
            (_, Some(_)) => self.released.take(),
            _ => self.pop_entry(),
        }
    }

    /// The earliest entry, removed from the heap (not counted as processed).
    fn pop_entry(&mut self) -> Option<Entry> {
        let top = *self.heap.first()?;
        let last = self.heap.pop().expect("a heap with a first entry");
        if !self.heap.is_empty() {
            self.sift_down(last);
        }
        Some(top)
    }

    /// Puts back an entry [`Self::pop_entry`] took, with its key (so its place in the order).
    fn restore(&mut self, entry: Entry) {
        self.push(entry);
    }

    /// Appends `entry` and moves it up past every later parent.
    #[inline(always)]
    fn push(&mut self, entry: Entry) {
        let mut pos = self.heap.len();
        self.heap.push(entry);
        while pos > 0 {
            let parent = (pos - 1) / ARITY;
            if self.heap[parent].key <= entry.key {
                break;
            }
            self.heap[pos] = self.heap[parent];
            pos = parent;
        }
        self.heap[pos] = entry;
    }

    /// Places `entry` from the root down, moving the smallest child up at each level.
    #[inline(always)]
    fn sift_down(&mut self, entry: Entry) {
        self.sift_down_from(0, entry);
    }

    /// Places `entry` at `pos` or below, moving the smallest child up at each level.
    #[inline(always)]
    fn sift_down_from(&mut self, mut pos: usize, entry: Entry) {
        let heap = &mut self.heap[..];
        let len = heap.len();
        loop {
            let first = pos * ARITY + 1;
            if first >= len {
                break;
            }
            let end = (first + ARITY).min(len);
            let mut best = first;
            let mut best_key = heap[first].key;
            for (child, e) in heap[first + 1..end].iter().enumerate() {
                if e.key < best_key {
                    best_key = e.key;
                    best = first + 1 + child;
                }
            }
            if entry.key <= best_key {
                break;
            }
            heap[pos] = heap[best];
            pos = best;
        }
        heap[pos] = entry;
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.calendar.as_ref().map_or(0, |c| c.len()) + self.released.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_events_come_out_sorted() {
        let mut q = EventQueue::default();
        let times: Vec<u64> = (0..1000u64).map(|i| i * 7919 % 613).collect();
        for (i, &t) in times.iter().enumerate() {
            q.schedule(t, Event::AgentStart { agent: i as u32 });
        }
        let mut expected: Vec<(u64, u32)> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, i as u32))
            .collect();
        expected.sort();
        let got: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::AgentStart { agent } => (t, agent),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn upcoming_names_the_next_two_events_without_removing_them() {
        let mut q = EventQueue::default();
        assert_eq!(q.upcoming(), (None, None));
        for (t, agent) in [(9, 0), (4, 1), (7, 2), (4, 3), (8, 4)] {
            q.schedule(t, Event::AgentStart { agent });
        }
        let (next, after) = q.upcoming();
        assert_eq!(next, Some(&Event::AgentStart { agent: 1 }));
        assert_eq!(after, Some(&Event::AgentStart { agent: 3 }));
        assert_eq!(q.len(), 5);
        assert_eq!(q.pop(), Some((4, Event::AgentStart { agent: 1 })));
        assert_eq!(q.pop(), Some((4, Event::AgentStart { agent: 3 })));
    }

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::default();
        q.schedule(5, Event::Sample);
        q.schedule(3, Event::AgentStart { agent: 1 });
        q.schedule(5, Event::AgentStart { agent: 2 });
        q.schedule(3, Event::AgentStart { agent: 3 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (3, Event::AgentStart { agent: 1 }),
                (3, Event::AgentStart { agent: 3 }),
                (5, Event::Sample),
                (5, Event::AgentStart { agent: 2 }),
            ]
        );
        assert_eq!(q.processed(), 4);
    }
}
