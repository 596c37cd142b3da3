//! SRED: Stabilized RED (Ott, Lakshman, Wong, "SRED: Stabilized RED", INFOCOM 1999), and
//! Byun's modified version [Byun07, §2].
//!
//! Source: [Byun07, §2]: zombie list of M recently seen flows, Hit = 1 when the arrival's flow
//! matches a random zombie, P = (1 - alpha) P + alpha Hit.
//! - `variant = "original"`: p_sred(q) = p_max for B/3 <= q, p_max/4 for B/6 <= q < B/3, 0
//!   below (q the instantaneous queue, B the buffer), and
//!   p_zap = p_sred min(1, 1/(256 P)^2) (1 + Hit/P).
//! - `variant = "modified"` (\[Byun07], used in all its emulations): RED's count-spaced p_a
//!   (RED 4: 60/120, w_q 0.1, max_p 0.7) times (1 + Hit/P); M = 500, alpha = 0.1, and 1
//!   (SRED 1) or 50 (SRED 2) lookups per arrival.
//!
//! Decisions where the sources are silent:
//! - While the zombie list is filling, the arrival's flow is appended and P is not updated.
//! - With several lookups, Hit = 1 if any of the drawn zombies matches; on a miss the first
//!   drawn zombie is overwritten by the arrival's flow with probability `replace_probability`
//!   (0.25, the SRED paper's value).
//! - P is updated before the probability is computed; Hit/P is 0 when Hit = 0; the result is
//!   clamped to 1.
//! - Defaults by variant: original M = 1000, alpha = 1/M, p_max = 0.15; modified M = 500,
//!   alpha = 0.1. Notifications are `early` (RED's forced region stays `forced`).
//! - The original's queue is this discipline's own (or the monitored port's) in packets.

use super::red::{RedConfig, RedCore, Verdict};
use super::{check_open_unit, notify, uniform, watched};
use crate::config::{check, ScenarioError};
use crate::net::packet::PacketId;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SredVariant {
    #[default]
    Original,
    Modified,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SredConfig {
    pub variant: SredVariant,
    /// Limit B of the original (packets); the modified variant uses `red.limit`.
    pub limit: u64,
    pub p_max: f64,
    /// Zombie list size M (default 1000 original, 500 modified).
    pub zombies: Option<u32>,
    /// Hit-frequency weight (default 1/M original, 0.1 modified).
    pub alpha: Option<f64>,
    pub lookups: u32,
    pub replace_probability: f64,
    /// RED of the modified variant.
    pub red: RedConfig,
    pub key: FlowKey,
    pub ecn: bool,
}

impl Default for SredConfig {
    fn default() -> Self {
        SredConfig {
            variant: SredVariant::Original,
            limit: 500,
            p_max: 0.15,
            zombies: None,
            alpha: None,
            lookups: 1,
            replace_probability: 0.25,
            red: RedConfig {
                limit: Limit::packets(500),
                min_th: 60.0,
                max_th: 120.0,
                w_q: 0.1,
                max_p: 0.7,
                ..Default::default()
            },
            key: FlowKey::Flow,
            ecn: false,
        }
    }
}

impl SredConfig {
    pub fn zombie_count(&self) -> u32 {
        self.zombies.unwrap_or(match self.variant {
            SredVariant::Original => 1000,
            SredVariant::Modified => 500,
        })
    }

    pub fn hit_weight(&self) -> f64 {
        self.alpha.unwrap_or(match self.variant {
            SredVariant::Original => 1.0 / self.zombie_count().max(1) as f64,
            SredVariant::Modified => 0.1,
        })
    }
}

impl SredConfig {
    /// The original variant reads `limit` and `p_max` and no `red`; the modified one reads
    /// `red` (its own limit included) and neither of the others. A key of the other variant
    /// other than its default is refused rather than unread (a default cannot be told from
    /// the same value written out).
    fn check_other_variant_keys(&self, path: &str) -> Result<(), ScenarioError> {
        let default = SredConfig::default();
        match self.variant {
            SredVariant::Original => check::unread(
                path,
                &[("red", self.red != default.red)],
                "variant = \"modified\"",
                "the original variant",
            ),
            SredVariant::Modified => check::unread(
                path,
                &[
                    ("limit", self.limit != default.limit),
                    ("p_max", self.p_max != default.p_max),
                ],
                "variant = \"original\"",
                "the modified variant",
            ),
        }
    }
}

impl QdiscConfig for SredConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.limit)?;
        check::probability(path, "p_max", self.p_max)?;
        if let Some(m) = self.zombies {
            check::positive_int(path, "zombies", m as u64)?;
        }
        if let Some(a) = self.alpha {
            check_open_unit(path, "alpha", a)?;
        }
        check::positive_int(path, "lookups", self.lookups as u64)?;
        check::probability(path, "replace_probability", self.replace_probability)?;
        self.red.check(&format!("{path}.red"))?;
        self.red.reject_adaptive(&format!("{path}.red"))?;
        self.check_other_variant_keys(path)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Sred::new(*self, env.link_rate_bps))
    }
}

