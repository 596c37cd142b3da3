//! REDFC: RED applied to the transmission decision (Shang, Hadjitheodosiou, Baras, "RED-based
//! flow control" for satellite gateways): instead of dropping, a packet RED would notify is
//! held and tried again after a retry time T.
//!
//! Source: [Byun07, §2], described
//! but not simulated there:
//!   per arrival: compute avg; avg < min_th: transmit; min_th <= avg <= max_th: RED's p_a;
//!   if not transmitted: wait T, then try again.
//!
//! Decisions where the sources are silent:
//! - The printed "transmit with probability p_a" is read as "hold with probability p_a" (RED's
//!   notification becomes a delay); `literal = true` transmits with probability p_a instead.
//!   Above max_th (and beyond 2 max_th with gentle) packets are held.
//! - A retry re-runs the decision with the current average (retries do not update it); a
//!   packet held again waits another T. T defaults to 100 ms.
//! - Held packets stay in the discipline (they count in its length) up to `hold_limit`; beyond
//!   it, or when the transmit queue is full, the packet is dropped (`overflow`).
//! - RED's average watches the transmit queue (or the monitored port).

use super::red::{RedConfig, RedCore, Verdict};
use super::{later, uniform, watched};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::Time;
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RedFcConfig {
    pub red: RedConfig,
    pub retry: Duration,
    pub hold_limit: u64,
    pub literal: bool,
}

impl Default for RedFcConfig {
    fn default() -> Self {
        RedFcConfig {
            red: RedConfig::default(),
            retry: Duration::from_secs(0.1),
            hold_limit: 500,
            literal: false,
        }
    }
}

impl QdiscConfig for RedFcConfig {
    /// Every held packet waits on its own retry timer.
    fn periods(&self) -> Vec<Period> {
        vec![Period {
            timers: self.hold_limit as f64,
            ..Period::one("retry", self.retry.secs())
        }]
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.red.check(&format!("{path}.red"))?;
        self.red.reject_adaptive(&format!("{path}.red"))?;
        check::positive(path, "retry", self.retry.secs())?;
        check::positive_int(path, "hold_limit", self.hold_limit)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(RedFc::new(*self, env.link_rate_bps))
    }
}

pub struct RedFc {
    cfg: RedFcConfig,
    red: RedCore,
    transmit: PacketFifo,
    held: VecDeque<(Time, PacketId)>,
    held_bytes: u64,
}

impl RedFc {
    pub fn new(cfg: RedFcConfig, link_rate_bps: u64) -> Self {
        RedFc {
            red: RedCore::new(cfg.red, link_rate_bps),
            transmit: PacketFifo::default(),
            held: VecDeque::new(),
            held_bytes: 0,
            cfg,
        }
    }

    pub fn red(&self) -> &RedCore {
        &self.red
    }

    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// RED's decision read as a transmission decision.
    fn transmits(&mut self, size: u32, u: f64) -> bool {
        let verdict = self.red.decide(size, u);
        match (verdict, self.cfg.literal) {
            (Verdict::Accept, false) => true,
            (Verdict::Early, true) => self.red.avg >= self.cfg.red.min_th,
            (Verdict::Accept, true) => self.red.avg < self.cfg.red.min_th,
            _ => false,
        }
    }

    /// Sends `packet` to the transmit queue or holds it for a retry.
    fn route(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let u = uniform(ctx);
        if self.transmits(size, u) {
            if self.cfg.red.buffer().overflows(&self.transmit, size) {
                ctx.drop(packet, DropReason::Overflow);
            } else {
                self.transmit.push(packet, size);
            }
            return;
        }
        if self.held.len() as u64 >= self.cfg.hold_limit {
            ctx.drop_because(packet, DropReason::Overflow, "redfc_hold_full");
            return;
        }
        if self.held.is_empty() {
            ctx.set_timer(later(ctx.now, self.cfg.retry.0));
        }
        self.held
            .push_back((later(ctx.now, self.cfg.retry.0), packet));
        self.held_bytes += size as u64;
    }
}

impl Qdisc for RedFc {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let seen = watched(ctx, &self.transmit);
        self.red.update_average(&seen, ctx.now);
        self.route(packet, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.transmit.pop(ctx)
    }

    fn peek(&self) -> Option<PacketId> {
        self.transmit.front()
    }

    fn len_packets(&self) -> usize {
        self.transmit.len() + self.held.len()
    }

    fn len_bytes(&self) -> u64 {
        self.transmit.bytes() + self.held_bytes
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        while let Some(&(at, packet)) = self.held.front() {
            if at > ctx.now {
                break;
            }
            self.held.pop_front();
            self.held_bytes -= ctx.size(packet) as u64;
            self.route(packet, ctx);
        }
        if let Some(&(at, _)) = self.held.front() {
            ctx.set_timer(at);
        }
    }

    fn congestion_probability(&self) -> f64 {
        self.red.base_probability()
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        let mut s = self.red.state();
        s.push(("held", self.held.len() as f64));
        s
    }

    fn name(&self) -> &'static str {
        "redfc"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::Limit;

    fn instant() -> RedFc {
        RedFc::new(
            RedFcConfig {
                red: RedConfig {
                    limit: Limit::packets(10),
                    min_th: 1.0,
                    max_th: 2.0,
                    w_q: 1.0,
                    ..RedConfig::floyd93()
                },
                ..Default::default()
            },
            10_000_000,
        )
    }

    #[test]
    fn held_packets_are_retried_after_t_and_never_dropped() {
        let mut h = Harness::new();
        let mut q = instant();
        let ids: Vec<_> = (0..3).map(|i| h.packet(i, 1000)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id); // avg 0: send; avg 1 (p_b 0): send; avg 2 = max_th: hold
        }
        assert_eq!(q.held(), 1);
        assert_eq!(q.len_packets(), 3);
        assert_eq!(h.effects.timer(), Some(secs(0.1)));
        assert_eq!(h.dequeue(&mut q), Some(ids[0]));
        assert_eq!(h.dequeue(&mut q), Some(ids[1]));
        assert_eq!(h.dequeue(&mut q), None);
        h.now = secs(0.1);
        h.timer(&mut q); // avg still 2: held again until 0.2 s
        assert_eq!(q.held(), 1);
        assert_eq!(h.effects.timer(), Some(secs(0.2)));
        h.now = secs(0.15);
        let d = h.packet(3, 1000);
        h.enqueue(&mut q, d); // sees an empty transmit queue: avg 0, sent
        h.now = secs(0.2);
        h.timer(&mut q); // avg 0 < min_th: the held packet goes out behind d
        assert_eq!(q.held(), 0);
        assert_eq!(h.dequeue(&mut q), Some(d));
        assert_eq!(h.dequeue(&mut q), Some(ids[2]));
        assert!(h.dropped().is_empty());
    }

    #[test]
    fn the_hold_list_is_bounded() {
        let mut h = Harness::new();
        let mut q = RedFc::new(
            RedFcConfig {
                hold_limit: 1,
                ..RedFcConfig {
                    red: RedConfig {
                        min_th: 0.0,
                        max_th: 1.0,
                        w_q: 1.0,
                        ..RedConfig::floyd93()
                    },
                    ..Default::default()
                }
            },
            10_000_000,
        );
        let ids: Vec<_> = (0..3).map(|i| h.packet(i, 1000)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id); // avg 0: p_b 0, sent; avg 1: held; avg 1: list full
        }
        assert_eq!(h.dropped(), vec![(ids[2], DropReason::Overflow)]);
        assert_eq!(q.len_bytes(), 2000);
    }
}
