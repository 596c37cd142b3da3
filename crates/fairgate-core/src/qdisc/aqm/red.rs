//! RED: Random Early Detection (Floyd and Jacobson, "Random Early Detection Gateways for
//! Congestion Avoidance", IEEE/ACM ToN 1(4), 1993), with gentle RED (Floyd 2000), byte mode
//! (the 1993 paper, section 4) and adaptive RED (Floyd, Gummadi, Shenker, "Adaptive RED", 2001).
//!
//! Sources: [Byun07, §2.1] (the pseudo-code with count spacing and idle decay, the RED 1-4
//! settings); [Chung06, §3] (gentle, min 50, max 300, max_p 0.15, w_q 0.002);
//! [Vaidyanathan99, §3.2] (drop the arrival, typical w_q 0.002, max_p 1/50, min_th 5, max_th 15).
//!
//! Decisions where the sources are silent:
//! - Defaults are the 1993 paper's typical values (w_q 0.002, max_p 0.02, min_th 5, max_th 15)
//!   with ns-2's buffer of 50 packets and mean packet size of 500 bytes.
//! - The idle-time function is f(t) = t / s with s the transmission time of a `mean_packet_size`
//!   packet on the link (the 1993 paper's "typical transmission time"); m is fractional, so the
//!   decay (1 - w_q)^m is continuous. An idle period is decayed only once, even when the arrival
//!   that ends it is dropped.
//! - "Idle" means the watched link has nothing to send (`idle_since`); an empty queue with a
//!   packet in transmission is averaged as q = 0.
//! - Count spacing follows the text: count starts at -1, is incremented in the early region,
//!   p_a = p_b / (1 - count p_b), clamped to 1 when count p_b >= 1; `count_spacing = false`
//!   uses p_a = p_b (geometric spacing).
//! - Gentle: p_b rises from max_p at max_th to 1 at 2 max_th, with count spacing; beyond, every
//!   arrival is notified (Forced).
//! - Byte mode: the average, the thresholds and the limit checks use bytes and
//!   p_b is scaled by size / mean_packet_size before spacing (1993 paper, section 4).
//! - With `ecn = true` early notifications mark ECT packets; forced ones drop unless
//!   `mark_forced = true` (both readings occur: the text's pseudo-code "marks", ns-2 drops).
//! - Adaptive RED: every `adapt_interval` (0.5 s) max_p += min(0.01, max_p / 4) when the
//!   average is above min_th + 0.6 (max_th - min_th) and max_p <= 0.5; max_p *= 0.9 when below
//!   min_th + 0.4 (max_th - min_th) and max_p >= 0.01. w_q stays as configured.
//! - The reported congestion probability is the p_b of the current average (before spacing).

use super::{check_open_unit, later, notify, uniform, watched, Buffer, Watched};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::{tx_time, Time};
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// What RED's queue length and thresholds count.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueUnit {
    #[default]
    Packets,
    Bytes,
}

/// RED's parameters; also embedded by the disciplines built on RED (CHOKe, SRED, RED-PD).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// Physical buffer in packets.
    pub limit: u64,
    /// Optional physical buffer in bytes.
    pub limit_bytes: Option<u64>,
    /// Minimum threshold (packets, or bytes in byte mode).
    pub min_th: f64,
    /// Maximum threshold (packets, or bytes in byte mode).
    pub max_th: f64,
    /// Maximum early-notification probability (p_b at max_th).
    pub max_p: f64,
    /// Weight of the exponential average.
    pub w_q: f64,
    pub gentle: bool,
    pub mode: QueueUnit,
    /// Bytes of a typical packet: idle decay and byte-mode scaling.
    pub mean_packet_size: u32,
    /// Count-based spacing of notifications (p_a = p_b / (1 - count p_b)).
    pub count_spacing: bool,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// With `ecn`, also mark (not drop) in the forced region.
    pub mark_forced: bool,
    /// Adaptive RED: adjust max_p every `adapt_interval`.
    pub adaptive: bool,
    pub adapt_interval: Duration,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit: 50,
            limit_bytes: None,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.02,
            w_q: 0.002,
            gentle: false,
            mode: QueueUnit::Packets,
            mean_packet_size: 500,
            count_spacing: true,
            ecn: false,
            mark_forced: false,
            adaptive: false,
            adapt_interval: Duration::from_secs(0.5),
        }
    }
}

impl RedConfig {
    pub fn buffer(&self) -> Buffer {
        Buffer {
            limit: self.limit,
            limit_bytes: self.limit_bytes,
        }
    }

