//! Unit tests of SFG (hand-computed epochs, bins and activation).

use super::*;
use crate::engine::secs;
use crate::qdisc::fifo::{Fifo, FifoConfig};
use crate::qdisc::testing::Harness;
use crate::qdisc::Limit;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A FIFO that reports a probability set from outside and asks for a timer every `tick`.
struct FixedProbability {
    probability: Arc<AtomicU64>,
    fifo: Fifo,
    tick: Option<Time>,
    timer_calls: Arc<AtomicU64>,
}

impl FixedProbability {
    fn boxed(p: &Arc<AtomicU64>, tick: Option<Time>, calls: &Arc<AtomicU64>) -> Box<Self> {
        Box::new(FixedProbability {
            probability: p.clone(),
            fifo: Fifo::new(FifoConfig::default(), false),
            tick,
            timer_calls: calls.clone(),
        })
    }
}

impl Qdisc for FixedProbability {
    fn init(&mut self, ctx: &mut QdiscCtx) {
        if let Some(t) = self.tick {
            ctx.set_timer(ctx.now + t);
        }
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.timer_calls.fetch_add(1, Ordering::Relaxed);
        self.init(ctx);
    }
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        self.fifo.enqueue(packet, ctx)
    }
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.fifo.dequeue(ctx)
    }
    fn peek(&self) -> Option<PacketId> {
        self.fifo.peek()
    }
    fn len_packets(&self) -> usize {
        self.fifo.len_packets()
    }
    fn len_bytes(&self) -> u64 {
        self.fifo.len_bytes()
    }
    fn congestion_probability(&self) -> f64 {
        f64::from_bits(self.probability.load(Ordering::Relaxed))
    }
    fn name(&self) -> &'static str {
        "fixed_probability"
    }
}

fn config(levels: u32, bins: u32, capacity_bps: u64) -> SfgConfig {
    SfgConfig {
        levels,
        bins,
        epoch: Duration::from_secs(1.0),
        capacity: Some(Rate(capacity_bps)),
        rehash: false,
        key: FlowKey::Flow,
        start_on: true,
        // Never switches off unless a test says so.
        low_watermark: 0.0,
        cnr_weight: 0.5,
        ..Default::default()
    }
}

fn init(h: &mut Harness, q: &mut dyn Qdisc) {
    let mut ctx = h.ctx();
    q.init(&mut ctx);
}

fn fifo() -> Box<dyn Qdisc> {
    Box::new(Fifo::new(
        FifoConfig {
            limit: Limit::packets(100_000),
        },
        false,
    ))
}

/// Sends `count` packets of `flow` and drains the queue; returns how many SFG dropped.
fn offer(h: &mut Harness, q: &mut Sfg, flow: u32, size: u32, count: usize) -> usize {
    let before = h.dropped().len();
    for _ in 0..count {
        let id = h.packet(flow, size);
        h.enqueue(q, id);
    }
    while h.dequeue(q).is_some() {}
    h.dropped().len() - before
}

fn end_epoch(h: &mut Harness, q: &mut Sfg, at: f64) {
    h.now = secs(at);
    h.timer(q);
}

#[test]
fn bin_probability_caps_the_bin_at_its_share() {
    // Share 2,500 B: 10,000 B -> 0.75; 12,000 B -> 9,500/12,000; under the share -> 0.
    assert_eq!(bin_drop_probability(10_000, 2_500.0), 0.75);
    assert_eq!(bin_drop_probability(12_000, 2_500.0), 9_500.0 / 12_000.0);
    assert_eq!(bin_drop_probability(2_000, 2_500.0), 0.0);
    assert_eq!(bin_drop_probability(0, 2_500.0), 0.0);
}

