//! Nagle's fair queueing: one FIFO per source host, served round robin one packet per visit,
//! skipping empty queues; on overflow the tail of the longest queue is dropped. \[Vaidyanathan99]
//! section 2.2 and [Keshav91, ch. 2] (which notes that it is
//! unfair to sources with small packets and violates the continuity requirement). Paper:
//! J. Nagle, "On packet switches with infinite storage", IEEE Trans. Commun. 35(4), 1987.
//!
//! Decisions:
//! - Buffer `limit` in packets (default 50); "longest" is counted in packets (the text does
//!   not say bytes or packets; Nagle's switch counted packets).
//! - `classify` defaults to `source`; any other key may be chosen.
//! - `drop = "buffer"` hands dropping to the `buffer` manager instead (drop-tail over
//!   `limit` when `buffer` is absent); a `buffer` beside `drop = "longest"`, or a `limit`
//!   other than the manager's beside a `buffer`, is refused rather than unused.

use super::wrr::Wrr;
use crate::config::{check, ScenarioError};
use crate::qdisc::buffer::{check_manager_keys, BufferSpec};
use crate::qdisc::classify::FlowKey;
use crate::qdisc::structures::flow_table::FlowTable;
use crate::qdisc::{Limit, Qdisc, QdiscConfig, QdiscEnv};
use serde::{Deserialize, Serialize};

/// Which rule decides what Nagle's round robin drops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NagleDrop {
    #[default]
    Longest,
    Buffer,
}

/// `queue = { kind = "nagle", limit = 50 }`
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct NagleConfig {
    pub limit: u64,
    pub drop: NagleDrop,
    pub classify: FlowKey,
    /// The manager `drop = "buffer"` asks; none: drop-tail over `limit`.
    pub buffer: Option<BufferSpec>,
}

impl Default for NagleConfig {
    fn default() -> Self {
        NagleConfig {
            limit: 50,
            drop: NagleDrop::default(),
            classify: FlowKey::Source,
            buffer: None,
        }
    }
}

impl NagleConfig {
    /// The buffer manager `drop = "buffer"` asks: `buffer`, else drop-tail over `limit`.
    fn manager(&self) -> BufferSpec {
        BufferSpec::given_or_drop_tail(self.buffer.as_ref(), Limit::packets(self.limit))
    }
}

impl QdiscConfig for NagleConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.limit)?;
        let asks_manager = self.drop == NagleDrop::Buffer;
        let own = Limit::packets(self.limit);
        check_manager_keys(path, asks_manager, self.buffer.as_ref(), own)?;
        self.manager().validate(&format!("{path}.buffer"))
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        let limit = (self.drop == NagleDrop::Longest).then_some(self.limit);
        let table = FlowTable::new(self.classify, Vec::new());
        let mut wrr = Wrr::new(table, self.manager().build(), limit);
        wrr.rename("nagle");
        Box::new(wrr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::DropReason;

    #[test]
    fn a_buffer_is_asked_only_with_drop_buffer_and_defaults_to_the_own_limit() {
        let config = |text: &str| toml::from_str::<NagleConfig>(text).unwrap();
        let e = config("buffer = { kind = \"rnd\" }")
            .validate("q")
            .unwrap_err();
        assert_eq!(e.path, "q.buffer");
        let e = config("drop = \"buffer\"\nlimit = 4\nbuffer = { kind = \"rnd\" }");
        assert_eq!(e.validate("q").unwrap_err().path, "q.limit");
        let own = config("drop = \"buffer\"\nlimit = 4").manager();
        assert_eq!(own.limit(), Limit::packets(4));
    }

    #[test]
    fn round_robin_per_source_and_longest_queue_drop() {
        // limit 4: source 1 sends 3 packets, source 2 one, then source 2 a second: the
        // buffer holds 5 > 4 and the tail of source 1 (3 packets, the longest) is dropped.
        let mut h = Harness::new();
        let config: NagleConfig = toml::from_str("limit = 4").unwrap();
        let env = QdiscEnv {
            link_rate_bps: h.link_rate_bps,
            port: "x".into(),
        };
        let mut q = config.build(&env);
        let a: Vec<_> = (0..3).map(|_| h.packet(1, 100)).collect();
        let b: Vec<_> = (0..2).map(|_| h.packet(2, 40)).collect();
        for &id in a.iter().chain(&b) {
            h.enqueue(q.as_mut(), id);
        }
        assert_eq!(h.dropped(), vec![(a[2], DropReason::PushOut)]);
        let order: Vec<_> = std::iter::from_fn(|| h.dequeue(q.as_mut())).collect();
        assert_eq!(order, vec![a[0], b[0], a[1], b[1]]);
    }
}
