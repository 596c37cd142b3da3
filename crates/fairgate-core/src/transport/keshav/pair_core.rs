//! What Keshav's two Packet-Pair sources share: numbered packets sent singly or as
//! back-to-back pairs, per-packet retransmission timers, and turning the ACKs of a pair into a
//! probe (the gap between the two ACKs).
//!
//! Sources: [Keshav91, §4.4] (figure 4.2, TIMEOUT: a per-packet timer of X x r_t with X = 3,
//! doubled on each retransmission) and §6.5. Packets are counted, not bytes; the sink is
//! Keshav's [`PacketSink`](super::packet_window::PacketSink), whose ACKs name the packet that
//! triggered them in `aux`.
//!
//! Decisions where the text is silent (the long form is on `docs/models/packet_pair.md`):
//! paired packets carry the `PAIRED` flag and the pair number in `aux`, so the sink is
//! unchanged; a probe needs both ACKs of a pair and no retransmitted packet; a retransmitted
//! packet's ACK feeds r_t with the time since its first transmission (`retx_sample =
//! "first_sent"`, §6.5's rule for Generic) or nothing (`"karn"`); r_t is an EWMA (gain 7/8) and
//! a timer uses its current value, 2^b x X x r_t after the last transmission; a packet is
//! outstanding until its own or a cumulative ACK arrives.

use super::packet_window::PROTO_KESHAV;
use crate::config::error::{check, ScenarioError};
use crate::config::units::Duration;
use crate::engine::{secs, to_secs, Time};
use crate::net::{flags, AgentCtx, Packet, PacketKind};
use crate::transport::timer::LazyTimer;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The retransmission timer's token; sources use other tokens for their own clocks.
pub const TIMEOUT: u64 = 0;

/// Memory per packet in flight, for the estimate at validation: its entries in two B-trees
/// (about 64 bytes with the nodes' share) and its arena record in the network, rounded up.
pub const IN_FLIGHT_BYTES: f64 = 256.0;

/// Which RTT sample the timer's r_t takes from the ACK of a retransmitted packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RetxSample {
    /// From its first transmission to the ACK, as the text's Generic source ([Keshav91, §6.5]).
    #[default]
    FirstSent,
    /// None (Karn and Partridge).
    Karn,
}

/// Size and timer parameters.
#[derive(Clone, Copy, Debug)]
pub struct PairParams {
    pub size: u32,
    pub ack_size: u32,
    /// X in the timeout X x r_t.
    pub timeout_rtts: f64,
    pub gain: f64,
    pub initial_rtt: Duration,
    pub max_backoff: u32,
    pub retx_sample: RetxSample,
}

impl PairParams {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::packet_size(path, "size", u64::from(self.size))?;
        check::packet_size(path, "ack_size", u64::from(self.ack_size))?;
        check::positive(path, "timeout_rtts", self.timeout_rtts)?;
        check::in_range(path, "gain", self.gain, 0.0, 1.0)?;
        super::packet_window::check_initial_rtt(path, self.initial_rtt, self.size, self.ack_size)?;
        check::in_range(path, "max_backoff", self.max_backoff as f64, 0.0, 30.0)
    }
}

#[derive(Clone, Copy, Debug)]
struct InFlight {
    first_sent: Time,
    last_sent: Time,
    /// Doublings of the timeout so far.
    backoff: u32,
    /// (pair number, position 0 or 1).
    pair: Option<(u64, u8)>,
    retransmitted: bool,
}

/// What one ACK told the source.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckInfo {
    /// The RTT of the acknowledged packet, if it was never retransmitted.
    pub rtt: Option<f64>,
    /// The ACK of a pair's first packet: the pair number.
    pub first_of_pair: Option<u64>,
    /// The ACK of a pair's second packet after its first: (pair number, ACK gap in seconds).
    pub probe: Option<(u64, f64)>,
}

pub struct PairCore {
    pub flow: u32,
    dst: u32,
    dst_agent: u32,
    params: PairParams,
    next_seq: u64,
    next_pair: u64,
    in_flight: BTreeMap<u64, InFlight>,
    /// The in-flight packets by backoff level, ordered by last transmission: (last_sent, seq).
    /// Within a level the oldest times out first, so the next deadline is a minimum over levels.
    by_level: Vec<BTreeSet<(Time, u64)>>,
    srtt: Option<f64>,
    first_ack: Option<(u64, Time)>,
    timer: LazyTimer,
    traced_outstanding: Option<u64>,
    /// The time the host's line takes to send a pair (1 ps until `set_line_rate`).
    pair_time: Time,
}

