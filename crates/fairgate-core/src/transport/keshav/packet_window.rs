//! The packet-counting sliding window that Keshav's Generic and DECbit sources share
//! ([Keshav91, §6.5]), and their sink.
//!
//! Rules from the text: packets are numbered and counted, not bytes; the sink ACKs every
//! packet with the highest in-sequence packet number in a 40-byte ACK that travels as a
//! conversation of its own; the timeout is beta x rtt with beta = 2 and rtt an exponential
//! average; the RTT sample of a retransmitted packet runs from its first transmission; only
//! the timed-out packet is retransmitted; the timer backs off.
//!
//! Decisions where the text is silent:
//! - Packets are numbered from 1; ACK n means packets 1..=n arrived. The sink keeps
//!   out-of-order packets, so one retransmission can close a hole.
//! - The RTT average is srtt = gain x srtt + (1 - gain) x sample with gain 7/8, seeded
//!   by `initial_rtt` (1 s) until the first sample.
//! - One timer runs, on the oldest unacknowledged packet (as in XNS SPP and BSD); when it
//!   expires only that packet is retransmitted. Each expiry doubles the timeout (up to
//!   2^max_backoff); an ACK of new data resets the backoff.
//! - `app_gap` (Generic only; none = an infinite FTP source): the application hands the source
//!   one packet after each exponential gap with this mean, as the text's Telnet (mean 5 s,
//!   window 5); the window then limits what is outstanding of the data handed over so far.
//! - The sink echoes the DECbit of the packet that triggered each ACK and names that packet in
//!   the ACK's `aux` (so a DECbit source knows which window a bit belongs to).

use crate::config::error::{check, ScenarioError};
use crate::config::units::Duration;
use crate::engine::{secs, to_secs, Time};
use crate::net::{flags, Agent, AgentCtx, Packet, PacketKind};
use crate::transport::timer::LazyTimer;
use rand_distr::{Distribution, Exp};
use std::collections::BTreeMap;

pub const PROTO_KESHAV: u8 = 6;

/// Memory per outstanding packet, for the estimate at validation: its B-tree entry (24 bytes
/// and the node's share) and its arena record in the network, rounded up.
pub const OUTSTANDING_BYTES: f64 = 256.0;

/// Timer and size parameters common to Generic and DECbit.
#[derive(Clone, Copy, Debug)]
pub struct WindowParams {
    pub size: u32,
    pub ack_size: u32,
    pub beta: f64,
    pub gain: f64,
    pub initial_rtt: Duration,
    pub max_backoff: u32,
    /// Mean gap of the application's packet arrivals; None: always data to send.
    pub app_gap: Option<Duration>,
}

impl WindowParams {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::packet_size(path, "size", u64::from(self.size))?;
        check::packet_size(path, "ack_size", u64::from(self.ack_size))?;
        check::positive(path, "beta", self.beta)?;
        check::in_range(path, "gain", self.gain, 0.0, 1.0)?;
        check_initial_rtt(path, self.initial_rtt, self.size, self.ack_size)?;
        check::in_range(path, "max_backoff", self.max_backoff as f64, 0.0, 30.0)?;
        match self.app_gap {
            Some(gap) => crate::traffic::open_loop::check_mean_gap(
                &crate::config::error::join(path, "app_gap"),
                gap.secs(),
                f64::from(self.size),
            ),
            None => Ok(()),
        }
    }
}

/// The first timeouts are multiples of the initial RTT, each one a retransmission: it must last
/// at least a packet and its ACK at 1 Tbps, the bound of every rate (1 ps retransmitted a
/// packet every 2-128 ps until the first ACK, 10^9 of them in a 22 ms round trip).
pub fn check_initial_rtt(
    path: &str,
    rtt: Duration,
    size: u32,
    ack_size: u32,
) -> Result<(), ScenarioError> {
    let shortest =
        crate::traffic::open_loop::shortest_mean_gap_s(f64::from(size) + f64::from(ack_size));
    if rtt.secs() < shortest {
        return Err(ScenarioError::new(
            crate::config::error::join(path, "initial_rtt"),
            format!(
                "got {} s, expected at least {shortest} s (a {size}-byte packet and its \
                 {ack_size}-byte ACK at 1 Tbps, the bound of every rate)",
                rtt.secs()
            ),
        ));
    }
    Ok(())
}

