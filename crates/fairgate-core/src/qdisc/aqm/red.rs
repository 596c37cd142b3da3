//! RED: Random Early Detection \[Floyd93], with gentle RED \[Floyd00], byte mode [Floyd93, §4],
//! adaptive RED \[Floyd01] and the reference rules of ns-2 2.35 `red.cc` and ns-3
//! `red-queue-disc.cc`, whose defaults are the defaults here (docs/models/red.md gives each
//! default with its source). Settings of the reproduced works: [Byun07, §2.1] (RED 1-4),
//! [Chung06, §3] (gentle, 50/300, max_p 0.15). The 5/15 thresholds, max_p 1/50 and w_q 0.002
//! are \[Floyd93]'s simulation settings and ns-3's defaults; [Vaidyanathan99, §3.2] describes
//! RED without printing parameters.
//!
//! Decisions where the sources are silent (the full list is on the docs page):
//! - `count_rule = "ns"` (default): the count grows on every arrival; when the average first
//!   reaches min_th (with more than one packet queued) count restarts at 1 and that arrival is
//!   never dropped; early drops reset it, forced drops do not (ns-3 `Ns1Compat = false`).
//!   `"floyd93"`: the paper's pseudo-code (count -1 below min_th, 0 after any notification).
//! - `wait` (default true) spaces early drops uniformly between 1/p_b and 2/p_b arrivals:
//!   p_a = 0 while count p_b < 1, p_b / (2 - count p_b) below 2, then 1.
//! - `skip_short_queue` (default true): no early or forced drop while at most one packet waits.
//! - `idle_decay = "ns"` (default): an idle period of t counts as m = floor(t / s) arrivals,
//!   then the arrival itself is averaged in; `"floyd93"`: fractional m, decay only.
//! - Gentle and adaptive RED use the current max_p (ns-3 keeps the gentle slope of the
//!   initial one); adaptive RED runs on a timer every `adapt_interval` \[Floyd01].
//! - With `ecn = true` early notifications mark ECT packets; forced ones drop unless
//!   `mark_forced = true` (ns-3 `UseHardDrop = true`).

use super::{check_open_unit, later, notify, uniform, watched, Watched};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::{tx_time, Time};
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{Cause, DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// What RED's queue length and thresholds count.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueUnit {
    #[default]
    Packets,
    Bytes,
}

/// Which reference the count between notifications follows.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CountRule {
    /// ns-2 and ns-3: counted on every arrival, restarted at 1 (no drop) on crossing min_th.
    #[default]
    Ns,
    /// The 1993 pseudo-code: -1 below min_th, incremented in the early region.
    Floyd93,
}

/// How an idle period lowers the average.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IdleDecay {
    /// ns-2 and ns-3: floor(idle / s) arrivals of an empty queue, then the arrival itself.
    #[default]
    Ns,
    /// The 1993 pseudo-code with a fractional m: `avg *= (1 - w_q)^m` only.
    Floyd93,
}

limited_config! {
    /// RED's parameters; also embedded by the disciplines built on RED (CHOKe, SRED, RED-PD).
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct RedConfig {
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
        /// Uniform spacing between 1/p_b and 2/p_b arrivals (ns-2 `wait_`, ns-3 `Wait`).
        pub wait: bool,
        /// No RED drop or mark while at most one packet is queued (ns-2 and ns-3 `qlen > 1`).
        pub skip_short_queue: bool,
        pub count_rule: CountRule,
        pub idle_decay: IdleDecay,
        /// Mark ECN-capable packets instead of dropping them.
        pub ecn: bool,
        /// With `ecn`, also mark (not drop) in the forced region.
        pub mark_forced: bool,
        /// Adaptive RED: adjust max_p every `adapt_interval`.
        pub adaptive: bool,
        pub adapt_interval: Duration,
        /// Additive increase of max_p (capped at max_p / 4).
        pub adapt_alpha: f64,
        /// Multiplicative decrease of max_p.
        pub adapt_beta: f64,
        /// Target band of the average, as fractions of (max_th - min_th) above min_th.
        pub adapt_target_low: f64,
        pub adapt_target_high: f64,
        /// max_p is raised only while at most `adapt_top`, lowered only while at least `adapt_bottom`.
        pub adapt_top: f64,
        pub adapt_bottom: f64,
    }
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            limit: Limit::packets(25),
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.02,
            w_q: 0.002,
            gentle: true,
            mode: QueueUnit::Packets,
            mean_packet_size: 500,
            count_spacing: true,
            wait: true,
            skip_short_queue: true,
            count_rule: CountRule::Ns,
            idle_decay: IdleDecay::Ns,
            ecn: false,
            mark_forced: false,
            adaptive: false,
            adapt_interval: Duration::from_secs(0.5),
            adapt_alpha: 0.01,
            adapt_beta: 0.9,
            adapt_target_low: 0.4,
            adapt_target_high: 0.6,
            adapt_top: 0.5,
            adapt_bottom: 0.01,
        }
    }
}