#[test]
fn epoch_bytes_set_bin_probabilities_and_the_minimum_rule_protects_clean_flows() {
    // C = 80 kb/s = 10,000 B/s, d_s = 1 s, N = 4: each bin keeps 2,500 B per epoch.
    let mut h = Harness::new();
    let mut q = Sfg::new(&config(2, 4, 80_000), fifo(), 0);
    init(&mut h, &mut q);
    let a = 1u64;
    // Flow b shares a's bin at level 0 and has a bin of its own at level 1.
    let b = (2..1000u64)
        .find(|&f| {
            q.bin_of(f, 0, true) == q.bin_of(a, 0, true)
                && q.bin_of(f, 1, true) != q.bin_of(a, 1, true)
        })
        .expect("a flow with that bin pattern");
    assert_eq!(
        offer(&mut h, &mut q, a as u32, 1000, 10),
        0,
        "first epoch only measures"
    );
    assert_eq!(offer(&mut h, &mut q, b as u32, 500, 4), 0);
    let (a0, a1, b1) = (
        q.bin_of(a, 0, true),
        q.bin_of(a, 1, true),
        q.bin_of(b, 1, true),
    );
    assert_eq!(q.bytes(0, a0), 12_000);
    assert_eq!(q.bytes(1, a1), 10_000);
    assert_eq!(q.bytes(1, b1), 2_000);
    end_epoch(&mut h, &mut q, 1.0);
    assert_eq!(q.probability(0, a0), 9_500.0 / 12_000.0);
    assert_eq!(q.probability(1, a1), 0.75);
    assert_eq!(q.probability(1, b1), 0.0);
    assert_eq!(q.bytes(0, a0), 0, "counters restart every epoch");
    // b: min(0.79, 0) = 0, never dropped; a: min(0.79, 0.75) = 0.75.
    assert_eq!(offer(&mut h, &mut q, b as u32, 1000, 400), 0);
    let dropped = offer(&mut h, &mut q, a as u32, 1000, 400);
    // Binomial(400, 0.75): mean 300, sd 8.7.
    assert!((265..=335).contains(&dropped), "{dropped}");
    assert!(h.dropped().iter().all(|&(_, r)| r == DropReason::Filter));
}

#[test]
fn an_off_filter_measures_but_never_drops() {
    let mut h = Harness::new();
    let mut q = Sfg::new(
        &SfgConfig {
            start_on: false,
            ..config(1, 1, 8_000)
        },
        fifo(),
        0,
    );
    init(&mut h, &mut q);
    offer(&mut h, &mut q, 1, 1000, 4);
    end_epoch(&mut h, &mut q, 1.0);
    // 4,000 B against a 1,000 B share: 0.75, but p_n = 0 keeps SFG off.
    assert_eq!(q.probability(0, 0), 0.75);
    assert!(!q.is_on());
    assert_eq!(offer(&mut h, &mut q, 1, 1000, 100), 0);
}

#[test]
fn notification_rate_combines_own_drops_and_the_inner_probability() {
    let mut q = Sfg::new(&config(1, 1, 8_000), fifo(), 0);
    q.epoch_stats = EpochStats {
        arrivals: 100,
        filter_drops: 20,
        passed: 80,
        inner_notifications: 8,
        reported_sum: 80.0 * 0.05,
    };
    // p_d = 0.2; measured p_e = 8/80 = 0.1 beats reported 0.05; p_n = 0.2 + 0.8 * 0.1.
    q.update_switch();
    assert!((q.last_pn - 0.28).abs() < 1e-12);
    assert!((q.avg_cnr - 0.14).abs() < 1e-12);
}

