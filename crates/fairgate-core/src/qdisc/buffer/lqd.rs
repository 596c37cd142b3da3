//! Longest Queue Drop (LQD): on overflow, push out the head of the queue that exceeds its
//! share most.
//!
//! Source: [Vaidyanathan99, §3.2]. Paper: B. Suter, T. V. Lakshman, D. Stiliadis,
//! A. Choudhury, "Design considerations for supporting TCP with per-flow queueing",
//! INFOCOM 1998.
//!
//! Decisions: soft thresholds b = B/n are equal, so the queue exceeding its share most is the
//! longest, in packets, judged by instantaneous length; ties go to the first backlogged
//! queue; the victim is the head (the text: "drop from the head"). `thresholds = "rtt"` uses
//! the RTT-proportional shares of `soft_threshold.rs`, as for PFD.

use super::soft_threshold::{default_rtt, SoftThresholds, Thresholds};
use super::{BufferConfig, BufferManager, End, FlowQueues, Victim};
use crate::config::units::Duration;
use crate::config::ScenarioError;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, QdiscCtx};

limited_config! {
    /// `buffer = { kind = "lqd", limit = 50 }`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct LqdConfig {
        pub thresholds: Thresholds,
        pub rtts: Vec<Duration>,
        pub default_rtt: Duration,
    }
}

impl Default for LqdConfig {
    fn default() -> Self {
        LqdConfig {
            limit: Limit::packets(50),
            thresholds: Thresholds::Equal,
            rtts: Vec::new(),
            default_rtt: default_rtt(),
        }
    }
}

impl BufferConfig for LqdConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        SoftThresholds::validate(path, self.thresholds, &self.rtts, self.default_rtt)
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(Lqd {
            capacity: self.limit,
            shares: SoftThresholds::new(self.thresholds, &self.rtts, self.default_rtt),
        })
    }
}

pub struct Lqd {
    pub capacity: Limit,
    pub shares: SoftThresholds,
}

impl BufferManager for Lqd {
    fn over_capacity(&self, queues: &dyn FlowQueues) -> bool {
        self.capacity.exceeded(queues)
    }
    fn overflow(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        _ctx: &mut QdiscCtx,
    ) -> Victim {
        Victim {
            queue: self.shares.most_occupied(queues).unwrap_or(arrival_queue),
            end: End::Head,
            reason: DropReason::PushOut,
            cause: Some("lqd_longest"),
        }
    }
    fn name(&self) -> &'static str {
        "lqd"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::testing::TestQueues;
    use crate::qdisc::testing::Harness;

    #[test]
    fn overflow_takes_the_head_of_the_longest_queue_first_on_ties() {
        let mut h = Harness::new();
        let mut m = LqdConfig {
            limit: Limit::packets(8),
            ..Default::default()
        }
        .build();
        let q = TestQueues::new(&[3, 1, 3, 2]);
        assert!(m.over_capacity(&q));
        let v = m.overflow(1, &q, &mut h.ctx());
        assert_eq!(
            v,
            Victim {
                queue: 0,
                end: End::Head,
                reason: DropReason::PushOut,
                cause: Some("lqd_longest"),
            }
        );
        assert!(!m.over_capacity(&TestQueues::new(&[3, 1, 2, 2])));
        // A byte limit also counts: 4 packets of 100 B exceed 350 B.
        let bytes = LqdConfig {
            limit: Limit::packets_and_bytes(8, 350),
            ..Default::default()
        }
        .build();
        assert!(bytes.over_capacity(&TestQueues::new(&[2, 2])));
    }
}
