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

use super::{BufferConfig, BufferManager, Capacity, End, FlowQueues, Victim};
use crate::config::{check, ScenarioError};
use crate::qdisc::{DropReason, QdiscCtx};
use serde::{Deserialize, Serialize};

/// `buffer = { kind = "drop_from_front", limit = 50 }`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DropFromFrontConfig {
    pub limit: u64,
    pub limit_bytes: Option<u64>,
}

impl Default for DropFromFrontConfig {
    fn default() -> Self {
        DropFromFrontConfig {
            limit: 50,
            limit_bytes: None,
        }
    }
}

impl BufferConfig for DropFromFrontConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.limit)?;
        if let Some(b) = self.limit_bytes {
            check::positive_int(path, "limit_bytes", b)?;
        }
        Ok(())
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(DropFromFront {
            capacity: Capacity {
                packets: self.limit,
                bytes: self.limit_bytes,
            },
        })
    }
}

pub struct DropFromFront {
    pub capacity: Capacity,
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
            limit: 4,
            limit_bytes: None,
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
                reason: DropReason::Front
            }
        );
    }
}
