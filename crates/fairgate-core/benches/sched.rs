//! Enqueue plus dequeue per packet for the per-flow schedulers with 10,000 and 100,000 active
//! flows: every flow keeps two packets queued; one iteration serves the scheduler's next
//! packet and puts it back at the tail of its flow, advancing time by one 1000-byte packet at
//! 10 Mb/s.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fairgate_core::qdisc::testing::Harness;
use fairgate_core::qdisc::{Qdisc, QdiscEnv, QdiscSpec};
use std::hint::black_box;

fn scheduler(kind: &str, flows: usize) -> Box<dyn Qdisc> {
    let limit = 4 * flows;
    let text = match kind {
        "drr" => format!("kind = \"drr\"\nbuffer = {{ kind = \"droptail\", limit = {limit} }}"),
        "stochastic_fq" => {
            format!("kind = \"stochastic_fq\"\nbuckets = {flows}\nlimit = {limit}\nperturb = 0")
        }
        "fq" => format!("kind = \"fq\"\nlimit = {limit}"),
        "wfq" => format!("kind = \"wfq\"\nlimit = {limit}"),
        other => format!("kind = \"{other}\"\nbuffer = {{ kind = \"droptail\", limit = {limit} }}"),
    };
    let spec: QdiscSpec = toml::from_str(&text).expect("bench config");
    spec.build(&QdiscEnv {
        link_rate_bps: 10_000_000,
        port: "bench".into(),
    })
}

fn backlogged(kind: &str, flows: usize) -> (Harness, Box<dyn Qdisc>) {
    let mut h = Harness::new();
    let mut q = scheduler(kind, flows);
    q.init(&mut h.ctx());
    for _ in 0..2 {
        for flow in 0..flows as u32 {
            let id = h.packet(flow, 1000);
            h.enqueue(q.as_mut(), id);
        }
    }
    (h, q)
}

fn enqueue_dequeue(c: &mut Criterion) {
    let mut group = c.benchmark_group("enqueue_dequeue");
    for kind in ["drr", "stochastic_fq", "fq", "wfq", "scfq", "stfq"] {
        for flows in [10_000, 100_000] {
            let (mut h, mut q) = backlogged(kind, flows);
            group.bench_function(BenchmarkId::new(kind, flows), |b| {
                b.iter(|| {
                    let p = h.dequeue(q.as_mut()).expect("backlogged");
                    h.now += 800_000_000;
                    h.enqueue(q.as_mut(), black_box(p));
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, enqueue_dequeue);
criterion_main!(benches);
