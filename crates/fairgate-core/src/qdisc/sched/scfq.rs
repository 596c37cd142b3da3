//! Self-Clocked Fair Queueing, S. J. Golestani, "A self-clocked fair queueing scheme for
//! broadband applications", INFOCOM 1994; [Vaidyanathan99, §2.2]:
//! tags computed from the packet in service only, O(1) per packet.
//!
//! F = max(F_prev, v) + L/w, where v is the finish tag of the packet in service; packets are
//! served in increasing F.
//!
//! Decisions: v keeps the finish tag of the last packet sent after the system empties (the
//! text is silent; Golestani resets v and all tags to 0 at the end of a busy period, which
//! gives the same order since every F_prev <= v then). Shared decisions in `virtual_time.rs`.

use crate::config::ScenarioError;
use crate::net::packet::PacketId;
use crate::qdisc::structures::virtual_time::{VirtualTimeConfig, VirtualTimeCore};
use crate::qdisc::{Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

impl QdiscConfig for ScfqConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.0.check(path)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Scfq {
            core: self.0.core(env),
            v: 0.0,
        })
    }
}

/// `queue = { kind = "scfq", weights = [1.0, 2.0] }` (same keys as start-time FQ).
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(transparent)]
pub struct ScfqConfig(pub VirtualTimeConfig);

pub struct Scfq {
    core: VirtualTimeCore,
    v: f64,
}

impl Scfq {
    pub fn virtual_time(&self) -> f64 {
        self.v
    }
    pub fn finish_tag_of(&self, packet: PacketId) -> f64 {
        self.core.queues.tag_of(packet).key.tag
    }
}

impl Qdisc for Scfq {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let (q, size, tags) = self.core.tags(packet, self.v, ctx);
        self.core
            .admit(q, packet, size, tags.finish, tags.start, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let (_, packet) = self.core.pop(ctx)?;
        self.v = self.core.queues.tag_of(packet).key.tag;
        Some(packet)
    }

    fn peek(&self) -> Option<PacketId> {
        self.core.queues.peek_min()
    }

    fn len_packets(&self) -> usize {
        self.core.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.core.len_bytes()
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![("virtual_time", self.v)]
    }

    fn name(&self) -> &'static str {
        "scfq"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::structures::virtual_time::VirtualTimeConfig;
    use crate::qdisc::testing::Harness;

    /// A: 100 B, 100 B; B: 300 B (weight 1 each, tags in bytes). F_A = 100, 200; F_B = 300.
    /// After A1 is sent v = 100; a new C packet of 50 B gets F = 100 + 50 = 150 and goes
    /// before A2 (200) and B (300).
    #[test]
    fn finish_tags_from_the_packet_in_service() {
        let mut h = Harness::new();
        let env = QdiscEnv {
            link_rate_bps: h.link_rate_bps,
            port: "x".into(),
        };
        let mut q = Scfq {
            core: VirtualTimeConfig::default().core(&env),
            v: 0.0,
        };
        let a1 = h.packet(0, 100);
        let a2 = h.packet(0, 100);
        let b = h.packet(1, 300);
        for id in [a1, a2, b] {
            h.enqueue(&mut q, id);
        }
        assert_eq!(
            [a1, a2, b].map(|p| q.finish_tag_of(p)),
            [100.0, 200.0, 300.0]
        );
        assert_eq!(h.dequeue(&mut q), Some(a1));
        assert_eq!(q.virtual_time(), 100.0);
        let c = h.packet(2, 50);
        h.enqueue(&mut q, c);
        assert_eq!(q.finish_tag_of(c), 150.0);
        let order: Vec<_> = std::iter::from_fn(|| h.dequeue(&mut q)).collect();
        assert_eq!(order, vec![c, a2, b]);
    }
}
