//! Microbenchmarks of the engine's hot paths: the event queue and a FIFO discipline's
//! enqueue plus dequeue per packet.

use criterion::{criterion_group, criterion_main, Criterion};
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

criterion_group!(benches, event_queue, fifo);
criterion_main!(benches);
