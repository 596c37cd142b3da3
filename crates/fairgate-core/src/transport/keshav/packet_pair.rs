//! Packet-Pair flow control, the deterministic version: the state machine of figure 4.2.
//!
//! Sources: [Keshav91, §4.4].
//!
//! Phases: a start-up pair (the first packet's RTT gives R_e, the ACK gap s_e, V_e = R_e/s_e);
//! queue priming with n_b back-to-back packets; then a pair every 2 s_e. On each pair's ACKs
//! R_e = r_t - n_b s_e (first packet) and s_e = the gap (second packet); if V drops,
//! ceil((V_old - V_new)/2) pair slots are skipped; if it grows, V_new - V_old unpaired packets
//! go out back to back. TIMEOUT: per-packet timers of 3 r_t, doubled on retransmission
//! ([`super::pair_core`]).
//!
//! Decisions where the text is silent (the long form is on `docs/models/packet_pair.md`): the
//! host's output port is the state machine's output queue; n_b defaults to 5 (the setpoint of
//! every [Keshav91, ch. 6] scenario) and a skip slot lasts 2 s_e with the new s_e; the first
//! regular pair follows the priming packets at once; V changes under `min_change` (0.5) are
//! ignored; `window` (none) caps outstanding packets; a lost start-up pair is replaced once
//! nothing is outstanding; obsolete queued retransmissions are kept (optional in the text).

use super::packet_window::PacketSink;
use super::pair_core::{trace, AckInfo, PairCore, PairParams, RetxSample};
use crate::config::error::{check, ScenarioError};
use crate::config::units::Duration;
use crate::engine::{secs, Time};
use crate::net::{Agent, AgentCtx, Packet, PacketKind};
use crate::traffic::{AgentPair, Population, SourceConfig, SourceEnv};
use serde::{Deserialize, Serialize};

/// `kind = "packet_pair"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PacketPairConfig {
    /// Packets kept in the bottleneck queue (the delay/throughput knob).
    pub n_b: u64,
    /// Smallest change of V (packets) that skips slots or sends a burst.
    pub min_change: f64,
    /// Cap on outstanding packets (none by default).
    pub window: Option<u64>,
    pub size: u32,
    pub ack_size: u32,
    /// X in the per-packet timeout X x r_t.
    pub timeout_rtts: f64,
    /// Weight of the old average in the r_t EWMA.
    pub gain: f64,
    pub initial_rtt: Duration,
    pub max_backoff: u32,
    /// r_t's sample from a retransmitted packet's ACK: `first_sent` or `karn` (none).
    pub retx_sample: RetxSample,
}

impl Default for PacketPairConfig {
    fn default() -> Self {
        PacketPairConfig {
            n_b: 5,
            min_change: 0.5,
            window: None,
            size: 1000,
            ack_size: 40,
            timeout_rtts: 3.0,
            gain: 0.875,
            initial_rtt: Duration::from_secs(1.0),
            max_backoff: 6,
            retx_sample: RetxSample::default(),
        }
    }
}

impl PacketPairConfig {
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
}

/// Builds a Packet-Pair sender and Keshav's sink around `sender`.
pub(crate) fn pair_with_sink(env: &SourceEnv, ack_size: u32, sender: Box<dyn Agent>) -> AgentPair {
    AgentPair {
        sender,
        receiver: Box::new(PacketSink::new(
            env.ack_flow.unwrap_or(env.flow),
            env.src_node,
            env.sender_agent,
            ack_size,
        )),
    }
}

impl SourceConfig for PacketPairConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::non_negative(path, "min_change", self.min_change)?;
        if let Some(w) = self.window {
            check::in_range(path, "window", w as f64, 2.0, f64::MAX)?;
        }
        self.params().validate(path)
    }

    fn has_reverse_flow(&self) -> bool {
        true
    }

    /// The n_b priming packets leave back to back, each kept until acknowledged.
    fn population(&self) -> Vec<Population> {
        vec![Population {
            field: "n_b",
            count: self.n_b as f64,
            bytes_each: super::pair_core::IN_FLIGHT_BYTES,
        }]
    }

    fn build(&self, env: &SourceEnv) -> AgentPair {
        let mut core = PairCore::new(env.flow, env.dst_node, env.receiver_agent, self.params());
        core.set_line_rate(env.first_hop_rate_bps);
        let sender = PacketPairSender::new(core, self.n_b, self.min_change, self.window);
        pair_with_sink(env, self.ack_size, Box::new(sender))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    StartUp,
    Normal,
}

pub struct PacketPairSender {
    core: PairCore,
    n_b: u64,
    min_change: f64,
    window: Option<u64>,
    phase: Phase,
    r_e: Option<f64>,
    s_e: f64,
    v_e: f64,
    n_skip: u64,
    tick_token: u64,
    pair_waiting: bool,
    stopped: bool,
}