/// How a source sizes its window from ACKs.
pub trait WindowPolicy: Send {
    fn name(&self) -> &'static str;
    /// The current window in packets (at least 1 is always allowed).
    fn window(&self) -> f64;
    /// An ACK triggered by packet `trigger`, with the DECbit echo `bit`; `next_seq` is the
    /// number the next new packet will get.
    fn on_ack(&mut self, _trigger: u64, _bit: bool, _next_seq: u64) {}
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    first_sent: Time,
    last_sent: Time,
}

const TIMEOUT: u64 = 0;
const ARRIVAL: u64 = 1;

/// A fixed- or adaptive-window source counting packets.
pub struct WindowSender<P: WindowPolicy> {
    flow: u32,
    dst: u32,
    dst_agent: u32,
    params: WindowParams,
    pub policy: P,
    next_seq: u64,
    /// Highest packet number the application has handed over.
    available: u64,
    acked: u64,
    outstanding: BTreeMap<u64, Outstanding>,
    srtt: f64,
    backoff: u32,
    timer: LazyTimer,
    stopped: bool,
    traced_window: f64,
}

impl<P: WindowPolicy> WindowSender<P> {
    pub fn new(flow: u32, dst: u32, dst_agent: u32, params: WindowParams, policy: P) -> Self {
        WindowSender {
            flow,
            dst,
            dst_agent,
            srtt: params.initial_rtt.secs(),
            params,
            policy,
            next_seq: 1,
            available: if params.app_gap.is_some() {
                0
            } else {
                u64::MAX
            },
            acked: 0,
            outstanding: BTreeMap::new(),
            backoff: 0,
            timer: LazyTimer::default(),
            stopped: false,
            traced_window: f64::NAN,
        }
    }

    pub fn srtt(&self) -> f64 {
        self.srtt
    }

    /// The timeout of a packet sent now, backoff included.
    pub fn timeout(&self) -> Time {
        secs(self.params.beta * self.srtt * f64::from(1u32 << self.backoff))
    }

    fn transmit(&mut self, seq: u64, retransmission: bool, ctx: &mut AgentCtx) {
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
        if retransmission {
            p.set(flags::RETX);
            ctx.flow(self.flow).retransmits += 1;
        }
        ctx.send(p);
    }

    fn send_more(&mut self, ctx: &mut AgentCtx) {
        let window = (self.policy.window().floor() as u64).max(1);
        let limit = (self.acked + window).min(self.available);
        while !self.stopped && self.next_seq <= limit {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.outstanding.insert(
                seq,
                Outstanding {
                    first_sent: ctx.now,
                    last_sent: ctx.now,
                },
            );
            self.transmit(seq, false, ctx);
        }
        self.rearm(ctx);
    }

    /// One timer, on the oldest unacknowledged packet.
    fn rearm(&mut self, ctx: &mut AgentCtx) {
        let timeout = self.timeout();
        match self.outstanding.values().next() {
            Some(oldest) => self
                .timer
                .arm(oldest.last_sent.saturating_add(timeout), TIMEOUT, ctx),
            None => self.timer.cancel(),
        }
    }

    fn on_ack(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        if p.ack > self.acked {
            if let Some(o) = self.outstanding.get(&p.ack) {
                let rtt = to_secs(ctx.now - o.first_sent);
                self.srtt = self.params.gain * self.srtt + (1.0 - self.params.gain) * rtt;
                ctx.flow(self.flow).record_rtt(rtt);
            }
            self.outstanding = self.outstanding.split_off(&(p.ack + 1));
            self.acked = p.ack;
            self.backoff = 0;
        }
        self.policy
            .on_ack(p.aux, p.has(flags::DECBIT), self.next_seq);
        self.send_more(ctx);
    }

