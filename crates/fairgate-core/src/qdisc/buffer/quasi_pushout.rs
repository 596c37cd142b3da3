//! Quasi-pushout PFD: PFD's drop decisions with the O(1) discard-queue estimate of
//! quasi-pushout instead of an argmax over all queues.
//!
//! Source: [Vaidyanathan99, §3.5]. Quasi-pushout: Y.-S. Lin and
//! C. B. Shung, "Quasi-pushout cell discarding", IEEE Communications Letters, 1997.
//!
//! On every enqueue, dequeue and discard touching queue a:
//!   if n_a > discard_q_occupancy: discard_q = a, discard_q_occupancy = n_a
//!   else if a == discard_q:       discard_q_occupancy = n_a
//! On a PFD drop decision (overflow, or the early coin between thresh*B and B): push out the
//! head of discard_q.
//!
//! Decisions:
//! - The arrival's enqueue is applied to the estimate at the start of the arrival's decision
//!   (the scheduler reports it through `on_change` only after the decisions).
//! - n_a is q_a / s_a (see `soft_threshold.rs`), so the stored estimate does not go stale when
//!   the number of active queues changes; it still goes stale when discard_q is not touched.
//! - discard_q_occupancy starts at 0 with no discard queue. If discard_q is empty at a drop
//!   decision, `fallback = "arrival"` (default, O(1)) takes the head of the arrival's queue;
//!   `fallback = "scan"` takes the head of the true argmax (PFD's choice) and resets the
//!   estimate to it.
//! - Parameters, units and the early region are PFD's (`pfd.rs`).

use super::pfd::{EarlyRegion, PfdConfig};
use super::soft_threshold::{SoftThresholds, Thresholds};
use super::{BufferConfig, BufferManager, End, FlowQueues, Victim};
use crate::config::units::Duration;
use crate::config::ScenarioError;
use crate::qdisc::limit::limited_config;
use crate::qdisc::{DropReason, QdiscCtx};
use serde::{Deserialize, Serialize};

/// What to push out when the discard queue has drained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fallback {
    #[default]
    Arrival,
    Scan,
}

limited_config! {
    /// `buffer = { kind = "quasi_pushout_pfd", limit = 50, thresh = 0.2, p = 0.02 }`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct QuasiPushoutConfig {
        pub thresh: f64,
        pub p: f64,
        pub thresholds: Thresholds,
        pub rtts: Vec<Duration>,
        pub default_rtt: Duration,
        pub fallback: Fallback,
    }
}

impl Default for QuasiPushoutConfig {
    fn default() -> Self {
        let pfd = PfdConfig::default();
        QuasiPushoutConfig {
            limit: pfd.limit,
            thresh: pfd.thresh,
            p: pfd.p,
            thresholds: pfd.thresholds,
            rtts: pfd.rtts,
            default_rtt: pfd.default_rtt,
            fallback: Fallback::Arrival,
        }
    }
}

impl QuasiPushoutConfig {
    fn pfd(&self) -> PfdConfig {
        PfdConfig {
            limit: self.limit,
            thresh: self.thresh,
            p: self.p,
            thresholds: self.thresholds,
            rtts: self.rtts.clone(),
            default_rtt: self.default_rtt,
        }
    }
}

impl BufferConfig for QuasiPushoutConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.pfd().check(path)
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(QuasiPushout::new(self))
    }
}

pub struct QuasiPushout {
    region: EarlyRegion,
    shares: SoftThresholds,
    fallback: Fallback,
    discard_q: Option<u32>,
    discard_q_occupancy: f64,
}

impl QuasiPushout {
    pub fn new(config: &QuasiPushoutConfig) -> Self {
        let pfd = config.pfd();
        QuasiPushout {
            region: EarlyRegion {
                capacity: pfd.capacity(),
                thresh: pfd.thresh,
                p: pfd.p,
            },
            shares: pfd.soft_thresholds(),
            fallback: config.fallback,
            discard_q: None,
            discard_q_occupancy: 0.0,
        }
    }

