//! PP_CTH: control-theoretic Packet-Pair as simulated in Keshav's chapter 6 — Packet-Pair
//! probes, the fuzzy predictor of the probe gap, and a sending rate recomputed on every probe.
//!
//! Sources: [Keshav91, §5.4] (discrete law with alpha), §5.6 (fuzzy exponential averaging),
//! §5.7 (rate law 5.14), §5.8 (drift correction, windows), §6.5.
//!
//! Law (`law = "probe"`, eq. 5.14): lambda = (B/2 - S + R mu_hat + J mu_hat) / J, with B/2 the
//! setpoint, S the packets outstanding, R the RTT of the first packet of the first pair and
//! mu_hat = 1 / (predicted probe gap). `law = "epoch"` (eq. 5.9 with alpha): once per epoch
//! lambda = (alpha / J) [B/2 - n_b_hat - S + 2 mu_hat J] with n_b_hat = max(S - R mu_hat, 0).
//!
//! Decisions where the text is silent (the long form is on `docs/models/pp_cth.md`): the
//! predicted quantity is the probe's ACK gap (figure 6.21); J (`horizon`) is the RTT of the
//! probe's second packet; pairs go back to back, slots 2 / lambda apart, and a slot that finds
//! the window full passes unused (`blocked = "skip"`, figure 4.2) or waits (`"wait"`); a rate
//! that is not positive stops the pair clock until an ACK makes it positive; drift reset
//! (`resync_interval`, off) waits for an empty pipe and sends a fresh start-up pair; a lost
//! start-up pair is replaced once nothing is outstanding.

use super::fuzzy::{FuzzyConfig, FuzzyPredictor};
use super::packet_pair::{pair_with_sink, PacketPairConfig};
use super::pair_core::{trace, AckInfo, PairCore, PairParams, RetxSample};
use crate::config::error::{check, ScenarioError};
use crate::config::units::Duration;
use crate::engine::{secs, Time};
use crate::net::{Agent, AgentCtx, Packet, PacketKind};
use crate::traffic::{AgentPair, SourceConfig, SourceEnv};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Law {
    /// Eq. 5.14, recomputed on every probe.
    #[default]
    Probe,
    /// Eq. 5.9 with alpha, once per epoch.
    Epoch,
}

/// What a pair slot does when the window has no room for the pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Blocked {
    /// The slot passes unused; the clock ticks on (figure 4.2: TICK reloads itself).
    #[default]
    Skip,
    /// The pair waits and goes out with the ACK that makes room.
    Wait,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Horizon {
    #[default]
    Rtt,
    Estimate,
}

/// `kind = "pp_cth"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PpCthConfig {
    /// Target bottleneck queue B/2 in packets.
    pub setpoint: f64,
    /// Cap on outstanding packets.
    pub window: u64,
    /// A pair slot that finds the window full: `skip` or `wait`.
    pub blocked: Blocked,
    pub law: Law,
    /// The control gain of the epoch law.
    pub alpha: f64,
    pub horizon: Horizon,
    pub fuzzy: FuzzyConfig,
    /// Drift reset period (none by default).
    pub resync_interval: Option<Duration>,
    pub size: u32,
    pub ack_size: u32,
    pub timeout_rtts: f64,
    pub gain: f64,
    pub initial_rtt: Duration,
    pub max_backoff: u32,
    /// r_t's sample from a retransmitted packet's ACK: `first_sent` or `karn` (none).
    pub retx_sample: RetxSample,
}

impl Default for PpCthConfig {
    /// The control law's own defaults; the timer and packet sizes are Packet-Pair's.
    fn default() -> Self {
        let pair = PacketPairConfig::default();
        PpCthConfig {
            setpoint: 5.0,
            window: 5,
            blocked: Blocked::default(),
            law: Law::default(),
            alpha: 0.9,
            horizon: Horizon::default(),
            fuzzy: FuzzyConfig::default(),
            resync_interval: None,
            size: pair.size,
            ack_size: pair.ack_size,
            timeout_rtts: pair.timeout_rtts,
            gain: pair.gain,
            initial_rtt: pair.initial_rtt,
            max_backoff: pair.max_backoff,
            retx_sample: pair.retx_sample,
        }
    }
}

