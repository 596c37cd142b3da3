//! Stochastic Fairness Guardian (SFG): a pre-queue filter that caps every hash bin at C/N.
//!
//! Source: [Chung06, §2-3] (Algorithm 1, the re-hashing enhancement, the
//! congestion-notification-rate on/off control, Eq. 3).
//!
//! Every arrival is hashed into one bin in each of L levels (N bins per level). Each bin counts
//! the bytes that arrive in a d_s-second epoch; at the epoch boundary its drop probability
//! becomes `(bytes - d_s*C/N) / bytes`, so that the bin keeps at most C/N if its rate persists.
//! An arrival is dropped with the minimum probability over its L bins, then handed to `inner`.
//!
//! Decisions (the long form, with the smoothing weight's measurements, is on
//! `docs/models/sfg.md`): the first epoch only measures; every packet is filtered and counted
//! whole; one 64-bit salt per level from the port's RNG stream (`rehash` draws a fresh set at
//! each boundary); p_e is the inner discipline's reported or measured notification rate, the
//! larger by default (`notification = "max"`); avgCNR weight 0.1; SFG starts off, keeps
//! measuring while off and switches at epoch boundaries; C defaults to the link rate; the inner
//! discipline's timers are multiplexed with the epoch timer.

use crate::config::units::{Duration, Rate};
use crate::config::{check, ScenarioError};
use crate::engine::{Rng, Time};
use crate::net::packet::PacketId;
use crate::qdisc::classify::{mix, FlowKey};
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv, QdiscSpec};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// Where SFG takes p_e, the congestion-notification probability of the discipline behind it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notification {
    /// `inner.congestion_probability()`, averaged over the epoch's arrivals.
    Reported,
    /// Drops and ECN marks of `inner` per packet handed to it in the epoch.
    Measured,
    /// The larger of the two.
    #[default]
    Max,
}

/// The most bins (levels x bins) a filter may hold: 10^8 bins take 1.6 GB.
const MAX_BINS: u64 = 100_000_000;

/// `queue = { kind = "sfg", levels = 3, bins = 20, epoch = "2s", inner = { kind = "fifo" } }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SfgConfig {
    /// L, the number of levels (independent hashes). \[Chung06]: 3.
    pub levels: u32,
    /// N, bins per level; each bin may keep C/N. \[Chung06]: 20.
    pub bins: u32,
    /// d_s, the measurement and control epoch. \[Chung06]: 2 s.
    pub epoch: Duration,
    /// C; the link rate when absent.
    pub capacity: Option<Rate>,
    /// The two-hash re-hashing variant ([Chung06, §2]).
    pub rehash: bool,
    /// What a flow is for hashing. \[Chung06]: the 5-tuple.
    pub key: FlowKey,
    /// m_h: SFG switches on when avgCNR rises above it. \[Chung06]: 0.02.
    pub high_watermark: f64,
    /// m_l: SFG switches off when avgCNR falls below it. \[Chung06]: 0.01.
    pub low_watermark: f64,
    /// EWMA weight of p_n in avgCNR, per epoch (not given in the text).
    pub cnr_weight: f64,
    pub notification: Notification,
    /// Whether SFG filters from the start instead of waiting for congestion.
    pub start_on: bool,
    /// The discipline behind the filter (drop-tail FIFO by default; PI gives SFG-PI).
    pub inner: Box<QdiscSpec>,
}

impl Default for SfgConfig {
    fn default() -> Self {
        SfgConfig {
            levels: 3,
            bins: 20,
            epoch: Duration::from_secs(2.0),
            capacity: None,
            rehash: true,
            key: FlowKey::FiveTuple,
            high_watermark: 0.02,
            low_watermark: 0.01,
            cnr_weight: 0.1,
            notification: Notification::default(),
            start_on: false,
            inner: Box::default(),
        }
    }
}

impl QdiscConfig for SfgConfig {
    fn periods(&self) -> Vec<Period> {
        let mut periods = vec![Period::one("epoch", self.epoch.secs())];
        periods.extend(crate::qdisc::nested_periods(self.inner.periods(), "inner"));
        periods
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "levels", self.levels as u64)?;
        check::positive_int(path, "bins", self.bins as u64)?;
        let cells = self.levels as u64 * self.bins as u64;
        if cells > MAX_BINS {
            return Err(ScenarioError::new(
                crate::config::error::join(path, "bins"),
                format!(
                    "got {} levels x {} bins = {cells}, expected at most {MAX_BINS} bins in all",
                    self.levels, self.bins
                ),
            ));
        }
        check::positive(path, "epoch", self.epoch.secs())?;
        if let Some(c) = self.capacity {
            check::positive_int(path, "capacity", c.bps())?;
        }
        check::probability(path, "high_watermark", self.high_watermark)?;
        check::probability(path, "low_watermark", self.low_watermark)?;
        check::ordered(
            path,
            "low_watermark",
            self.low_watermark,
            "high_watermark",
            self.high_watermark,
        )?;
        check::in_range(path, "cnr_weight", self.cnr_weight, f64::MIN_POSITIVE, 1.0)?;
        self.inner
            .validate(&crate::config::error::join(path, "inner"))
    }

    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Sfg::new(self, self.inner.build(env), env.link_rate_bps))
    }
}

