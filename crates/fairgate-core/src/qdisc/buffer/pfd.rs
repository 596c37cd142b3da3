//! Probabilistic Fair Drop (PFD): early, probabilistic push-out from the head of the queue
//! with the largest normalised occupancy.
//!
//! Source: [Vaidyanathan99, §3.3] (fig. 3.3) and [Vaidyanathan99, §3.4.3] (RTT soft
//! thresholds).
//!
//! After the arrival is appended (total occupancy q_size):
//! - q_size > B: push out the head of argmax_i n_i (hard overflow);
//! - else q_size > thresh * B: with probability p push out the head of argmax_i n_i;
//! - else accept.
//!
//! n_i = q_i / b_i with soft thresholds b_i = B/n (default) or RTT-proportional
//! (`thresholds = "rtt"`, `rtts = ["20ms", "40ms", ...]` indexed by flow id); see
//! `soft_threshold.rs` for how n_i is computed.
//!
//! Decisions:
//! - Occupancy in packets; B = `limit`; with `limit_bytes` set, the byte total is checked too
//!   (above thresh * limit_bytes counts as above the threshold, above limit_bytes as overflow).
//! - n counts the backlogged queues including the arrival's; the arrival is already queued, so
//!   the push-out may take the arrival itself (its queue holding only it).
//! - Ties: the first backlogged queue in the scheduler's order.
//! - At most one early push-out per arrival; the coin is drawn only between thresh*B and B.

use super::soft_threshold::{default_rtt, SoftThresholds, Thresholds};
use super::{BufferConfig, BufferManager, End, FlowQueues, Victim};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::qdisc::limit::limited_config;
use crate::qdisc::Cause;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, QdiscCtx};
use rand::Rng as _;

limited_config! {
    /// `buffer = { kind = "pfd", limit = 50, thresh = 0.2, p = 0.02 }`.
    #[derive(Clone, Debug, PartialEq)]
    pub struct PfdConfig {
        /// Early-drop threshold as a fraction of B. \[Vaidyanathan99]: 0.2.
        pub thresh: f64,
        /// Early-drop probability. \[Vaidyanathan99]: 0.02.
        pub p: f64,
        pub thresholds: Thresholds,
        /// RTT of each flow id, for `thresholds = "rtt"`.
        pub rtts: Vec<Duration>,
        /// RTT of a queue whose flow is not in `rtts`.
        pub default_rtt: Duration,
    }
}

impl Default for PfdConfig {
    fn default() -> Self {
        PfdConfig {
            limit: Limit::packets(50),
            thresh: 0.2,
            p: 0.02,
            thresholds: Thresholds::Equal,
            rtts: Vec::new(),
            default_rtt: default_rtt(),
        }
    }
}

impl PfdConfig {
    pub fn check(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        check::in_range(path, "thresh", self.thresh, 0.0, 1.0)?;
        check::probability(path, "p", self.p)?;
        SoftThresholds::validate(path, self.thresholds, &self.rtts, self.default_rtt)
    }

    pub fn capacity(&self) -> Limit {
        self.limit
    }

    pub fn soft_thresholds(&self) -> SoftThresholds {
        SoftThresholds::new(self.thresholds, &self.rtts, self.default_rtt)
    }
}

impl BufferConfig for PfdConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.check(path)
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(Pfd::new(self))
    }
}

/// The early-drop region test shared with quasi-pushout PFD.
#[derive(Clone, Copy, Debug)]
pub struct EarlyRegion {
    pub capacity: Limit,
    pub thresh: f64,
    pub p: f64,
}

impl EarlyRegion {
    /// True above thresh * B but not above B.
    pub fn contains(&self, queues: &dyn FlowQueues) -> bool {
        let above_packets =
            queues.total_packets() as f64 > self.thresh * self.capacity.packets as f64;
        let above_bytes = self
            .capacity
            .bytes
            .is_some_and(|b| queues.total_bytes() as f64 > self.thresh * b as f64);
        (above_packets || above_bytes) && !self.capacity.exceeded(queues)
    }

