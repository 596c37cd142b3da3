//! Soft thresholds b_i for the buffer managers of \[Vaidyanathan99] (LQD, RND, PFD,
//! quasi-pushout PFD): equal shares b_i = B/n, or RTT-proportional shares
//! b_i = RTT_i / sum_j RTT_j * B ([Vaidyanathan99, §3.4.3]).
//!
//! Decisions:
//! - Occupancy is counted in packets (the text's pseudo-code counts `q_size += 1`).
//! - A queue's normalised occupancy is kept as q_i / s_i, where s_i is its share weight (1 for
//!   equal shares, RTT_i for RTT shares): n_i = q_i / b_i = (q_i / s_i) * (sum_j s_j / B), and
//!   the factor in brackets is the same for every queue at a given instant, so the argmax is
//!   unchanged and no sum over active queues is needed (this also keeps quasi-pushout's stored
//!   estimate comparable when n changes).
//! - RTTs are known a priori: `rtts[k]` is the RTT of flow id k (the k-th data flow of the
//!   scenario); a queue whose flow is unknown (hashed buckets, ACK flows, ids past the list)
//!   takes `default_rtt`.
//! - Ties go to the first queue in `FlowQueues::backlogged` order.

use super::FlowQueues;
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use serde::{Deserialize, Serialize};

/// How the soft thresholds are shared out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Thresholds {
    /// b_i = B / n.
    #[default]
    Equal,
    /// b_i = RTT_i / sum_j RTT_j * B.
    Rtt,
}

pub fn default_rtt() -> Duration {
    Duration::from_secs(0.1)
}

/// Share weights s_i per queue.
#[derive(Clone, Debug, Default)]
pub struct SoftThresholds {
    rtt_secs: Option<Vec<f64>>,
    default_rtt_secs: f64,
}

impl SoftThresholds {
    pub fn new(kind: Thresholds, rtts: &[Duration], default_rtt: Duration) -> Self {
        SoftThresholds {
            rtt_secs: (kind == Thresholds::Rtt).then(|| rtts.iter().map(|d| d.secs()).collect()),
            default_rtt_secs: default_rtt.secs(),
        }
    }

    /// Checks the threshold fields of a manager config at `path`.
    pub fn validate(
        path: &str,
        kind: Thresholds,
        rtts: &[Duration],
        default_rtt: Duration,
    ) -> Result<(), ScenarioError> {
        check::positive(path, "default_rtt", default_rtt.secs())?;
        for (i, rtt) in rtts.iter().enumerate() {
            check::positive(path, &format!("rtts[{i}]"), rtt.secs())?;
        }
        if kind == Thresholds::Rtt && rtts.is_empty() {
            return Err(ScenarioError::new(
                crate::config::error::join(path, "rtts"),
                "got an empty list, expected one RTT per flow id when thresholds = \"rtt\"",
            ));
        }
        if kind == Thresholds::Equal && default_rtt != self::default_rtt() {
            return Err(ScenarioError::new(
                crate::config::error::join(path, "default_rtt"),
                format!(
                    "got {} s with thresholds = \"equal\", which shares the buffer equally and \
                     reads no RTT; expected thresholds = \"rtt\" beside it, or no `default_rtt` \
                     (its default, 0.1 s, cannot be told from the same value written out)",
                    default_rtt.secs()
                ),
            ));
        }
        if kind == Thresholds::Equal && !rtts.is_empty() {
            return Err(ScenarioError::new(
                crate::config::error::join(path, "rtts"),
                format!(
                    "got {} with thresholds = \"equal\", which shares the buffer equally and \
                     reads no RTT; expected thresholds = \"rtt\" beside `rtts`, or no `rtts`",
                    match rtts.len() {
                        1 => "1 RTT".to_string(),
                        n => format!("{n} RTTs"),
                    }
                ),
            ));
        }
        Ok(())
    }

    /// s_i: 1 for equal shares, the flow's RTT in seconds for RTT shares.
    pub fn share_weight(&self, queues: &dyn FlowQueues, queue: u32) -> f64 {
        let Some(rtts) = &self.rtt_secs else {
            return 1.0;
        };
        queues
            .flow_of(queue)
            .and_then(|f| rtts.get(f as usize).copied())
            .unwrap_or(self.default_rtt_secs)
    }

    /// q_i / s_i, proportional to n_i = q_i / b_i.
    pub fn normalised(&self, queues: &dyn FlowQueues, queue: u32) -> f64 {
        queues.len_packets(queue) as f64 / self.share_weight(queues, queue)
    }

    /// The backlogged queue with the largest normalised occupancy.
    pub fn most_occupied(&self, queues: &dyn FlowQueues) -> Option<u32> {
        if self.rtt_secs.is_none() {
            return longest(queues);
        }
        let mut best: Option<(u32, f64)> = None;
        for &q in queues.backlogged() {
            let n = self.normalised(queues, q);
            if best.is_none_or(|(_, b)| n > b) {
                best = Some((q, n));
            }
        }
        best.map(|(q, _)| q)
    }
}

/// The backlogged queue holding the most packets (first on ties).
pub fn longest(queues: &dyn FlowQueues) -> Option<u32> {
    let mut best: Option<(u32, usize)> = None;
    for &q in queues.backlogged() {
        let len = queues.len_packets(q);
        if best.is_none_or(|(_, b)| len > b) {
            best = Some((q, len));
        }
    }
    best.map(|(q, _)| q)
}
