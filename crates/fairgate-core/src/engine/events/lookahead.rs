//! The earliest pending events, taken out of the heap into a short sorted list, so a run loop
//! can name the events to come several pops ahead (for cache hints) without disturbing the
//! heap. The queue's `schedule` is unchanged: a new event goes into the heap, and the next pop
//! moves every heap entry earlier than the list's last entry into the list first, so events
//! come out in exactly the order of the heap alone. A run loop that keeps a lookahead puts its
//! entries back (with their keys) before it returns.

use super::{time_of, Entry, Event, EventQueue, Time};
use std::collections::VecDeque;

/// Events the list holds after each refill (when the queue has them): how far ahead
/// [`Lookahead::ahead`] names events.
pub const LOOKAHEAD: usize = 12;
/// Most entries the list holds; a refill that would exceed it sends the latest back.
const MOST: usize = 2 * LOOKAHEAD;

#[derive(Default)]
pub struct Lookahead {
    front: VecDeque<Entry>,
}

impl Lookahead {
    /// When the next event of `queue` is due; the list is refilled first, so it holds the
    /// earliest pending events.
    #[inline]
    pub fn peek_time(&mut self, queue: &mut EventQueue) -> Option<Time> {
        self.refill(queue);
        self.front.front().map(|e| time_of(e.key))
    }

    /// The next event of `queue`, removed (after [`Self::peek_time`], the refill only
    /// compares two keys).
    #[inline]
    pub fn pop(&mut self, queue: &mut EventQueue) -> Option<(Time, Event)> {
        self.refill(queue);
        let next = self.front.pop_front()?;
        queue.processed += 1;
        Some((time_of(next.key), next.event))
    }

    /// The event `distance` places after the next one (0 = the next) as far as the queue knows
    /// now, if the list reaches that far; events scheduled meanwhile may come between.
    #[inline]
    pub fn ahead(&self, distance: usize) -> Option<&Event> {
        self.front.get(distance).map(|e| &e.event)
    }