    /// Whether this arrival triggers an early push-out (the coin is drawn only in the region).
    pub fn flip(&self, queues: &dyn FlowQueues, ctx: &mut QdiscCtx) -> bool {
        self.contains(queues) && ctx.rng.random::<f64>() < self.p
    }
}

pub struct Pfd {
    region: EarlyRegion,
    shares: SoftThresholds,
}

impl Pfd {
    pub fn new(config: &PfdConfig) -> Self {
        Pfd {
            region: EarlyRegion {
                capacity: config.capacity(),
                thresh: config.thresh,
                p: config.p,
            },
            shares: config.soft_thresholds(),
        }
    }

    fn push_out(&self, arrival_queue: u32, queues: &dyn FlowQueues, reason: DropReason) -> Victim {
        Victim {
            queue: self.shares.most_occupied(queues).unwrap_or(arrival_queue),
            end: End::Head,
            reason,
            cause: Some(Self::cause(reason)),
        }
    }

    /// `pfd_early` for a push-out in the early region, `pfd_pushout` for one at overflow.
    fn cause(reason: DropReason) -> Cause {
        match reason {
            DropReason::Early => "pfd_early",
            _ => "pfd_pushout",
        }
    }
}

impl BufferManager for Pfd {
    fn over_capacity(&self, queues: &dyn FlowQueues) -> bool {
        self.region.capacity.exceeded(queues)
    }

    fn overflow(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        _ctx: &mut QdiscCtx,
    ) -> Victim {
        self.push_out(arrival_queue, queues, DropReason::PushOut)
    }

    fn early(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        ctx: &mut QdiscCtx,
    ) -> Option<Victim> {
        self.region
            .flip(queues, ctx)
            .then(|| self.push_out(arrival_queue, queues, DropReason::Early))
    }

    fn name(&self) -> &'static str {
        "pfd"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::testing::TestQueues;
    use crate::qdisc::testing::Harness;

    fn pfd(limit: u64, p: f64) -> Pfd {
        Pfd::new(&PfdConfig {
            limit: Limit::packets(limit),
            p,
            ..Default::default()
        })
    }

    #[test]
    fn overflow_pushes_out_the_head_of_the_longest_queue() {
        let mut h = Harness::new();
        let mut m = pfd(10, 0.02);
        // 11 packets > B = 10 after an arrival to queue 0; queue 2 is longest (5).
        let q = TestQueues::new(&[2, 4, 5]);
        assert!(m.over_capacity(&q));
        let v = m.overflow(0, &q, &mut h.ctx());
        assert_eq!(
            v,
            Victim {
                queue: 2,
                end: End::Head,
                reason: DropReason::PushOut,
                cause: Some("pfd_pushout"),
            }
        );
    }

    #[test]
    fn rtt_thresholds_normalise_by_rtt() {
        // RTTs 20, 40, 200 ms, B = 20: b_i = RTT_i / 0.26 s * 20 = 1.538, 3.077, 15.385;
        // n_i = 4 / 1.538 = 2.6, 6 / 3.077 = 1.95, 11 / 15.385 = 0.715. Queue 0 has the
        // largest normalised occupancy although queue 2 is the longest (equal b_i = 20/3
        // would choose queue 2).
        let mut h = Harness::new();
        let config = PfdConfig {
            limit: Limit::packets(20),
            thresholds: Thresholds::Rtt,
            rtts: [0.02, 0.04, 0.2].map(Duration::from_secs).to_vec(),
            ..Default::default()
        };
        let q = TestQueues::new(&[4, 6, 11]);
        assert_eq!(Pfd::new(&config).overflow(1, &q, &mut h.ctx()).queue, 0);
        assert_eq!(pfd(20, 0.02).overflow(1, &q, &mut h.ctx()).queue, 2);
        // A queue whose flow is unknown takes default_rtt (100 ms): 6 / 0.1 = 60 > 55.
        let mut q = TestQueues::new(&[0, 6, 11]);
        q.flows[1] = None;
        assert_eq!(Pfd::new(&config).overflow(1, &q, &mut h.ctx()).queue, 1);
    }

