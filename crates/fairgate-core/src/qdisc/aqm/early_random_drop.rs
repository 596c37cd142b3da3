//! Early Random Drop (Hashem, "Analysis of random drop for gateway congestion control", MIT
//! LCS TR-465, 1989): once the instantaneous queue reaches a threshold, drop with a fixed
//! probability.
//!
//! Source: [Vaidyanathan99, §3.2]: "Drop with
//! a fixed probability once the instantaneous queue passes a threshold"; the text says "a
//! packet from the buffer", Hashem's original drops the arrival. Both readings are selectable
//! (`victim = "arrival"`, the default, or `"queued"`, a uniformly chosen queued packet).
//!
//! Decisions where the sources are silent:
//! - Defaults: threshold = half of the 50-packet buffer, drop probability 0.02 (the text and
//!   the spec give no values).
//! - "Passes" means q >= threshold, q the watched queue (own or monitored) before the arrival.
//! - Early drops are `early` (marks ECT with `ecn` when the arrival is the victim); overflow
//!   stays drop-tail.

use super::{notify, uniform, watched};
use crate::config::{check, ScenarioError};
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Victim {
    #[default]
    Arrival,
    Queued,
}

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct EarlyRandomDropConfig {
        /// Queue length (packets) from which early drops start.
        pub threshold: u64,
        pub drop_probability: f64,
        pub victim: Victim,
        pub ecn: bool,
    }
}

impl Default for EarlyRandomDropConfig {
    fn default() -> Self {
        EarlyRandomDropConfig {
            limit: Limit::packets(50),
            threshold: 25,
            drop_probability: 0.02,
            victim: Victim::Arrival,
            ecn: false,
        }
    }
}

impl QdiscConfig for EarlyRandomDropConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        check::probability(path, "drop_probability", self.drop_probability)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(EarlyRandomDrop::new(*self))
    }
}

pub struct EarlyRandomDrop {
    cfg: EarlyRandomDropConfig,
    buffer: Limit,
    queue: PacketFifo,
}

impl EarlyRandomDrop {
    pub fn new(cfg: EarlyRandomDropConfig) -> Self {
        EarlyRandomDrop {
            buffer: cfg.limit,
            queue: PacketFifo::default(),
            cfg,
        }
    }

    /// Drops a uniformly chosen queued packet.
    fn drop_queued(&mut self, ctx: &mut QdiscCtx) {
        use rand::Rng as _;
        if self.queue.is_empty() {
            return;
        }
        let index = ctx.rng.random_range(0..self.queue.len());
        if let Some(victim) = self.queue.remove(index, ctx) {
            ctx.drop_because(victim, DropReason::Early, "early_random_queued");
        }
    }
}

impl Qdisc for EarlyRandomDrop {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let q = watched(ctx, &self.queue).packets as u64;
        if q >= self.cfg.threshold && uniform(ctx) < self.cfg.drop_probability {
            match self.cfg.victim {
                Victim::Arrival => {
                    let cause = "early_random_arrival";
                    if !notify(ctx, packet, self.cfg.ecn, DropReason::Early, cause) {
                        return;
                    }
                }
                Victim::Queued => self.drop_queued(ctx),
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
        if self.queue.len() as u64 >= self.cfg.threshold {
            self.cfg.drop_probability
        } else {
            0.0
        }
    }

    fn name(&self) -> &'static str {
        "early_random_drop"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn below_the_threshold_nothing_drops_and_above_every_arrival_with_p_one() {
        let mut h = Harness::new();
        let mut q = EarlyRandomDrop::new(EarlyRandomDropConfig {
            limit: Limit::packets(10),
            threshold: 3,
            drop_probability: 1.0,
            ..Default::default()
        });
        let ids: Vec<_> = (0..5).map(|i| h.packet(i, 100)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id); // q = 0, 1, 2 accepted; q = 3 >= 3: dropped (twice)
        }
        assert_eq!(
            h.dropped(),
            vec![(ids[3], DropReason::Early), (ids[4], DropReason::Early)]
        );
        assert_eq!(q.congestion_probability(), 1.0);
    }

    #[test]
    fn the_queued_reading_drops_a_buffered_packet_and_keeps_the_arrival() {
        let mut h = Harness::new();
        let mut q = EarlyRandomDrop::new(EarlyRandomDropConfig {
            limit: Limit::packets(10),
            threshold: 3,
            drop_probability: 1.0,
            victim: Victim::Queued,
            ..Default::default()
        });
        let ids: Vec<_> = (0..4).map(|i| h.packet(i, 100)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id);
        }
        let dropped = h.dropped();
        assert_eq!(dropped.len(), 1);
        assert!(ids[..3].contains(&dropped[0].0));
        assert_eq!(q.len_packets(), 3);
        assert_eq!(q.queue.back(), Some(ids[3]));
    }

    #[test]
    fn a_fixed_probability_drops_that_fraction_above_the_threshold() {
        let mut h = Harness::new();
        let mut q = EarlyRandomDrop::new(EarlyRandomDropConfig {
            limit: Limit::packets(100),
            threshold: 0,
            drop_probability: 0.2,
            ..Default::default()
        });
        let mut dropped = 0;
        for _ in 0..10_000 {
            let id = h.packet(0, 100);
            h.enqueue(&mut q, id);
            if h.dropped().last().is_some_and(|d| d.0 == id) {
                dropped += 1;
            }
            h.dequeue(&mut q);
        }
        // 2000 expected, sigma 40.
        assert!((1840..2160).contains(&dropped), "{dropped}");
    }
}
