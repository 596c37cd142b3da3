//! FRED: Flow Random Early Drop (Lin and Morris, "Dynamics of random early detection",
//! SIGCOMM 1997).
//!
//! Source: [Vaidyanathan99, §3.2]: per-flow
//! min_q and max_q, avgcq = avg / number of active flows, flows above avgcq penalised, the
//! average updated at arrival and departure, the arrival dropped. The algorithm (Lin and Morris,
//! figure 5), per arrival of flow i with qlen_i queued packets and strike_i:
//!
//!   maxq = min_th, or 2 when avg >= max_th
//!   if qlen_i >= maxq or (avg >= max_th and qlen_i > 2 avgcq) or (qlen_i >= avgcq and
//!      strike_i > 1): strike_i += 1, drop
//!   min_th <= avg < max_th: count += 1; if qlen_i >= max(min_q, avgcq): RED's p_a, drop with it
//!   avg < min_th: count = -1;   avg >= max_th: drop, count = 0
//!
//! A flow's state (qlen, strike) exists while it has packets queued.
//!
//! Decisions where the sources are silent:
//! - RED's average machinery (idle decay, w_q, byte or packet mode) is RED's (`red = {...}`);
//!   with w_q the same at arrivals and departures; the departure update sees the queue after
//!   the packet left.
//! - min_q defaults to 2 (the paper's value for small buffers; 4 is its large-buffer value).
//! - avgcq uses max(1, active flows); the forced drop above max_th is `forced`, the per-flow
//!   limits `filter`, the random drop `early` (marks ECT with `red.ecn`).

use super::red::{RedConfig, RedCore, Verdict};
use super::{notify, uniform, watched, FlowMap};
use crate::config::{check, ScenarioError};
use crate::net::packet::PacketId;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FredConfig {
    pub red: RedConfig,
    pub min_q: u64,
    pub key: FlowKey,
}

impl Default for FredConfig {
    fn default() -> Self {
        FredConfig {
            red: RedConfig::default(),
            min_q: 2,
            key: FlowKey::Flow,
        }
    }
}

impl QdiscConfig for FredConfig {
    fn periods(&self) -> Vec<Period> {
        crate::qdisc::nested_periods(self.red.periods(), "red")
    }

    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.red.check(&format!("{path}.red"))?;
        check::positive_int(path, "min_q", self.min_q)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Fred::new(*self, env.link_rate_bps))
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowState {
    pub qlen: u64,
    pub strike: u64,
}

pub struct Fred {
    cfg: FredConfig,
    red: RedCore,
    buffer: Limit,
    queue: PacketFifo,
    pub flows: FlowMap<FlowState>,
}

impl Fred {
    pub fn new(cfg: FredConfig, link_rate_bps: u64) -> Self {
        Fred {
            red: RedCore::new(cfg.red, link_rate_bps),
            buffer: cfg.red.buffer(),
            queue: PacketFifo::default(),
            flows: FlowMap::default(),
            cfg,
        }
    }

    pub fn red(&self) -> &RedCore {
        &self.red
    }

    /// avg / active flows.
    pub fn avgcq(&self) -> f64 {
        self.red.avg / self.flows.len().max(1) as f64
    }

    /// The per-flow limits: true when the arrival of a flow in `state` must be dropped.
    fn over_flow_limits(&self, state: FlowState) -> bool {
        let (avg, max_th) = (self.red.avg, self.cfg.red.max_th);
        let maxq = if avg >= max_th {
            2.0
        } else {
            self.cfg.red.min_th
        };
        let qlen = state.qlen as f64;
        let avgcq = self.avgcq();
        qlen >= maxq || (avg >= max_th && qlen > 2.0 * avgcq) || (qlen >= avgcq && state.strike > 1)
    }

    /// RED's part: only flows at or above max(min_q, avgcq) face the random drop.
    fn red_verdict(&mut self, state: FlowState, size: u32, u: f64) -> Verdict {
        let (avg, min_th) = (self.red.avg, self.cfg.red.min_th);
        let robust = state.qlen as f64 >= (self.cfg.min_q as f64).max(self.avgcq());
        if avg >= min_th && avg < self.cfg.red.max_th && !robust {
            self.red.count += 1;
            return Verdict::Accept;
        }
        self.red.decide(size, u)
    }
}

