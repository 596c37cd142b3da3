//! Weighted Fair Queueing as [Vaidyanathan99, §2.2] describes it:
//! stamp each packet with its finish time in the simulated bit-by-bit (GPS) server and serve
//! in increasing finish number; when an arrival finds the buffer full, discard packets in
//! decreasing finish number until it fits. Papers: Demers, Keshav, Shenker, SIGCOMM 1989;
//! Parekh and Gallager, "A generalized processor sharing approach", ToN 1993.
//!
//! It is FQ ([`super::fq`]) with promptness delta = 0 (so the bid equals the finish number,
//! F = max(F_prev, V(a)) + L/w with V the round number), per-flow weights, and the
//! largest-finish drop rule.
//!
//! Decisions:
//! - Default classification `flow` (\[Vaidyanathan99] uses the 5-tuple "f0"; the simulator's flow id
//!   is the exact equivalent), default limit 50 packets.
//! - A dropped packet is not charged (in GPS it never arrived); `charge_dropped = true` keeps
//!   the charge.
//! - `drop = "buffer"` hands the choice to the `buffer` manager instead (FQ's rules for
//!   `buffer` and `limit` beside it).
//! - FQ's `victim` is not exposed: WFQ admits first (`after_admission`); with its
//!   largest-finish rule the other choice drops the same packets (see `fq.rs`).

use super::fq::{FqConfig, FqDrop, FqVictim};
use crate::config::ScenarioError;
use crate::qdisc::buffer::BufferSpec;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{Qdisc, QdiscConfig, QdiscEnv};

limited_config! {
    /// `queue = { kind = "wfq", limit = 50, weights = [1.0, 2.0] }`
    #[derive(Clone, Debug)]
    pub struct WfqConfig {
        pub drop: FqDrop,
        pub charge_dropped: bool,
        pub classify: FlowKey,
        pub weights: Vec<f64>,
        /// The manager `drop = "buffer"` asks; none: drop-tail over `limit`.
        pub buffer: Option<BufferSpec>,
    }
}

impl Default for WfqConfig {
    fn default() -> Self {
        WfqConfig {
            limit: Limit::packets(50),
            drop: FqDrop::LargestBid,
            charge_dropped: false,
            classify: FlowKey::Flow,
            weights: Vec::new(),
            buffer: None,
        }
    }
}

impl WfqConfig {
    pub fn as_fq(&self) -> FqConfig {
        FqConfig {
            limit: self.limit,
            delta: 0.0,
            drop: self.drop,
            victim: FqVictim::AfterAdmission,
            charge_dropped: self.charge_dropped,
            classify: self.classify,
            weights: self.weights.clone(),
            buffer: self.buffer.clone(),
        }
    }
}

impl QdiscConfig for WfqConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.as_fq().check(path)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(self.as_fq().build_fq(env, None).renamed("wfq"))
    }
}
