//! The calendar as a run loop reads it, through a lookahead: the order of an ordered set of
//! (time, sequence), with entries in the ring, beyond it and at the end of time.

use super::super::{Event, EventQueue, Lookahead};
use super::{BUCKET_BITS, RING_BITS};
use proptest::prelude::*;
use std::collections::BTreeSet;

const BUCKET: u64 = 1 << BUCKET_BITS;
const RING_SPAN: u64 = 1 << (BUCKET_BITS + RING_BITS);

/// A queue with its calendar, read through a lookahead, beside the ordered set it must match.
struct Checked {
    queue: EventQueue,
    look: Lookahead,
    reference: BTreeSet<(u64, u32)>,
    scheduled: u32,
}

impl Checked {
    fn new() -> Self {
        let mut queue = EventQueue::default();
        queue.use_calendar(true);
        Checked {
            queue,
            look: Lookahead::default(),
            reference: BTreeSet::new(),
            scheduled: 0,
        }
    }

    fn schedule(&mut self, time: u64) {
        let agent = self.scheduled;
        self.scheduled += 1;
        self.queue.schedule(time, Event::AgentStart { agent });
        self.reference.insert((time, agent));
    }

    /// Pops the next event, checking it, the time peeked before and the count of pending ones.
    fn pop(&mut self) -> Option<(u64, u32)> {
        let expected = self.reference.pop_first();
        assert_eq!(
            self.look.peek_time(&mut self.queue),
            expected.map(|(t, _)| t)
        );
        let got = self.look.pop(&mut self.queue).map(|(t, e)| match e {
            Event::AgentStart { agent } => (t, agent),
            _ => unreachable!("the tests schedule agent starts only"),
        });
        assert_eq!(got, expected);
        assert_eq!(self.queue.len() + self.look.held(), self.reference.len());
        got
    }

    fn drain(&mut self) {
        while self.pop().is_some() {}
    }
}

#[test]
fn entries_in_the_ring_beyond_it_and_at_the_end_of_time_come_out_in_order() {
    let mut checked = Checked::new();
    for time in [
        5,
        BUCKET - 1,
        BUCKET,
        3 * RING_SPAN + 7,
        RING_SPAN,
        RING_SPAN - 1,
        u64::MAX,
        u64::MAX - 1,
        3 * RING_SPAN + 7,
        5,
    ] {
        checked.schedule(time);
    }
    checked.drain();
}

#[test]
fn events_at_the_end_of_time_scheduled_after_the_last_bucket_come_out_in_order() {
    let mut checked = Checked::new();
    checked.schedule(u64::MAX - BUCKET);
    checked.schedule(u64::MAX);
    checked.pop();
    checked.pop();
    checked.schedule(u64::MAX);
    checked.schedule(u64::MAX);
    checked.drain();
}

#[test]
fn turning_the_calendar_on_and_off_between_runs_keeps_every_event_and_the_order() {
    let mut checked = Checked::new();
    for i in 0..3_000u64 {
        checked.schedule(1_000 + i * 7_919_000_003 % (2 * RING_SPAN));
    }
    for round in 0..40u64 {
        checked.look.put_back(&mut checked.queue);
        checked.queue.use_calendar(round % 3 != 0);
        for _ in 0..50 {
            let (now, _) = checked.pop().expect("pending events");
            checked.schedule(now + round * BUCKET / 3);
        }
    }
    checked.drain();
}

proptest! {
    /// Schedules from picoseconds to several rings ahead (enough of them for the heap to file
    /// its far entries in the calendar), interleaved with pops and pauses, give the order of
    /// an ordered set.
    #[test]
    fn the_calendar_keeps_the_order_of_an_ordered_set(
        initial in proptest::collection::vec(0u64..3 * RING_SPAN, 0..3000),
        steps in proptest::collection::vec(
            prop_oneof![
                3 => (0u64..1_000).prop_map(Some),
                2 => (0u64..4 * BUCKET).prop_map(Some),
                1 => (0u64..3 * RING_SPAN).prop_map(Some),
                4 => Just(None),
            ],
            1..500,
        ),
        pause_every in 1usize..200,
    ) {
        let mut checked = Checked::new();
        for time in initial {
            checked.schedule(time);
        }
        let mut now = 0;
        for (i, step) in steps.into_iter().enumerate() {
            match step {
                Some(delay) => checked.schedule(now + delay),
                None => now = checked.pop().map_or(now, |(t, _)| t),
            }
            if i % pause_every == 0 {
                checked.look.put_back(&mut checked.queue);
            }
        }
        checked.drain();
    }
}
