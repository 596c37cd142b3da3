//! TCP: the sender shared by every congestion-control variant, its configuration
//! (`source = { kind = "tcp", cc = "tahoe" | "reno" | "newreno" | "sack", ... }`), the
//! optional SYN / SYN-ACK / FIN exchange, ECN (RFC 3168), a per-connection rate cap and the
//! applications of [`crate::transport::app`].
//!
//! Sources: RFC 793 / RFC 9293 (sequence numbers in bytes, cumulative ACKs, SYN and FIN);
//! RFC 5681 (congestion control), RFC 6298 (timer), RFC 3168 §6.1 (ECN), RFC 7323 §2 (window
//! scaling); [Keshav91, §6.5] (JK), [Chung06, §4.1] (web traffic losing SYNs),
//! \[Vaidyanathan99] (a spoofing gateway delaying the SYN-ACK), [Byun07, §2.13] (long
//! satellite paths with large windows).
//!
//! Decisions where the sources are silent (each with its reason in `docs/models/tcp.md`):
//! segments are `mss` + a 40 B header + 12 B with `timestamps`; SYNs, pure ACKs and
//! retransmissions are never ECT; Limited Transmit is on; RTT samples come from every ACK with
//! timestamps, else from one timed segment per window (Karn); a timeout sets ssthresh on its
//! first expiry only, cwnd = 1 MSS, goes back to `snd_una` and sets `recover` = `snd_max`; the
//! ECN reaction happens at most once per window and never in recovery; no cwnd restart after
//! idle; no persist timer; the handshake's third segment is the first data segment.

mod ecn;
mod send_buffer;

pub use send_buffer::SendBuffer;

use super::cc::{AckEvent, CongestionControl, Reaction, TcpState};
use super::config::{EcnFloor, LostSynRto, TcpConfig};
use super::receiver::PROTO_TCP;
use super::rto::RtoEstimator;
use super::tcp_options::option_bytes;
use super::variant::Variant;
use crate::engine::prefetch::{prefetch, prefetch_lines};
use crate::engine::{secs, to_secs, tx_time, Time};
use crate::net::{flags, Agent, AgentCtx, Packet, PacketKind};
use crate::traffic::SourceEnv;
use crate::transport::app::{AppSpec, FileApp, RequestsApp, TransferLog};
use crate::transport::timer::LazyTimer;

/// Connection state of the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conn {
    Idle,
    SynSent,
    Established,
    FinSent,
    Closed,
}

const RTO: u64 = 0;
const PACE: u64 = 1;
const APP: u64 = 2;

/// The application plan driving the connection.
#[derive(Clone, Debug)]
struct AppPlan {
    spec: AppSpec,
    submitted: u64,
}

/// The TCP sender agent.
///
/// Request/response API for workloads built on top (HTTP, web): configure `app = { kind =
/// "manual" }`, own the sender, forward `start`, `on_packet` and the timer tokens 0..=2 to it,
/// call [`TcpSender::submit`] for each response and read [`TcpSender::transfers`] for their
/// completion times (no callbacks).
#[repr(C, align(64))]
pub struct TcpSender {
    // `repr(C)` keeps this order and the alignment puts it on line boundaries: what a timeout
    // reads fills the first four lines (flags, addresses, the congestion control inline, the
    // retransmission timer, the window state and the RTO estimator, all that
    // [`Agent::prefetch_timer`] hints), an ACK reads the transfer log besides (five lines,
    // [`Agent::prefetch`]), the start the application plan; what the handshake, pacing,
    // send budget and request applications read comes last.
    conn: Conn,
    ecn: bool,
    cwr_pending: bool,
    /// RFC 3168 §6.1.2 with `ecn_floor = "one_segment"`: nothing new until the timer expires.
    ecn_hold: bool,
    limited_transmit: bool,
    timestamps: bool,
    /// A writer's push was cut short by the send buffer (see [`SendBuffer`]).
    writer_waiting: bool,
    /// A rate cap or a send budget applies: sending reads their fields, else it skips them.
    limited: bool,
    flow: u32,
    dst: u32,
    dst_agent: u32,
    header: u32,
    max_retries: u32,
    /// Timer expiries since `snd_una` last advanced (or since the SYN / FIN was first sent).
    retries: u32,
    cc: Variant,
    rto_timer: LazyTimer,
    /// `snd_max` at the last window reduction ([`NO_REDUCTION`] before the first).
    ecn_recover: u64,
    state: TcpState,
    rto: RtoEstimator,
    log: TransferLog,
    handshake: bool,
    /// Whether the connection aborted after `max_retries` (as opposed to a closing handshake).
    gave_up: bool,
    app: AppPlan,
    rate_cap_bps: Option<u64>,
    /// Segments `send_more` may still send (None = no limit): a gateway's back-pressure.
    send_budget: Option<u64>,
    next_send_at: Time,
    pub(super) buffer: SendBuffer,
    pace_timer: LazyTimer,
    app_timer: LazyTimer,
    traced: (u64, bool),
    control_sent_at: Option<Time>,
    syn_rto: Time,
    ecn_floor: EcnFloor,
    lost_syn_rto: LostSynRto,
}