impl PpCthConfig {
    fn params(&self) -> PairParams {
        PairParams {
            size: self.size,
            ack_size: self.ack_size,
            timeout_rtts: self.timeout_rtts,
            gain: self.gain,
            initial_rtt: self.initial_rtt,
            max_backoff: self.max_backoff,
            retx_sample: self.retx_sample,
        }
    }

    fn control(&self) -> Control {
        Control {
            setpoint: self.setpoint,
            window: self.window,
            blocked: self.blocked,
            law: self.law,
            alpha: self.alpha,
            horizon: self.horizon,
            resync: self.resync_interval.map(|d| secs(d.secs())),
        }
    }
}

impl SourceConfig for PpCthConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::non_negative(path, "setpoint", self.setpoint)?;
        check::in_range(path, "window", self.window as f64, 2.0, f64::MAX)?;
        check::positive(path, "alpha", self.alpha)?;
        check::in_range(path, "alpha", self.alpha, 0.0, 1.0)?;
        if let Some(d) = self.resync_interval {
            check::positive(path, "resync_interval", d.secs())?;
        }
        self.fuzzy
            .validate(&crate::config::error::join(path, "fuzzy"))?;
        self.params().validate(path)
    }

    fn has_reverse_flow(&self) -> bool {
        true
    }

    fn build(&self, env: &SourceEnv) -> AgentPair {
        let mut core = PairCore::new(env.flow, env.dst_node, env.receiver_agent, self.params());
        core.set_line_rate(env.first_hop_rate_bps);
        let sender = PpCthSender::new(core, self.control(), self.fuzzy.clone());
        pair_with_sink(env, self.ack_size, Box::new(sender))
    }
}

/// The control parameters.
#[derive(Clone, Copy, Debug)]
pub struct Control {
    pub setpoint: f64,
    pub window: u64,
    pub blocked: Blocked,
    pub law: Law,
    pub alpha: f64,
    pub horizon: Horizon,
    pub resync: Option<Time>,
}

/// Eq. 5.14: lambda = (B/2 - S + R mu + J mu) / J.
pub fn probe_rate(setpoint: f64, outstanding: f64, r: f64, j: f64, mu: f64) -> f64 {
    (setpoint - outstanding + r * mu + j * mu) / j
}

/// Eq. 5.9 with alpha: lambda = (alpha / J) [B/2 - n_b - S + 2 mu J].
pub fn epoch_rate(alpha: f64, setpoint: f64, n_b: f64, outstanding: f64, j: f64, mu: f64) -> f64 {
    alpha / j * (setpoint - n_b - outstanding + 2.0 * mu * j)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// A start-up (or resync) pair is out; R comes from its first packet.
    Measuring,
    Running,
    /// Resync due: waiting for every packet to be acknowledged.
    Draining,
}

pub struct PpCthSender {
    core: PairCore,
    control: Control,
    predictor: FuzzyPredictor,
    phase: Phase,
    r: f64,
    mu: f64,
    rate: f64,
    last_rtt: f64,
    last_slot_at: Option<Time>,
    tick_token: u64,
    pair_waiting: bool,
    epoch_pair: Option<u64>,
    next_resync: Option<Time>,
    stopped: bool,
}

