//! The calendar under the plain heap's `pop`, `peek_time` and `len`: the order of an ordered
//! set of (time, sequence), with entries in the ring, beyond it and at the end of time.

use super::super::{Event, EventQueue};
use super::{BUCKET_BITS, RING_BITS};
use proptest::prelude::*;
use std::collections::BTreeSet;

const BUCKET: u64 = 1 << BUCKET_BITS;
const RING_SPAN: u64 = 1 << (BUCKET_BITS + RING_BITS);

fn schedule(q: &mut EventQueue, reference: &mut BTreeSet<(u64, u32)>, time: u64) {
    let agent = reference.len() as u32 + q.processed() as u32;
    q.schedule(time, Event::AgentStart { agent });
    reference.insert((time, agent));
}

fn pop(q: &mut EventQueue) -> Option<(u64, u32)> {
    q.pop().map(|(t, e)| match e {
        Event::AgentStart { agent } => (t, agent),
        _ => unreachable!("the tests schedule agent starts only"),
    })
}

/// Pops everything, checking `peek_time` and `len` before each pop.
fn drain_in_order(q: &mut EventQueue, reference: &mut BTreeSet<(u64, u32)>) {
    while let Some(expected) = reference.pop_first() {
        assert_eq!(q.peek_time(), Some(expected.0));
        assert_eq!(q.len(), reference.len() + 1);
        assert_eq!(pop(q), Some(expected));
    }
    assert_eq!((q.peek_time(), q.len(), pop(q)), (None, 0, None));
}

#[test]
fn entries_in_the_ring_beyond_it_and_at_the_end_of_time_come_out_in_order() {
    let mut q = EventQueue::default();
    q.use_calendar(true);
    let mut reference = BTreeSet::new();
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
        schedule(&mut q, &mut reference, time);
    }
    drain_in_order(&mut q, &mut reference);
}

#[test]
fn an_event_at_the_end_of_time_scheduled_after_the_last_bucket_is_popped() {
    let mut q = EventQueue::default();
    q.use_calendar(true);
    let mut reference = BTreeSet::new();
    schedule(&mut q, &mut reference, u64::MAX);
    assert_eq!(pop(&mut q), reference.pop_first());
    schedule(&mut q, &mut reference, u64::MAX);
    schedule(&mut q, &mut reference, u64::MAX);
    drain_in_order(&mut q, &mut reference);
}

#[test]
fn turning_the_calendar_on_and_off_keeps_every_event_and_the_order() {
    let mut q = EventQueue::default();
    let mut reference = BTreeSet::new();
    for i in 0..2_000u64 {
        schedule(
            &mut q,
            &mut reference,
            1_000 + i * 7_919_000_003 % (2 * RING_SPAN),
        );
    }
    for round in 0..40 {
        q.use_calendar(round % 3 != 0);
        assert_eq!(q.len(), reference.len());
        for _ in 0..50 {
            let now = q.peek_time().unwrap();
            assert_eq!(pop(&mut q), reference.pop_first());
            schedule(&mut q, &mut reference, now + round * BUCKET / 3);
        }
    }
    q.use_calendar(true);
    drain_in_order(&mut q, &mut reference);
}

proptest! {
    /// Schedules from picoseconds to several rings ahead, interleaved with pops, give the
    /// order of an ordered set; `peek_time` and `len` always agree with it.
    #[test]
    fn the_plain_heap_with_a_calendar_keeps_the_order_of_an_ordered_set(
        steps in proptest::collection::vec(
            prop_oneof![
                3 => (0u64..1_000).prop_map(Some),
                2 => (0u64..4 * BUCKET).prop_map(Some),
                1 => (0u64..3 * RING_SPAN).prop_map(Some),
                4 => Just(None),
            ],
            1..500,
        ),
    ) {
        let mut q = EventQueue::default();
        q.use_calendar(true);
        let mut reference = BTreeSet::new();
        let mut now = 0;
        for step in steps {
            match step {
                Some(delay) => schedule(&mut q, &mut reference, now + delay),
                None => {
                    prop_assert_eq!(q.peek_time(), reference.first().map(|&(t, _)| t));
                    let got = pop(&mut q);
                    prop_assert_eq!(got, reference.pop_first());
                    now = got.map_or(now, |(t, _)| t);
                }
            }
            prop_assert_eq!(q.len(), reference.len());
        }
        drain_in_order(&mut q, &mut reference);
    }
}