    pub fn check(&self, path: &str) -> Result<(), ScenarioError> {
        self.buffer().validate(path)?;
        check::non_negative(path, "min_th", self.min_th)?;
        check::positive(path, "max_th", self.max_th)?;
        check::ordered(path, "min_th", self.min_th, "max_th", self.max_th)?;
        check::probability(path, "max_p", self.max_p)?;
        check_open_unit(path, "w_q", self.w_q)?;
        check::positive_int(path, "mean_packet_size", self.mean_packet_size as u64)?;
        if self.adaptive {
            check::positive(path, "adapt_interval", self.adapt_interval.secs())?;
        }
        Ok(())
    }
}

impl RedConfig {
    /// For disciplines whose own timer leaves no room for adaptive RED's.
    pub fn reject_adaptive(&self, path: &str) -> Result<(), ScenarioError> {
        if self.adaptive {
            return Err(ScenarioError::new(
                format!("{path}.adaptive"),
                "got true, expected false: this discipline does not run adaptive RED",
            ));
        }
        Ok(())
    }
}

impl QdiscConfig for RedConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.check(path)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Red::new(*self, env.link_rate_bps))
    }
}

/// RED's verdict on one arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Early,
    Forced,
}

impl Verdict {
    pub fn reason(self) -> Option<DropReason> {
        match self {
            Verdict::Accept => None,
            Verdict::Early => Some(DropReason::Early),
            Verdict::Forced => Some(DropReason::Forced),
        }
    }
}

/// RED's average, probability and count: the part other disciplines reuse.
#[derive(Clone, Debug)]
pub struct RedCore {
    cfg: RedConfig,
    /// Transmission time of a typical packet (the idle-decay unit).
    typical_tx: Time,
    pub avg: f64,
    pub count: i64,
    pub max_p: f64,
    /// p_b of the last arrival (before spacing).
    pub p_b: f64,
    /// p_a of the last arrival in the early region.
    pub p_a: f64,
    /// End of the idle period already decayed.
    decayed_until: Time,
    next_adapt: Time,
}

impl RedCore {
    pub fn new(cfg: RedConfig, link_rate_bps: u64) -> Self {
        RedCore {
            typical_tx: tx_time(cfg.mean_packet_size, link_rate_bps.max(1)).max(1),
            avg: 0.0,
            count: -1,
            max_p: cfg.max_p,
            p_b: 0.0,
            p_a: 0.0,
            decayed_until: 0,
            next_adapt: cfg.adapt_interval.0,
            cfg,
        }
    }

    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// The watched length in RED's unit.
    pub fn length_of(&self, w: &Watched) -> f64 {
        match self.cfg.mode {
            QueueUnit::Packets => w.packets as f64,
            QueueUnit::Bytes => w.bytes as f64,
        }
    }

    /// Updates the average at an arrival that sees the watched queue `w`.
    pub fn update_average(&mut self, w: &Watched, now: Time) {
        let idle_start = w.idle_since.map(|t| t.max(self.decayed_until));
        match idle_start {
            Some(start) if w.packets == 0 => {
                let m = (now - start.min(now)) as f64 / self.typical_tx as f64;
                self.avg *= (1.0 - self.cfg.w_q).powf(m);
                self.decayed_until = now;
            }
            _ => {
                let q = self.length_of(w);
                self.avg = (1.0 - self.cfg.w_q) * self.avg + self.cfg.w_q * q;
            }
        }
    }

    /// p_b for the current average (gentle included), before size scaling and spacing.
    pub fn base_probability(&self) -> f64 {
        let (min, max) = (self.cfg.min_th, self.cfg.max_th);
        if self.avg < min {
            0.0
        } else if self.avg < max {
            self.max_p * (self.avg - min) / (max - min)
        } else if self.cfg.gentle && self.avg < 2.0 * max {
            self.max_p + (1.0 - self.max_p) * (self.avg - max) / max
        } else {
            1.0
        }
    }

    fn in_forced_region(&self) -> bool {
        let top = if self.cfg.gentle {
            2.0 * self.cfg.max_th
        } else {
            self.cfg.max_th
        };
        self.avg >= top
    }

    /// p_a from p_b and count (count already incremented).
    fn spaced(&self, p_b: f64) -> f64 {
        if !self.cfg.count_spacing {
            return p_b;
        }
        let denominator = 1.0 - self.count as f64 * p_b;
        if denominator <= p_b {
            1.0
        } else {
            (p_b / denominator).min(1.0)
        }
    }