impl PacketPairSender {
    pub fn new(core: PairCore, n_b: u64, min_change: f64, window: Option<u64>) -> Self {
        PacketPairSender {
            core,
            n_b,
            min_change,
            window,
            phase: Phase::StartUp,
            r_e: None,
            s_e: f64::NAN,
            v_e: f64::NAN,
            n_skip: 0,
            tick_token: 0,
            pair_waiting: false,
            stopped: false,
        }
    }

    fn next_tick(&mut self, ctx: &mut AgentCtx) {
        self.tick_token += 1;
        let slot = secs(2.0 * self.s_e).max(self.core.pair_time());
        let at: Time = ctx.now.saturating_add(slot);
        ctx.set_timer(at, self.tick_token);
    }

    /// Sends up to `count` unpaired packets, as many as the window allows.
    fn send_burst(&mut self, count: u64, ctx: &mut AgentCtx) {
        let room = self
            .window
            .map_or(count, |w| w.saturating_sub(self.core.outstanding()));
        self.core.send_unpaired(count.min(room), ctx);
    }

    fn send_pair_if_room(&mut self, ctx: &mut AgentCtx) {
        if self.core.room_for(2, self.window) {
            self.core.send_pair(ctx);
            self.pair_waiting = false;
        } else {
            self.pair_waiting = true;
        }
    }

    fn on_first_of_pair(&mut self, rtt: f64) {
        self.r_e = Some(match self.phase {
            Phase::StartUp => rtt,
            Phase::Normal => rtt - self.n_b as f64 * self.s_e,
        });
    }

    fn on_probe(&mut self, gap: f64, ctx: &mut AgentCtx) {
        self.s_e = gap;
        trace(ctx, self.core.flow, "probe", gap);
        let Some(r_e) = self.r_e else {
            return;
        };
        let v_new = r_e / gap;
        match self.phase {
            Phase::StartUp => {
                self.v_e = v_new;
                self.phase = Phase::Normal;
                self.send_burst(self.n_b, ctx);
                self.on_tick(ctx);
            }
            Phase::Normal => self.adjust_pipeline(v_new, ctx),
        }
        trace(ctx, self.core.flow, "v_e", self.v_e);
    }

    fn adjust_pipeline(&mut self, v_new: f64, ctx: &mut AgentCtx) {
        let change = v_new - self.v_e;
        if change <= -self.min_change && change < 0.0 {
            self.n_skip = (-change / 2.0).ceil() as u64;
            self.v_e = v_new;
        } else if change >= self.min_change && change > 0.0 {
            self.send_burst(change.round() as u64, ctx);
            self.v_e = v_new;
        }
    }

    fn on_ack(&mut self, info: AckInfo, ctx: &mut AgentCtx) {
        if let (Some(_), Some(rtt)) = (info.first_of_pair, info.rtt) {
            self.on_first_of_pair(rtt);
        }
        if let Some((_, gap)) = info.probe {
            self.on_probe(gap, ctx);
        }
        if self.stopped {
            return;
        }
        if self.pair_waiting {
            self.send_pair_if_room(ctx);
        }
        if self.phase == Phase::StartUp && self.core.outstanding() == 0 {
            self.core.send_pair(ctx);
        }
    }

    fn on_tick(&mut self, ctx: &mut AgentCtx) {
        if self.stopped {
            return;
        }
        if self.n_skip > 0 {
            self.n_skip -= 1;
        } else {
            self.send_pair_if_room(ctx);
        }
        self.next_tick(ctx);
    }

    #[cfg(test)]
    fn state(&self) -> (f64, f64, f64, u64) {
        (
            self.r_e.unwrap_or(f64::NAN),
            self.s_e,
            self.v_e,
            self.n_skip,
        )
    }
}