impl Qdisc for Fred {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let flow = self.cfg.key.id(ctx.packets.get(packet));
        let seen = watched(ctx, &self.queue);
        self.red.update_average(&seen, ctx.now);
        let state = self.flows.get(&flow).copied().unwrap_or_default();
        if self.over_flow_limits(state) {
            if let Some(s) = self.flows.get_mut(&flow) {
                s.strike += 1;
            }
            ctx.drop_because(packet, DropReason::Filter, "fred_flow_limit");
            return;
        }
        let u = uniform(ctx);
        let verdict = self.red_verdict(state, size, u);
        if let Some((reason, cause)) = verdict.notification_as(["fred_early", "fred_forced"]) {
            let may_mark = self.red.may_mark(verdict);
            if !notify(ctx, packet, may_mark, reason, cause) {
                return;
            }
        }
        if self.buffer.overflows(&self.queue, size) {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        self.flows.entry(flow).or_default().qlen += 1;
        self.queue.push(packet, size);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let packet = self.queue.pop(ctx)?;
        let flow = self.cfg.key.id(ctx.packets.get(packet));
        if let Some(state) = self.flows.get_mut(&flow) {
            state.qlen = state.qlen.saturating_sub(1);
            if state.qlen == 0 {
                self.flows.remove(&flow);
            }
        }
        let seen = watched(ctx, &self.queue);
        self.red.update_average(&seen, ctx.now);
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
        self.red.init_timer(ctx);
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.red.on_timer(ctx);
    }

    fn congestion_probability(&self) -> f64 {
        self.red.base_probability()
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        let mut s = self.red.state();
        s.push(("active_flows", self.flows.len() as f64));
        s.push(("avgcq", self.avgcq()));
        s
    }

    fn name(&self) -> &'static str {
        "fred"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    fn instant() -> Fred {
        Fred::new(
            FredConfig {
                red: RedConfig {
                    limit: Limit::packets(100),
                    min_th: 4.0,
                    max_th: 8.0,
                    max_p: 0.0,
                    w_q: 1.0,
                    ..RedConfig::floyd93()
                },
                ..Default::default()
            },
            10_000_000,
        )
    }

    fn arrive(h: &mut Harness, q: &mut Fred, flow: u32) -> PacketId {
        let id = h.packet(flow, 1000);
        h.enqueue(q, id);
        id
    }

    #[test]
    fn per_flow_limits_strike_and_penalise_a_flow_above_its_share() {
        let mut h = Harness::new();
        let mut q = instant();
        for _ in 0..4 {
            arrive(&mut h, &mut q, 1); // avg 0..3: accepted, qlen_1 = 4
        }
        let a = arrive(&mut h, &mut q, 1); // qlen_1 = 4 >= maxq = min_th: strike 1
        let b = arrive(&mut h, &mut q, 1); // strike 2
        assert_eq!(
            h.dropped(),
            vec![(a, DropReason::Filter), (b, DropReason::Filter)]
        );
        assert_eq!(q.flows[&1], FlowState { qlen: 4, strike: 2 });
        arrive(&mut h, &mut q, 2); // avg 4: count 0; qlen_2 = 0 < max(2, 4): not robust
        assert_eq!(q.flows[&2].qlen, 1);
        assert_eq!(q.red().count, 0);
        assert_eq!(h.dequeue(&mut q).map(|p| h.packets.get(p).flow), Some(1));
        // Departure: avg = 4, two active flows, avgcq = 2.
        assert_eq!(q.avgcq(), 2.0);
        let c = arrive(&mut h, &mut q, 1); // qlen_1 = 3 >= avgcq 2 and strike 2 > 1
        assert_eq!(h.dropped().last(), Some(&(c, DropReason::Filter)));
        assert_eq!(q.flows[&1].strike, 3);
        arrive(&mut h, &mut q, 2); // qlen_2 = 1 < avgcq: accepted, count 1
        assert_eq!(q.flows[&2].qlen, 2);
        assert_eq!(q.red().count, 1);
    }

    #[test]
    fn state_disappears_with_the_last_queued_packet_and_forced_region_drops() {
        let mut h = Harness::new();
        let mut q = instant();
        arrive(&mut h, &mut q, 7);
        h.dequeue(&mut q);
        assert!(q.flows.is_empty());
        for f in 0..8 {
            arrive(&mut h, &mut q, f); // eight flows, avg 0..7
        }
        let late = arrive(&mut h, &mut q, 20); // avg 8 = max_th: maxq 2, qlen 0: RED forces
        assert_eq!(h.dropped(), vec![(late, DropReason::Forced)]);
    }
}