impl PpCthSender {
    pub fn new(core: PairCore, control: Control, fuzzy: FuzzyConfig) -> Self {
        PpCthSender {
            core,
            control,
            predictor: FuzzyPredictor::new(fuzzy),
            phase: Phase::Measuring,
            r: f64::NAN,
            mu: f64::NAN,
            rate: f64::NAN,
            last_rtt: f64::NAN,
            last_slot_at: None,
            tick_token: 0,
            pair_waiting: false,
            epoch_pair: None,
            next_resync: None,
            stopped: false,
        }
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// False for a negative, zero or not yet computed (NaN) rate.
    fn rate_is_positive(&self) -> bool {
        self.rate > 0.0
    }

    fn outstanding(&self) -> f64 {
        self.core.outstanding() as f64
    }

    fn horizon(&self) -> f64 {
        match self.control.horizon {
            Horizon::Rtt => self.last_rtt,
            Horizon::Estimate => self.r + self.queue_estimate() / self.mu,
        }
    }

    fn queue_estimate(&self) -> f64 {
        (self.outstanding() - self.r * self.mu).max(0.0)
    }

    fn recompute_rate(&mut self, ctx: &mut AgentCtx) {
        let j = self.horizon();
        let c = self.control;
        self.rate = match c.law {
            Law::Probe => probe_rate(c.setpoint, self.outstanding(), self.r, j, self.mu),
            Law::Epoch => {
                let n_b = self.queue_estimate();
                epoch_rate(c.alpha, c.setpoint, n_b, self.outstanding(), j, self.mu)
            }
        };
        trace(ctx, self.core.flow, "rate", self.rate);
    }

    fn on_probe(&mut self, pair: u64, gap: f64, ctx: &mut AgentCtx) {
        let predicted = self.predictor.observe(gap);
        self.mu = 1.0 / predicted;
        let flow = self.core.flow;
        trace(ctx, flow, "probe", gap);
        trace(ctx, flow, "predicted_spacing", predicted);
        trace(ctx, flow, "alpha", self.predictor.alpha());
        let measuring = self.phase == Phase::Measuring;
        if measuring {
            self.phase = Phase::Running;
            self.next_resync = self.control.resync.map(|p| ctx.now.saturating_add(p));
        }
        let epoch_done = self.epoch_pair == Some(pair);
        if measuring || self.control.law == Law::Probe || epoch_done {
            self.epoch_pair = None;
            self.recompute_rate(ctx);
            self.schedule_pair(ctx);
        }
    }

    /// Loads the pair clock: the next pair 2 / lambda after the last one.
    fn schedule_pair(&mut self, ctx: &mut AgentCtx) {
        if !self.rate_is_positive() || self.phase != Phase::Running {
            return;
        }
        let gap = secs(2.0 / self.rate).max(self.core.pair_time());
        let at = self
            .last_slot_at
            .map_or(ctx.now, |last| last.saturating_add(gap).max(ctx.now));
        self.tick_token += 1;
        ctx.set_timer(at, self.tick_token);
    }

    fn send_pair(&mut self, ctx: &mut AgentCtx) {
        let pair = self.core.send_pair(ctx);
        self.last_slot_at = Some(ctx.now);
        self.pair_waiting = false;
        if self.control.law == Law::Epoch && self.epoch_pair.is_none() {
            self.epoch_pair = Some(pair);
        }
    }

    fn on_tick(&mut self, ctx: &mut AgentCtx) {
        if self.stopped || self.phase != Phase::Running {
            return;
        }
        if self.next_resync.is_some_and(|at| ctx.now >= at) {
            self.phase = Phase::Draining;
            self.try_resync(ctx);
            return;
        }
        if self.core.room_for(2, Some(self.control.window)) {
            self.send_pair(ctx);
            self.schedule_pair(ctx);
        } else if self.control.blocked == Blocked::Skip {
            self.last_slot_at = Some(ctx.now);
            self.schedule_pair(ctx);
        } else {
            self.pair_waiting = true;
        }
    }

    fn try_resync(&mut self, ctx: &mut AgentCtx) {
        if self.core.outstanding() == 0 {
            self.phase = Phase::Measuring;
            self.send_pair(ctx);
        }
    }

    fn on_ack(&mut self, info: AckInfo, ctx: &mut AgentCtx) {
        if let Some(rtt) = info.rtt {
            self.last_rtt = rtt;
            if info.first_of_pair.is_some() && self.phase == Phase::Measuring {
                self.r = rtt;
            }
        }
        if let Some((pair, gap)) = info.probe {
            if self.r.is_finite() {
                self.on_probe(pair, gap, ctx);
            }
        }
        if self.stopped {
            return;
        }
        match self.phase {
            Phase::Draining => self.try_resync(ctx),
            Phase::Measuring if self.core.outstanding() == 0 => self.send_pair(ctx),
            Phase::Running => self.after_ack_running(ctx),
            Phase::Measuring => {}
        }
    }

    fn after_ack_running(&mut self, ctx: &mut AgentCtx) {
        if !self.rate_is_positive() {
            self.recompute_rate(ctx);
            self.schedule_pair(ctx);
        } else if self.pair_waiting && self.core.room_for(2, Some(self.control.window)) {
            self.send_pair(ctx);
            self.schedule_pair(ctx);
        }
    }
}

impl Agent for PpCthSender {
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.send_pair(ctx);
        self.core.trace_outstanding(ctx);
    }

