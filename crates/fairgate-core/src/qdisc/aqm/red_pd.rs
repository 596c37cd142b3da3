//! RED-PD: RED with Preferential Dropping (Mahajan, Floyd, Wetherall, "Controlling
//! high-bandwidth flows at the congested router", ICNP 2001).
//!
//! Source: [Chung06, §4]: target RTT R = 100 ms (epoch length and TCP-friendly rate), history
//! of 5 drop lists, un-monitor after at least 15 s below a drop probability of 0.005, maximum
//! increment step 0.05; RED 50/300, max_p 0.15, w_q 0.002, gentle.
//!
//! RED's drops are recorded per epoch; the last `history` epochs' lists identify flows dropped
//! in at least `identify_lists` of them. Identified flows are monitored: a pre-filter drops
//! their arrivals with a per-flow probability p_f before RED sees them. At each epoch end p_f
//! moves toward the value that would bring the flow's post-filter rate down to the
//! TCP-friendly rate f(R, p) = sqrt(1.5) / (R sqrt(p)) packets/s, by at most `max_step`.
//!
//! Decisions where the sources are silent (the long form is on `docs/models/red_pd.md`): p is
//! RED's notification rate over the history, floored at 1e-4; an epoch is R / sqrt(1.5 p),
//! capped at 1 s; p_f moves both ways toward max(0, 1 - (1 - p_f) f / rate); a new flow starts
//! at p_f = 0 and is released below `unmonitor_p` after `min_monitor_time`; pre-filter drops
//! are `filter` drops and stay out of the history.

use super::red::{RedConfig, RedCore};
use super::{check_open_unit, later, notify, uniform, watched, FlowMap};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::{secs, to_secs, Time};
use crate::net::packet::PacketId;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RedPdConfig {
    pub red: RedConfig,
    pub target_rtt: Duration,
    /// Number of drop lists (epochs) kept.
    pub history: u32,
    /// Lists a flow must appear in to be identified.
    pub identify_lists: u32,
    pub min_monitor_time: Duration,
    pub unmonitor_p: f64,
    pub max_step: f64,
    pub min_drop_rate: f64,
    pub max_epoch: Duration,
    pub key: FlowKey,
}

impl Default for RedPdConfig {
    fn default() -> Self {
        RedPdConfig {
            red: RedConfig {
                limit: Limit::packets(500),
                min_th: 50.0,
                max_th: 300.0,
                max_p: 0.15,
                w_q: 0.002,
                gentle: true,
                ..Default::default()
            },
            target_rtt: Duration::from_secs(0.1),
            history: 5,
            identify_lists: 3,
            min_monitor_time: Duration::from_secs(15.0),
            unmonitor_p: 0.005,
            max_step: 0.05,
            min_drop_rate: 1e-4,
            max_epoch: Duration::from_secs(1.0),
            key: FlowKey::Flow,
        }
    }
}

impl QdiscConfig for RedPdConfig {
    /// An epoch lasts R / sqrt(1.5 p) with p at most 1, and at most `max_epoch`.
    fn periods(&self) -> Vec<Period> {
        let shortest_by_rtt = epoch_length(self.target_rtt.secs(), 1.0);
        if shortest_by_rtt <= self.max_epoch.secs() {
            vec![Period::one("target_rtt", shortest_by_rtt)]
        } else {
            vec![Period::one("max_epoch", self.max_epoch.secs())]
        }
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.red.check(&format!("{path}.red"))?;
        self.red.reject_adaptive(&format!("{path}.red"))?;
        check::positive(path, "target_rtt", self.target_rtt.secs())?;
        check::positive_int(path, "history", self.history as u64)?;
        check::in_range(
            path,
            "identify_lists",
            self.identify_lists as f64,
            1.0,
            self.history as f64,
        )?;
        check::probability(path, "unmonitor_p", self.unmonitor_p)?;
        check::probability(path, "max_step", self.max_step)?;
        check_open_unit(path, "min_drop_rate", self.min_drop_rate)?;
        check::positive(path, "max_epoch", self.max_epoch.secs())
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(RedPd::new(*self, env.link_rate_bps))
    }
}