#[test]
fn watermarks_switch_the_filter_with_hysteresis() {
    let p = Arc::new(AtomicU64::new(0.03f64.to_bits()));
    let calls = Arc::new(AtomicU64::new(0));
    let cfg = SfgConfig {
        start_on: false,
        low_watermark: 0.01,
        notification: Notification::Reported,
        ..config(1, 20, 8_000_000)
    };
    let mut h = Harness::new();
    let mut q = Sfg::new(&cfg, FixedProbability::boxed(&p, None, &calls), 0);
    init(&mut h, &mut q);
    // avgCNR with w = 0.5 and p_n = p_e: 0.015, 0.0225 (> m_h: on), then p_e = 0:
    // 0.01125 (>= m_l: still on), 0.005625 (< m_l: off).
    let mut seen = Vec::new();
    for (epoch, p_e) in [0.03, 0.03, 0.0, 0.0].into_iter().enumerate() {
        p.store(f64::to_bits(p_e), Ordering::Relaxed);
        offer(&mut h, &mut q, 1, 100, 1);
        end_epoch(&mut h, &mut q, epoch as f64 + 1.0);
        seen.push((q.avg_cnr(), q.is_on()));
    }
    let expected = [
        (0.015, false),
        (0.0225, true),
        (0.01125, true),
        (0.005625, false),
    ];
    for ((avg, on), (want_avg, want_on)) in seen.into_iter().zip(expected) {
        assert!((avg - want_avg).abs() < 1e-12, "{avg} vs {want_avg}");
        assert_eq!(on, want_on);
    }
}

#[test]
fn rehash_collects_with_the_next_hash_and_promotes_it() {
    let mut h = Harness::new();
    let mut q = Sfg::new(
        &SfgConfig {
            rehash: true,
            ..config(3, 20, 8_000)
        },
        fifo(),
        0,
    );
    init(&mut h, &mut q);
    let next: Vec<usize> = (0..3).map(|l| q.bin_of(7, l, true)).collect();
    offer(&mut h, &mut q, 7, 100, 1);
    for (l, &bin) in next.iter().enumerate() {
        assert_eq!(q.bytes(l, bin), 100);
    }
    end_epoch(&mut h, &mut q, 1.0);
    let lookup: Vec<usize> = (0..3).map(|l| q.bin_of(7, l, false)).collect();
    assert_eq!(lookup, next);
    let moved = (0..100u64)
        .filter(|&f| (0..3).any(|l| q.bin_of(f, l, true) != q.bin_of(f, l, false)))
        .count();
    assert!(moved > 90, "a fresh hash is drawn for collection: {moved}");
}

#[test]
fn inner_timers_are_multiplexed_with_the_epoch_timer() {
    let p = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(AtomicU64::new(0));
    let mut h = Harness::new();
    let inner = FixedProbability::boxed(&p, Some(secs(0.3)), &calls);
    let mut q = Sfg::new(&config(1, 2, 8_000), inner, 0);
    init(&mut h, &mut q);
    let mut fired = Vec::new();
    while let Some(at) = h.effects.timer.take() {
        if at > secs(2.0) {
            break;
        }
        fired.push(at);
        h.now = at;
        h.timer(&mut q);
    }
    // Inner every 0.3 s up to 1.8 s, the epoch at 1 s and 2 s.
    let want: Vec<Time> = [0.3, 0.6, 0.9, 1.0, 1.2, 1.5, 1.8, 2.0]
        .iter()
        .map(|&s| secs(s))
        .collect();
    assert_eq!(fired, want);
    assert_eq!(calls.load(Ordering::Relaxed), 6);
}

#[test]
fn bad_parameters_name_the_field() {
    let cases = [
        (
            SfgConfig {
                bins: 1 << 30,
                ..Default::default()
            },
            "q.bins",
        ),
        (
            SfgConfig {
                epoch: Duration(0),
                ..Default::default()
            },
            "q.epoch",
        ),
        (
            SfgConfig {
                levels: 0,
                ..Default::default()
            },
            "q.levels",
        ),
        (
            SfgConfig {
                bins: 0,
                ..Default::default()
            },
            "q.bins",
        ),
        (
            SfgConfig {
                low_watermark: 0.05,
                ..Default::default()
            },
            "q.high_watermark",
        ),
        (
            SfgConfig {
                cnr_weight: 0.0,
                ..Default::default()
            },
            "q.cnr_weight",
        ),
    ];
    for (cfg, path) in cases {
        let e = cfg.validate("q").expect_err(path);
        assert_eq!(e.path, path);
    }
}