/// `ecn_recover` before the sender's first window reduction.
const NO_REDUCTION: u64 = u64::MAX;

const LINE: usize = 64;
/// Bytes at the start of a [`TcpSender`] that a timeout reads.
const TIMER_BYTES: usize = std::mem::offset_of!(TcpSender, log);
/// Bytes at the start of a [`TcpSender`] that its calls on the data path read.
const HOT_BYTES: usize = std::mem::offset_of!(TcpSender, handshake);
/// Bytes at the start of a [`TcpSender`] that its start reads (the application plan too).
const START_BYTES: usize = std::mem::offset_of!(TcpSender, rate_cap_bps);
const _: () = assert!(
    std::mem::offset_of!(TcpSender, cc) < LINE && TIMER_BYTES <= 4 * LINE,
    "a timeout reads four lines, the congestion control in the first"
);
const _: () = assert!(HOT_BYTES <= 5 * LINE, "an ACK reads five lines");

impl TcpSender {
    pub fn new(cfg: &TcpConfig, env: &SourceEnv) -> Self {
        let mut state = TcpState::new(cfg.mss, cfg.initial_window, cfg.rwnd);
        state.dupthresh = cfg.dupthresh;
        state.abc_limit = cfg.abc_limit;
        TcpSender {
            flow: env.flow,
            dst: env.dst_node,
            dst_agent: env.receiver_agent,
            header: cfg.header,
            ecn: cfg.ecn,
            rate_cap_bps: cfg.rate_cap.map(|r| r.bps()),
            handshake: cfg.handshake,
            state,
            cc: cfg.cc.build(cfg),
            limited: cfg.rate_cap.is_some(),
            writer_waiting: false,
            rto: RtoEstimator::new(cfg.rto_params()),
            rto_timer: LazyTimer::default(),
            pace_timer: LazyTimer::default(),
            app_timer: LazyTimer::default(),
            conn: Conn::Idle,
            app: AppPlan {
                spec: cfg.app.clone(),
                submitted: 0,
            },
            log: TransferLog::default(),
            next_send_at: 0,
            ecn_recover: NO_REDUCTION,
            cwr_pending: false,
            ecn_floor: cfg.ecn_floor(),
            ecn_hold: false,
            lost_syn_rto: cfg.lost_syn_rto,
            control_sent_at: None,
            traced: (0, false),
            limited_transmit: cfg.limited_transmit,
            timestamps: cfg.timestamps,
            syn_rto: cfg.syn_rto.0,
            max_retries: cfg.max_retries,
            retries: 0,
            buffer: SendBuffer::new(cfg.send_buffer),
            send_budget: None,
            gave_up: false,
        }
    }

    /// Limits the segments window-driven sending may send from now on (None = no limit);
    /// a fast retransmission is always sent.
    pub fn set_send_budget(&mut self, segments: Option<u64>) {
        self.send_budget = segments;
        self.limited = self.rate_cap_bps.is_some() || segments.is_some();
    }

    pub fn send_budget(&self) -> Option<u64> {
        self.send_budget
    }

    /// Sends whatever the window and the budget allow now (after the budget was raised).
    pub fn resume(&mut self, ctx: &mut AgentCtx) {
        self.send_more(ctx);
    }

    pub fn state(&self) -> &TcpState {
        &self.state
    }

    pub fn conn(&self) -> Conn {
        self.conn
    }

    /// Whether the connection aborted after `max_retries` expiries of one segment.
    pub fn gave_up(&self) -> bool {
        self.gave_up
    }

