//! FQbit, [Keshav91, §6.5]: a fair-queueing switch
//! for DECbit sources that sets the congestion bit on a packet whenever its conversation's
//! queue exceeds one third of its fair share of buffer space (an ad hoc constant the thesis
//! says was tuned). Everything else is FQ ([`super::fq`]).
//!
//! Decisions:
//! - The fair share of buffer space is `limit / n` with n the number of conversations with a
//!   packet queued, the arrival counted; the queue length includes the arrival; the bit is set
//!   on the arriving packet (if it was not dropped).
//! - `fraction` (default 1/3) is settable.
//! - Every FQ key applies, `victim` included; a packet dropped on arrival is never marked.

use super::fq::{FqConfig, FqDrop, FqVictim};
use crate::config::{check, ScenarioError};
use crate::qdisc::buffer::BufferSpec;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::limit::limited_config;
use crate::qdisc::{Qdisc, QdiscConfig, QdiscEnv};

limited_config! {
    /// `queue = { kind = "fqbit", limit = 25, fraction = 0.3333 }` plus every FQ key.
    #[derive(Clone, Debug)]
    pub struct FqbitConfig {
        pub fraction: f64,
        pub delta: f64,
        pub drop: FqDrop,
        pub victim: FqVictim,
        pub charge_dropped: bool,
        pub classify: FlowKey,
        pub weights: Vec<f64>,
        /// The manager `drop = "buffer"` asks; none: drop-tail over `limit`.
        pub buffer: Option<BufferSpec>,
    }
}

impl Default for FqbitConfig {
    /// FQ's defaults; the bit is set above a third of the fair share of buffer space.
    fn default() -> Self {
        let fq = FqConfig::default();
        FqbitConfig {
            fraction: 1.0 / 3.0,
            limit: fq.limit,
            delta: fq.delta,
            drop: fq.drop,
            victim: fq.victim,
            charge_dropped: fq.charge_dropped,
            classify: fq.classify,
            weights: fq.weights,
            buffer: fq.buffer,
        }
    }
}

impl FqbitConfig {
    fn as_fq(&self) -> FqConfig {
        FqConfig {
            limit: self.limit,
            delta: self.delta,
            drop: self.drop,
            victim: self.victim,
            charge_dropped: self.charge_dropped,
            classify: self.classify,
            weights: self.weights.clone(),
            buffer: self.buffer.clone(),
        }
    }
}

impl QdiscConfig for FqbitConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive(path, "fraction", self.fraction)?;
        self.as_fq().check(path)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(self.as_fq().build_fq(env, Some(self.fraction)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::flags;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::DropReason;
    use crate::qdisc::Limit;

    #[test]
    fn bit_set_above_a_third_of_the_fair_share() {
        // limit 12, two conversations backlogged: fair share 6, a third of it 2. The third
        // packet of conversation 0 (queue length 3 > 2) gets the bit; the first two do not.
        let mut h = Harness::new();
        let config = FqbitConfig {
            limit: Limit::packets(12),
            ..toml::from_str("").unwrap()
        };
        let env = QdiscEnv {
            link_rate_bps: h.link_rate_bps,
            port: "x".into(),
        };
        let mut q = config.build(&env);
        let other = h.packet(9, 100);
        h.packets.get_mut(other).src = 9;
        h.enqueue(q.as_mut(), other);
        let ids: Vec<_> = (0..3).map(|_| h.packet(0, 100)).collect();
        for &id in &ids {
            h.enqueue(q.as_mut(), id);
        }
        let bits: Vec<bool> = ids
            .iter()
            .map(|&id| h.packets.get(id).has(flags::DECBIT))
            .collect();
        assert_eq!(bits, vec![false, false, true]);
        assert_eq!(h.marks(DropReason::Early), 1);
    }
}