impl RedConfig {
    /// The 1993 pseudo-code as written \[Floyd93]: ns-2's 50-packet buffer, no gentle region,
    /// geometric spacing from count -1, fractional idle decay, drops at any queue length.
    pub fn floyd93() -> Self {
        RedConfig {
            limit: Limit::packets(50),
            gentle: false,
            wait: false,
            skip_short_queue: false,
            count_rule: CountRule::Floyd93,
            idle_decay: IdleDecay::Floyd93,
            ..RedConfig::default()
        }
    }

    pub fn buffer(&self) -> Limit {
        self.limit
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
            self.check_adaptive(path)?;
        }
        self.check_unread_keys(path)
    }

    /// A key its switch leaves unread is refused rather than ignored: `mark_forced = true`
    /// beside `ecn = false`, and an `adapt_*` value other than its default beside `adaptive =
    /// false` (a default cannot be told from the same value written out, so it passes).
    fn check_unread_keys(&self, path: &str) -> Result<(), ScenarioError> {
        if !self.ecn {
            let keys = [("mark_forced", self.mark_forced)];
            check::unread(path, &keys, "ecn = true", "`ecn = false`")?;
        }
        if self.adaptive {
            return Ok(());
        }
        let default = RedConfig::default();
        let keys = [
            (
                "adapt_interval",
                self.adapt_interval != default.adapt_interval,
            ),
            ("adapt_alpha", self.adapt_alpha != default.adapt_alpha),
            ("adapt_beta", self.adapt_beta != default.adapt_beta),
            (
                "adapt_target_low",
                self.adapt_target_low != default.adapt_target_low,
            ),
            (
                "adapt_target_high",
                self.adapt_target_high != default.adapt_target_high,
            ),
            ("adapt_top", self.adapt_top != default.adapt_top),
            ("adapt_bottom", self.adapt_bottom != default.adapt_bottom),
        ];
        check::unread(path, &keys, "adaptive = true", "`adaptive = false`")
    }

    fn check_adaptive(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive(path, "adapt_interval", self.adapt_interval.secs())?;
        check_open_unit(path, "adapt_alpha", self.adapt_alpha)?;
        check_open_unit(path, "adapt_beta", self.adapt_beta)?;
        check::probability(path, "adapt_target_low", self.adapt_target_low)?;
        check::probability(path, "adapt_target_high", self.adapt_target_high)?;
        check::ordered(
            path,
            "adapt_target_low",
            self.adapt_target_low,
            "adapt_target_high",
            self.adapt_target_high,
        )?;
        check::probability(path, "adapt_top", self.adapt_top)?;
        check::probability(path, "adapt_bottom", self.adapt_bottom)
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
    /// Adaptive RED's timer, when it runs.
    fn periods(&self) -> Vec<Period> {
        match self.adaptive {
            true => vec![Period::one("adapt_interval", self.adapt_interval.secs())],
            false => Vec::new(),
        }
    }
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
        self.notification().map(|(reason, _)| reason)
    }

    /// The reason and the cause RED names in the results (`red_early`, `red_forced`) of a
    /// notification; `None` for an accepted arrival.
    pub fn notification(self) -> Option<(DropReason, Cause)> {
        self.notification_as(["red_early", "red_forced"])
    }

    /// The reason and the cause of a notification, for a discipline that names its early and
    /// forced regions itself (`["sred_early", "sred_forced"]`); `None` for an accepted arrival.
    pub fn notification_as(self, [early, forced]: [Cause; 2]) -> Option<(DropReason, Cause)> {
        match self {
            Verdict::Accept => None,
            Verdict::Early => Some((DropReason::Early, early)),
            Verdict::Forced => Some((DropReason::Forced, forced)),
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
    /// Bytes arrived since the last early drop (byte mode, `count_rule = "ns"`).
    pub count_bytes: u64,
    /// Whether the previous arrival was already in the drop region (ns `old`).
    above_min: bool,
    /// Packets queued at the last arrival (before it).
    seen_packets: usize,
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
        let count = match cfg.count_rule {
            CountRule::Ns => 0,
            CountRule::Floyd93 => -1,
        };
        RedCore {
            typical_tx: tx_time(cfg.mean_packet_size, link_rate_bps.max(1)).max(1),
            avg: 0.0,
            count,
            count_bytes: 0,
            above_min: false,
            seen_packets: 0,
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
        self.seen_packets = w.packets;
        let idle_start = w.idle_since.map(|t| t.max(self.decayed_until));
        let idle = match idle_start {
            Some(start) if w.packets == 0 => {
                self.decayed_until = now;
                Some((now - start.min(now)) as f64 / self.typical_tx as f64)
            }
            _ => None,
        };
        let keep = 1.0 - self.cfg.w_q;
        let q = self.length_of(w);
        self.avg = match (idle, self.cfg.idle_decay) {
            (Some(m), IdleDecay::Floyd93) => self.avg * keep.powf(m),
            (Some(m), IdleDecay::Ns) => self.avg * keep.powf(m.floor() + 1.0) + self.cfg.w_q * q,
            (None, _) => keep * self.avg + self.cfg.w_q * q,
        };
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

    /// p_a from p_b and the count of arrivals since the last notification.
    fn spaced(&self, p_b: f64, count: f64) -> f64 {
        if !self.cfg.count_spacing {
            return p_b;
        }
        let spent = count * p_b;
        let p_a = if self.cfg.wait {
            match spent {
                s if s < 1.0 => 0.0,
                s if s < 2.0 => p_b / (2.0 - s),
                _ => 1.0,
            }
        } else if spent < 1.0 {
            p_b / (1.0 - spent)
        } else {
            1.0
        };
        p_a.min(1.0)
    }

    /// RED's decision for an arrival of `size` bytes, given a uniform draw `u` in [0, 1).
    pub fn decide(&mut self, size: u32, u: f64) -> Verdict {
        self.decide_scaled(size, u, 1.0)
    }

    /// As `decide`, with the early probability p_a multiplied by `factor` (capped at 1), for
    /// disciplines that weight RED's probability (SRED's hit factor).
    pub fn decide_scaled(&mut self, size: u32, u: f64, factor: f64) -> Verdict {
        self.p_b = self.base_probability();
        let short = self.cfg.skip_short_queue && self.seen_packets <= 1;
        let in_region = self.avg >= self.cfg.min_th && !short;
        match self.cfg.count_rule {
            CountRule::Ns => self.decide_ns(in_region, size, u, factor),
            CountRule::Floyd93 => self.decide_floyd93(in_region, size, u, factor),
        }
    }

    /// ns-2 `REDQueue::enque` and ns-3 `RedQueueDisc::DoEnqueue`.
    fn decide_ns(&mut self, in_region: bool, size: u32, u: f64, factor: f64) -> Verdict {
        self.count += 1;
        self.count_bytes += size as u64;
        if !in_region {
            self.above_min = false;
            self.p_a = 0.0;
            return Verdict::Accept;
        }
        if self.in_forced_region() {
            return Verdict::Forced;
        }
        if !self.above_min {
            self.above_min = true;
            self.count = 1;
            self.count_bytes = size as u64;
            self.p_a = 0.0;
            return Verdict::Accept;
        }
        let mean = self.cfg.mean_packet_size as u64;
        let mut p_a = match self.cfg.mode {
            QueueUnit::Packets => self.spaced(self.p_b, self.count as f64),
            QueueUnit::Bytes => self.spaced(self.p_b, (self.count_bytes / mean) as f64),
        };
        if self.cfg.mode == QueueUnit::Bytes && p_a < 1.0 {
            p_a = (p_a * size as f64 / mean as f64).min(1.0);
        }
        self.p_a = (p_a * factor).min(1.0);
        if u < self.p_a {
            self.count = 0;
            self.count_bytes = 0;
            return Verdict::Early;
        }
        Verdict::Accept
    }

    /// The 1993 pseudo-code.
    fn decide_floyd93(&mut self, in_region: bool, size: u32, u: f64, factor: f64) -> Verdict {
        if !in_region {
            if self.avg < self.cfg.min_th {
                self.count = -1;
            }
            self.p_a = 0.0;
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
        self.p_a = (self.spaced(p_b, self.count as f64) * factor).min(1.0);
        if u < self.p_a {
            self.count = 0;
            return Verdict::Early;
        }
        Verdict::Accept
    }

    /// Adaptive RED's periodic max_p adjustment \[Floyd01].
    pub fn adapt(&mut self) {
        let c = &self.cfg;
        let span = c.max_th - c.min_th;
        let target_low = c.min_th + c.adapt_target_low * span;
        let target_high = c.min_th + c.adapt_target_high * span;
        if self.avg > target_high && self.max_p <= c.adapt_top {
            self.max_p += (self.max_p / 4.0).min(c.adapt_alpha);
        } else if self.avg < target_low && self.max_p >= c.adapt_bottom {
            self.max_p *= c.adapt_beta;
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
    buffer: Limit,
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
        if let Some((reason, cause)) = verdict.notification() {
            let may_mark = self.core.may_mark(verdict);
            if !notify(ctx, packet, may_mark, reason, cause) {
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
#[path = "red_floyd93_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "red_ns_tests.rs"]
mod red_ns_tests;