/// SFG in front of an inner discipline.
pub struct Sfg {
    levels: usize,
    bins: usize,
    epoch: Time,
    /// d_s * C / N: the bytes a bin may keep per epoch.
    bin_share_bytes: f64,
    rehash: bool,
    key: FlowKey,
    high_watermark: f64,
    low_watermark: f64,
    cnr_weight: f64,
    notification: Notification,
    /// Per-level salts used to look up drop probabilities this epoch.
    lookup_salts: Vec<u64>,
    /// Per-level salts used to collect byte counts for the next epoch.
    collect_salts: Vec<u64>,
    /// `bytes[level * bins + bin]`, arrivals in the current epoch.
    bytes: Vec<u64>,
    /// `prob[level * bins + bin]`, in force during the current epoch.
    prob: Vec<f64>,
    on: bool,
    avg_cnr: f64,
    last_pn: f64,
    epoch_stats: EpochStats,
    next_epoch: Option<Time>,
    inner_timer: Option<Time>,
    inner: Box<dyn Qdisc>,
}

/// Counts over the current epoch for the congestion-notification rate.
#[derive(Clone, Copy, Debug, Default)]
struct EpochStats {
    arrivals: u64,
    filter_drops: u64,
    passed: u64,
    inner_notifications: u64,
    reported_sum: f64,
}

impl EpochStats {
    fn own_drop_rate(&self) -> f64 {
        ratio(self.filter_drops as f64, self.arrivals)
    }
    fn measured(&self) -> f64 {
        ratio(self.inner_notifications as f64, self.passed).min(1.0)
    }
    fn reported(&self) -> f64 {
        ratio(self.reported_sum, self.passed)
    }
}

fn ratio(numerator: f64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        numerator / count as f64
    }
}

/// The drop probability that caps a bin that received `bytes` at `share` bytes per epoch.
pub fn bin_drop_probability(bytes: u64, share: f64) -> f64 {
    if bytes == 0 {
        return 0.0;
    }
    ((bytes as f64 - share) / bytes as f64).clamp(0.0, 1.0)
}

fn deterministic_salts(levels: usize) -> Vec<u64> {
    (0..levels as u64).map(|i| mix(i, 0x5f6)).collect()
}

impl Sfg {
    pub fn new(config: &SfgConfig, inner: Box<dyn Qdisc>, link_rate_bps: u64) -> Self {
        let levels = config.levels as usize;
        let bins = config.bins as usize;
        let capacity_bps = config.capacity.map_or(link_rate_bps, |c| c.bps());
        let epoch_secs = config.epoch.secs();
        let salts = deterministic_salts(levels);
        Sfg {
            levels,
            bins,
            epoch: config.epoch.0,
            bin_share_bytes: epoch_secs * capacity_bps as f64 / 8.0 / bins as f64,
            rehash: config.rehash,
            key: config.key,
            high_watermark: config.high_watermark,
            low_watermark: config.low_watermark,
            cnr_weight: config.cnr_weight,
            notification: config.notification,
            lookup_salts: salts.clone(),
            collect_salts: salts,
            bytes: vec![0; levels * bins],
            prob: vec![0.0; levels * bins],
            on: config.start_on,
            avg_cnr: 0.0,
            last_pn: 0.0,
            epoch_stats: EpochStats::default(),
            next_epoch: None,
            inner_timer: None,
            inner,
        }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }
    pub fn avg_cnr(&self) -> f64 {
        self.avg_cnr
    }
    /// The drop probability of bin `bin` at `level` in force this epoch.
    pub fn probability(&self, level: usize, bin: usize) -> f64 {
        self.prob[level * self.bins + bin]
    }
    /// Bytes counted in bin `bin` at `level` this epoch.
    pub fn bytes(&self, level: usize, bin: usize) -> u64 {
        self.bytes[level * self.bins + bin]
    }
    /// The bin a class id falls in at `level`, for lookup (`collect = false`) or collection.
    pub fn bin_of(&self, class_id: u64, level: usize, collect: bool) -> usize {
        let salts = if collect {
            &self.collect_salts
        } else {
            &self.lookup_salts
        };
        (mix(class_id, salts[level]) % self.bins as u64) as usize
    }

    fn draw_salts(&self, rng: &mut Rng) -> Vec<u64> {
        (0..self.levels).map(|_| rng.random::<u64>()).collect()
    }