impl PairCore {
    pub fn new(flow: u32, dst: u32, dst_agent: u32, params: PairParams) -> Self {
        PairCore {
            flow,
            dst,
            dst_agent,
            params,
            next_seq: 1,
            next_pair: 0,
            in_flight: BTreeMap::new(),
            by_level: vec![BTreeSet::new(); params.max_backoff.min(30) as usize + 1],
            srtt: None,
            first_ack: None,
            timer: LazyTimer::default(),
            traced_outstanding: None,
            pair_time: 1,
        }
    }

    /// Sets the rate of the host's line, which bounds how fast pairs can leave.
    pub fn set_line_rate(&mut self, bps: u64) {
        self.pair_time =
            crate::engine::tx_time(self.params.size.saturating_mul(2), bps.max(1)).max(1);
    }

    /// The shortest slot a pair can take: the time the host's line takes to send it.
    pub fn pair_time(&self) -> Time {
        self.pair_time
    }

    pub fn outstanding(&self) -> u64 {
        self.in_flight.len() as u64
    }

    pub fn srtt(&self) -> f64 {
        self.srtt.unwrap_or(self.params.initial_rtt.secs())
    }

    /// The timeout given to a packet sent now: X x r_t.
    pub fn timeout(&self) -> Time {
        secs(self.params.timeout_rtts * self.srtt())
    }

    /// Whether `count` more packets fit under `window` (None: no window).
    pub fn room_for(&self, count: u64, window: Option<u64>) -> bool {
        window.is_none_or(|w| self.outstanding() + count <= w)
    }

    /// Sends two back-to-back paired packets; returns the pair number.
    pub fn send_pair(&mut self, ctx: &mut AgentCtx) -> u64 {
        let pair = self.next_pair;
        self.next_pair += 1;
        self.send_new(Some((pair, 0)), ctx);
        self.send_new(Some((pair, 1)), ctx);
        self.rearm(ctx);
        pair
    }

    /// Sends `count` back-to-back unpaired packets.
    pub fn send_unpaired(&mut self, count: u64, ctx: &mut AgentCtx) {
        for _ in 0..count {
            self.send_new(None, ctx);
        }
        self.rearm(ctx);
    }

