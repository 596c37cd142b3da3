//! RND: on overflow, push out the head of a queue drawn uniformly among the non-conformant
//! ones (q_i > B/n).
//!
//! Source: [Vaidyanathan99, §3.2]. Paper: Suter, Lakshman, Stiliadis, Choudhury,
//! INFOCOM 1998.
//!
//! Decisions: occupancy and B in packets; n = backlogged queues including the arrival's (it is
//! already queued); one uniform draw over the non-conformant queues in `backlogged` order (count,
//! draw, find: two passes, no allocation). Over a byte limit with no queue above B/n in
//! packets, the longest queue is taken (LQD's choice).

use super::soft_threshold::longest;
use super::{BufferConfig, BufferManager, End, FlowQueues, Victim};
use crate::config::ScenarioError;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, QdiscCtx};
use rand::Rng as _;

limited_config! {
    /// `buffer = { kind = "rnd", limit = 50 }`.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct RndConfig {}
}

impl BufferConfig for RndConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(Rnd {
            capacity: self.limit,
        })
    }
}

pub struct Rnd {
    pub capacity: Limit,
}

impl Rnd {
    fn is_non_conformant(queues: &dyn FlowQueues, queue: u32, share: f64) -> bool {
        queues.len_packets(queue) as f64 > share
    }

    /// One uniform draw over the non-conformant queues: count them, draw an index, find it.
    fn pick(&self, queues: &dyn FlowQueues, ctx: &mut QdiscCtx) -> Option<u32> {
        let active = queues.backlogged();
        let share = self.capacity.packets as f64 / active.len().max(1) as f64;
        let count = active
            .iter()
            .filter(|&&q| Self::is_non_conformant(queues, q, share))
            .count();
        if count == 0 {
            return None;
        }
        let chosen = ctx.rng.random_range(0..count);
        active
            .iter()
            .copied()
            .filter(|&q| Self::is_non_conformant(queues, q, share))
            .nth(chosen)
    }
}

impl BufferManager for Rnd {
    fn over_capacity(&self, queues: &dyn FlowQueues) -> bool {
        self.capacity.exceeded(queues)
    }
    fn overflow(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        ctx: &mut QdiscCtx,
    ) -> Victim {
        let (queue, cause) = match self.pick(queues, ctx) {
            Some(queue) => (queue, "rnd_nonconformant"),
            None => (longest(queues).unwrap_or(arrival_queue), "rnd_longest"),
        };
        Victim {
            queue,
            end: End::Head,
            reason: DropReason::PushOut,
            cause: Some(cause),
        }
    }
    fn name(&self) -> &'static str {
        "rnd"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::testing::TestQueues;
    use crate::qdisc::testing::Harness;

    #[test]
    fn victims_are_uniform_over_non_conformant_queues() {
        // B = 12, n = 4, B/n = 3: queues 1 (4) and 3 (5) are non-conformant; 0 (1) and
        // 2 (3, exactly at its share) are not. Each of 1 and 3 is drawn half of the time.
        let mut h = Harness::new();
        let mut m = Rnd {
            capacity: Limit {
                packets: 12,
                bytes: None,
            },
        };
        let q = TestQueues::new(&[1, 4, 3, 5]);
        let mut counts = [0usize; 4];
        for _ in 0..4000 {
            let v = m.overflow(0, &q, &mut h.ctx());
            assert_eq!(v.end, End::Head);
            counts[v.queue as usize] += 1;
        }
        assert_eq!(counts[0] + counts[2], 0);
        // Binomial(4000, 0.5): mean 2000, sd 31.6.
        assert!((1870..=2130).contains(&counts[1]), "{counts:?}");
    }

    #[test]
    fn byte_overflow_without_a_non_conformant_queue_takes_the_longest() {
        let mut h = Harness::new();
        let mut m = Rnd {
            capacity: Limit {
                packets: 100,
                bytes: Some(500),
            },
        };
        let q = TestQueues::new(&[2, 4]);
        assert!(m.over_capacity(&q));
        assert_eq!(m.overflow(0, &q, &mut h.ctx()).queue, 1);
    }
}
