//! PFAVQRED: AVQRED with a per-flow weight on its marking probability, for fair sharing.
//!
//! Source: [Byun07, ch. 5], Byun and Baras. No extra parameters in the text; AVQRED's are reused.
//!
//!   pf_weight    = 0                              if the flow is at most 100 ms old
//!                = (pf_rate / pf_fair_rate)^2     otherwise
//!   pf_rate      = bytes_transmitted * 8 / duration      (per flow)
//!   pf_fair_rate = v_capacity / total_number_of_flows
//!   p_a          = p_a * pf_weight
//!
//! Decisions where the sources are silent:
//! - bytes_transmitted counts the flow's bytes this discipline has dequeued
//!   (`rate_basis = "transmitted"`) or accepted (`"accepted"`); duration is the time since the
//!   flow's first arrival.
//! - total_number_of_flows counts flows seen within `flow_timeout` (2 s); idle flows are
//!   forgotten by a sweep every `flow_timeout`.
//! - The weight applies to the early region only; above max_th every arrival is notified
//!   (`weight_forced = true` weights that region too, with p = 1 before the weight).
//! - p_a * weight is capped at 1; count advances as in AVQRED whatever the weight.
//! - Flows are told apart by `key` (default: the simulator's flow id, i.e. pre-PEP TCP flows).