    fn on_timeout(&mut self, ctx: &mut AgentCtx) {
        let Some((&seq, oldest)) = self.outstanding.iter_mut().next() else {
            return;
        };
        oldest.last_sent = ctx.now;
        self.transmit(seq, true, ctx);
        ctx.flow(self.flow).timeouts += 1;
        self.backoff = (self.backoff + 1).min(self.params.max_backoff);
        self.rearm(ctx);
    }

    fn schedule_arrival(&mut self, ctx: &mut AgentCtx) {
        let Some(mean) = self.params.app_gap else {
            return;
        };
        let gap = Exp::new(1.0 / mean.secs()).map_or(0.0, |d| d.sample(&mut *ctx.rng));
        ctx.set_timer(ctx.now.saturating_add(secs(gap)), ARRIVAL);
    }

    fn on_arrival(&mut self, ctx: &mut AgentCtx) {
        if self.stopped {
            return;
        }
        self.available += 1;
        self.send_more(ctx);
        self.schedule_arrival(ctx);
    }

    fn trace(&mut self, ctx: &mut AgentCtx) {
        let w = self.policy.window();
        if ctx.trace_every_change && w != self.traced_window {
            ctx.trace(self.flow, "window", w);
        }
        self.traced_window = w;
    }
}

impl<P: WindowPolicy> Agent for WindowSender<P> {
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.send_more(ctx);
        self.schedule_arrival(ctx);
        self.trace(ctx);
    }

    fn stop(&mut self, _ctx: &mut AgentCtx) {
        self.stopped = true;
    }

    fn on_packet(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        if p.kind == PacketKind::Ack {
            self.on_ack(p, ctx);
            self.trace(ctx);
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        if token == TIMEOUT && self.timer.fire(token, ctx) {
            self.on_timeout(ctx);
            self.trace(ctx);
        } else if token == ARRIVAL {
            self.on_arrival(ctx);
        }
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend([("window", self.policy.window()), ("srtt", self.srtt)]);
    }

    fn sample_reads_only_self(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        self.policy.name()
    }
}

/// Keshav's sink: ACKs every packet with the highest in-sequence packet number.
pub struct PacketSink {
    ack_flow: u32,
    dst: u32,
    dst_agent: u32,
    ack_size: u32,
    in_sequence: u64,
    /// Out-of-order packets and their sizes.
    held: BTreeMap<u64, u32>,
}

impl PacketSink {
    pub fn new(ack_flow: u32, dst: u32, dst_agent: u32, ack_size: u32) -> Self {
        PacketSink {
            ack_flow,
            dst,
            dst_agent,
            ack_size,
            in_sequence: 0,
            held: BTreeMap::new(),
        }
    }
}

impl Agent for PacketSink {
    fn on_packet(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        if p.seq > self.in_sequence {
            self.held.insert(p.seq, p.size);
        }
        let mut delivered = 0u64;
        while let Some(size) = self.held.remove(&(self.in_sequence + 1)) {
            self.in_sequence += 1;
            delivered += size as u64;
        }
        if delivered > 0 {
            ctx.goodput(p.flow, delivered);
        }
        let mut ack = Packet {
            flow: self.ack_flow,
            dst: self.dst,
            dst_agent: self.dst_agent,
            proto: PROTO_KESHAV,
            kind: PacketKind::Ack,
            size: self.ack_size,
            ack: self.in_sequence,
            aux: p.seq,
            echo: p.created,
            ..Default::default()
        };
        if p.has(flags::DECBIT) {
            ack.set(flags::DECBIT);
        }
        ctx.send(ack);
    }