    /// The tracked discard queue and its estimated normalised occupancy.
    pub fn estimate(&self) -> (Option<u32>, f64) {
        (self.discard_q, self.discard_q_occupancy)
    }

    fn touch(&mut self, queue: u32, queues: &dyn FlowQueues) {
        let n = self.shares.normalised(queues, queue);
        if n > self.discard_q_occupancy {
            self.discard_q = Some(queue);
            self.discard_q_occupancy = n;
        } else if self.discard_q == Some(queue) {
            self.discard_q_occupancy = n;
        }
    }

    fn push_out(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        reason: DropReason,
    ) -> Victim {
        let queue = match self.discard_q {
            Some(q) if queues.len_packets(q) > 0 => q,
            _ => self.fall_back(arrival_queue, queues),
        };
        Victim {
            queue,
            end: End::Head,
            reason,
            cause: Some(match reason {
                DropReason::Early => "quasi_pushout_early",
                _ => "quasi_pushout",
            }),
        }
    }

    fn fall_back(&mut self, arrival_queue: u32, queues: &dyn FlowQueues) -> u32 {
        match self.fallback {
            Fallback::Arrival => arrival_queue,
            Fallback::Scan => {
                let q = self.shares.most_occupied(queues).unwrap_or(arrival_queue);
                self.discard_q = Some(q);
                self.discard_q_occupancy = self.shares.normalised(queues, q);
                q
            }
        }
    }
}

impl BufferManager for QuasiPushout {
    fn over_capacity(&self, queues: &dyn FlowQueues) -> bool {
        self.region.capacity.exceeded(queues)
    }

    fn overflow(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        _ctx: &mut QdiscCtx,
    ) -> Victim {
        self.touch(arrival_queue, queues);
        self.push_out(arrival_queue, queues, DropReason::PushOut)
    }

    fn early(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        ctx: &mut QdiscCtx,
    ) -> Option<Victim> {
        self.touch(arrival_queue, queues);
        self.region
            .flip(queues, ctx)
            .then(|| self.push_out(arrival_queue, queues, DropReason::Early))
    }

    fn on_change(&mut self, queue: u32, queues: &dyn FlowQueues) {
        self.touch(queue, queues);
    }

    fn name(&self) -> &'static str {
        "quasi_pushout_pfd"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::testing::TestQueues;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::Limit;

    fn manager(limit: u64, p: f64, fallback: Fallback) -> QuasiPushout {
        QuasiPushout::new(&QuasiPushoutConfig {
            limit: Limit::packets(limit),
            p,
            fallback,
            ..Default::default()
        })
    }

    /// Follows the scheduler protocol for one arrival to `queue`; returns the victim, if any.
    fn arrive(
        m: &mut QuasiPushout,
        q: &mut TestQueues,
        queue: u32,
        h: &mut Harness,
    ) -> Option<Victim> {
        q.add(queue);
        let mut victim = m.early(queue, q, &mut h.ctx());
        if m.over_capacity(q) {
            victim = Some(m.overflow(queue, q, &mut h.ctx()));
        }
        if let Some(v) = victim {
            q.remove(v.queue);
            m.on_change(v.queue, q);
        }
        m.on_change(queue, q);
        victim
    }

    fn depart(m: &mut QuasiPushout, q: &mut TestQueues, queue: u32) {
        q.remove(queue);
        m.on_change(queue, q);
    }

    #[test]
    fn discard_queue_tracks_the_largest_touched_queue() {
        let mut h = Harness::new();
        let mut m = manager(100, 0.0, Fallback::Arrival);
        let mut q = TestQueues::new(&[0, 0, 0]);
        assert_eq!(m.estimate(), (None, 0.0));
        for queue in [0, 1, 1, 1, 0, 2] {
            arrive(&mut m, &mut q, queue, &mut h);
        }
        // Lengths 2, 3, 1: queue 1 took over at its second packet and holds 3.
        assert_eq!(m.estimate(), (Some(1), 3.0));
        // Departures from the discard queue refresh (lower) its estimate ...
        depart(&mut m, &mut q, 1);
        depart(&mut m, &mut q, 1);
        assert_eq!(m.estimate(), (Some(1), 1.0));
        // ... and the next touch of a larger queue takes over: queue 0 now holds 3 > 1.
        arrive(&mut m, &mut q, 0, &mut h);
        assert_eq!(m.estimate(), (Some(0), 3.0));
        // An untouched queue is not seen: queue 2 stays at 1 but 0 drains to 0.
        for _ in 0..3 {
            depart(&mut m, &mut q, 0);
        }
        assert_eq!(m.estimate(), (Some(0), 0.0));
    }

