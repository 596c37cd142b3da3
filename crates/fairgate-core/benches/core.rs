//! Microbenchmarks of the engine's hot paths: the event queue (small, and with 100,000
//! timers pending, with and without its calendar) and a FIFO discipline's enqueue plus
//! dequeue per packet.

use criterion::{criterion_group, criterion_main, Criterion};
use fairgate_core::engine::events::Lookahead;
use fairgate_core::engine::{Event, EventQueue};
use fairgate_core::qdisc::fifo::{Fifo, FifoConfig};
use fairgate_core::qdisc::testing::Harness;
use fairgate_core::qdisc::Limit;
use fairgate_core::qdisc::Qdisc;
use std::hint::black_box;

fn event_queue(c: &mut Criterion) {
    let mut q = EventQueue::default();
    for i in 0..1000u64 {
        q.schedule(i * 7919 % 1000, Event::Sample);
    }
    let mut t = 1000u64;
    c.bench_function("event queue push+pop (1000 pending)", |b| {
        b.iter(|| {
            t += 1;
            q.schedule(t + (t * 7919) % 1000, Event::TxDone { port: 1 });
            black_box(q.pop())
        })
    });
}

/// The event queue of a simulation with 100,000 TCP flows, read through a lookahead as its
/// run loop does: each step pops the next event and schedules one more, alternately a retransmission timer 1 to 64 s ahead and a packet's
/// arrival 0.1 to 20 ms ahead.
fn event_queue_with_many_timers(c: &mut Criterion) {
    const PENDING: u64 = 100_000;
    const MS: u64 = 1_000_000_000;
    for calendar in [false, true] {
        let mut q = EventQueue::default();
        q.use_calendar(calendar);
        let mut look = Lookahead::default();
        let mut draw = 0x9e37_79b9_7f4a_7c15u64;
        let mut next_draw = move || {
            draw ^= draw << 13;
            draw ^= draw >> 7;
            draw ^= draw << 17;
            draw
        };
        for agent in 0..PENDING as u32 {
            let at = 1000 * MS + next_draw() % (63_000 * MS);
            q.schedule(at, Event::AgentTimer { agent, token: 0 });
        }
        let mut step = 0u64;
        let name = if calendar { "calendar" } else { "heap only" };
        c.bench_function(
            &format!("event queue pop+schedule, 100,000 timers ({name})"),
            |b| {
                b.iter(|| {
                    let (now, event) = look.pop(&mut q).expect("a pending event");
                    step += 1;
                    let delay = if step % 2 == 0 {
                        1000 * MS + next_draw() % (63_000 * MS)
                    } else {
                        MS / 10 + next_draw() % (20 * MS)
                    };
                    q.schedule(now + delay, event);
                    black_box(now)
                })
            },
        );
    }
}

fn fifo(c: &mut Criterion) {
    let mut h = Harness::new();
    let mut q = Fifo::new(
        FifoConfig {
            limit: Limit::packets(1000),
        },
        false,
    );
    let packets: Vec<_> = (0..100).map(|i| h.packet(i, 1000)).collect();
    for &p in &packets[..50] {
        h.enqueue(&mut q, p);
    }
    let mut next = 50;
    c.bench_function("fifo enqueue+dequeue per packet", |b| {
        b.iter(|| {
            h.enqueue(&mut q, packets[next % 100]);
            next += 1;
            black_box(h.dequeue(&mut q))
        })
    });
    black_box(q.len_packets());
}

criterion_group!(benches, event_queue, event_queue_with_many_timers, fifo);
criterion_main!(benches);