    /// The owner of a manual application has handed over its last byte and every byte is
    /// acknowledged: sends the FIN of the closing handshake (with a handshake, once open);
    /// returns whether it went.
    pub fn close(&mut self, ctx: &mut AgentCtx) -> bool {
        let done = self.state.snd_una >= self.state.app_end;
        if !self.handshake || self.conn != Conn::Established || !done {
            return false;
        }
        self.conn = Conn::FinSent;
        self.control_sent_at = None;
        self.retries = 0;
        self.control(PacketKind::Fin, ctx);
        true
    }

    pub fn rto(&self) -> &RtoEstimator {
        &self.rto
    }

    /// Every transfer submitted so far, with its completion time once acknowledged.
    pub fn transfers(&self) -> &[crate::transport::app::Transfer] {
        self.log.all()
    }

    /// Hands `bytes` more to the connection as one transfer; returns its index in
    /// [`transfers`](Self::transfers). Sending starts at once if the connection is open.
    pub fn submit(&mut self, bytes: u64, ctx: &mut AgentCtx) -> usize {
        let id = self.log.submit(self.state.app_end, bytes, ctx.now);
        self.state.app_end += bytes;
        if self.conn == Conn::Established {
            self.send_more(ctx);
            self.trace(ctx);
        }
        id
    }

    fn open(&mut self, ctx: &mut AgentCtx) {
        self.conn = Conn::Established;
        match self.app.spec.clone() {
            AppSpec::Bulk => self.state.app_end = u64::MAX / 4,
            AppSpec::File(FileApp { size }) => {
                self.app.submitted = 1;
                self.submit(size, ctx);
            }
            AppSpec::Requests(_) => self.next_request(ctx),
            AppSpec::Manual => {}
        }
        self.send_more(ctx);
    }

    fn next_request(&mut self, ctx: &mut AgentCtx) {
        if let AppSpec::Requests(RequestsApp { count, size, .. }) = &self.app.spec {
            if self.app.submitted < *count {
                let bytes = size.sample_bytes(ctx.rng) as u64;
                self.app.submitted += 1;
                self.submit(bytes, ctx);
            }
        }
    }

    /// Whether the application has nothing more to send, ever.
    fn plan_done(&self) -> bool {
        match &self.app.spec {
            AppSpec::Bulk | AppSpec::Manual => false,
            AppSpec::File(_) => true,
            AppSpec::Requests(r) => self.app.submitted >= r.count,
        }
    }

    fn control(&mut self, kind: PacketKind, ctx: &mut AgentCtx) {
        let timeout = if kind == PacketKind::Syn {
            self.syn_timeout()
        } else {
            self.rto.rto()
        };
        ctx.send(Packet {
            flow: self.flow,
            dst: self.dst,
            dst_agent: self.dst_agent,
            proto: PROTO_TCP,
            kind,
            size: self.header + option_bytes(self.timestamps, 0),
            seq: self.state.snd_max,
            ..Default::default()
        });
        self.control_sent_at = self.control_sent_at.or(Some(ctx.now));
        self.rto_timer
            .arm(ctx.now.saturating_add(timeout), RTO, ctx);
    }

    /// RFC 6298 §5.7 after a retransmitted SYN (`retries` > 0), per `lost_syn_rto`.
    fn restart_rto_after_lost_syn(&mut self) {
        if self.retries == 0 {
            return;
        }
        match self.lost_syn_rto {
            LostSynRto::Ns3 => self.rto.restart_at(to_secs(self.syn_timeout())),
            LostSynRto::Rfc6298 => self.rto.restart_at(self.rto.initial().max(3.0)),
            LostSynRto::Backoff => {}
        }
    }

    /// `syn_rto` doubled for each retransmission of the SYN, at most `max_rto`.
    fn syn_timeout(&self) -> Time {
        let doubled = self.syn_rto << self.retries.min(16);
        doubled.min(secs(self.rto.max_rto()))
    }