    #[test]
    fn coin_is_flipped_only_between_thresh_b_and_b() {
        let mut h = Harness::new();
        let mut always = pfd(10, 1.0);
        // thresh * B = 2: two packets are below it, three are above.
        assert_eq!(
            always.early(0, &TestQueues::new(&[1, 1]), &mut h.ctx()),
            None
        );
        let v = always.early(0, &TestQueues::new(&[1, 2]), &mut h.ctx());
        assert_eq!(
            v,
            Some(Victim {
                queue: 1,
                end: End::Head,
                reason: DropReason::Early,
                cause: Some("pfd_early"),
            })
        );
        // Above B the early test stays out: overflow handles it.
        assert_eq!(
            always.early(0, &TestQueues::new(&[5, 6]), &mut h.ctx()),
            None
        );
        let mut never = pfd(10, 0.0);
        assert_eq!(
            never.early(0, &TestQueues::new(&[1, 4]), &mut h.ctx()),
            None
        );
    }

    #[test]
    fn early_drops_happen_with_probability_p() {
        let mut h = Harness::new();
        let mut m = pfd(10, 0.3);
        let q = TestQueues::new(&[3, 3]);
        let drops = (0..2000)
            .filter(|_| m.early(0, &q, &mut h.ctx()).is_some())
            .count();
        // Binomial(2000, 0.3): mean 600, sd 20.5.
        assert!((520..=680).contains(&drops), "{drops}");
    }

    #[test]
    fn rtt_thresholds_parse_from_toml() {
        let text = r#"kind = "pfd"
thresholds = "rtt"
rtts = ["20ms", 0.04]
p = 0.05"#;
        let spec: crate::qdisc::buffer::BufferSpec = toml::from_str(text).unwrap();
        let crate::qdisc::buffer::BufferSpec::Pfd(config) = spec else {
            panic!("not pfd")
        };
        assert_eq!(config.rtts, [0.02, 0.04].map(Duration::from_secs).to_vec());
        assert_eq!(
            (config.p, config.thresh, config.limit.packets),
            (0.05, 0.2, 50)
        );
    }

    #[test]
    fn rtts_beside_equal_thresholds_are_refused_not_ignored() {
        let spec: crate::qdisc::buffer::BufferSpec =
            toml::from_str("kind = \"pfd\"\nrtts = [\"20ms\"]").unwrap();
        let e = spec.validate("q.buffer").unwrap_err();
        assert_eq!(e.path, "q.buffer.rtts");
        assert!(e.message.starts_with("got 1 RTT with thresholds"), "{e}");
        assert!(
            e.message
                .contains("expected thresholds = \"rtt\" beside `rtts`"),
            "{e}"
        );
    }

    #[test]
    fn a_default_rtt_beside_equal_thresholds_is_refused_unless_it_is_the_default() {
        let spec = |text: &str| toml::from_str::<crate::qdisc::buffer::BufferSpec>(text).unwrap();
        let e = spec("kind = \"lqd\"\ndefault_rtt = \"50ms\"")
            .validate("q")
            .unwrap_err();
        assert_eq!(e.path, "q.default_rtt");
        assert!(spec("kind = \"lqd\"\ndefault_rtt = \"100ms\"")
            .validate("q")
            .is_ok());
        let rtt = "kind = \"pfd\"\nthresholds = \"rtt\"\nrtts = [0.1]\ndefault_rtt = \"50ms\"";
        assert!(spec(rtt).validate("q").is_ok());
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let cases = [
            (
                PfdConfig {
                    thresh: 1.5,
                    ..Default::default()
                },
                "b.thresh",
            ),
            (
                PfdConfig {
                    p: -0.1,
                    ..Default::default()
                },
                "b.p",
            ),
            (
                PfdConfig {
                    limit: Limit::packets(0),
                    ..Default::default()
                },
                "b.limit",
            ),
            (
                PfdConfig {
                    thresholds: Thresholds::Rtt,
                    ..Default::default()
                },
                "b.rtts",
            ),
            (
                PfdConfig {
                    rtts: vec![Duration(0)],
                    ..Default::default()
                },
                "b.rtts[0]",
            ),
        ];
        for (config, path) in cases {
            assert_eq!(config.check("b").expect_err(path).path, path);
        }
    }
}