impl Agent for PacketPairSender {
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.core.send_pair(ctx);
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
            ("s_e", self.s_e),
            ("v_e", self.v_e),
            ("outstanding", self.core.outstanding() as f64),
        ]);
    }

    fn sample_reads_only_self(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "packet_pair"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::flags;
    use crate::transport::keshav::pair_core::tests::{ack, params};
    use crate::transport::testing::AgentHarness;

    fn sender(window: Option<u64>) -> PacketPairSender {
        PacketPairSender::new(PairCore::new(0, 1, 1, params()), 2, 0.5, window)
    }

    /// The latest TICK requested (token 0 is the retransmission timer).
    pub(crate) fn last_tick(h: &AgentHarness) -> (Time, u64) {
        *h.timers.iter().rev().find(|t| t.1 != 0).unwrap()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn start_up_priming_and_regular_pairs() {
        let mut h = AgentHarness::new(1);
        let mut pp = sender(None);
        let sent = h.call(|ctx| pp.start(ctx));
        assert_eq!(sent.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1, 2]);
        assert!(sent.iter().all(|p| p.has(flags::PAIRED)));
        // ACK gap 0.1 s, first RTT 0.3 s: R_e = 0.3, s_e = 0.1, V_e = 3; prime n_b = 2.
        h.now = secs(0.3);
        h.call(|ctx| pp.on_packet(&ack(1, 1), ctx));
        h.now = secs(0.4);
        // The first regular pair follows the 2 priming packets at once.
        let primed = h.call(|ctx| pp.on_packet(&ack(2, 2), ctx));
        assert_eq!(primed.len(), 4);
        assert!(primed[..2].iter().all(|p| !p.has(flags::PAIRED)));
        assert!(primed[2..].iter().all(|p| p.has(flags::PAIRED)));
        let (r_e, s_e, v_e, _) = pp.state();
        assert!(close(r_e, 0.3) && close(s_e, 0.1) && close(v_e, 3.0));
        // TICK every 2 s_e = 0.2 s.
        let tick = last_tick(&h);
        assert_eq!(tick.0, secs(0.6));
        h.now = secs(0.6);
        let pair = h.call(|ctx| pp.on_timer(tick.1, ctx));
        assert_eq!(pair.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![7, 8]);
        assert_eq!(last_tick(&h).0, secs(0.8));
    }

    #[test]
    fn growing_pipeline_bursts_and_shrinking_pipeline_skips() {
        let mut h = AgentHarness::new(1);
        let mut pp = sender(None);
        h.call(|ctx| pp.start(ctx));
        h.now = secs(0.3);
        h.call(|ctx| pp.on_packet(&ack(1, 1), ctx));
        h.now = secs(0.4);
        // Priming packets 3 and 4, then the pair 5, 6, all at 0.4 s.
        h.call(|ctx| pp.on_packet(&ack(2, 2), ctx));
        // r_t = 0.5 -> R_e = 0.5 - 2 x 0.1 = 0.3; gap 0.05 -> V = 6: burst of 3 unpaired.
        h.now = secs(0.9);
        h.call(|ctx| pp.on_packet(&ack(5, 4), ctx));
        h.now = secs(0.95);
        let burst = h.call(|ctx| pp.on_packet(&ack(6, 6), ctx));
        assert_eq!(burst.len(), 3);
        assert!(burst.iter().all(|p| !p.has(flags::PAIRED)));
        assert!(close(pp.state().2, 6.0));
        // Next pair: r_t = 0.7 -> R_e = 0.7 - 2 x 0.05 = 0.6; gap 0.4 -> V = 1.5:
        // skip ceil((6 - 1.5) / 2) = 3 slots of 2 x 0.4 s. (The harness replays the TICK due
        // at 0.6 s here; only gaps and RTTs matter to the state machine.)
        let tick = last_tick(&h);
        h.now = tick.0;
        let pair = h.call(|ctx| pp.on_timer(tick.1, ctx));
        let (first, second) = (pair[0].seq, pair[1].seq);
        h.now = tick.0 + secs(0.7);
        h.call(|ctx| pp.on_packet(&ack(first, first), ctx));
        h.now = tick.0 + secs(1.1);
        h.call(|ctx| pp.on_packet(&ack(second, second), ctx));
        let (r_e, s_e, v_e, n_skip) = pp.state();
        assert!(close(r_e, 0.6) && close(s_e, 0.4) && close(v_e, 1.5));
        assert_eq!(n_skip, 3);
        let mut tick = last_tick(&h);
        for _ in 0..3 {
            h.now = tick.0;
            assert!(h.call(|ctx| pp.on_timer(tick.1, ctx)).is_empty());
            let next = last_tick(&h);
            assert_eq!(next.0 - tick.0, secs(0.8));
            tick = next;
        }
        h.now = tick.0;
        assert_eq!(h.call(|ctx| pp.on_timer(tick.1, ctx)).len(), 2);
    }

    #[test]
    fn the_window_holds_a_pair_until_acks_make_room() {
        let mut h = AgentHarness::new(1);
        let mut pp = sender(Some(3));
        h.call(|ctx| pp.start(ctx));
        h.now = secs(0.3);
        h.call(|ctx| pp.on_packet(&ack(1, 1), ctx));
        h.now = secs(0.4);
        // Priming wants 2 and gets 2 (window 3, nothing outstanding).
        assert_eq!(h.call(|ctx| pp.on_packet(&ack(2, 2), ctx)).len(), 2);
        let tick = last_tick(&h);
        h.now = tick.0;
        assert!(h.call(|ctx| pp.on_timer(tick.1, ctx)).is_empty());
        h.now += secs(0.01);
        let pair = h.call(|ctx| pp.on_packet(&ack(3, 3), ctx));
        assert_eq!(
            pair.len(),
            2,
            "the waiting pair goes out when one packet is acked"
        );
    }
}