    fn send_segment(&mut self, seq: u64, len: u64, ctx: &mut AgentCtx) {
        let s = &mut self.state;
        let retransmission = seq < s.snd_max;
        let mut p = Packet {
            flow: self.flow,
            dst: self.dst,
            dst_agent: self.dst_agent,
            proto: PROTO_TCP,
            kind: PacketKind::Data,
            size: len as u32 + self.header + option_bytes(self.timestamps, 0),
            seq,
            aux: len,
            ..Default::default()
        };
        if self.ecn && !retransmission {
            p.set(flags::ECT);
        }
        if retransmission {
            p.set(flags::RETX);
            ctx.flow(self.flow).retransmits += 1;
            self.rto.on_retransmit();
        } else {
            if !self.timestamps {
                self.rto.start_timing(seq + len, ctx.now);
            }
            if s.lt_allowance > 0 {
                let window_end = s.snd_una + s.cwnd;
                s.lt_sent += (seq + len).saturating_sub(window_end).min(len);
            }
            if std::mem::take(&mut self.cwr_pending) {
                p.set(flags::CWR);
            }
        }
        self.cc.on_sent(s, seq, len);
        if seq >= s.snd_nxt {
            s.snd_nxt = seq + len;
        }
        s.snd_max = s.snd_max.max(seq + len);
        if self.limited {
            if let Some(rate) = self.rate_cap_bps {
                self.next_send_at = self.next_send_at.max(ctx.now) + tx_time(p.size, rate);
            }
        }
        ctx.send(p);
        if !self.rto_timer.is_armed() {
            self.rto_timer
                .arm(ctx.now.saturating_add(self.rto.rto()), RTO, ctx);
        }
    }

    /// Sends whatever the window, the variant and the rate cap allow.
    fn send_more(&mut self, ctx: &mut AgentCtx) {
        while self.conn == Conn::Established && !self.ecn_hold {
            if self.limited && self.held_by_limits(ctx) {
                return;
            }
            let Some((seq, len)) = self.cc.next_segment(&self.state) else {
                return;
            };
            self.send_segment(seq, len, ctx);
            if self.limited {
                if let Some(budget) = &mut self.send_budget {
                    *budget -= 1;
                }
            }
        }
    }

    /// Whether the send budget is spent or the rate cap holds the next segment back (then
    /// the pacing timer is armed for it).
    fn held_by_limits(&mut self, ctx: &mut AgentCtx) -> bool {
        if self.send_budget == Some(0) {
            return true;
        }
        if self.rate_cap_bps.is_some() && ctx.now < self.next_send_at {
            if self.cc.next_segment(&self.state).is_some() {
                self.pace_timer.arm(self.next_send_at, PACE, ctx);
            }
            return true;
        }
        false
    }

    /// Updates `snd_una`, `dupacks` and the peer's window; returns (bytes newly acknowledged,
    /// duplicate), or None for an old ACK or a pure window update.
    fn classify_ack(&mut self, p: &Packet, ctx: &mut AgentCtx) -> Option<(u64, bool)> {
        let s = &mut self.state;
        let ack = p.ack.min(s.snd_max);
        if ack < s.snd_una {
            return None;
        }
        let window_changed = std::mem::replace(&mut s.rwnd, p.aux) != p.aux;
        if ack > s.snd_una {
            let acked = ack - s.snd_una;
            s.snd_una = ack;
            s.snd_nxt = s.snd_nxt.max(ack);
            s.dupacks = 0;
            s.lt_allowance = 0;
            s.lt_sent = 0;
            self.retries = 0;
            let rtt = if self.timestamps {
                let rtt = to_secs(ctx.now.saturating_sub(p.echo));
                self.rto.sample(rtt);
                Some(rtt)
            } else {
                self.rto.on_ack(ack, ctx.now)
            };
            if let Some(rtt) = rtt {
                ctx.flow(self.flow).record_rtt(rtt);
            }
            return Some((acked, false));
        }
        if s.snd_max > s.snd_una && !window_changed {
            s.dupacks += 1;
            return Some((0, true));
        }
        None
    }

    fn on_ack(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        let Some((acked, duplicate)) = self.classify_ack(p, ctx) else {
            return self.send_more(ctx);
        };
        let event = AckEvent {
            ack: self.state.snd_una,
            acked,
            duplicate,
            sack: &p.sack[..p.sack_len as usize],
        };
        let cwnd_before = self.state.cwnd;
        let reaction = self.cc.on_ack(&mut self.state, &event);
        self.react(&reaction, ctx);
        let hold = p.has(flags::ECE)
            && self.ecn
            && self.ecn_reaction(cwnd_before, reaction.fast_retransmit, ctx);
        self.allow_limited_transmit(duplicate);
        self.rearm(duplicate, &reaction, ctx);
        if hold {
            self.hold_until_timer(ctx);
        }
        self.complete_transfers(ctx);
        self.send_more(ctx);
    }