    /// Counts the arrival's bytes and returns the minimum drop probability over its bins.
    fn classify(&mut self, class_id: u64, size: u32) -> f64 {
        let mut p = 1.0f64;
        for level in 0..self.levels {
            let base = level * self.bins;
            p = p.min(self.prob[base + self.bin_of(class_id, level, false)]);
            let collect_bin = self.bin_of(class_id, level, true);
            self.bytes[base + collect_bin] += size as u64;
        }
        p
    }

    fn end_epoch(&mut self, ctx: &mut QdiscCtx) {
        for (prob, bytes) in self.prob.iter_mut().zip(self.bytes.iter_mut()) {
            *prob = bin_drop_probability(*bytes, self.bin_share_bytes);
            *bytes = 0;
        }
        if self.rehash {
            let fresh = self.draw_salts(ctx.rng);
            self.lookup_salts = std::mem::replace(&mut self.collect_salts, fresh);
        }
        self.update_switch();
        self.epoch_stats = EpochStats::default();
    }

    fn update_switch(&mut self) {
        let stats = &self.epoch_stats;
        let p_e = match self.notification {
            Notification::Reported => stats.reported(),
            Notification::Measured => stats.measured(),
            Notification::Max => stats.reported().max(stats.measured()),
        };
        let p_d = stats.own_drop_rate();
        self.last_pn = p_d + (1.0 - p_d) * p_e;
        self.avg_cnr += self.cnr_weight * (self.last_pn - self.avg_cnr);
        if !self.on && self.avg_cnr > self.high_watermark {
            self.on = true;
        } else if self.on && self.avg_cnr < self.low_watermark {
            self.on = false;
        }
    }

    /// Runs `f` on the inner discipline, keeping its timer request and counting its
    /// notifications, then asks for the earlier of the two timers.
    fn with_inner<R>(
        &mut self,
        ctx: &mut QdiscCtx,
        f: impl FnOnce(&mut dyn Qdisc, &mut QdiscCtx) -> R,
    ) -> R {
        let before = ctx.effects.timer.take();
        let drops_before = ctx.effects.drops.len();
        let marks_before: u64 = ctx.effects.marks.iter().sum();
        let result = f(self.inner.as_mut(), ctx);
        let marks_after: u64 = ctx.effects.marks.iter().sum();
        self.epoch_stats.inner_notifications +=
            (ctx.effects.drops.len() - drops_before) as u64 + (marks_after - marks_before);
        match ctx.effects.timer.take() {
            Some(at) => {
                self.inner_timer = Some(at);
                self.request_timer(ctx);
            }
            None => ctx.effects.timer = before,
        }
        result
    }

    fn request_timer(&self, ctx: &mut QdiscCtx) {
        let next = match (self.next_epoch, self.inner_timer) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(at) = next {
            ctx.set_timer(at);
        }
    }
}

impl Qdisc for Sfg {
    fn init(&mut self, ctx: &mut QdiscCtx) {
        self.lookup_salts = self.draw_salts(ctx.rng);
        self.collect_salts = if self.rehash {
            self.draw_salts(ctx.rng)
        } else {
            self.lookup_salts.clone()
        };
        self.next_epoch = Some(ctx.now.saturating_add(self.epoch));
        self.with_inner(ctx, |q, c| q.init(c));
        self.request_timer(ctx);
    }

    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let (class_id, size) = {
            let p = ctx.packets.get(packet);
            (self.key.id(p), p.size)
        };
        let p = self.classify(class_id, size);
        self.epoch_stats.arrivals += 1;
        if self.on && p > 0.0 && ctx.rng.random::<f64>() < p {
            self.epoch_stats.filter_drops += 1;
            ctx.drop_because(packet, DropReason::Filter, "sfg_filter");
            return;
        }
        self.epoch_stats.passed += 1;
        self.epoch_stats.reported_sum += self.inner.congestion_probability();
        self.with_inner(ctx, |q, c| q.enqueue(packet, c));
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.with_inner(ctx, |q, c| q.dequeue(c))
    }

    fn peek(&self) -> Option<PacketId> {
        self.inner.peek()
    }

    fn len_packets(&self) -> usize {
        self.inner.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        if let Some(at) = self.next_epoch.filter(|&at| at <= ctx.now) {
            self.end_epoch(ctx);
            self.next_epoch = Some(at + self.epoch);
        }
        if self.inner_timer.is_some_and(|at| at <= ctx.now) {
            self.inner_timer = None;
            self.with_inner(ctx, |q, c| q.on_timer(c));
        }
        self.request_timer(ctx);
    }

    fn congestion_probability(&self) -> f64 {
        self.last_pn
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        let mut s = vec![
            ("sfg_on", if self.on { 1.0 } else { 0.0 }),
            ("sfg_avg_cnr", self.avg_cnr),
            ("sfg_pn", self.last_pn),
        ];
        s.extend(self.inner.state());
        s
    }

    fn name(&self) -> &'static str {
        "sfg"
    }
}

#[cfg(test)]
#[path = "sfg_tests.rs"]
mod tests;
