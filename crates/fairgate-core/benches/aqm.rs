//! Per-packet cost of each single-queue AQM at an offered load of 1.2: one arrival per
//! iteration (and the departures and timers due before it), 64 flows in rotation, 1000-byte
//! packets on 10 Mb/s, half of them ECN-capable.

use criterion::{criterion_group, criterion_main, Criterion};
use fairgate_core::engine::rng;
use fairgate_core::net::packet::{flags, Packet, PacketArena, PacketId};
use fairgate_core::qdisc::{Effects, Qdisc, QdiscCtx, QdiscEnv, QdiscSpec};
use std::hint::black_box;

const CASES: &[(&str, &str)] = &[
    (
        "fifo",
        r#"kind = "fifo"
limit = 200"#,
    ),
    (
        "red",
        r#"kind = "red"
limit = 200
min_th = 50
max_th = 150
max_p = 0.1"#,
    ),
    (
        "red_gentle_ecn_bytes",
        r#"kind = "red"
limit = 200
min_th = 25000
max_th = 75000
mode = "bytes"
gentle = true
ecn = true"#,
    ),
    (
        "pi",
        r#"kind = "pi"
limit = 200
q_ref = 50"#,
    ),
    (
        "choke",
        r#"kind = "choke"
red = { limit = 200, min_th = 50, max_th = 150 }"#,
    ),
    (
        "choke_subregions",
        r#"kind = "choke"
draws = "subregions"
red = { limit = 200, min_th = 20, max_th = 120 }"#,
    ),
    (
        "blue",
        r#"kind = "blue"
limit = 200
threshold = 90"#,
    ),
    (
        "sfb",
        r#"kind = "sfb"
limit = 200"#,
    ),
    (
        "red_pd",
        r#"kind = "red_pd"
red = { limit = 200, min_th = 50, max_th = 150, gentle = true }"#,
    ),
    (
        "avq",
        r#"kind = "avq"
virtual_buffer = 50000"#,
    ),
    (
        "avqred",
        r#"kind = "avqred"
min_th = 20
max_th = 60
avg_packet_size = 1000"#,
    ),
    (
        "pfavqred",
        r#"kind = "pfavqred"
avqred = { min_th = 20, max_th = 60, avg_packet_size = 1000 }"#,
    ),
    (
        "sred",
        r#"kind = "sred"
limit = 200"#,
    ),
    (
        "fred",
        "kind = \"fred\"\nred = { limit = 200, min_th = 50, max_th = 150 }",
    ),
    ("random_drop", "kind = \"random_drop\"\nlimit = 100"),
    (
        "early_random_drop",
        "kind = \"early_random_drop\"\nlimit = 200\nthreshold = 50",
    ),
    ("yellow", "kind = \"yellow\"\nlimit = 200"),
    ("vrc", "kind = \"vrc\"\nlimit = 200"),
    ("vq_red", "kind = \"vq_red\"\nlimit = 200"),
    (
        "redfc",
        "kind = \"redfc\"\nred = { limit = 200, min_th = 50, max_th = 150 }",
    ),
    (
        "sred_modified_50_lookups",
        r#"kind = "sred"
variant = "modified"
lookups = 50
red = { limit = 200, min_th = 50, max_th = 150 }"#,
    ),
];

/// 1000-byte packets on 10 Mb/s take 800 us; arrivals every 667 us make an offered load of 1.2.
const SERVICE_PS: u64 = 800_000_000;
const ARRIVAL_PS: u64 = 666_666_667;

struct Driver {
    packets: PacketArena,
    rng: fairgate_core::engine::Rng,
    effects: Effects,
    now: u64,
    next_departure: u64,
    next_flow: u32,
    timer: Option<u64>,
}

impl Driver {
    fn new() -> Self {
        Driver {
            packets: PacketArena::default(),
            rng: rng::stream(1, "bench"),
            effects: Effects::default(),
            now: 0,
            next_departure: SERVICE_PS,
            next_flow: 0,
            timer: None,
        }
    }

    /// Runs `f` with a context at the current time; frees drops and records the timer.
    fn call<R>(&mut self, f: impl FnOnce(&mut QdiscCtx) -> R) -> R {
        self.effects.clear();
        let mut ctx = QdiscCtx {
            now: self.now,
            packets: &mut self.packets,
            rng: &mut self.rng,
            link_rate_bps: 10_000_000,
            monitored: None,
            idle_since: None,
            effects: &mut self.effects,
        };
        let result = f(&mut ctx);
        for &(dropped, _) in self.effects.drops() {
            self.packets.free(dropped);
        }
        if let Some(at) = self.effects.timer() {
            self.timer = Some(at);
        }
        result
    }

    /// One arrival, plus the departure (and timer) falling due before it.
    fn step(&mut self, q: &mut dyn Qdisc) {
        self.now += ARRIVAL_PS;
        if self.timer.is_some_and(|at| at <= self.now) {
            self.timer = None;
            self.call(|ctx| q.on_timer(ctx));
        }
        if self.next_departure <= self.now {
            self.next_departure += SERVICE_PS;
            let departed: Option<PacketId> = self.call(|ctx| q.dequeue(ctx));
            if let Some(p) = departed {
                self.packets.free(black_box(p));
            }
        }
        self.next_flow = (self.next_flow + 1) % 64;
        let id = self.packets.alloc(Packet {
            flow: self.next_flow,
            src: self.next_flow,
            size: 1000,
            flags: if self.next_flow % 2 == 0 {
                flags::ECT
            } else {
                0
            },
            ..Default::default()
        });
        self.call(|ctx| q.enqueue(id, ctx));
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("aqm_per_packet");
    for &(name, text) in CASES {
        let spec: QdiscSpec = toml::from_str(text).expect("bench config parses");
        let env = QdiscEnv {
            link_rate_bps: 10_000_000,
            port: "bench".into(),
        };
        let mut q = spec.build(&env);
        let mut driver = Driver::new();
        driver.call(|ctx| q.init(ctx));
        for _ in 0..10_000 {
            driver.step(q.as_mut());
        }
        group.bench_function(name, |b| b.iter(|| driver.step(q.as_mut())));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