    fn stop(&mut self, _ctx: &mut AgentCtx) {
        self.stopped = true;
    }

    fn on_packet(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        if p.kind == PacketKind::Ack {
            let info = self.core.on_ack(p, ctx);
            self.on_ack(info, ctx);
            self.core.trace_outstanding(ctx);
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        if !self.core.on_timer(token, ctx) && token == self.tick_token {
            self.on_tick(ctx);
        }
        self.core.trace_outstanding(ctx);
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend([
            ("rate", self.rate),
            (
                "predicted_spacing",
                self.predictor.estimate().unwrap_or(f64::NAN),
            ),
            ("alpha", self.predictor.alpha()),
            ("outstanding", self.outstanding()),
        ]);
    }

    fn sample_reads_only_self(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "pp_cth"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::keshav::pair_core::tests::{ack, params};
    use crate::transport::testing::AgentHarness;

    fn control(law: Law) -> Control {
        Control {
            setpoint: 5.0,
            window: 5,
            blocked: Blocked::Wait,
            law,
            alpha: 0.9,
            horizon: Horizon::Rtt,
            resync: None,
        }
    }

    fn sender(law: Law) -> PpCthSender {
        let core = PairCore::new(0, 1, 1, params());
        PpCthSender::new(core, control(law), FuzzyConfig::default())
    }

    fn last_tick(h: &AgentHarness) -> (Time, u64) {
        *h.timers.iter().rev().find(|t| t.1 != 0).unwrap()
    }

    #[test]
    fn the_laws_by_hand() {
        // (5 - 8 + 0.3 x 10 + 0.4 x 10) / 0.4 = 10.
        assert!((probe_rate(5.0, 8.0, 0.3, 0.4, 10.0) - 10.0).abs() < 1e-12);
        // At the operating point S = R mu + B/2 the rate is mu whatever J is.
        for j in [0.1, 0.4, 3.0] {
            assert!((probe_rate(5.0, 8.0, 0.3, j, 10.0) - 10.0).abs() < 1e-12);
        }
        // 0.9 / 0.4 x (5 - 1 - 6 + 8) = 13.5.
        assert!((epoch_rate(0.9, 5.0, 1.0, 6.0, 0.4, 10.0) - 13.5).abs() < 1e-12);
    }

    #[test]
    fn start_up_then_pairs_at_half_the_rate_under_the_window() {
        let mut h = AgentHarness::new(1);
        let mut pp = sender(Law::Probe);
        assert_eq!(h.call(|ctx| pp.start(ctx)).len(), 2);
        h.now = secs(0.3);
        h.call(|ctx| pp.on_packet(&ack(1, 1), ctx));
        // Gap 0.1 -> mu = 10; R = 0.3, J = 0.4, S = 0: lambda = (5 + 3 + 4) / 0.4 = 30.
        h.now = secs(0.4);
        h.call(|ctx| pp.on_packet(&ack(2, 2), ctx));
        assert!((pp.rate() - 30.0).abs() < 1e-9);
        let tick = last_tick(&h);
        assert_eq!(tick.0, secs(0.4));
        let sent = h.call(|ctx| pp.on_timer(tick.1, ctx));
        assert_eq!(sent.len(), 2);
        let tick = last_tick(&h);
        assert_eq!(tick.0, secs(0.4) + secs(2.0 / 30.0));
        h.now = tick.0;
        assert_eq!(h.call(|ctx| pp.on_timer(tick.1, ctx)).len(), 2);
        // S = 4: the next pair would make 6 > window 5; it waits for an ACK.
        let tick = last_tick(&h);
        h.now = tick.0;
        assert!(h.call(|ctx| pp.on_timer(tick.1, ctx)).is_empty());
        h.now += secs(0.01);
        let sent = h.call(|ctx| pp.on_packet(&ack(3, 3), ctx));
        assert_eq!(sent.len(), 2);
        assert_eq!(pp.core.outstanding(), 5);
    }

    #[test]
    fn a_non_positive_rate_is_recomputed_on_each_ack() {
        let mut h = AgentHarness::new(1);
        let mut pp = sender(Law::Probe);
        h.call(|ctx| pp.start(ctx));
        h.now = secs(1.0);
        h.call(|ctx| pp.on_packet(&ack(1, 1), ctx));
        h.now = secs(3.0);
        // Gap 2 s -> mu = 0.5; R = 1, J = 3: lambda = (5 + 0.5 + 1.5) / 3 > 0.
        h.call(|ctx| pp.on_packet(&ack(2, 2), ctx));
        assert!((pp.rate() - 7.0 / 3.0).abs() < 1e-9);
        // Force S = 5 with a J of 3 s and a setpoint of 0: (0 - 5 + 0.5 + 1.5) / 3 = -1.
        pp.control.setpoint = 0.0;
        let tick = last_tick(&h);
        h.now = tick.0;
        h.call(|ctx| pp.on_timer(tick.1, ctx));
        let tick = last_tick(&h);
        h.now = tick.0;
        h.call(|ctx| pp.on_timer(tick.1, ctx));
        h.call(|ctx| pp.core.send_unpaired(1, ctx));
        h.call(|ctx| pp.recompute_rate(ctx));
        assert!((pp.rate() - (-1.0)).abs() < 1e-9, "{}", pp.rate());
        // The ACK of packet 3 (sent at 3 s, acked one pair gap 2 / (7/3) = 6/7 s later) lowers
        // S to 4 and makes J = 6/7: (0 - 4 + 0.5 + 6/7 x 0.5) / (6/7) < 0 still; no pair.
        let timers = h.timers.len();
        h.call(|ctx| pp.on_packet(&ack(3, 0), ctx));
        let j = 6.0 / 7.0;
        assert!((pp.rate() - (-4.0 + 0.5 + j * 0.5) / j).abs() < 1e-9);
        assert_eq!(h.timers.len(), timers);
    }

    #[test]
    fn a_blocked_slot_is_skipped_and_the_clock_ticks_on() {
        let mut h = AgentHarness::new(1);
        let mut pp = sender(Law::Probe);
        pp.control.blocked = Blocked::Skip;
        h.call(|ctx| pp.start(ctx));
        h.now = secs(0.3);
        h.call(|ctx| pp.on_packet(&ack(1, 1), ctx));
        h.now = secs(0.4);
        h.call(|ctx| pp.on_packet(&ack(2, 2), ctx));
        let gap = secs(2.0 / pp.rate());
        // Slots at 0.4 and 0.4 + gap carry pairs (S = 2, then 4).
        for _ in 0..2 {
            let tick = last_tick(&h);
            h.now = tick.0;
            assert_eq!(h.call(|ctx| pp.on_timer(tick.1, ctx)).len(), 2);
        }
        // The third slot finds 4 + 2 > 5: nothing goes out and the next slot is one gap on.
        let blocked = last_tick(&h);
        h.now = blocked.0;
        assert!(h.call(|ctx| pp.on_timer(blocked.1, ctx)).is_empty());
        let next = last_tick(&h);
        assert_eq!(next.0, blocked.0 + gap);
        // The ACK that makes room sends nothing; the next slot sends the pair.
        h.now += secs(0.01);
        assert!(h.call(|ctx| pp.on_packet(&ack(3, 3), ctx)).is_empty());
        assert_eq!(pp.core.outstanding(), 3);
        h.now = next.0;
        assert_eq!(h.call(|ctx| pp.on_timer(next.1, ctx)).len(), 2);
        assert_eq!(pp.core.outstanding(), 5);
    }
}