    /// RED's decision for an arrival of `size` bytes, given a uniform draw `u` in [0, 1).
    pub fn decide(&mut self, size: u32, u: f64) -> Verdict {
        self.decide_scaled(size, u, 1.0)
    }

    /// As `decide`, with the early probability p_a multiplied by `factor` (capped at 1), for
    /// disciplines that weight RED's probability (SRED's hit factor).
    pub fn decide_scaled(&mut self, size: u32, u: f64, factor: f64) -> Verdict {
        self.p_b = self.base_probability();
        if self.avg < self.cfg.min_th {
            self.count = -1;
            return Verdict::Accept;
        }
        if self.in_forced_region() {
            self.count = 0;
            return Verdict::Forced;
        }
        self.count += 1;
        let mut p_b = self.p_b;
        if self.cfg.mode == QueueUnit::Bytes {
            p_b = (p_b * size as f64 / self.cfg.mean_packet_size as f64).min(1.0);
        }
        self.p_a = (self.spaced(p_b) * factor).min(1.0);
        if u < self.p_a {
            self.count = 0;
            return Verdict::Early;
        }
        Verdict::Accept
    }

    /// Adaptive RED's periodic max_p adjustment.
    pub fn adapt(&mut self) {
        let (min, max) = (self.cfg.min_th, self.cfg.max_th);
        let target_low = min + 0.4 * (max - min);
        let target_high = min + 0.6 * (max - min);
        if self.avg > target_high && self.max_p <= 0.5 {
            self.max_p += (self.max_p / 4.0).min(0.01);
        } else if self.avg < target_low && self.max_p >= 0.01 {
            self.max_p *= 0.9;
        }
    }

    /// Schedules the first adaptation (adaptive RED only).
    pub fn init_timer(&mut self, ctx: &mut QdiscCtx) {
        if self.cfg.adaptive {
            self.next_adapt = later(ctx.now, self.cfg.adapt_interval.0);
            ctx.set_timer(self.next_adapt);
        }
    }

    /// Runs the adaptation when its time has come and schedules the next one.
    pub fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if !self.cfg.adaptive || ctx.now < self.next_adapt {
            return;
        }
        self.adapt();
        self.next_adapt = later(ctx.now, self.cfg.adapt_interval.0);
        ctx.set_timer(self.next_adapt);
    }

    /// Whether a notification of this kind marks (true) or must drop.
    pub fn may_mark(&self, verdict: Verdict) -> bool {
        self.cfg.ecn && (verdict == Verdict::Early || self.cfg.mark_forced)
    }

    pub fn state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("avg", self.avg),
            ("p_b", self.base_probability()),
            ("max_p", self.max_p),
        ]
    }
}

/// A RED queue.
pub struct Red {
    pub(super) core: RedCore,
    buffer: Buffer,
    pub(super) queue: PacketFifo,
}

impl Red {
    pub fn new(cfg: RedConfig, link_rate_bps: u64) -> Self {
        Red {
            buffer: cfg.buffer(),
            core: RedCore::new(cfg, link_rate_bps),
            queue: PacketFifo::default(),
        }
    }

    pub fn core(&self) -> &RedCore {
        &self.core
    }

    /// RED's decision on an arrival (the average already updated), then the buffer limit.
    pub(super) fn admit(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let u = uniform(ctx);
        let verdict = self.core.decide(size, u);
        if let Some(reason) = verdict.reason() {
            let may_mark = self.core.may_mark(verdict);
            if !notify(ctx, packet, may_mark, reason) {
                return;
            }
        }
        if self.buffer.overflows(&self.queue, size) {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        self.queue.push(packet, size);
    }
}

impl Qdisc for Red {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let seen = watched(ctx, &self.queue);
        self.core.update_average(&seen, ctx.now);
        self.admit(packet, ctx);
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn init(&mut self, ctx: &mut QdiscCtx) {
        self.core.init_timer(ctx);
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.core.on_timer(ctx);
    }

    fn congestion_probability(&self) -> f64 {
        self.core.base_probability()
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        self.core.state()
    }

    fn name(&self) -> &'static str {
        "red"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::net::packet::{flags, Packet};
    use crate::qdisc::testing::Harness;
    use crate::qdisc::QueueView;

    fn cfg() -> RedConfig {
        RedConfig::default()
    }

    fn busy(packets: usize) -> Watched {
        Watched {
            packets,
            bytes: packets as u64 * 500,
            idle_since: None,
        }
    }

