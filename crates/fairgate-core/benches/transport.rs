//! Speed of the transport layer: whole runs of TCP and Generic flows over a dumbbell, and the
//! SACK scoreboard's pipe computation on a large window.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use fairgate_core::scenario::{build, parse};
use fairgate_core::transport::tcp::scoreboard::Scoreboard;
use std::hint::black_box;

fn dumbbell(source: &str) -> String {
    format!(
        r#"
name = "bench"
[simulation]
duration = "10s"
[topology]
kind = "dumbbell"
senders = 8
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {{ kind = "fifo", limit = 50 }} }}
access = {{ rate = "100Mbps", delay = "1ms" }}
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
    let mut group = c.benchmark_group("transport");
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
    for cc in ["tahoe", "reno", "newreno", "sack"] {
        let source =
            format!("{{ kind = \"tcp\", cc = \"{cc}\", rwnd = 200000, window_scale = 2 }}");
        run_scenario(c, &format!("dumbbell_8x_{cc}_10s"), &source);
    }
    run_scenario(
        c,
        "dumbbell_8x_generic_10s",
        "{ kind = \"generic\", window = 20 }",
    );
}

fn scoreboard_pipe(c: &mut Criterion) {
    // 1000 segments outstanding, every other one SACKed.
    let mut sb = Scoreboard::default();
    let blocks: Vec<(u64, u64)> = (0..500)
        .map(|i| (i * 2000 + 1000, i * 2000 + 2000))
        .collect();
    for chunk in blocks.chunks(4) {
        sb.update(0, chunk, 1000);
    }
    c.bench_function("scoreboard_pipe_1000_segments", |b| {
        b.iter(|| black_box(sb.pipe(0, 1_000_000, 10_000, 1000, 3)))
    });
}

criterion_group!(benches, whole_runs, scoreboard_pipe);
criterion_main!(benches);