/// TCP-friendly rate in packets/s of a flow with RTT `rtt` seconds at drop rate `p`.
pub fn tcp_friendly_rate(rtt: f64, p: f64) -> f64 {
    1.5f64.sqrt() / (rtt * p.sqrt())
}

/// Epoch length in seconds: the time for one drop to a TCP flow with RTT `rtt` at rate `p`.
pub fn epoch_length(rtt: f64, p: f64) -> f64 {
    rtt / (1.5 * p).sqrt()
}

/// The next pre-filter probability of a flow arriving at `rate` (post-filter) packets/s.
pub fn next_filter_probability(p_f: f64, rate: f64, target: f64, max_step: f64) -> f64 {
    let wanted = if rate > 0.0 {
        (1.0 - (1.0 - p_f) * target / rate).max(0.0)
    } else {
        0.0
    };
    let step = (wanted - p_f).clamp(-max_step, max_step);
    (p_f + step).clamp(0.0, 1.0)
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Monitored {
    pub p_f: f64,
    pub since: Time,
    /// Arrivals that passed the pre-filter in the current epoch.
    pub passed: u64,
}

pub struct RedPd {
    cfg: RedPdConfig,
    red: RedCore,
    buffer: Limit,
    queue: PacketFifo,
    drop_lists: VecDeque<FlowMap<()>>,
    current_drops: FlowMap<()>,
    /// Scratch: lists each flow appears in.
    appearances: FlowMap<u32>,
    pub monitored: FlowMap<Monitored>,
    epoch_start: Time,
    epoch_arrivals: u64,
    epoch_red_drops: u64,
    /// (arrivals, RED notifications) of the last `history` epochs.
    window: VecDeque<(u64, u64)>,
    /// RED's drop rate over the last epoch.
    pub drop_rate: f64,
}

impl RedPd {
    pub fn new(cfg: RedPdConfig, link_rate_bps: u64) -> Self {
        RedPd {
            red: RedCore::new(cfg.red, link_rate_bps),
            buffer: cfg.red.buffer(),
            queue: PacketFifo::default(),
            drop_lists: VecDeque::new(),
            current_drops: FlowMap::default(),
            appearances: FlowMap::default(),
            monitored: FlowMap::default(),
            epoch_start: 0,
            epoch_arrivals: 0,
            epoch_red_drops: 0,
            window: VecDeque::new(),
            drop_rate: cfg.min_drop_rate,
            cfg,
        }
    }

    pub fn red(&self) -> &RedCore {
        &self.red
    }

    fn rtt(&self) -> f64 {
        self.cfg.target_rtt.secs()
    }

    /// Length of the next epoch at the current drop rate.
    pub fn next_epoch(&self) -> Time {
        let length = epoch_length(self.rtt(), self.drop_rate).min(self.cfg.max_epoch.secs());
        secs(length).max(1)
    }

    fn measure_drop_rate(&mut self) {
        self.window
            .push_back((self.epoch_arrivals, self.epoch_red_drops));
        while self.window.len() > self.cfg.history as usize {
            self.window.pop_front();
        }
        let arrivals: u64 = self.window.iter().map(|w| w.0).sum();
        let drops: u64 = self.window.iter().map(|w| w.1).sum();
        let measured = drops as f64 / arrivals.max(1) as f64;
        self.drop_rate = measured.clamp(self.cfg.min_drop_rate, 1.0);
    }

    /// Closes the epoch at `now`: drop rate, filter probabilities, identification.
    pub fn end_epoch(&mut self, now: Time) {
        let elapsed = to_secs(now.saturating_sub(self.epoch_start)).max(1e-12);
        self.measure_drop_rate();
        self.adjust_filters(now, elapsed);
        self.push_drop_list();
        self.identify(now);
        self.epoch_start = now;
        self.epoch_arrivals = 0;
        self.epoch_red_drops = 0;
    }

    fn adjust_filters(&mut self, now: Time, elapsed: f64) {
        let target = tcp_friendly_rate(self.rtt(), self.drop_rate);
        let (max_step, floor, hold) = (
            self.cfg.max_step,
            self.cfg.unmonitor_p,
            self.cfg.min_monitor_time.0,
        );
        self.monitored.retain(|_, m| {
            let rate = m.passed as f64 / elapsed;
            m.p_f = next_filter_probability(m.p_f, rate, target, max_step);
            m.passed = 0;
            !(m.p_f < floor && now.saturating_sub(m.since) >= hold)
        });
    }

    /// Closes the current drop list, recycling the oldest one's allocation.
    fn push_drop_list(&mut self) {
        let mut list = if self.drop_lists.len() >= self.cfg.history as usize {
            self.drop_lists.pop_front().unwrap_or_default()
        } else {
            FlowMap::default()
        };
        list.clear();
        std::mem::swap(&mut list, &mut self.current_drops);
        self.drop_lists.push_back(list);
    }

    fn identify(&mut self, now: Time) {
        self.appearances.clear();
        for list in &self.drop_lists {
            for &flow in list.keys() {
                *self.appearances.entry(flow).or_default() += 1;
            }
        }
        for (&flow, &n) in &self.appearances {
            if n >= self.cfg.identify_lists {
                self.monitored.entry(flow).or_insert(Monitored {
                    p_f: 0.0,
                    since: now,
                    passed: 0,
                });
            }
        }
    }

    /// The pre-filter: true when the arrival of `flow` is dropped.
    fn filtered(&mut self, flow: u64, ctx: &mut QdiscCtx) -> bool {
        if self.monitored.is_empty() {
            return false;
        }
        let Some(m) = self.monitored.get_mut(&flow) else {
            return false;
        };
        if uniform(ctx) < m.p_f {
            return true;
        }
        m.passed += 1;
        false
    }
}

impl Qdisc for RedPd {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let flow = self.cfg.key.id(ctx.packets.get(packet));
        if self.filtered(flow, ctx) {
            ctx.drop_because(packet, DropReason::Filter, "red_pd_filter");
            return;
        }
        self.epoch_arrivals += 1;
        let seen = watched(ctx, &self.queue);
        self.red.update_average(&seen, ctx.now);
        let u = uniform(ctx);
        let verdict = self.red.decide(size, u);
        if let Some((reason, cause)) = verdict.notification() {
            self.epoch_red_drops += 1;
            self.current_drops.insert(flow, ());
            let may_mark = self.red.may_mark(verdict);
            if !notify(ctx, packet, may_mark, reason, cause) {
                return;
            }
        }
        if self.buffer.overflows(&self.queue, size) {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        self.queue.push(packet, size);
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn init(&mut self, ctx: &mut QdiscCtx) {
        self.epoch_start = ctx.now;
        ctx.set_timer(later(ctx.now, self.next_epoch()));
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.end_epoch(ctx.now);
        ctx.set_timer(later(ctx.now, self.next_epoch()));
    }

    fn congestion_probability(&self) -> f64 {
        self.red.base_probability()
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        let mut s = self.red.state();
        s.push(("drop_rate", self.drop_rate));
        s.push(("monitored", self.monitored.len() as f64));
        s
    }

    fn name(&self) -> &'static str {
        "red_pd"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn epoch_and_target_rate_follow_the_tcp_response_function() {
        // R = 100 ms, p = 0.01: f = sqrt(1.5) / (0.1 * 0.1) = 122.47 pkt/s, epoch 1/(p f).
        let f = tcp_friendly_rate(0.1, 0.01);
        assert!((f - 122.474_487_139).abs() < 1e-6);
        let epoch = epoch_length(0.1, 0.01);
        assert!((epoch - 1.0 / (0.01 * f)).abs() < 1e-12);
        assert!((epoch - 0.816_496_580_9).abs() < 1e-9);
    }

    #[test]
    fn filter_probability_moves_by_at_most_the_step() {
        // Twice the target with p_f = 0: wanted 0.5, step-limited to 0.05.
        assert!((next_filter_probability(0.0, 200.0, 100.0, 0.05) - 0.05).abs() < 1e-15);
        // p_f = 0.5 passing 110 pkt/s against 100: wanted 1 - 0.5 * 100/110 = 0.5455.
        let p = next_filter_probability(0.5, 110.0, 100.0, 0.05);
        assert!((p - (1.0 - 0.5 * 100.0 / 110.0)).abs() < 1e-12);
        // Below the target it falls, at most 0.05: 0.3 passing 50 against 100 wants 0.
        assert!((next_filter_probability(0.3, 50.0, 100.0, 0.05) - 0.25).abs() < 1e-15);
        assert_eq!(next_filter_probability(0.02, 0.0, 100.0, 0.05), 0.0);
    }

    fn instant() -> RedPd {
        RedPd::new(
            RedPdConfig {
                red: RedConfig {
                    limit: Limit::packets(100),
                    min_th: 1.0,
                    max_th: 2.0,
                    w_q: 1.0,
                    max_p: 0.0,
                    ..RedConfig::floyd93()
                },
                ..Default::default()
            },
            10_000_000,
        )
    }

    /// Fills the queue to 2 packets of flow 0, then offers one packet of each of `flows`
    /// (each is forced out by RED), then empties the queue.
    fn epoch_with_drops(h: &mut Harness, q: &mut RedPd, flows: &[u32]) {
        for _ in 0..2 {
            let id = h.packet(0, 1000);
            h.enqueue(q, id);
        }
        for &f in flows {
            let id = h.packet(f, 1000);
            h.enqueue(q, id);
        }
        while h.dequeue(q).is_some() {}
    }

    #[test]
    fn flows_in_three_of_five_drop_lists_are_monitored_and_filtered() {
        let mut h = Harness::new();
        let mut q = instant();
        let drops_per_epoch: [&[u32]; 3] = [&[9, 4], &[9], &[9, 4]];
        for (k, flows) in drops_per_epoch.iter().enumerate() {
            epoch_with_drops(&mut h, &mut q, flows);
            h.now = secs(k as f64 + 1.0);
            q.end_epoch(h.now);
        }
        // Three epochs of 4, 3, 4 arrivals with 2, 1, 2 forced drops: drop rate 5 / 11.
        assert_eq!(q.monitored.keys().copied().collect::<Vec<_>>(), vec![9]); // one flow
        assert!((q.drop_rate - 5.0 / 11.0).abs() < 1e-15);
        let epoch = 0.1 / (1.5f64 * 5.0 / 11.0).sqrt();
        assert_eq!(q.next_epoch(), secs(epoch));
        assert_eq!(q.monitored[&9].p_f, 0.0);
        if let Some(m) = q.monitored.get_mut(&9) {
            m.p_f = 1.0;
        }
        let id = h.packet(9, 1000);
        h.enqueue(&mut q, id);
        assert_eq!(h.dropped().last(), Some(&(id, DropReason::Filter)));
        assert_eq!(q.len_packets(), 0);
    }

    #[test]
    fn a_monitored_flow_is_released_after_the_minimum_time_below_the_threshold() {
        let mut h = Harness::new();
        let mut q = instant();
        for k in 0..3 {
            epoch_with_drops(&mut h, &mut q, &[9]);
            h.now = secs(k as f64 + 1.0);
            q.end_epoch(h.now);
        }
        assert!(q.monitored.contains_key(&9)); // since t = 3 s
                                               // Quiet epochs age flow 9 out of the lists (3 of 5 at 4 and 5 s, 2 of 5 at 6 s);
                                               // p_f stays 0 (< 0.005) but the flow is held 15 s.
        for t in [4.0, 5.0, 6.0, 17.9] {
            h.now = secs(t);
            q.end_epoch(h.now);
        }
        q.end_epoch(h.now);
        assert!(q.monitored.contains_key(&9));
        assert_eq!(q.monitored[&9].since, secs(3.0));
        h.now = secs(18.0);
        q.end_epoch(h.now);
        assert!(!q.monitored.contains_key(&9));
    }
}