/// The original SRED's stepwise probability for queue `q` of a buffer `b`.
pub fn p_sred(q: f64, b: f64, p_max: f64) -> f64 {
    if q >= b / 3.0 {
        p_max
    } else if q >= b / 6.0 {
        p_max / 4.0
    } else {
        0.0
    }
}

/// (1 + Hit/P), with Hit/P = 0 on a miss.
pub fn hit_factor(hit: bool, p_hit: f64) -> f64 {
    if hit && p_hit > 0.0 {
        1.0 + 1.0 / p_hit
    } else {
        1.0
    }
}

/// The original p_zap.
pub fn p_zap(p_sred: f64, hit: bool, p_hit: f64) -> f64 {
    let scale = 256.0 * p_hit;
    let damping = if scale > 0.0 {
        (1.0 / (scale * scale)).min(1.0)
    } else {
        1.0
    };
    (p_sred * damping * hit_factor(hit, p_hit)).min(1.0)
}

pub struct Sred {
    cfg: SredConfig,
    red: RedCore,
    buffer: Limit,
    queue: PacketFifo,
    pub zombie_list: Vec<u64>,
    capacity: usize,
    alpha: f64,
    /// Hit frequency P(t).
    pub p_hit: f64,
    /// Probability applied to the last arrival.
    pub p_last: f64,
}

impl Sred {
    pub fn new(cfg: SredConfig, link_rate_bps: u64) -> Self {
        let buffer = match cfg.variant {
            SredVariant::Original => Limit::packets(cfg.limit),
            SredVariant::Modified => cfg.red.buffer(),
        };
        Sred {
            red: RedCore::new(cfg.red, link_rate_bps),
            buffer,
            queue: PacketFifo::default(),
            zombie_list: Vec::new(),
            capacity: cfg.zombie_count().max(1) as usize,
            alpha: cfg.hit_weight(),
            p_hit: 0.0,
            p_last: 0.0,
            cfg,
        }
    }

    /// Compares `flow` with the zombie list; returns Hit (None while the list fills).
    fn lookup(&mut self, flow: u64, ctx: &mut QdiscCtx) -> Option<bool> {
        use rand::Rng as _;
        if self.zombie_list.len() < self.capacity {
            self.zombie_list.push(flow);
            return None;
        }
        let mut first = None;
        for _ in 0..self.cfg.lookups {
            let index = ctx.rng.random_range(0..self.zombie_list.len());
            first.get_or_insert(index);
            if self.zombie_list[index] == flow {
                return Some(true);
            }
        }
        if let Some(index) = first {
            if ctx.rng.random::<f64>() < self.cfg.replace_probability {
                self.zombie_list[index] = flow;
            }
        }
        Some(false)
    }

    fn update_hit_frequency(&mut self, hit: bool) {
        let h = if hit { 1.0 } else { 0.0 };
        self.p_hit = (1.0 - self.alpha) * self.p_hit + self.alpha * h;
    }

    fn verdict(&mut self, hit: bool, size: u32, ctx: &mut QdiscCtx) -> Verdict {
        let u = uniform(ctx);
        match self.cfg.variant {
            SredVariant::Original => {
                let q = watched(ctx, &self.queue).packets as f64;
                let base = p_sred(q, self.cfg.limit as f64, self.cfg.p_max);
                self.p_last = p_zap(base, hit, self.p_hit);
                if u < self.p_last {
                    Verdict::Early
                } else {
                    Verdict::Accept
                }
            }
            SredVariant::Modified => {
                let seen = watched(ctx, &self.queue);
                self.red.update_average(&seen, ctx.now);
                let verdict = self.red.decide_scaled(size, u, hit_factor(hit, self.p_hit));
                self.p_last = self.red.p_a;
                verdict
            }
        }
    }
}

impl Qdisc for Sred {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let flow = self.cfg.key.id(ctx.packets.get(packet));
        let hit = self.lookup(flow, ctx);
        if let Some(h) = hit {
            self.update_hit_frequency(h);
        }
        let verdict = self.verdict(hit == Some(true), size, ctx);
        if let Some((reason, cause)) = verdict.notification_as(["sred_early", "sred_forced"]) {
            let may_mark = self.cfg.ecn && verdict == Verdict::Early;
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

    crate::qdisc::fifo::serve_fifo!(queue);

    fn congestion_probability(&self) -> f64 {
        self.p_last
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("hit_frequency", self.p_hit),
            ("p", self.p_last),
            ("avg", self.red.avg),
        ]
    }

