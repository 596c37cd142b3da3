//! The event queue: a 4-ary heap ordered by (time, insertion sequence), whose earliest
//! entries wait in a short sorted list in front of it, so the events to come can be named
//! (for cache hints) without disturbing the heap.
//!
//! Ties are broken by the order in which events were scheduled, never by addresses or hash
//! order, so the same configuration and seed give the same run.

use super::time::Time;
use std::collections::VecDeque;

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

/// Events the front list holds after each pop (when the heap has them): how far ahead
/// [`EventQueue::ahead`] can name events.
pub const FRONT: usize = 12;
/// Most events the front list holds; an earlier event scheduled into a full list pushes its
/// latest entry back into the heap.
const FRONT_MAX: usize = 2 * FRONT;
/// Pending events from which the front list is kept filled. A smaller queue stays in the
/// caches, where the plain heap is cheaper (the list then drains and stays empty).
pub const STAGE_FROM: usize = 2048;

fn time_of(key: u128) -> Time {
    (key >> 64) as Time
}

/// Pending events, earliest first; equal times come out in scheduling order. Every entry of
/// `front` (sorted, earliest first) is earlier than every entry of `heap` (a 4-ary min-heap
/// on (time, sequence)).
#[derive(Default)]
pub struct EventQueue {
    front: VecDeque<Entry>,
    heap: Vec<Entry>,
    /// Whether the front list is in use; while it is not, the queue is a plain heap.
    staged: bool,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        let key = (time as u128) << 64 | self.next_seq as u128;
        self.next_seq += 1;
        let entry = Entry { key, event };
        if self.staged {
            if let Some(last) = self.front.back() {
                if key < last.key {
                    self.insert_in_front(entry);
                    return;
                }
            }
        }
        self.push_heap(entry);
    }

    fn insert_in_front(&mut self, entry: Entry) {
        let at = self.front.partition_point(|e| e.key < entry.key);
        self.front.insert(at, entry);
        if self.front.len() > FRONT_MAX {
            let latest = self.front.pop_back().expect("a full front list");
            self.push_heap(latest);
        }
    }

    #[inline]
    fn push_heap(&mut self, entry: Entry) {
        self.heap.push(entry);
        self.sift_up(self.heap.len() - 1);
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        let next = if self.staged {
            self.front.front().or_else(|| self.heap.first())
        } else {
            self.heap.first()
        };
        next.map(|e| time_of(e.key))
    }

    /// The event `distance` places after the next one (0 = the next), if the front list
    /// reaches that far; events scheduled meanwhile may come between. For cache hints.
    #[inline]
    pub fn ahead(&self, distance: usize) -> Option<&Event> {
        self.front.get(distance).map(|e| &e.event)
    }

    /// The next event and, as far as the heap knows now, the one after it (the smaller child
    /// of the root), for cache hints while the front list is empty.
    #[inline]
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
        if self.staged {
            return self.pop_staged();
        }
        let next = self.pop_heap()?;
        self.processed += 1;
        if self.heap.len() >= STAGE_FROM {
            self.staged = true;
            self.refill_front();
        }
        Some((time_of(next.key), next.event))
    }

    /// [`Self::pop`] while the front list is in use; it leaves use once drained below
    /// [`STAGE_FROM`] pending events.
    fn pop_staged(&mut self) -> Option<(Time, Event)> {
        let next = match self.front.pop_front() {
            Some(entry) => entry,
            None => self.pop_heap()?,
        };
        self.processed += 1;
        if self.heap.len() >= STAGE_FROM {
            self.refill_front();
        } else if self.front.is_empty() {
            self.staged = false;
        }
        Some((time_of(next.key), next.event))
    }

    fn refill_front(&mut self) {
        while self.front.len() < FRONT {
            let Some(entry) = self.pop_heap() else {
                break;
            };
            self.front.push_back(entry);
        }
    }

    fn pop_heap(&mut self) -> Option<Entry> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = self.heap[0];
        self.sift_down(last);
        Some(top)
    }

    fn sift_up(&mut self, mut pos: usize) {
        let entry = self.heap[pos];
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
    fn sift_down(&mut self, entry: Entry) {
        let heap = &mut self.heap[..];
        let len = heap.len();
        let mut pos = 0;
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
        self.front.len() + self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.front.is_empty() && self.heap.is_empty()
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
    fn ahead_names_the_events_to_come_without_removing_them() {
        let mut q = EventQueue::default();
        assert_eq!(q.ahead(0), None);
        let pending = STAGE_FROM as u32 + 100;
        for agent in 0..pending {
            q.schedule(
                u64::from(agent * 7919 % pending) + 10,
                Event::AgentStart { agent },
            );
        }
        assert_eq!(q.ahead(0), None, "the front list fills at the first pop");
        q.pop();
        q.schedule(5, Event::AgentStart { agent: pending });
        let named: Vec<Event> = (0..FRONT).filter_map(|d| q.ahead(d).copied()).collect();
        assert_eq!(named.len(), FRONT);
        assert_eq!(named[0], Event::AgentStart { agent: pending });
        let popped: Vec<Event> = (0..FRONT).map(|_| q.pop().unwrap().1).collect();
        assert_eq!(named, popped);
    }

    #[test]
    fn upcoming_names_the_next_two_events_of_a_small_queue() {
        let mut q = EventQueue::default();
        assert_eq!(q.upcoming(), (None, None));
        for (t, agent) in [(9, 0), (4, 1), (7, 2), (4, 3), (8, 4)] {
            q.schedule(t, Event::AgentStart { agent });
        }
        let (next, after) = q.upcoming();
        assert_eq!(next, Some(&Event::AgentStart { agent: 1 }));
        assert_eq!(after, Some(&Event::AgentStart { agent: 3 }));
        assert_eq!(q.pop(), Some((4, Event::AgentStart { agent: 1 })));
        assert_eq!(q.pop(), Some((4, Event::AgentStart { agent: 3 })));
    }

    #[test]
    fn interleaved_scheduling_keeps_the_order_of_a_plain_heap() {
        let mut q = EventQueue::default();
        let mut reference = std::collections::BTreeSet::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for _ in 0..STAGE_FROM + 500 {
            let time = 40 + seq * 104_729 % 5000;
            q.schedule(time, Event::AgentStart { agent: seq as u32 });
            reference.insert((time, seq));
            seq += 1;
        }
        for step in 0..20_000u64 {
            for k in 0..(step % 3) {
                let time = now + (step * 7919 + k * 104_729) % 50;
                q.schedule(time, Event::AgentStart { agent: seq as u32 });
                reference.insert((time, seq));
                seq += 1;
            }
            if step % 2 == 0 {
                let expected = reference.pop_first();
                let got = q.pop().map(|(t, e)| match e {
                    Event::AgentStart { agent } => (t, u64::from(agent)),
                    _ => unreachable!(),
                });
                assert_eq!(got, expected);
                now = got.map_or(now, |(t, _)| t);
            }
            assert_eq!(q.len(), reference.len());
        }
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