    fn send_new(&mut self, pair: Option<(u64, u8)>, ctx: &mut AgentCtx) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let f = InFlight {
            first_sent: ctx.now,
            last_sent: ctx.now,
            backoff: 0,
            pair,
            retransmitted: false,
        };
        self.by_level[0].insert((f.last_sent, seq));
        self.in_flight.insert(seq, f);
        self.transmit(seq, pair.map(|(n, _)| n), false, ctx);
    }

    fn transmit(&self, seq: u64, pair: Option<u64>, retransmission: bool, ctx: &mut AgentCtx) {
        let mut p = Packet {
            flow: self.flow,
            dst: self.dst,
            dst_agent: self.dst_agent,
            proto: PROTO_KESHAV,
            kind: PacketKind::Data,
            size: self.params.size,
            seq,
            ..Default::default()
        };
        if let Some(n) = pair {
            p.set(flags::PAIRED);
            p.aux = n;
        }
        if retransmission {
            p.set(flags::RETX);
        }
        ctx.send(p);
    }

    /// When a packet last sent at `last_sent` with `backoff` doublings times out:
    /// last_sent + 2^backoff x X x r_t, with the current r_t.
    fn deadline(&self, last_sent: Time, backoff: usize) -> Time {
        last_sent.saturating_add(self.timeout().saturating_mul(1u64 << backoff))
    }

    fn forget(&mut self, seq: u64, f: &InFlight) {
        self.by_level[f.backoff as usize].remove(&(f.last_sent, seq));
    }

    fn rearm(&mut self, ctx: &mut AgentCtx) {
        let next = (self.by_level.iter().enumerate())
            .filter_map(|(b, level)| level.first().map(|&(sent, _)| self.deadline(sent, b)))
            .min();
        match next {
            Some(at) => self.timer.arm(at, TIMEOUT, ctx),
            None => self.timer.cancel(),
        }
    }

    pub fn on_ack(&mut self, p: &Packet, ctx: &mut AgentCtx) -> AckInfo {
        let acked = self.in_flight.remove(&p.aux);
        if let Some(f) = acked {
            self.forget(p.aux, &f);
        }
        let later = self.in_flight.split_off(&(p.ack + 1));
        let covered = std::mem::replace(&mut self.in_flight, later);
        for (seq, f) in covered {
            self.forget(seq, &f);
        }
        self.rearm(ctx);
        let Some(acked) = acked else {
            return AckInfo::default();
        };
        let mut info = AckInfo::default();
        let rtt = to_secs(ctx.now - acked.first_sent);
        if !acked.retransmitted {
            self.update_rtt(rtt);
            ctx.flow(self.flow).record_rtt(rtt);
            info.rtt = Some(rtt);
        } else if self.params.retx_sample == RetxSample::FirstSent {
            self.update_rtt(rtt);
        }
        match acked.pair {
            Some((n, 0)) => {
                self.first_ack = Some((n, ctx.now));
                info.first_of_pair = Some(n);
            }
            Some((n, _)) => {
                if let Some((first, at)) = self.first_ack.filter(|&(first, _)| first == n) {
                    info.probe = Some((first, to_secs(ctx.now - at)));
                }
            }
            None => {}
        }
        info
    }

    /// r_t = gain x r_t + (1 - gain) x sample; the first sample sets it.
    fn update_rtt(&mut self, rtt: f64) {
        let gain = self.params.gain;
        self.srtt = Some(self.srtt.map_or(rtt, |s| gain * s + (1.0 - gain) * rtt));
    }

    /// Handles the retransmission timer: resends every expired packet with a doubled timeout.
    /// Returns false for tokens that are not the timer's.
    pub fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) -> bool {
        if token != TIMEOUT {
            return false;
        }
        if !self.timer.fire(token, ctx) {
            return true;
        }
        let max_backoff = self.params.max_backoff.min(30);
        let mut expired = Vec::new();
        for (b, level) in self.by_level.iter().enumerate() {
            let due = level
                .iter()
                .take_while(|&&(sent, _)| self.deadline(sent, b) <= ctx.now);
            expired.extend(due.map(|&(_, seq)| seq));
        }
        for seq in expired {
            let Some(mut f) = self.in_flight.get(&seq).copied() else {
                continue;
            };
            self.forget(seq, &f);
            f.backoff = (f.backoff + 1).min(max_backoff);
            f.last_sent = ctx.now;
            f.pair = None;
            f.retransmitted = true;
            self.by_level[f.backoff as usize].insert((f.last_sent, seq));
            self.in_flight.insert(seq, f);
            self.transmit(seq, None, true, ctx);
            let stats = ctx.flow(self.flow);
            stats.retransmits += 1;
            stats.timeouts += 1;
        }
        self.rearm(ctx);
        true
    }

    /// Traces the number of outstanding packets when it changed.
    pub fn trace_outstanding(&mut self, ctx: &mut AgentCtx) {
        let s = self.outstanding();
        if ctx.trace_every_change && self.traced_outstanding != Some(s) {
            ctx.trace(self.flow, "outstanding", s as f64);
        }
        self.traced_outstanding = Some(s);
    }

    /// The timeout currently attached to packet `seq` (tests).
    #[cfg(test)]
    pub fn timeout_of(&self, seq: u64) -> Option<Time> {
        self.in_flight
            .get(&seq)
            .map(|f| self.deadline(f.last_sent, f.backoff as usize) - f.last_sent)
    }
}

