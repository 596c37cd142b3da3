//! FQ-RED: RED as the buffer manager of a per-flow scheduler. One RED average over the
//! shared buffer decides, per arrival, whether the arrival itself is discarded.
//!
//! Source: [Vaidyanathan99, §3.2] (RED among the buffer managers compared under start-time FQ,
//! §3.5) and \[Floyd93] (the average, p_b and count spacing, reused from `aqm/red.rs`).
//!
//! Decisions (docs/models/fq_red.md gives the reasons):
//! - Global, not per queue: the thesis calls RED a scheme "with a global threshold", credits
//!   its fairness to "the random choice of flow" and its behaviour at large buffers to the
//!   low *average queue occupancy*: one average over the total backlog, in packets.
//! - The victim is the arrival (tail of its own queue): "the dropping of the incoming packet"
//!   [Vaidyanathan99, §3.2]; early and forced decisions as in \[Floyd93] (no gentle region).
//! - min_th and max_th are fractions of B, so they follow a buffer sweep: min_th = 0.2 B
//!   (where PFD's early region starts), max_th = 0.6 B (max_th = 3 min_th \[Floyd93]),
//!   max_p = 0.02 (PFD's p), w_q = 0.002 \[Floyd93].
//! - The average sees the backlog before the arrival (the arrival is already queued when the
//!   hook runs); a full buffer refuses the arrival as drop-tail does.

use super::droptail::DropTail;
use super::{BufferConfig, BufferManager, End, FlowQueues, Victim};
use crate::config::{check, ScenarioError};
use crate::qdisc::aqm::red::{RedConfig, RedCore};
use crate::qdisc::aqm::Watched;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::QdiscCtx;

limited_config! {
    /// `buffer = { kind = "red", limit = 50, min_th = 0.2, max_th = 0.6, max_p = 0.02 }`.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct FqRedConfig {
        /// Minimum threshold as a fraction of B.
        pub min_th: f64,
        /// Maximum threshold as a fraction of B.
        pub max_th: f64,
        pub max_p: f64,
        pub w_q: f64,
    }
}

impl Default for FqRedConfig {
    fn default() -> Self {
        FqRedConfig {
            limit: Limit::packets(50),
            min_th: 0.2,
            max_th: 0.6,
            max_p: 0.02,
            w_q: 0.002,
        }
    }
}

impl FqRedConfig {
    /// The RED parameters in packets for this buffer.
    pub fn red(&self) -> RedConfig {
        let b = self.limit.packets as f64;
        RedConfig {
            limit: self.limit,
            min_th: self.min_th * b,
            max_th: self.max_th * b,
            max_p: self.max_p,
            w_q: self.w_q,
            ..RedConfig::floyd93()
        }
    }
}

impl BufferConfig for FqRedConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        check::in_range(path, "min_th", self.min_th, 0.0, 1.0)?;
        check::in_range(path, "max_th", self.max_th, 0.0, 1.0)?;
        check::positive(path, "max_th", self.max_th)?;
        check::ordered(path, "min_th", self.min_th, "max_th", self.max_th)?;
        self.red().check(path)
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(FqRed {
            full: DropTail {
                capacity: self.limit,
            },
            red: self.red(),
            core: None,
        })
    }
}

pub struct FqRed {
    /// A full buffer refuses the arrival, as drop-tail does.
    full: DropTail,
    red: RedConfig,
    /// Built at the first arrival, when the link rate (the idle-decay unit) is known.
    core: Option<RedCore>,
}

impl FqRed {
    pub fn average(&self) -> f64 {
        self.core.as_ref().map_or(0.0, |c| c.avg)
    }
}

impl BufferManager for FqRed {
    fn over_capacity(&self, queues: &dyn FlowQueues) -> bool {
        self.full.over_capacity(queues)
    }
    fn overflow(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        ctx: &mut QdiscCtx,
    ) -> Victim {
        self.full.overflow(arrival_queue, queues, ctx)
    }
    fn early(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        ctx: &mut QdiscCtx,
    ) -> Option<Victim> {
        let red = self.red;
        let core = self
            .core
            .get_or_insert_with(|| RedCore::new(red, ctx.link_rate_bps));
        let before = Watched {
            packets: queues.total_packets().saturating_sub(1),
            bytes: queues.total_bytes(),
            idle_since: ctx.idle_since,
        };
        core.update_average(&before, ctx.now);
        let u = crate::qdisc::aqm::uniform(ctx);
        let (reason, cause) = core
            .decide(0, u)
            .notification_as(["fq_red_early", "fq_red_forced"])?;
        Some(Victim {
            queue: arrival_queue,
            end: End::Tail,
            reason,
            cause: Some(cause),
        })
    }
    fn name(&self) -> &'static str {
        "red"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::testing::TestQueues;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::DropReason;

    fn manager(max_p: f64) -> Box<dyn BufferManager> {
        FqRedConfig {
            limit: Limit::packets(10),
            max_p,
            w_q: 1.0,
            ..Default::default()
        }
        .build()
    }

    #[test]
    fn thresholds_are_fractions_of_the_buffer() {
        let red = FqRedConfig {
            limit: Limit::packets(100),
            ..Default::default()
        }
        .red();
        assert_eq!((red.min_th, red.max_th), (20.0, 60.0));
        assert!(!red.gentle);
    }

    #[test]
    fn below_min_th_every_arrival_is_accepted() {
        let mut h = Harness::new();
        let mut m = manager(1.0);
        // One packet before the arrival: avg = 1 < min_th = 2.
        let q = TestQueues::new(&[1, 1]);
        for _ in 0..1000 {
            assert_eq!(m.early(1, &q, &mut h.ctx()), None);
        }
    }

    #[test]
    fn above_max_th_the_arrival_itself_is_dropped_not_the_longest_queue() {
        let mut h = Harness::new();
        let mut m = manager(0.02);
        // 7 packets before the arrival (max_th = 6): forced, and the victim is the arrival's
        // queue (1), though queue 0 is the longest.
        let q = TestQueues::new(&[6, 2]);
        let v = m.early(1, &q, &mut h.ctx());
        assert_eq!(
            v,
            Some(Victim {
                queue: 1,
                end: End::Tail,
                reason: DropReason::Forced,
                cause: Some("fq_red_forced"),
            })
        );
    }

    #[test]
    fn early_drops_follow_red_count_spacing_of_the_global_average() {
        // avg = 4 with min_th 2, max_th 6, max_p 0.2: p_b = 0.1. Count restarts at 0 after a
        // drop and p_a = p_b / (1 - count p_b) reaches 1 at count 9, so the gap between early
        // drops is uniform on 1..=9 arrivals [Floyd93]: mean 5, a drop fraction of 1/5.
        let mut h = Harness::new();
        let mut m = manager(0.2);
        let q = TestQueues::new(&[3, 2]);
        let drops = (0..5000)
            .filter(|_| m.early(0, &q, &mut h.ctx()).is_some())
            .count();
        // Renewal count: mean 1000, sd about 16.
        assert!((940..=1060).contains(&drops), "{drops}");
    }

    #[test]
    fn bad_thresholds_name_the_field() {
        let err = FqRedConfig {
            min_th: 0.7,
            ..Default::default()
        }
        .validate("links[0].qdisc.buffer")
        .unwrap_err();
        assert!(
            err.to_string().contains("links[0].qdisc.buffer.max_th"),
            "{err}"
        );
        let err = FqRedConfig {
            max_th: 1.5,
            ..Default::default()
        }
        .validate("b")
        .unwrap_err();
        assert!(err.to_string().contains("b.max_th"), "{err}");
    }
}
