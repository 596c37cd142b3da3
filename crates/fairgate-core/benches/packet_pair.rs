//! Speed of the Packet-Pair sources: whole runs of 8 PP_CTH and 8 Packet-Pair flows over a
//! dumbbell, and one step of the fuzzy predictor (two fuzzy inferences with centroids).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairgate_core::scenario::{build, parse};
use fairgate_core::transport::keshav::fuzzy::{FuzzyConfig, FuzzyPredictor};
use std::hint::black_box;

fn dumbbell(source: &str) -> String {
    format!(
        r#"
name = "bench"
[simulation]
duration = "100s"
[topology]
kind = "dumbbell"
senders = 8
bottleneck = {{ rate = "800kbps", delay = "20ms", queue = {{ kind = "fifo", limit = 100 }} }}
access = {{ rate = "8Mbps", delay = "1ms" }}
[[flows]]
name = "f{{i}}"
count = 8
src = "s{{i}}"
dst = "d{{i}}"
source = {source}
"#
    )
}

fn run_scenario(c: &mut Criterion, name: &str, source: &str) {
    let scenario = parse(&dumbbell(source), &[]).expect("valid scenario");
    let events = {
        let mut sim = build(&scenario).expect("builds");
        sim.run();
        sim.events_processed()
    };
    let mut group = c.benchmark_group("packet_pair");
    group.throughput(Throughput::Elements(events));
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter(|| {
            let mut sim = build(&scenario).expect("builds");
            sim.run();
            black_box(sim.events_processed())
        })
    });
    group.finish();
}

fn whole_runs(c: &mut Criterion) {
    run_scenario(
        c,
        "dumbbell_8x_pp_cth_100s",
        "{ kind = \"pp_cth\", window = 10 }",
    );
    run_scenario(
        c,
        "dumbbell_8x_packet_pair_100s",
        "{ kind = \"packet_pair\", n_b = 2, window = 10 }",
    );
}

fn fuzzy_step(c: &mut Criterion) {
    let mut p = FuzzyPredictor::new(FuzzyConfig::default());
    let mut i = 0u32;
    c.bench_function("fuzzy_predictor_observe", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            black_box(p.observe(0.1 + 0.01 * f64::from(i % 7)))
        })
    });
}

criterion_group!(benches, whole_runs, fuzzy_step);
criterion_main!(benches);