    /// RFC 3042: on the first dupthresh - 1 duplicate ACKs outside recovery, one new segment
    /// per duplicate beyond cwnd (new data only, within the receive window; cwnd unchanged).
    fn allow_limited_transmit(&mut self, duplicate: bool) {
        let s = &mut self.state;
        let allowed = self.limited_transmit
            && duplicate
            && !self.cc.in_recovery()
            && s.dupacks < s.dupthresh
            && s.snd_nxt == s.snd_max;
        s.lt_allowance = if allowed {
            u64::from(s.dupacks) * s.mss
        } else {
            0
        };
    }

    fn react(&mut self, reaction: &Reaction, ctx: &mut AgentCtx) {
        if reaction.fast_retransmit {
            ctx.flow(self.flow).fast_retransmits += 1;
            self.ecn_recover = self.state.snd_max;
        }
        if let Some(seq) = reaction.retransmit {
            let len = self.state.segment_len(seq).min(self.state.snd_max - seq);
            if len > 0 {
                self.send_segment(seq, len, ctx);
            }
        }
    }

    /// The retransmit timer after an ACK; during an ECN hold it keeps running even when
    /// everything is acknowledged, since its expiry is what ends the hold.
    fn rearm(&mut self, duplicate: bool, reaction: &Reaction, ctx: &mut AgentCtx) {
        if self.state.snd_una >= self.state.snd_max {
            if !self.ecn_hold {
                self.rto_timer.cancel();
            }
        } else if !duplicate && !reaction.keep_timer {
            self.rto_timer
                .arm(ctx.now.saturating_add(self.rto.rto()), RTO, ctx);
        }
    }

    fn complete_transfers(&mut self, ctx: &mut AgentCtx) {
        if self.log.acknowledge(self.state.snd_una, ctx.now) == 0 || self.log.open() > 0 {
            return;
        }
        if !self.plan_done() {
            if let AppSpec::Requests(RequestsApp { gap, .. }) = &self.app.spec {
                let gap = gap.map_or(0, |g| secs(g.0.sample(ctx.rng).max(0.0)));
                self.app_timer.arm(ctx.now.saturating_add(gap), APP, ctx);
            }
            return;
        }
        ctx.flow(self.flow).completed_at = Some(ctx.now);
        if self.handshake {
            self.conn = Conn::FinSent;
            self.control_sent_at = None;
            self.control(PacketKind::Fin, ctx);
        }
    }

    fn on_timeout(&mut self, ctx: &mut AgentCtx) {
        if self.release_hold(ctx) {
            return;
        }
        match self.conn {
            Conn::SynSent => return self.control_timeout(PacketKind::Syn, ctx),
            Conn::FinSent => return self.control_timeout(PacketKind::Fin, ctx),
            Conn::Established if self.state.snd_una < self.state.snd_max => {}
            _ => return,
        }
        if self.give_up(ctx) {
            return;
        }
        if self.rto.backoff() == 0 {
            // RFC 5681 §3.1: the whole FlightSize, Limited Transmit data included.
            let flight = self.cc.flight_at_timeout(&self.state);
            self.state.halve_into_ssthresh(flight);
        }
        let s = &mut self.state;
        s.lt_sent = 0;
        s.cwnd = s.mss;
        s.snd_nxt = s.snd_una;
        s.dupacks = 0;
        s.lt_allowance = 0;
        s.recover = Some(s.snd_max);
        self.ecn_recover = s.snd_max;
        self.cc.on_timeout(s);
        self.rto.on_timeout();
        ctx.flow(self.flow).timeouts += 1;
        if ctx.trace_every_change {
            ctx.trace(self.flow, "timeout_rto", to_secs(self.rto.rto()));
        }
        self.send_more(ctx);
        self.rto_timer
            .arm(ctx.now.saturating_add(self.rto.rto()), RTO, ctx);
    }

    fn control_timeout(&mut self, kind: PacketKind, ctx: &mut AgentCtx) {
        if self.give_up(ctx) {
            return;
        }
        self.rto.on_timeout();
        ctx.flow(self.flow).timeouts += 1;
        self.control(kind, ctx);
    }

    /// Counts one more expiry for the same segment; after `max_retries` retransmissions the
    /// connection aborts: nothing more is sent and the flow is counted as aborted.
    fn give_up(&mut self, ctx: &mut AgentCtx) -> bool {
        if self.retries < self.max_retries {
            self.retries += 1;
            return false;
        }
        self.conn = Conn::Closed;
        self.gave_up = true;
        self.rto_timer.cancel();
        self.pace_timer.cancel();
        self.app_timer.cancel();
        ctx.flow(self.flow).aborted = true;
        if ctx.trace_every_change {
            ctx.trace(self.flow, "aborted", 1.0);
        }
        true
    }

