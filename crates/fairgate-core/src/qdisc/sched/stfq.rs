//! Start-time Fair Queueing, P. Goyal, H. M. Vin, H. Cheng, "Start-time fair queueing: a
//! scheduling algorithm for integrated services packet switching networks", ToN 1997; the
//! scheduler of every [Vaidyanathan99, ch. 3 and 4] simulation, where it
//! is called "SFQ" (not to be confused with stochastic FQ, `stochastic_fq.rs`).
//!
//! S = max(v, F_prev), F = S + L/w; packets are served in increasing start tag; v is the start
//! tag of the packet in service, and at the end of a busy period the largest finish tag served.
//!
//! Decisions: the end of a busy period is detected at the next arrival, as an empty queue
//! whose link is idle (`ctx.idle_since`); a dropped or pushed-out packet costs its flow
//! nothing (its L/w comes off the tags behind it); shared decisions in `virtual_time.rs`.

use crate::config::ScenarioError;
use crate::net::packet::PacketId;
use crate::qdisc::structures::virtual_time::{VirtualTimeConfig, VirtualTimeCore};
use crate::qdisc::{Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

/// `queue = { kind = "stfq", weights = [1.0, 2.0] }`
#[derive(Clone, Debug, Default, serde::Deserialize, serde::Serialize)]
#[serde(transparent)]
pub struct StfqConfig(pub VirtualTimeConfig);

impl QdiscConfig for StfqConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.0.check(path)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Stfq::new(self.0.core(env)))
    }
}

pub struct Stfq {
    core: VirtualTimeCore,
    v: f64,
    max_finish_served: f64,
}

impl Stfq {
    pub fn new(core: VirtualTimeCore) -> Self {
        Stfq {
            core,
            v: 0.0,
            max_finish_served: 0.0,
        }
    }
    pub fn virtual_time(&self) -> f64 {
        self.v
    }
    pub fn start_tag_of(&self, packet: PacketId) -> f64 {
        self.core.queues.tag_of(packet).key.tag
    }
}

impl Qdisc for Stfq {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        if self.core.len_packets() == 0 && ctx.idle_since.is_some() {
            self.v = self.v.max(self.max_finish_served);
        }
        let (q, size, tags) = self.core.tags(packet, self.v, ctx);
        self.core
            .admit(q, packet, size, tags.start, tags.start, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let (q, packet) = self.core.pop(ctx)?;
        let start = self.core.queues.tag_of(packet).key.tag;
        let size = ctx.size(packet) as f64;
        let finish = start + size / self.core.queues.table.weight_of(q);
        self.v = start;
        self.max_finish_served = self.max_finish_served.max(finish);
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
        "stfq"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn stfq(h: &Harness, config: &str) -> Stfq {
        let env = QdiscEnv {
            link_rate_bps: h.link_rate_bps,
            port: "x".into(),
        };
        let config: StfqConfig = toml::from_str(config).unwrap();
        Stfq::new(config.0.core(&env))
    }

    /// A: 100 B, 100 B; B: 300 B, 300 B. Start tags A: 0, 100; B: 0, 300. Order A1 (tie,
    /// earlier), B1, A2, B2. After B1 is in service v = 0; after A2, v = 100. When the system
    /// has emptied and the link is idle, v jumps to the largest finish served (600).
    #[test]
    fn start_tags_and_busy_period_end() {
        let mut h = Harness::new();
        let mut q = stfq(&h, "");
        let a = [h.packet(0, 100), h.packet(0, 100)];
        let b = [h.packet(1, 300), h.packet(1, 300)];
        for id in [a[0], a[1], b[0], b[1]] {
            h.enqueue(&mut q, id);
        }
        assert_eq!(
            [a[0], a[1], b[0], b[1]].map(|p| q.start_tag_of(p)),
            [0.0, 100.0, 0.0, 300.0]
        );
        let mut vs = Vec::new();
        let order: Vec<_> = std::iter::from_fn(|| {
            let p = h.dequeue(&mut q);
            vs.push(q.virtual_time());
            p
        })
        .collect();
        assert_eq!(order, vec![a[0], b[0], a[1], b[1]]);
        assert_eq!(vs[..4], [0.0, 0.0, 100.0, 300.0]);
        h.idle_since = Some(0);
        let c = h.packet(2, 10);
        h.enqueue(&mut q, c);
        assert_eq!(q.start_tag_of(c), 600.0);
    }

    /// LQD with room for 3: A queues 100 B at tags 0, 100, 200; B's arrival overflows and A's
    /// head is pushed out. A's remaining packets move down to 0 and 100; after A2 is served,
    /// A's next arrival starts at 200, as if the victim had never come; then B1, A3, A4.
    #[test]
    fn a_pushed_out_head_costs_its_flow_nothing() {
        let mut h = Harness::new();
        let mut q = stfq(&h, "buffer = { kind = \"lqd\", limit = 3 }");
        let a = [h.packet(0, 100), h.packet(0, 100), h.packet(0, 100)];
        let b1 = h.packet(1, 100);
        for id in [a[0], a[1], a[2], b1] {
            h.enqueue(&mut q, id);
        }
        assert_eq!(h.dropped().len(), 1);
        assert_eq!(h.dropped()[0].0, a[0]);
        assert_eq!([a[1], a[2]].map(|p| q.start_tag_of(p)), [0.0, 100.0]);
        assert_eq!(h.dequeue(&mut q), Some(a[1]));
        let a4 = h.packet(0, 100);
        h.enqueue(&mut q, a4);
        assert_eq!(q.start_tag_of(a4), 200.0);
        let order: Vec<_> = std::iter::from_fn(|| h.dequeue(&mut q)).collect();
        assert_eq!(order, vec![b1, a[2], a4]);
    }
}
