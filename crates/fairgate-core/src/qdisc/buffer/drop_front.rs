//! Drop-from-front for per-flow schedulers: on overflow, discard the head of the arriving
//! flow's queue instead of the arrival.
//!
//! Source: [Vaidyanathan99, §3.2]. Paper: T. V. Lakshman, A. Neidhardt, T. J. Ott,
//! "The drop from front strategy in TCP and in TCP over ATM", INFOCOM 1996.
//!
//! Decision: the thesis describes drop-from-front for one FIFO (drop the oldest packet). With
//! per-flow queues the manager cannot see packet ages, so it drops the head of the arrival's
//! own queue: that flow learns of the loss one queue-drain time earlier, as in the FIFO case,
//! and the choice is O(1). (The head of the longest queue is LQD.)

use super::{BufferConfig, BufferManager, End, FlowQueues, Victim};
use crate::config::ScenarioError;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, QdiscCtx};

limited_config! {
    /// `buffer = { kind = "drop_from_front", limit = 50 }`.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct DropFromFrontConfig {}
}

impl BufferConfig for DropFromFrontConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(DropFromFront {
            capacity: self.limit,
        })
    }
}

pub struct DropFromFront {
    pub capacity: Limit,
}

impl BufferManager for DropFromFront {
    fn over_capacity(&self, queues: &dyn FlowQueues) -> bool {
        self.capacity.exceeded(queues)
    }
    fn overflow(
        &mut self,
        arrival_queue: u32,
        _queues: &dyn FlowQueues,
        _ctx: &mut QdiscCtx,
    ) -> Victim {
        Victim {
            queue: arrival_queue,
            end: End::Head,
            reason: DropReason::Front,
            cause: Some("drop_front"),
        }
    }
    fn name(&self) -> &'static str {
        "drop_from_front"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::testing::TestQueues;
    use crate::qdisc::testing::Harness;

    #[test]
    fn overflow_discards_the_head_of_the_arrivals_queue() {
        let mut h = Harness::new();
        let mut m = DropFromFrontConfig {
            limit: Limit::packets(4),
        }
        .build();
        assert!(!m.over_capacity(&TestQueues::new(&[3, 1])));
        let q = TestQueues::new(&[4, 1]);
        assert!(m.over_capacity(&q));
        let v = m.overflow(1, &q, &mut h.ctx());
        assert_eq!(
            v,
            Victim {
                queue: 1,
                end: End::Head,
                reason: DropReason::Front,
                cause: Some("drop_front"),
            }
        );
    }
}