    fn on_syn_ack(&mut self, ctx: &mut AgentCtx) {
        if self.conn != Conn::SynSent {
            return;
        }
        if let Some(sent) = self.control_sent_at.take() {
            if self.rto.backoff() == 0 {
                let rtt = to_secs(ctx.now - sent);
                self.rto.sample(rtt);
                ctx.flow(self.flow).record_rtt(rtt);
            }
        }
        self.restart_rto_after_lost_syn();
        self.retries = 0;
        self.rto_timer.cancel();
        self.open(ctx);
    }

    fn trace(&mut self, ctx: &mut AgentCtx) {
        if !ctx.trace_every_change {
            return;
        }
        let now = (self.state.cwnd, self.cc.in_recovery());
        if now.0 != self.traced.0 {
            ctx.trace(self.flow, "cwnd", now.0 as f64);
        }
        if now.1 != self.traced.1 {
            ctx.trace(self.flow, "recovery", now.1 as u8 as f64);
        }
        self.traced = now;
    }
}

/// ssthresh for the trace table: NaN while it still has its initial "infinite" value.
fn ssthresh_value(ssthresh: u64) -> f64 {
    if ssthresh >= u64::MAX / 4 {
        f64::NAN
    } else {
        ssthresh as f64
    }
}

impl Agent for TcpSender {
    fn start(&mut self, ctx: &mut AgentCtx) {
        if self.handshake {
            self.conn = Conn::SynSent;
            self.control(PacketKind::Syn, ctx);
        } else {
            self.open(ctx);
        }
        self.trace(ctx);
    }

    fn stop(&mut self, _ctx: &mut AgentCtx) {
        self.state.app_end = self.state.app_end.min(self.state.snd_max);
    }

    fn on_packet(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        match p.kind {
            PacketKind::Ack if self.conn == Conn::Established => self.on_ack(p, ctx),
            PacketKind::SynAck => self.on_syn_ack(ctx),
            PacketKind::FinAck if self.conn == Conn::FinSent => {
                self.conn = Conn::Closed;
                self.rto_timer.cancel();
            }
            _ => {}
        }
        self.trace(ctx);
        self.note_room();
    }

    fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        match token {
            RTO if self.rto_timer.fire(token, ctx) => self.on_timeout(ctx),
            PACE if self.pace_timer.fire(token, ctx) => self.send_more(ctx),
            APP if self.app_timer.fire(token, ctx) => self.next_request(ctx),
            _ => {}
        }
        self.trace(ctx);
        self.note_room();
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        let s = &self.state;
        out.extend([
            ("cwnd", s.cwnd as f64),
            ("ssthresh", ssthresh_value(s.ssthresh)),
            ("srtt", self.rto.srtt().unwrap_or(f64::NAN)),
            ("rto", to_secs(self.rto.rto())),
        ]);
    }

    fn sample_reads_only_self(&self) -> bool {
        true
    }

    fn prefetch_sample(&self) {
        prefetch(&self.state.cwnd);
        prefetch(&self.state.ssthresh);
        prefetch_lines(&self.rto, usize::MAX);
    }

    fn name(&self) -> &'static str {
        self.cc.name()
    }

    fn prefetch(&self) {
        prefetch_lines(self, HOT_BYTES);
    }

    fn prefetch_timer(&self) {
        prefetch_lines(self, TIMER_BYTES);
    }

    fn prefetch_start(&self) {
        prefetch_lines(self, START_BYTES);
    }

    fn prefetch_parts(&self) {
        self.cc.prefetch_boxed();
    }
}

/// A sender of flow 0 (ACK flow 1) from node 0 agent 0 to node 1 agent 1, configured by the
/// TOML body `config`, for unit tests.
#[cfg(test)]
pub(crate) fn test_sender(config: &str) -> TcpSender {
    let cfg: TcpConfig = toml::from_str(config).unwrap();
    let env = SourceEnv {
        flow: 0,
        ack_flow: Some(1),
        src_node: 0,
        dst_node: 1,
        sender_agent: 0,
        receiver_agent: 1,
        first_hop_rate_bps: 1,
        start: 0,
        stop: None,
    };
    TcpSender::new(&cfg, &env)
}

#[cfg(test)]
mod tests;
