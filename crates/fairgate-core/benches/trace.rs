//! The passive trace gateway ([Vaidyanathan99, §2.5.2]) over the thesis's sample size: 500,000
//! packets among 2,000 hosts at 1,000 packets/s on a T1 line, flow definition f0, timeouts 0
//! and 10 s; one iteration is one pass.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fairgate_core::studies::trace_gateway::{packets_study, TraceKey, TraceParams};
use fairgate_core::traces::TracePacket;
use rand::{Rng, SeedableRng};
use std::hint::black_box;

const PACKETS: usize = 500_000;

fn trace() -> Vec<TracePacket> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
    let mut time_ns = 0u64;
    (0..PACKETS)
        .map(|_| {
            time_ns += rng.random_range(1..2_000_000);
            TracePacket {
                time_ns,
                src: rng.random_range(0..2000),
                dst: rng.random_range(0..2000),
                proto: if rng.random_bool(0.8) { 6 } else { 17 },
                sport: rng.random_range(1024..1200),
                dport: 80,
                ip_len: [40, 576, 1500][rng.random_range(0..3)],
            }
        })
        .collect()
}

fn gateway(c: &mut Criterion) {
    let packets = trace();
    let mut group = c.benchmark_group("trace_gateway");
    group.throughput(Throughput::Elements(PACKETS as u64));
    group.sample_size(10);
    for timeout_s in [0.0, 10.0] {
        let params = TraceParams {
            key: TraceKey::FiveTuple,
            timeout_s,
            ..TraceParams::default()
        };
        group.bench_with_input(
            BenchmarkId::new("f0_timeout_s", timeout_s),
            &params,
            |b, p| b.iter(|| black_box(packets_study(&packets, p.clone()).expect("valid"))),
        );
    }
    group.finish();
}

criterion_group!(benches, gateway);
criterion_main!(benches);
