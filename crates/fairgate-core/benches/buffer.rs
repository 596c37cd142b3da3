//! Per-packet cost of SFG, the buffer managers for per-flow schedulers, and the [Goyal98] frame
//! disciplines. Each iteration is one arrival (and, for queue disciplines, one departure).

use criterion::{criterion_group, criterion_main, Criterion};
use fairgate_core::config::units::Rate;
use fairgate_core::qdisc::buffer::dfba::DfbaConfig;
use fairgate_core::qdisc::buffer::drop_front::DropFromFrontConfig;
use fairgate_core::qdisc::buffer::lqd::LqdConfig;
use fairgate_core::qdisc::buffer::pfd::PfdConfig;
use fairgate_core::qdisc::buffer::quasi_pushout::QuasiPushoutConfig;
use fairgate_core::qdisc::buffer::rnd::RndConfig;
use fairgate_core::qdisc::buffer::selective_drop::SelectiveDropConfig;
use fairgate_core::qdisc::buffer::{BufferConfig, BufferManager, FlowQueues};
use fairgate_core::qdisc::filter::sfg::SfgConfig;
use fairgate_core::qdisc::testing::Harness;
use fairgate_core::qdisc::Limit;
use fairgate_core::qdisc::{Effects, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use std::collections::VecDeque;
use std::hint::black_box;
use std::time::{Duration, Instant};

fn env() -> QdiscEnv {
    QdiscEnv {
        link_rate_bps: 10_000_000,
        port: "bench".into(),
    }
}

/// Runs `iters` arrivals of `flows` cycling flows through `q`, departing one packet per
/// arrival once `backlog` packets are queued. Packet handles are recycled.
fn drive(q: &mut dyn Qdisc, iters: u64, flows: u32, backlog: usize, init: bool) -> Duration {
    let mut h = Harness::new();
    let mut free: VecDeque<u32> = (0..backlog as u32 + 64)
        .map(|i| h.packet(i % flows, 1000))
        .collect();
    if init {
        let mut ctx = h.ctx();
        q.init(&mut ctx);
    }
    let mut effects = Effects::default();
    let mut flow = 0u32;
    let start = Instant::now();
    for i in 0..iters {
        if i % 1024 == 0 {
            effects = Effects::default();
        }
        let id = free.pop_front().expect("a free handle");
        let packet = h.packets.get_mut(id);
        packet.flow = flow;
        packet.src = flow;
        flow = (flow + 7) % flows;
        let mut ctx = QdiscCtx {
            now: i * 1_000_000,
            packets: &mut h.packets,
            rng: &mut h.rng,
            link_rate_bps: 10_000_000,
            monitored: None,
            idle_since: None,
            effects: &mut effects,
        };
        let drops = ctx.effects.drops().len();
        q.enqueue(id, &mut ctx);
        if ctx.effects.drops().len() > drops {
            free.extend(ctx.effects.drops()[drops..].iter().map(|&(p, _)| p));
        }
        if q.len_packets() > backlog {
            if let Some(p) = q.dequeue(&mut ctx) {
                free.push_back(p);
            }
        }
    }
    black_box(q.len_packets());
    start.elapsed()
}

fn bench_sfg(c: &mut Criterion) {
    let mut g = c.benchmark_group("sfg");
    for (name, capacity) in [
        ("pass", Rate(10_000_000_000)),
        ("filtering", Rate(1_000_000)),
    ] {
        let config = SfgConfig {
            start_on: true,
            low_watermark: 0.0,
            capacity: Some(capacity),
            ..Default::default()
        };
        g.bench_function(format!("{name}_L3_N20_rehash"), |b| {
            b.iter_custom(|iters| {
                let mut q = config.build(&env());
                // Warm one epoch so that the bin probabilities are set.
                drive(q.as_mut(), 20_000, 1000, 10, true);
                let mut h = Harness::new();
                h.now = 2_000_000_000_000;
                h.timer(q.as_mut());
                drive(q.as_mut(), iters, 1000, 10, false)
            })
        });
    }
    g.finish();
}

fn bench_frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame_disciplines");
    let dfba = DfbaConfig {
        limit: 1000,
        low: 0.1,
        mcrs: (1..=16).map(|i| Rate(i * 100_000)).collect(),
        ..Default::default()
    };
    let sd = SelectiveDropConfig {
        limit: 1000,
        threshold: 0.1,
        ..Default::default()
    };
    let cases: [(&str, Box<dyn QdiscConfig>); 2] = [
        ("dfba_region2", Box::new(dfba)),
        ("selective_drop", Box::new(sd)),
    ];
    for (name, config) in cases {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| drive(config.build(&env()).as_mut(), iters, 16, 500, true))
        });
    }
    g.finish();
}