    #[test]
    fn average_follows_the_ewma_of_the_arrival_lengths() {
        let mut core = RedCore::new(RedConfig { w_q: 0.5, ..cfg() }, 10_000_000);
        for q in [0, 1, 2, 3] {
            core.update_average(&busy(q), 0);
        }
        // 0 -> 0.5 -> 1.25 -> 2.125
        assert!((core.avg - 2.125).abs() < 1e-12);
    }

    #[test]
    fn count_spacing_raises_p_a_until_a_notification_resets_it() {
        let mut core = RedCore::new(cfg(), 10_000_000);
        core.avg = 10.0; // p_b = 0.02 * (10 - 5) / (15 - 5) = 0.01
        assert_eq!(core.decide(1000, 0.5), Verdict::Accept);
        assert_eq!(core.count, 0);
        assert!((core.p_a - 0.01).abs() < 1e-15);
        for _ in 1..49 {
            assert_eq!(core.decide(1000, 0.5), Verdict::Accept);
        }
        // count 49: p_a = 0.01 / (1 - 0.49)
        assert_eq!(core.decide(1000, 0.0195), Verdict::Early);
        assert!((core.p_a - 0.01 / 0.51).abs() < 1e-15);
        assert_eq!(core.count, 0);
        assert_eq!(core.decide(1000, 0.5), Verdict::Accept);
        assert!((core.p_a - 0.01 / 0.99).abs() < 1e-15);
    }

    #[test]
    fn spacing_saturates_at_one_when_count_p_b_reaches_one() {
        let mut core = RedCore::new(cfg(), 10_000_000);
        core.avg = 10.0; // p_b = 0.01
        for _ in 0..99 {
            assert_eq!(core.decide(1000, 0.999), Verdict::Accept);
        }
        assert_eq!(core.count, 98);
        assert!((core.p_a - 0.5).abs() < 1e-12); // 0.01 / (1 - 0.98)
        assert_eq!(core.decide(1000, 0.999), Verdict::Early); // count 99: p_a = 1
        assert!(core.p_a > 0.999_999);
    }

    #[test]
    fn without_spacing_p_a_is_p_b() {
        let mut core = RedCore::new(
            RedConfig {
                count_spacing: false,
                ..cfg()
            },
            10_000_000,
        );
        core.avg = 10.0;
        for _ in 0..20 {
            core.decide(1000, 0.5);
        }
        assert!((core.p_a - 0.01).abs() < 1e-15);
    }

    #[test]
    fn below_min_resets_count_and_above_max_forces() {
        let mut core = RedCore::new(cfg(), 10_000_000);
        core.avg = 4.9;
        assert_eq!(core.decide(1000, 0.0), Verdict::Accept);
        assert_eq!(core.count, -1);
        core.avg = 15.0;
        assert_eq!(core.decide(1000, 0.999), Verdict::Forced);
        assert_eq!(core.count, 0);
    }

    #[test]
    fn gentle_ramps_from_max_p_to_one_between_max_and_twice_max() {
        let mut core = RedCore::new(
            RedConfig {
                gentle: true,
                max_p: 0.1,
                ..cfg()
            },
            10_000_000,
        );
        core.avg = 20.0; // 0.1 + 0.9 * (20 - 15) / 15 = 0.4
        assert!((core.base_probability() - 0.4).abs() < 1e-12);
        assert_eq!(core.decide(1000, 0.39), Verdict::Early);
        core.avg = 29.7; // 0.1 + 0.9 * 14.7 / 15 = 0.982
        assert!((core.base_probability() - 0.982).abs() < 1e-12);
        core.avg = 30.0;
        assert_eq!(core.decide(1000, 0.999), Verdict::Forced);
    }

    #[test]
    fn byte_mode_scales_p_b_by_packet_size() {
        let mut core = RedCore::new(
            RedConfig {
                mode: QueueUnit::Bytes,
                min_th: 5000.0,
                max_th: 15000.0,
                ..cfg()
            },
            10_000_000,
        );
        core.avg = 10000.0; // p_b = 0.01, a 1500-byte packet: 0.01 * 1500 / 500 = 0.03
        core.decide(1500, 0.5);
        assert!((core.p_a - 0.03).abs() < 1e-15);
        core.update_average(&busy(40), 0); // 40 packets = 20000 bytes
        assert!((core.avg - (0.998 * 10000.0 + 0.002 * 20000.0)).abs() < 1e-9);
    }