/// Traces `name` for `flow` when every change is traced.
pub fn trace(ctx: &mut AgentCtx, flow: u32, name: &str, value: f64) {
    if ctx.trace_every_change {
        ctx.trace(flow, name, value);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::transport::testing::AgentHarness;

    pub fn params() -> PairParams {
        PairParams {
            size: 1000,
            ack_size: 40,
            timeout_rtts: 3.0,
            gain: 0.875,
            initial_rtt: Duration::from_secs(1.0),
            max_backoff: 6,
            retx_sample: RetxSample::Karn,
        }
    }

    /// The sink's ACK of packet `seq` with cumulative number `cumulative`.
    pub fn ack(seq: u64, cumulative: u64) -> Packet {
        Packet {
            kind: PacketKind::Ack,
            ack: cumulative,
            aux: seq,
            ..Default::default()
        }
    }

    #[test]
    fn a_pair_gives_one_probe_and_per_packet_timers_double() {
        let mut h = AgentHarness::new(1);
        let mut core = PairCore::new(0, 1, 1, params());
        let sent = h.call(|ctx| {
            core.send_pair(ctx);
        });
        assert_eq!(sent.len(), 2);
        assert!(sent.iter().all(|p| p.has(flags::PAIRED) && p.aux == 0));
        // No RTT yet: timeout 3 x 1 s.
        assert_eq!(h.timers, vec![(secs(3.0), TIMEOUT)]);
        h.now = secs(0.3);
        let mut info = AckInfo::default();
        h.call(|ctx| info = core.on_ack(&ack(1, 1), ctx));
        assert_eq!((info.rtt, info.first_of_pair), (Some(0.3), Some(0)));
        h.now = secs(0.4);
        h.call(|ctx| info = core.on_ack(&ack(2, 2), ctx));
        let (pair, gap) = info.probe.unwrap();
        assert_eq!(pair, 0);
        assert!((gap - 0.1).abs() < 1e-12);
        // srtt = 7/8 x 0.3 + 1/8 x 0.4 = 0.3125; a new packet gets 3 x 0.3125 = 0.9375 s.
        assert!((core.srtt() - 0.3125).abs() < 1e-12);
        h.call(|ctx| core.send_unpaired(1, ctx));
        assert_eq!(core.timeout_of(3), Some(secs(0.9375)));
        h.now = secs(0.4 + 0.9375);
        let resent = h.call(|ctx| {
            core.on_timer(TIMEOUT, ctx);
        });
        assert_eq!(resent.len(), 1);
        assert!(resent[0].has(flags::RETX) && !resent[0].has(flags::PAIRED));
        assert_eq!(core.timeout_of(3), Some(secs(1.875)));
        assert_eq!((h.flows[0].retransmits, h.flows[0].timeouts), (1, 1));
        // The retransmitted packet's ACK gives no RTT sample.
        h.call(|ctx| info = core.on_ack(&ack(3, 3), ctx));
        assert_eq!(info, AckInfo::default());
        assert_eq!(core.outstanding(), 0);
    }

    #[test]
    fn a_cumulative_ack_clears_earlier_packets_and_a_lost_first_gives_no_probe() {
        let mut h = AgentHarness::new(1);
        let mut core = PairCore::new(0, 1, 1, params());
        h.call(|ctx| {
            core.send_pair(ctx);
        });
        // Packet 1 lost: the ACK triggered by 2 still says 0 in sequence.
        let mut info = AckInfo::default();
        h.now = secs(0.2);
        h.call(|ctx| info = core.on_ack(&ack(2, 0), ctx));
        assert_eq!(info.probe, None);
        assert_eq!(core.outstanding(), 1);
        h.call(|ctx| info = core.on_ack(&ack(7, 1), ctx));
        assert_eq!(core.outstanding(), 0);
    }

    #[test]
    fn a_retransmitted_packet_feeds_r_t_from_its_first_transmission_unless_karn() {
        for (rule, srtt) in [(RetxSample::FirstSent, 3.5), (RetxSample::Karn, 1.0)] {
            let mut h = AgentHarness::new(1);
            let mut core = PairCore::new(
                0,
                1,
                1,
                PairParams {
                    retx_sample: rule,
                    ..params()
                },
            );
            h.call(|ctx| {
                core.send_pair(ctx);
            });
            // No sample yet: both packets time out at 3 x 1 s and go again.
            h.now = secs(3.0);
            assert_eq!(
                h.call(|ctx| {
                    core.on_timer(TIMEOUT, ctx);
                })
                .len(),
                2
            );
            // The ACK of packet 1 at 3.5 s: the sample is 3.5 s (first rule), none (Karn);
            // the control law gets no RTT either way.
            h.now = secs(3.5);
            let mut info = AckInfo::default();
            h.call(|ctx| info = core.on_ack(&ack(1, 1), ctx));
            assert_eq!(info, AckInfo::default());
            assert!(
                (core.srtt() - srtt).abs() < 1e-12,
                "{rule:?}: {}",
                core.srtt()
            );
            assert_eq!(h.flows[0].rtt_count, 0);
        }
    }
}