    #[test]
    fn overflow_pushes_out_the_head_of_the_discard_queue_not_the_true_longest() {
        let mut h = Harness::new();
        let mut m = manager(6, 0.0, Fallback::Arrival);
        let mut q = TestQueues::new(&[0, 0, 0]);
        for queue in [1, 1, 1, 2, 2] {
            arrive(&mut m, &mut q, queue, &mut h);
        }
        // The discard queue is 1 (3 packets); queue 2 holds 2. Queue 1 drains to 1 packet and
        // its estimate follows it down.
        depart(&mut m, &mut q, 1);
        depart(&mut m, &mut q, 1);
        assert_eq!(m.estimate(), (Some(1), 1.0));
        arrive(&mut m, &mut q, 0, &mut h);
        arrive(&mut m, &mut q, 0, &mut h);
        // Queue 0 reached 2 > 1 and took over; lengths 2, 1, 2, total 5.
        assert_eq!(m.estimate(), (Some(0), 2.0));
        arrive(&mut m, &mut q, 2, &mut h);
        // Queue 2 at 3 > 2 takes over: total 6 = B, no drop.
        assert_eq!(m.estimate(), (Some(2), 3.0));
        // The arrival to queue 1 makes 7 > B: the head of queue 2 is pushed out.
        let v = arrive(&mut m, &mut q, 1, &mut h).expect("overflow");
        assert_eq!(
            v,
            Victim {
                queue: 2,
                end: End::Head,
                reason: DropReason::PushOut,
                cause: Some("quasi_pushout"),
            }
        );
        assert_eq!(q.packets, vec![2, 2, 2]);
        assert_eq!(m.estimate(), (Some(2), 2.0));
    }

    #[test]
    fn an_empty_discard_queue_falls_back() {
        let mut q = TestQueues::new(&[0, 0, 0]);
        let mut arrival = manager(3, 0.0, Fallback::Arrival);
        let mut scan = manager(3, 0.0, Fallback::Scan);
        for m in [&mut arrival, &mut scan] {
            m.discard_q = Some(0);
            m.discard_q_occupancy = 9.0;
        }
        q.packets = vec![0, 3, 1];
        q.add(2);
        // Queue 0 (the stale discard queue) is empty; arrival fallback takes queue 2's head,
        // the scan takes the longest, queue 1.
        assert_eq!(arrival.push_out(2, &q, DropReason::PushOut).queue, 2);
        assert_eq!(scan.push_out(2, &q, DropReason::PushOut).queue, 1);
        assert_eq!(scan.estimate(), (Some(1), 3.0));
    }

    #[test]
    fn early_coin_uses_pfd_region() {
        let mut h = Harness::new();
        let mut m = manager(10, 1.0, Fallback::Arrival);
        let mut q = TestQueues::new(&[0, 0]);
        assert_eq!(arrive(&mut m, &mut q, 0, &mut h), None);
        assert_eq!(arrive(&mut m, &mut q, 1, &mut h), None);
        // Third packet: queue 1 (2 > 1) becomes the discard queue, and 3 > thresh * B = 2
        // with p = 1 pushes out its head.
        let v = arrive(&mut m, &mut q, 1, &mut h);
        assert_eq!(
            v,
            Some(Victim {
                queue: 1,
                end: End::Head,
                reason: DropReason::Early,
                cause: Some("quasi_pushout_early"),
            })
        );
    }
}
