//! Step marking: ECN-mark every ECT arrival while the instantaneous queue exceeds K packets,
//! drop at the hard limit (the switch of DCTCP).
//!
//! Sources: Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, §3.1 (marking at the
//! switch with a single threshold K on the instantaneous queue); RFC 3168 §5 (marking only
//! ECT packets, dropping the others). Used by the transport tests of RFC 3168 behaviour.
//!
//! Decisions where the sources are silent:
//! - The arrival is compared with the queue it finds (packets waiting, excluding itself):
//!   marked when that length is >= `k`.
//! - A non-ECT arrival above K is dropped as an early drop (RFC 3168 §5: a router that would
//!   mark drops non-ECT packets instead); `limit` is a tail-drop bound for every packet.

use super::super::fifo::PacketFifo;
use super::super::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use crate::config::{check, ScenarioError};
use crate::net::packet::PacketId;
use serde::{Deserialize, Serialize};

/// `kind = "step_mark"`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct StepMarkConfig {
    /// Marking threshold in packets.
    pub k: u64,
    /// Hard capacity in packets.
    pub limit: u64,
}

impl Default for StepMarkConfig {
    fn default() -> Self {
        StepMarkConfig { k: 20, limit: 1000 }
    }
}

impl QdiscConfig for StepMarkConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.limit)?;
        check::ordered(path, "k", self.k as f64, "limit", self.limit as f64)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(StepMark {
            config: *self,
            queue: PacketFifo::default(),
        })
    }
}

pub struct StepMark {
    config: StepMarkConfig,
    queue: PacketFifo,
}

impl Qdisc for StepMark {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let waiting = self.queue.len() as u64;
        if waiting >= self.config.limit {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        let step = |ctx: &mut QdiscCtx| ctx.mark_ce_because(packet, DropReason::Early, "step_mark");
        if waiting >= self.config.k && !step(ctx) {
            ctx.drop_because(packet, DropReason::Early, "step_mark");
            return;
        }
        let size = ctx.size(packet);
        self.queue.push(packet, size);
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn name(&self) -> &'static str {
        "step_mark"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{flags, Packet};
    use crate::qdisc::testing::Harness;

    fn packet(h: &mut Harness, ect: bool) -> PacketId {
        h.packet_from(Packet {
            size: 100,
            flags: if ect { flags::ECT } else { 0 },
            ..Default::default()
        })
    }

    #[test]
    fn marks_above_k_drops_non_ect_and_at_the_limit() {
        let mut h = Harness::new();
        let mut q = StepMarkConfig { k: 2, limit: 5 }.build(&QdiscEnv {
            link_rate_bps: 1,
            port: String::new(),
        });
        let ids: Vec<_> = (0..4).map(|_| packet(&mut h, true)).collect();
        for &id in &ids {
            h.enqueue(q.as_mut(), id);
        }
        // Arrivals 3 and 4 find 2 and 3 waiting: marked.
        let marked: Vec<bool> = ids
            .iter()
            .map(|&i| h.packets.get(i).has(flags::CE))
            .collect();
        assert_eq!(marked, vec![false, false, true, true]);
        assert_eq!(h.marks(DropReason::Early), 2);
        let plain = packet(&mut h, false);
        let fifth = packet(&mut h, true);
        let sixth = packet(&mut h, true);
        h.enqueue(q.as_mut(), plain);
        h.enqueue(q.as_mut(), fifth);
        h.enqueue(q.as_mut(), sixth);
        assert_eq!(
            h.dropped(),
            vec![(plain, DropReason::Early), (sixth, DropReason::Overflow)]
        );
        assert!(h.packets.get(fifth).has(flags::CE));
        assert_eq!(q.len_packets(), 5);
    }
}