/// Backlogged queues of fixed, distinct lengths.
struct Queues {
    lens: Vec<usize>,
    backlogged: Vec<u32>,
    total: usize,
}

impl Queues {
    fn new(n: usize) -> Self {
        let lens: Vec<usize> = (0..n).map(|i| 1 + (i * 37) % 23).collect();
        Queues {
            total: lens.iter().sum(),
            backlogged: (0..n as u32).collect(),
            lens,
        }
    }
}

impl FlowQueues for Queues {
    fn backlogged(&self) -> &[u32] {
        &self.backlogged
    }
    fn len_packets(&self, queue: u32) -> usize {
        self.lens[queue as usize]
    }
    fn len_bytes(&self, queue: u32) -> u64 {
        self.lens[queue as usize] as u64 * 1000
    }
    fn weight(&self, _queue: u32) -> f64 {
        1.0
    }
    fn flow_of(&self, queue: u32) -> Option<u32> {
        Some(queue)
    }
    fn total_packets(&self) -> usize {
        self.total
    }
    fn total_bytes(&self) -> u64 {
        self.total as u64 * 1000
    }
}

/// One arrival under the buffer-manager protocol: early, overflow if over capacity, and the
/// change notifications for the arrival's queue and the victim's.
fn decide(m: &mut dyn BufferManager, queues: &Queues, arrival: u32, ctx: &mut QdiscCtx) -> u32 {
    let mut victim = m.early(arrival, queues, ctx).map_or(arrival, |v| v.queue);
    if m.over_capacity(queues) {
        victim = m.overflow(arrival, queues, ctx).queue;
    }
    m.on_change(victim, queues);
    m.on_change(arrival, queues);
    victim
}

fn bench_managers(c: &mut Criterion) {
    let mut g = c.benchmark_group("buffer_managers");
    for n in [16usize, 256] {
        let queues = Queues::new(n);
        let full = queues.total as u64 - 1;
        let configs: [(&str, Box<dyn BufferConfig>); 5] = [
            (
                "drop_from_front",
                Box::new(DropFromFrontConfig {
                    limit: Limit::packets(full),
                }),
            ),
            (
                "quasi_pushout_pfd",
                Box::new(QuasiPushoutConfig {
                    limit: Limit::packets(full),
                    ..Default::default()
                }),
            ),
            (
                "pfd",
                Box::new(PfdConfig {
                    limit: Limit::packets(full),
                    ..Default::default()
                }),
            ),
            (
                "lqd",
                Box::new(LqdConfig {
                    limit: Limit::packets(full),
                    ..Default::default()
                }),
            ),
            (
                "rnd",
                Box::new(RndConfig {
                    limit: Limit::packets(full),
                }),
            ),
        ];
        for (name, config) in configs {
            let mut m = config.build();
            let mut h = Harness::new();
            let mut arrival = 0u32;
            g.bench_function(format!("{name}_overflow_{n}_queues"), |b| {
                b.iter(|| {
                    arrival = (arrival + 7) % n as u32;
                    let mut ctx = h.ctx();
                    black_box(decide(m.as_mut(), &queues, arrival, &mut ctx))
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_sfg, bench_managers, bench_frames);
criterion_main!(benches);