use super::avq::VqCounts;
use super::avqred::{apply, capacity_link, AvqRedConfig, AvqRedCore};
use super::red::Verdict;
use super::{later, uniform, FlowMap};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::{to_secs, Time};
use crate::net::packet::PacketId;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::Limit;
use crate::qdisc::{Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RateBasis {
    #[default]
    Transmitted,
    Accepted,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PfAvqRedConfig {
    /// AVQRED's parameters.
    pub avqred: AvqRedConfig,
    /// Flows younger than this are never notified early.
    pub startup_time: Duration,
    pub flow_timeout: Duration,
    pub rate_basis: RateBasis,
    pub weight_forced: bool,
    pub key: FlowKey,
}

impl Default for PfAvqRedConfig {
    fn default() -> Self {
        PfAvqRedConfig {
            avqred: AvqRedConfig {
                vq_counts: VqCounts::Accepted,
                ..Default::default()
            },
            startup_time: Duration::from_secs(0.1),
            flow_timeout: Duration::from_secs(2.0),
            rate_basis: RateBasis::Transmitted,
            weight_forced: false,
            key: FlowKey::Flow,
        }
    }
}

impl QdiscConfig for PfAvqRedConfig {
    fn periods(&self) -> Vec<Period> {
        vec![Period::one("flow_timeout", self.flow_timeout.secs())]
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.avqred.check(&format!("{path}.avqred"))?;
        check::non_negative(path, "startup_time", self.startup_time.secs())?;
        check::positive(path, "flow_timeout", self.flow_timeout.secs())
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(PfAvqRed::new(*self))
    }
}

/// What PFAVQRED remembers of a flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowRecord {
    pub first: Time,
    pub last: Time,
    pub bytes: u64,
}

/// The per-flow weight of a flow with `record` at `now`, fair rate in bits/s.
pub fn pf_weight(record: &FlowRecord, now: Time, startup: Time, fair_rate: f64) -> f64 {
    let age = now.saturating_sub(record.first);
    if age <= startup || fair_rate <= 0.0 {
        return 0.0;
    }
    let rate = record.bytes as f64 * 8.0 / to_secs(age);
    (rate / fair_rate).powi(2)
}

pub struct PfAvqRed {
    cfg: PfAvqRedConfig,
    core: AvqRedCore,
    buffer: Limit,
    queue: PacketFifo,
    pub flows: FlowMap<FlowRecord>,
    link_bps: u64,
    /// Weight of the last arrival.
    pub last_weight: f64,
}

impl PfAvqRed {
    pub fn new(cfg: PfAvqRedConfig) -> Self {
        PfAvqRed {
            core: AvqRedCore::new(cfg.avqred),
            buffer: cfg.avqred.buffer(),
            queue: PacketFifo::default(),
            flows: FlowMap::default(),
            link_bps: 0,
            last_weight: 0.0,
            cfg,
        }
    }

    pub fn core(&self) -> &AvqRedCore {
        &self.core
    }

    fn fair_rate(&self) -> f64 {
        let capacity = self.core.v_capacity.unwrap_or_else(|| {
            self.cfg
                .avqred
                .max_capacity
                .map_or(self.link_bps, |r| r.bps()) as f64
        });
        capacity / self.flows.len().max(1) as f64
    }

    fn touch(&mut self, flow: u64, now: Time) -> FlowRecord {
        let record = self.flows.entry(flow).or_insert(FlowRecord {
            first: now,
            last: now,
            bytes: 0,
        });
        record.last = now;
        *record
    }

    fn weighted(&mut self, record: &FlowRecord, now: Time, u: f64) -> Verdict {
        let weight = pf_weight(record, now, self.cfg.startup_time.0, self.fair_rate());
        self.last_weight = weight;
        match self.core.decide(u, weight) {
            Verdict::Forced if self.cfg.weight_forced && u >= weight => Verdict::Accept,
            verdict => verdict,
        }
    }

    fn credit(&mut self, flow: u64, bytes: u32) {
        if let Some(record) = self.flows.get_mut(&flow) {
            record.bytes += bytes as u64;
        }
    }

    /// Forgets flows idle for longer than the timeout.
    pub fn sweep(&mut self, now: Time) {
        let timeout = self.cfg.flow_timeout.0;
        self.flows
            .retain(|_, r| now.saturating_sub(r.last) <= timeout);
    }
}

impl Qdisc for PfAvqRed {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let flow = self.cfg.key.id(ctx.packets.get(packet));
        self.link_bps = capacity_link(ctx);
        self.core.drain(ctx.now, self.link_bps);
        let record = self.touch(flow, ctx.now);
        let u = uniform(ctx);
        let verdict = self.weighted(&record, ctx.now, u);
        let ecn = self.cfg.avqred.ecn;
        let decision = (verdict, ["pfavqred_early", "pfavqred_forced"]);
        let entered = apply(decision, ecn, &self.buffer, &mut self.queue, packet, ctx);
        self.core.account(size, entered);
        if entered && self.cfg.rate_basis == RateBasis::Accepted {
            self.credit(flow, size);
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let packet = self.queue.pop(ctx)?;
        let size = ctx.size(packet);
        self.core.tx_bytes += size as u64;
        if self.cfg.rate_basis == RateBasis::Transmitted {
            let flow = self.cfg.key.id(ctx.packets.get(packet));
            self.credit(flow, size);
        }
        Some(packet)
    }

    fn peek(&self) -> Option<PacketId> {
        self.queue.front()
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn init(&mut self, ctx: &mut QdiscCtx) {
        ctx.set_timer(later(ctx.now, self.cfg.flow_timeout.0));
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.sweep(ctx.now);
        ctx.set_timer(later(ctx.now, self.cfg.flow_timeout.0));
    }

    fn congestion_probability(&self) -> f64 {
        self.core.p_b
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        let mut s = self.core.state();
        s.push(("flows", self.flows.len() as f64));
        s
    }

    fn name(&self) -> &'static str {
        "pfavqred"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::DropReason;

    #[test]
    fn weight_is_zero_when_young_and_the_squared_rate_ratio_after() {
        let record = FlowRecord {
            first: 0,
            last: 0,
            bytes: 10_000,
        };
        let startup = secs(0.1);
        assert_eq!(pf_weight(&record, secs(0.1), startup, 40_000.0), 0.0);
        // 10,000 bytes in 1 s = 80 kb/s against a 40 kb/s fair share: (80/40)^2 = 4.
        assert!((pf_weight(&record, secs(1.0), startup, 40_000.0) - 4.0).abs() < 1e-12);
        // 20 kb/s: 0.25.
        assert!((pf_weight(&record, secs(4.0), startup, 40_000.0) - 0.25).abs() < 1e-12);
    }

    fn config() -> PfAvqRedConfig {
        PfAvqRedConfig {
            avqred: AvqRedConfig {
                min_th: 0.0,
                max_th: 4.0,
                avg_packet_size: 1000,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn young_flows_escape_early_notification_but_not_the_forced_region() {
        let mut h = Harness::new();
        let mut q = PfAvqRed::new(config());
        let ids: Vec<_> = (0..6).map(|_| h.packet(3, 1000)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id);
        }
        // q = 0..3 in the early region with weight 0; q = 4 = max_th: forced.
        assert_eq!(
            h.dropped(),
            vec![(ids[4], DropReason::Forced), (ids[5], DropReason::Forced)]
        );
        assert_eq!(q.last_weight, 0.0);
        assert_eq!(q.flows[&3].bytes, 0);
    }

    #[test]
    fn transmitted_bytes_set_the_weight_and_idle_flows_expire() {
        let mut h = Harness::new();
        h.link_rate_bps = 8_000_000;
        let mut q = PfAvqRed::new(config());
        let a = h.packet(1, 1000);
        let b = h.packet(2, 1000);
        h.enqueue(&mut q, a);
        h.enqueue(&mut q, b);
        h.dequeue(&mut q);
        h.dequeue(&mut q);
        assert_eq!((q.flows[&1].bytes, q.flows[&2].bytes), (1000, 1000));
        h.now = secs(1.0);
        let c = h.packet(1, 1000);
        h.enqueue(&mut q, c);
        // Drained to 0 at the 8 Mb/s link rate; flow 1: 8 kb/s over 1 s against 8 Mb/s / 2.
        let expected = (8_000.0f64 / 4_000_000.0).powi(2);
        assert!((q.last_weight - expected).abs() < 1e-18);
        q.sweep(secs(2.5)); // flow 2 last seen 2.5 s ago (> 2 s), flow 1 1.5 s ago
        assert_eq!(q.flows.len(), 1);
        assert!(q.flows.contains_key(&1));
    }
}