    fn samples_nothing(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "packet_sink"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::keshav::generic::FixedWindow;
    use crate::transport::testing::AgentHarness;

    fn data(seq: u64, flags: u16) -> Packet {
        Packet {
            kind: PacketKind::Data,
            seq,
            size: 1000,
            flags,
            ..Default::default()
        }
    }

    #[test]
    fn sink_acks_the_highest_in_sequence_packet_and_echoes_the_bit() {
        let mut h = AgentHarness::new(2);
        let mut sink = PacketSink::new(1, 0, 0, 40);
        let mut ack_of = |seq, flags| {
            let p = data(seq, flags);
            h.call(|ctx| sink.on_packet(&p, ctx))[0]
        };
        assert_eq!(ack_of(1, 0).ack, 1);
        let a = ack_of(3, flags::DECBIT);
        assert_eq!((a.ack, a.aux, a.size), (1, 3, 40));
        assert!(a.has(flags::DECBIT));
        let a = ack_of(2, 0);
        assert_eq!(a.ack, 3);
        assert!(!a.has(flags::DECBIT));
        assert_eq!(h.flows[0].goodput_bytes, 3000);
    }

    fn params() -> WindowParams {
        WindowParams {
            size: 1000,
            ack_size: 40,
            beta: 2.0,
            gain: 0.875,
            initial_rtt: Duration::from_secs(1.0),
            max_backoff: 6,
            app_gap: None,
        }
    }

    #[test]
    fn an_application_source_sends_only_what_has_arrived() {
        let mut h = AgentHarness::new(3);
        let app = WindowParams {
            size: 40,
            app_gap: Some(Duration::from_secs(5.0)),
            ..params()
        };
        let mut t = WindowSender::new(0, 1, 1, app, FixedWindow(2));
        let sent = h.call(|ctx| t.start(ctx));
        assert!(sent.is_empty(), "nothing handed over yet");
        assert_eq!(h.timers.len(), 1);
        assert_eq!(h.timers[0].1, ARRIVAL);
        // Three arrivals with no ACK: packets 1 and 2 go, the third waits for the window.
        let mut sent = Vec::new();
        for _ in 0..3 {
            sent.extend(h.call(|ctx| t.on_timer(ARRIVAL, ctx)));
        }
        assert_eq!(
            sent.iter().map(|p| (p.seq, p.size)).collect::<Vec<_>>(),
            vec![(1, 40), (2, 40)]
        );
        // ACK of packet 1 opens the window for the waiting packet 3, and no more.
        let ack = Packet {
            kind: PacketKind::Ack,
            ack: 1,
            aux: 1,
            ..Default::default()
        };
        let sent = h.call(|ctx| t.on_packet(&ack, ctx));
        assert_eq!(sent.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![3]);
        let arrivals = h.timers.iter().filter(|t| t.1 == ARRIVAL).count();
        assert_eq!(
            arrivals, 4,
            "the first arrival and one after each of the three"
        );
    }

    #[test]
    fn generic_timeout_is_beta_srtt_and_backs_off() {
        let mut h = AgentHarness::new(2);
        let mut g = WindowSender::new(0, 1, 1, params(), FixedWindow(2));
        let sent = h.call(|ctx| g.start(ctx));
        assert_eq!(sent.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![1, 2]);
        // ACK of packet 1 after 0.2 s: srtt = 0.875 x 1 + 0.125 x 0.2 = 0.9; timeout 1.8 s.
        h.now = secs(0.2);
        let ack = Packet {
            kind: PacketKind::Ack,
            ack: 1,
            aux: 1,
            ..Default::default()
        };
        let sent = h.call(|ctx| g.on_packet(&ack, ctx));
        assert_eq!(sent[0].seq, 3);
        assert!((g.srtt() - 0.9).abs() < 1e-12);
        assert_eq!(g.timeout(), secs(1.8));
        // Packet 2 (sent at 0) is the oldest: its timer fires at 1.8 s; only it is resent.
        h.now = secs(1.8);
        let sent = h.call(|ctx| g.on_timer(TIMEOUT, ctx));
        assert_eq!(sent.len(), 1);
        assert_eq!((sent[0].seq, sent[0].has(flags::RETX)), (2, true));
        assert_eq!(g.timeout(), secs(3.6));
        assert_eq!(h.flows[0].timeouts, 1);
    }
}