    /// How many events the list holds.
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.front.len()
    }

    /// Returns every entry to `queue`, which then holds all pending events again.
    pub fn put_back(&mut self, queue: &mut EventQueue) {
        for entry in self.front.drain(..) {
            queue.restore(entry);
        }
    }

    /// Moves the queue's earliest entries into the list until it holds [`LOOKAHEAD`] and every
    /// entry left in the queue is later than the list's last. The list's entries are all
    /// earlier than the calendar's horizon: before the queue gives an entry at or after it, the
    /// calendar's next bucket is handed over (sorted, beside the heap).
    fn refill(&mut self, queue: &mut EventQueue) {
        queue.evict_if_grown();
        loop {
            let top = queue.first_key();
            let full = self.front.len() >= LOOKAHEAD;
            if full && top.is_none_or(|top| self.front.back().is_some_and(|l| l.key < top)) {
                break;
            }
            if top.is_none_or(|top| time_of(top) >= queue.horizon) {
                if queue.release_next() {
                    continue;
                }
                if let Some(top) = top {
                    queue.move_horizon_past(time_of(top));
                }
            }
            let Some(entry) = queue.take_first() else {
                break;
            };
            self.insert(entry, queue);
        }
    }

    fn insert(&mut self, entry: Entry, queue: &mut EventQueue) {
        if self.front.back().is_none_or(|last| last.key < entry.key) {
            self.front.push_back(entry);
            return;
        }
        let at = self.front.partition_point(|e| e.key < entry.key);
        self.front.insert(at, entry);
        if self.front.len() > MOST {
            let latest = self.front.pop_back().expect("a full list");
            queue.restore(latest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn agent_of(event: Event) -> u64 {
        match event {
            Event::AgentStart { agent } => u64::from(agent),
            _ => unreachable!("the tests schedule agent starts only"),
        }
    }

    fn pop_until(look: &mut Lookahead, q: &mut EventQueue, until: Time) -> Option<(Time, Event)> {
        if look.peek_time(q)? > until {
            return None;
        }
        look.pop(q)
    }

    #[test]
    fn ahead_names_the_events_to_come_without_removing_them() {
        let mut q = EventQueue::default();
        let mut look = Lookahead::default();
        assert_eq!(look.ahead(0), None);
        let pending = 500u32;
        for agent in 0..pending {
            q.schedule(
                u64::from(agent * 7919 % pending) + 10,
                Event::AgentStart { agent },
            );
        }
        pop_until(&mut look, &mut q, u64::MAX);
        q.schedule(5, Event::AgentStart { agent: pending });
        look.refill(&mut q);
        let named: Vec<Event> = (0..LOOKAHEAD)
            .filter_map(|d| look.ahead(d).copied())
            .collect();
        assert_eq!(named.len(), LOOKAHEAD);
        assert_eq!(named[0], Event::AgentStart { agent: pending });
        let popped: Vec<Event> = (0..LOOKAHEAD)
            .map(|_| pop_until(&mut look, &mut q, u64::MAX).unwrap().1)
            .collect();
        assert_eq!(named, popped);
    }

    #[test]
    fn pops_stop_at_the_horizon_and_put_back_restores_the_queue() {
        let mut q = EventQueue::default();
        let mut look = Lookahead::default();
        for agent in 0..100u32 {
            q.schedule(u64::from(agent), Event::AgentStart { agent });
        }
        let due: Vec<_> = std::iter::from_fn(|| pop_until(&mut look, &mut q, 49)).collect();
        assert_eq!(due.len(), 50);
        assert_eq!(q.processed(), 50);
        look.put_back(&mut q);
        assert_eq!(q.len(), 50);
        assert_eq!(q.pop(), Some((50, Event::AgentStart { agent: 50 })));
    }

    /// Events scheduled between pops, many earlier than the list's last entry, interleaved
    /// with pops and with the list put back now and then, come out exactly as from an
    /// ordered set of (time, sequence).
    #[test]
    fn interleaved_scheduling_keeps_the_order_of_an_ordered_set() {
        let mut q = EventQueue::default();
        let mut look = Lookahead::default();
        let mut reference = BTreeSet::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        let mut schedule = |q: &mut EventQueue, reference: &mut BTreeSet<_>, time: u64| {
            q.schedule(time, Event::AgentStart { agent: seq as u32 });
            reference.insert((time, seq));
            seq += 1;
        };
        for i in 0..3000u64 {
            schedule(&mut q, &mut reference, 40 + i * 104_729 % 5000);
        }
        for step in 0..20_000u64 {
            for k in 0..(step % 3) {
                schedule(
                    &mut q,
                    &mut reference,
                    now + (step * 7919 + k * 104_729) % 50,
                );
            }
            if step % 2 == 0 {
                let got = pop_until(&mut look, &mut q, u64::MAX).map(|(t, e)| (t, agent_of(e)));
                assert_eq!(got, reference.pop_first());
                now = got.map_or(now, |(t, _)| t);
            }
            if step % 997 == 0 {
                look.put_back(&mut q);
            }
            assert_eq!(q.len() + look.front.len(), reference.len());
        }
    }

    /// What a test does to the queue: schedule an event `delay` after the last popped time,
    /// pop the next one, put the lookahead back into the heap (as a paused run does), or
    /// turn the calendar on or off.
    #[derive(Clone, Debug)]
    enum Step {
        Schedule(u64),
        Pop,
        PutBack,
        Calendar(bool),
    }

    /// A calendar bucket spans some 8.6 ms (2^33 ps) and its ring some 70 s (2^46 ps): delays
    /// of picoseconds, around a bucket and beyond the ring.
    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => (0u64..60).prop_map(Step::Schedule),
            1 => (0u64..100_000).prop_map(Step::Schedule),
            2 => (0u64..1 << 35).prop_map(Step::Schedule),
            1 => (0u64..1 << 48).prop_map(Step::Schedule),
            5 => Just(Step::Pop),
            1 => Just(Step::PutBack),
            1 => proptest::bool::weighted(0.8).prop_map(Step::Calendar),
        ]
    }

    proptest! {
        /// Any interleaving of schedules (many at one instant, some far ahead), pops,
        /// put-backs and calendar changes gives the order of an ordered set of (time, sequence).
        #[test]
        fn any_interleaving_keeps_the_order_of_an_ordered_set(
            calendar in any::<bool>(),
            steps in proptest::collection::vec(step(), 1..600),
        ) {
            let mut q = EventQueue::default();
            q.use_calendar(calendar);
            let mut look = Lookahead::default();
            let mut reference = BTreeSet::new();
            let (mut seq, mut now) = (0u64, 0u64);
            for step in steps {
                match step {
                    Step::Schedule(delay) => {
                        q.schedule(now + delay, Event::AgentStart { agent: seq as u32 });
                        reference.insert((now + delay, seq));
                        seq += 1;
                    }
                    Step::Pop => {
                        let got = pop_until(&mut look, &mut q, u64::MAX)
                            .map(|(t, e)| (t, agent_of(e)));
                        prop_assert_eq!(got, reference.pop_first());
                        now = got.map_or(now, |(t, _)| t);
                    }
                    Step::PutBack => look.put_back(&mut q),
                    Step::Calendar(on) => {
                        look.put_back(&mut q);
                        q.use_calendar(on);
                    }
                }
                prop_assert_eq!(q.len() + look.front.len(), reference.len());
            }
        }
    }
}