    fn name(&self) -> &'static str {
        "sred"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn original_probabilities_by_hand() {
        // B = 600: B/6 = 100, B/3 = 200.
        assert_eq!(p_sred(99.0, 600.0, 0.15), 0.0);
        assert_eq!(p_sred(100.0, 600.0, 0.15), 0.0375);
        assert_eq!(p_sred(200.0, 600.0, 0.15), 0.15);
        // P = 1/512: 256 P = 0.5, min(1, 4) = 1; factor 1 + 512 on a hit.
        assert!((p_zap(0.0375, false, 1.0 / 512.0) - 0.0375).abs() < 1e-15);
        assert_eq!(p_zap(0.0375, true, 1.0 / 512.0), 1.0);
        // P = 1/128: 256 P = 2, damping 1/4; a miss: 0.15 / 4.
        assert!((p_zap(0.15, false, 1.0 / 128.0) - 0.0375).abs() < 1e-15);
        // The modified factor: p_a = 0.1, Hit with P = 0.5: 0.1 * 3.
        assert!((0.1 * hit_factor(true, 0.5) - 0.3).abs() < 1e-15);
        assert_eq!(hit_factor(false, 0.0), 1.0);
    }

    fn three_zombies(variant: SredVariant) -> SredConfig {
        SredConfig {
            variant,
            zombies: Some(3),
            alpha: Some(0.5),
            replace_probability: 1.0,
            ..Default::default()
        }
    }

    #[test]
    fn zombie_list_fills_then_hits_and_misses_update_p() {
        let mut h = Harness::new();
        let mut q = Sred::new(three_zombies(SredVariant::Original), 10_000_000);
        for _ in 0..3 {
            let id = h.packet(1, 1000);
            h.enqueue(&mut q, id); // fill phase: P untouched
        }
        assert_eq!(q.zombie_list, vec![1, 1, 1]);
        assert_eq!(q.p_hit, 0.0);
        let id = h.packet(1, 1000);
        h.enqueue(&mut q, id); // hit: P = 0.5
        assert_eq!(q.p_hit, 0.5);
        let id = h.packet(2, 1000);
        h.enqueue(&mut q, id); // miss: P = 0.25, one zombie becomes flow 2
        assert_eq!(q.p_hit, 0.25);
        assert_eq!(q.zombie_list.iter().filter(|&&z| z == 2).count(), 1);
        // q = 4 of B = 500 is below B/6: nothing dropped.
        assert!(h.dropped().is_empty());
        assert_eq!(q.p_last, 0.0);
    }

    #[test]
    fn modified_variant_scales_red_by_the_hit_factor() {
        let mut h = Harness::new();
        let mut cfg = three_zombies(SredVariant::Modified);
        cfg.red = RedConfig {
            limit: Limit::packets(100),
            min_th: 1.0,
            max_th: 11.0,
            w_q: 1.0,
            max_p: 0.2,
            ..RedConfig::floyd93()
        };
        let mut q = Sred::new(cfg, 10_000_000);
        for _ in 0..3 {
            let id = h.packet(1, 1000);
            h.enqueue(&mut q, id); // fill: avg 0 (count -1), 1 (count 0, p_b 0), 2 (count 1)
        }
        // The third arrival had p_a = 0.02 / 0.98, a miss factor of 1.
        assert!((q.p_last - 0.02 / 0.98).abs() < 1e-15);
        let id = h.packet(1, 1000);
        h.enqueue(&mut q, id);
        // The harness stream kept the third packet, so avg = 3: p_b = 0.04, count 2,
        // p_a = 0.04 / (1 - 0.08); a hit with P = 0.5 triples it.
        assert_eq!(q.len_packets() + h.dropped().len(), 4);
        assert!((q.p_last - 3.0 * 0.04 / 0.92).abs() < 1e-12, "{}", q.p_last);
        assert_eq!(q.p_hit, 0.5);
    }

    #[test]
    fn defaults_by_variant() {
        let original = SredConfig::default();
        assert_eq!(
            (original.zombie_count(), original.hit_weight()),
            (1000, 0.001)
        );
        let modified = SredConfig {
            variant: SredVariant::Modified,
            ..Default::default()
        };
        assert_eq!((modified.zombie_count(), modified.hit_weight()), (500, 0.1));
    }

    #[test]
    fn a_key_of_the_other_variant_is_refused_not_ignored() {
        let modified = SredConfig {
            variant: SredVariant::Modified,
            limit: 100,
            ..SredConfig::default()
        };
        let e = modified.validate("q").unwrap_err();
        assert_eq!(e.path, "q.limit");
        assert!(
            e.message.contains("only `variant = \"original\"` reads"),
            "{e}"
        );
        let original = SredConfig {
            red: RedConfig {
                max_p: 0.5,
                ..SredConfig::default().red
            },
            ..SredConfig::default()
        };
        assert_eq!(original.validate("q").unwrap_err().path, "q.red");
        assert!(SredConfig::default().validate("q").is_ok());
    }
}
