//! The event queue: a binary heap ordered by (time, insertion sequence).
//!
//! Ties are broken by the order in which events were scheduled, never by addresses or hash
//! order, so the same configuration and seed give the same run.

use super::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Something that happens at a point in simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The link of this port finished serialising its packet.
    TxDone { port: u32 },
    /// A packet reaches the far node of `port` after propagation.
    Arrive { port: u32, packet: u32 },
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
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Pending events, earliest first; equal times come out in scheduling order.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let entry = self.heap.pop()?;
        self.processed += 1;
        Some((entry.time, entry.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