    #[test]
    fn idle_time_decays_the_average_once_per_idle_period() {
        // 500 bytes at 10 Mb/s = 400 us per typical packet.
        let mut core = RedCore::new(cfg(), 10_000_000);
        core.avg = 10.0;
        let idle = Watched {
            packets: 0,
            bytes: 0,
            idle_since: Some(0),
        };
        core.update_average(&idle, secs(0.004)); // m = 10
        let once = 10.0 * 0.998f64.powi(10);
        assert!((core.avg - once).abs() < 1e-12, "{}", core.avg);
        core.update_average(&idle, secs(0.006)); // the arrival was dropped: m = 5 more
        assert!((core.avg - once * 0.998f64.powi(5)).abs() < 1e-12);
    }

    #[test]
    fn adaptive_red_moves_max_p_toward_the_target_band() {
        let mut core = RedCore::new(
            RedConfig {
                adaptive: true,
                ..cfg()
            },
            10_000_000,
        );
        core.avg = 12.0; // above 5 + 0.6 * 10 = 11
        core.adapt();
        assert!((core.max_p - 0.025).abs() < 1e-15); // + min(0.01, 0.02 / 4)
        core.avg = 8.0; // below 9
        core.adapt();
        assert!((core.max_p - 0.0225).abs() < 1e-15);
        core.avg = 10.0; // inside the band
        core.adapt();
        assert!((core.max_p - 0.0225).abs() < 1e-15);
    }

    fn instant(limit: u64, ecn: bool, mark_forced: bool) -> Red {
        Red::new(
            RedConfig {
                limit,
                min_th: 1.0,
                max_th: 2.0,
                w_q: 1.0,
                ecn,
                mark_forced,
                ..cfg()
            },
            10_000_000,
        )
    }

    fn ect(h: &mut Harness, flow: u32) -> PacketId {
        h.packet_from(Packet {
            flow,
            size: 500,
            flags: flags::ECT,
            ..Default::default()
        })
    }

    #[test]
    fn queue_drops_in_the_forced_region() {
        let mut h = Harness::new();
        let mut q = instant(3, false, false);
        let ids: Vec<_> = (0..3).map(|_| h.packet(0, 500)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id);
        }
        // avg = q seen: 0 (accept), 1 (p_b = 0: accept), 2 (forced)
        assert_eq!(h.dropped(), vec![(ids[2], DropReason::Forced)]);
        assert_eq!(q.len_packets(), 2);
        assert_eq!(q.core().count, 0);
        assert_eq!(h.dequeue(&mut q), Some(ids[0]));
    }

    #[test]
    fn a_full_buffer_overflows_below_the_thresholds() {
        let mut h = Harness::new();
        let mut q = Red::new(RedConfig { limit: 2, ..cfg() }, 10_000_000);
        let ids: Vec<_> = (0..3).map(|_| h.packet(0, 500)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id); // avg stays near 0: only the buffer limit acts
        }
        assert_eq!(h.dropped(), vec![(ids[2], DropReason::Overflow)]);
        assert!((q.core().avg - (0.998 * 0.002 + 0.002 * 2.0)).abs() < 1e-15);
    }

    #[test]
    fn ecn_marks_ect_packets_and_drops_the_others() {
        let mut h = Harness::new();
        let mut q = instant(3, true, true);
        let a = ect(&mut h, 0);
        let b = ect(&mut h, 0);
        let c = ect(&mut h, 0);
        let d = h.packet(1, 500);
        for id in [a, b, c, d] {
            h.enqueue(&mut q, id);
        }
        // c is forced and marked (queued: 3 = limit); d is forced, not ECT, dropped.
        assert_eq!(h.marks(DropReason::Forced), 1);
        assert!(h.packets.get(c).has(flags::CE));
        assert_eq!(h.dropped(), vec![(d, DropReason::Forced)]);
        assert_eq!(q.len_packets(), 3);
    }

    #[test]
    fn a_monitored_queue_drives_the_average() {
        let mut h = Harness::new();
        let mut q = instant(10, false, false);
        h.monitored = Some(QueueView {
            len_packets: 5,
            ..Default::default()
        });
        let a = h.packet(0, 500);
        h.enqueue(&mut q, a);
        assert_eq!(q.core().avg, 5.0);
        assert_eq!(h.dropped(), vec![(a, DropReason::Forced)]);
        assert_eq!(q.congestion_probability(), 1.0);
    }

    #[test]
    fn bad_thresholds_name_the_field() {
        let bad = RedConfig {
            min_th: 20.0,
            ..cfg()
        };
        let e = bad.check("links[0].queue").unwrap_err();
        assert_eq!(e.path, "links[0].queue.max_th");
        let bad = RedConfig { w_q: 0.0, ..cfg() };
        assert_eq!(bad.check("q").unwrap_err().path, "q.w_q");
    }
}
