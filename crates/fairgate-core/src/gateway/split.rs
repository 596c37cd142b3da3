//! One split connection inside a gateway [Vaidyanathan99, §4.2]: the LHS, a TCP receiver that
//! acknowledges the upstream sender itself, and the RHS, a TCP sender that relays the
//! acknowledged bytes downstream; the RHS keeps its send buffer (accepted, not yet sent) apart
//! from its unacknowledged window, as in the source.
//!
//! Decisions (the long form is on `docs/models/gateway.md`):
//! - Bytes pass from LHS to RHS the moment they are in order; both legs share one sequence
//!   space (the source synchronises C1 and C3 from the SYNs).
//! - The LHS advertises min(LHS buffer not yet flushed, free send buffer), never moving the
//!   window's right edge left; a segment beyond that edge is refused (neither stored nor ACKed).
//! - A window update goes upstream when the window has grown by min(rwnd / 2, MSS) since the
//!   last advertisement (receiver SWS avoidance, RFC 1122 §4.2.3.3).
//! - The inner transports write to the gateway's own per-connection counters, not to the
//!   end-to-end flow's: retransmissions on the downstream leg are counted apart.
//! - A FIN flag on a data segment closes the upstream side once every byte up to it is in
//!   order; the LHS acknowledges at once and the RHS flags the segment that ends the relayed
//!   stream, so the connection closes downstream too.

use super::config::{GatewaySpec, SynAck};
use super::flow_control::BufferFlowControl;
use super::mux::LegShare;
use super::pool::{FlowControl, PoolShare};
use super::relay::{Hosting, PortGate};
use crate::engine::Time;
use crate::net::{flags, Agent, AgentCtx, Packet, PacketKind};
use crate::traffic::SourceEnv;
use crate::transport::tcp::receiver::{Reply, TcpReceiver};
use crate::transport::tcp::sender::{Conn, TcpSender};

/// Low bits of a gateway timer token: which inner timer of the connection it is.
const RHS_TIMER: u64 = 0;
const LHS_TIMER: u64 = 8;
const FLUSH_TIMER: u64 = 15;
/// The output port sent a packet: room for the RHS again.
const RESUME_TIMER: u64 = 16;
pub(crate) const TIMER_BITS: u32 = 5;
/// Bits of a timer token above [`TIMER_BITS`] naming the connection's slot (plus one); the
/// bits above them hold its serial, so a timer of a retired connection never reaches the
/// connection that reuses its slot.
const SLOT_BITS: u32 = 24;
/// The most connections a gateway holds at once.
pub(crate) const MAX_SLOTS: usize = (1 << SLOT_BITS) - 1;

/// Where a connection lives in its gateway: its slot, and its serial (the number of
/// connections the gateway opened before it, modulo 2^32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotId {
    pub index: usize,
    pub serial: u32,
}

impl SlotId {
    /// The high bits of the connection's timer tokens.
    fn tokens(self) -> u64 {
        (self.serial as u64) << (TIMER_BITS + SLOT_BITS) | (self.index as u64 + 1) << TIMER_BITS
    }

    /// The connection a timer token names, and the token's low bits (its inner timer).
    pub(crate) fn of_token(token: u64) -> (SlotId, u64) {
        let slot_mask = (1 << SLOT_BITS) - 1;
        let id = SlotId {
            index: ((token >> TIMER_BITS) & slot_mask) as usize - 1,
            serial: (token >> (TIMER_BITS + SLOT_BITS)) as u32,
        };
        (id, token & ((1 << TIMER_BITS) - 1))
    }
}

/// What happened on the downstream leg, counted apart from the end-to-end flow.
#[derive(Clone, Copy, Debug, Default)]
pub struct LegCounters {
    pub retransmits: u64,
    pub timeouts: u64,
    /// Upstream segments beyond the advertised window, refused.
    pub refused: u64,
}

/// Byte counts of one connection at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// Bytes accepted in order from upstream (and acknowledged there).
    pub accepted: u64,
    /// Bytes the downstream side has acknowledged.
    pub delivered: u64,
    /// Bytes sent downstream and not yet acknowledged.
    pub in_flight: u64,
    /// Bytes accepted and not yet sent (the send buffer).
    pub unsent: u64,
}

impl Occupancy {
    /// Everything the gateway must still hold (send buffer plus unacknowledged window).
    pub fn held(&self) -> u64 {
        self.in_flight + self.unsent
    }
}

pub struct SplitConnection {
    pub flow: u32,
    /// The connection within a workload that multiplexes many on one flow (the packets'
    /// `conn`); every packet this connection sends carries it.
    pub conn: u32,
    ack_flow: u32,
    pub slot: SlotId,
    /// Whether the upstream side has closed (its FIN reached the LHS, or it sent every byte
    /// up to a FIN flag).
    fin_seen: bool,
    /// The end of the upstream data, once a segment carrying the FIN flag has arrived.
    upstream_end: Option<u64>,
    /// Where the relayed stream ends once the upstream side has closed: the RHS's segment
    /// ending there carries the FIN flag on.
    relay_end: Option<u64>,
    /// Whether the RHS sent a segment carrying the FIN flag on.
    fin_flagged: bool,
    /// Whether the RHS closes with a FIN packet of its own when no segment carried the flag
    /// (a plain `tcp` flow opened with a SYN), so that a gateway downstream sees the close.
    pub(crate) fin_packet: bool,
    /// High bits of this connection's timer tokens.
    tokens: u64,
    /// None where the connection comes out of a multiplexed leg (the leg's receiver ACKs).
    lhs: Option<TcpReceiver>,
    lhs_rwnd: u64,
    lhs_open: bool,
    rhs: Downstream,
    syn_waiting: Option<Packet>,
    accepted: u64,
    unflushed: u64,
    flush_armed: bool,
    advertised: u64,
    /// The furthest sequence number any advertisement allowed.
    right_edge: u64,
    flow_control: Option<FlowControl>,
    pub leg: LegCounters,
    /// The receiving multiplexed leg whose records feed this connection (its index there).
    pub(crate) fed_by: Option<u32>,
    /// When the upstream side got its SYN-ACK (None without a handshake).
    pub syn_acked_at: Option<Time>,
    /// `<gateway>.rhs_`: the RHS's own traces (cwnd, recovery, ...) go under these names, apart
    /// from the end-to-end flow's.
    rhs_trace_prefix: String,
    /// Back-pressure from the output port toward the destination.
    gate: PortGate,
}

/// Where a connection's accepted bytes go on. `Own` is the common case; boxing it would cost
/// every split connection an allocation, so the size difference stays.
#[allow(clippy::large_enum_variant)]
enum Downstream {
    /// Its own RHS sender.
    Own(TcpSender),
    /// A share of a leg that multiplexes several connections (see `mux.rs`).
    Leg(LegShare),
}

impl SplitConnection {
    /// A connection for the first packet `p` (a SYN or a data segment) of flow `p.flow`, with
    /// its own RHS, or sending into multiplexed leg `leg`.
    pub fn open(
        gateway: &str,
        slot: SlotId,
        ack_flow: u32,
        p: &Packet,
        spec: &GatewaySpec,
        leg: Option<u32>,
        ctx: &mut AgentCtx,
    ) -> Self {
        let reply = Reply {
            ack_flow,
            dst: p.src,
            dst_agent: p.src_agent,
        };
        let lhs = TcpReceiver::new(spec.lhs.receiver_params(), reply);
        let rhs = match leg {
            Some(leg) => {
                let target = (p.dst, p.dst_agent);
                Downstream::Leg(LegShare::new(leg, p.kind == PacketKind::Syn, target))
            }
            None => Downstream::Own(TcpSender::new(
                &spec.rhs_config(p.kind == PacketKind::Syn),
                &rhs_env(p, ack_flow, ctx),
            )),
        };
        Self::with(gateway, slot, ack_flow, p, spec, Some(lhs), rhs, ctx)
    }

    /// A connection that a multiplexed leg delivers (its open record, made a packet `p`):
    /// no LHS, its own RHS toward the destination.
    pub(crate) fn from_leg(
        gateway: &str,
        slot: SlotId,
        ack_flow: u32,
        p: &Packet,
        spec: &GatewaySpec,
        ctx: &mut AgentCtx,
    ) -> Self {
        let sender = TcpSender::new(
            &spec.rhs_config(p.kind == PacketKind::Syn),
            &rhs_env(p, ack_flow, ctx),
        );
        let rhs = Downstream::Own(sender);
        let mut conn = Self::with(gateway, slot, ack_flow, p, spec, None, rhs, ctx);
        // The leg's receiver is this connection's LHS: it flushes and controls the window.
        conn.flow_control = None;
        conn
    }

    #[allow(clippy::too_many_arguments)]
    fn with(
        gateway: &str,
        slot: SlotId,
        ack_flow: u32,
        p: &Packet,
        spec: &GatewaySpec,
        lhs: Option<TcpReceiver>,
        rhs: Downstream,
        ctx: &mut AgentCtx,
    ) -> Self {
        let rwnd = spec.lhs.receiver_params().rwnd;
        let tokens = slot.tokens();
        let mut conn = SplitConnection {
            flow: p.flow,
            conn: p.conn,
            ack_flow,
            slot,
            fin_seen: false,
            upstream_end: None,
            relay_end: None,
            fin_flagged: false,
            fin_packet: false,
            tokens,
            lhs,
            lhs_rwnd: rwnd,
            lhs_open: false,
            rhs,
            syn_waiting: None,
            accepted: 0,
            unflushed: 0,
            flush_armed: false,
            advertised: rwnd,
            right_edge: rwnd,
            flow_control: spec
                .flow_control
                .as_ref()
                .map(|fc| FlowControl::Own(BufferFlowControl::new(fc))),
            leg: LegCounters::default(),
            fed_by: None,
            syn_acked_at: None,
            rhs_trace_prefix: format!("{gateway}.rhs_"),
            gate: PortGate::new(p.dst, spec.transmit_limit, tokens | RESUME_TIMER),
        };
        conn.call_rhs(ctx, Agent::start);
        conn
    }

    pub fn occupancy(&self) -> Occupancy {
        match &self.rhs {
            Downstream::Own(rhs) => {
                let s = rhs.state();
                Occupancy {
                    accepted: self.accepted,
                    delivered: s.snd_una,
                    in_flight: s.snd_max - s.snd_una,
                    unsent: s.app_end.saturating_sub(s.snd_max),
                }
            }
            Downstream::Leg(share) => share.occupancy(self.accepted),
        }
    }

    /// The connection's own RHS sender (None when it sends into a multiplexed leg).
    pub fn rhs(&self) -> Option<&TcpSender> {
        match &self.rhs {
            Downstream::Own(rhs) => Some(rhs),
            Downstream::Leg(_) => None,
        }
    }

    /// The connection's share of a multiplexed leg, if it sends into one.
    pub fn leg_share(&self) -> Option<&LegShare> {
        match &self.rhs {
            Downstream::Leg(share) => Some(share),
            Downstream::Own(_) => None,
        }
    }

    pub(crate) fn leg_share_mut(&mut self) -> Option<&mut LegShare> {
        match &mut self.rhs {
            Downstream::Leg(share) => Some(share),
            Downstream::Own(_) => None,
        }
    }

    /// Whether the downstream side is open (the RHS, or the leg, has done its handshake).
    fn downstream_open(&self) -> bool {
        match &self.rhs {
            Downstream::Own(rhs) => rhs.conn() == Conn::Established,
            Downstream::Leg(share) => share.established,
        }
    }

    pub fn advertised(&self) -> u64 {
        self.advertised
    }

    pub fn flow_control(&self) -> Option<&FlowControl> {
        self.flow_control.as_ref()
    }

    /// Makes the connection's flow control a share of its user's pool.
    pub(crate) fn share_pool(&mut self, share: PoolShare) {
        self.flow_control = Some(FlowControl::Pool(share));
    }

    /// Leaves its user's pool, if it shares one (it is retired).
    pub(crate) fn leave_pool(&mut self) {
        if let Some(FlowControl::Pool(share)) = &mut self.flow_control {
            share.leave();
        }
    }

    /// The other connections of its user's pool.
    pub(crate) fn pool_partners(&self) -> Vec<usize> {
        match &self.flow_control {
            Some(FlowControl::Pool(share)) => share.others(),
            _ => Vec::new(),
        }
    }

    /// Whether the upstream side has closed and every byte it sent was delivered downstream
    /// (and the RHS's own FIN, if it sends one, acknowledged), or the RHS gave up: the gateway
    /// holds nothing more for this connection.
    pub fn finished(&self) -> bool {
        if !self.fin_seen {
            return false;
        }
        if self.rhs_gave_up() {
            return true;
        }
        if self.leg_share().is_some_and(LegShare::has_records) {
            return false;
        }
        let fin_waiting = self.fin_packet
            && !self.fin_flagged
            && self.rhs().is_some_and(|rhs| rhs.conn() != Conn::Closed);
        self.occupancy().held() == 0 && !fin_waiting
    }

    /// Whether the connection's own RHS, or the multiplexed leg it rides, aborted after its
    /// `max_retries`.
    pub fn rhs_gave_up(&self) -> bool {
        match &self.rhs {
            Downstream::Own(rhs) => rhs.gave_up(),
            Downstream::Leg(share) => share.leg_gave_up(),
        }
    }

    /// Sends the RHS's FIN once the upstream side has closed, no segment carried the flag
    /// and every relayed byte is acknowledged (see [`Self::fin_packet`]).
    pub(crate) fn close_rhs_if_due(&mut self, ctx: &mut AgentCtx) {
        let due = self.fin_packet && self.relay_end.is_some() && !self.fin_flagged;
        if due && self.occupancy().held() == 0 {
            self.call_rhs(ctx, |s, ctx| {
                s.close(ctx);
            });
        }
    }

    /// A packet travelling downstream (data, SYN, FIN) for the LHS.
    pub fn on_upstream(&mut self, p: &Packet, spec: &GatewaySpec, ctx: &mut AgentCtx) {
        match p.kind {
            PacketKind::Syn if self.downstream_open() || spec.syn_ack == SynAck::Immediate => {
                self.answer_syn(p, spec, ctx)
            }
            PacketKind::Syn => self.syn_waiting = Some(*p),
            PacketKind::Data => self.on_data(p, spec, ctx),
            _ => {
                if p.kind == PacketKind::Fin {
                    self.close_upstream();
                }
                let mark = ctx.mark();
                self.call_lhs(ctx, |r, ctx| Agent::on_packet(r, p, ctx));
                self.stamp_window(mark, spec, ctx);
                self.close_rhs_if_due(ctx);
            }
        }
    }

    /// A packet travelling upstream (ACK, SYN-ACK, FIN-ACK) for the RHS.
    pub fn on_downstream(&mut self, p: &Packet, spec: &GatewaySpec, ctx: &mut AgentCtx) {
        self.call_rhs(ctx, |s, ctx| Agent::on_packet(s, p, ctx));
        self.after_rhs(spec, ctx);
    }

    /// One of this connection's timers (the low bits of the gateway's token).
    pub fn on_timer(&mut self, local: u64, spec: &GatewaySpec, ctx: &mut AgentCtx) {
        match local {
            RESUME_TIMER => {
                self.gate.resumed();
                self.call_rhs(ctx, TcpSender::resume);
                self.after_rhs(spec, ctx);
            }
            FLUSH_TIMER => {
                self.flush_armed = false;
                self.unflushed = 0;
                self.update_window(spec, ctx);
            }
            t if t >= LHS_TIMER => {
                let mark = ctx.mark();
                self.call_lhs(ctx, |r, ctx| Agent::on_timer(r, t - LHS_TIMER, ctx));
                self.stamp_window(mark, spec, ctx);
            }
            t => {
                self.call_rhs(ctx, |s, ctx| Agent::on_timer(s, t, ctx));
                self.after_rhs(spec, ctx);
            }
        }
    }

    /// Broken invariants of this connection's byte accounting, if any.
    pub fn check(&self, gateway: &str, limit: Option<u64>) -> Option<String> {
        let o = self.occupancy();
        // Out of a leg, the bytes "ACKed upstream" are those the leg's records delivered.
        let acked_upstream = self
            .lhs
            .as_ref()
            .map_or(self.accepted, TcpReceiver::rcv_nxt);
        let sum = o.delivered + o.in_flight + o.unsent;
        let handed_on = match &self.rhs {
            Downstream::Own(rhs) => rhs.state().app_end,
            Downstream::Leg(share) => share.handed_on(),
        };
        if acked_upstream != self.accepted || acked_upstream != sum || handed_on != sum {
            return Some(format!(
                "gateway {gateway}, flow {}: ACKed upstream {acked_upstream} != delivered downstream {} + in flight {} + held {} (relayed {})",
                self.flow, o.delivered, o.in_flight, o.unsent, self.accepted
            ));
        }
        match limit {
            Some(limit) if o.unsent > limit => Some(format!(
                "gateway {gateway}, flow {}: send buffer holds {} B, above its limit {limit} B",
                self.flow, o.unsent
            )),
            _ => None,
        }
    }

    fn answer_syn(&mut self, p: &Packet, spec: &GatewaySpec, ctx: &mut AgentCtx) {
        let mark = ctx.mark();
        self.call_lhs(ctx, |r, ctx| Agent::on_packet(r, p, ctx));
        self.stamp_window(mark, spec, ctx);
        self.lhs_open = true;
        self.syn_acked_at.get_or_insert(ctx.now);
    }

    fn on_data(&mut self, p: &Packet, spec: &GatewaySpec, ctx: &mut AgentCtx) {
        if p.seq + p.aux > self.right_edge {
            self.leg.refused += 1;
            return;
        }
        self.lhs_open = true;
        if p.has(flags::FIN) {
            self.upstream_end = Some(p.seq + p.aux);
        }
        let mut p = *p;
        if let Some(fc) = &mut self.flow_control {
            fc.on_arrival(p.has(flags::CE), ctx.now);
            p.clear(flags::CE);
        }
        let before = self.rcv_nxt();
        let mark = ctx.mark();
        self.call_lhs(ctx, |r, ctx| Agent::on_packet(r, &p, ctx));
        let advanced = self.rcv_nxt() - before;
        if self.upstream_end.is_some_and(|end| self.rcv_nxt() >= end) && !self.fin_seen {
            self.close_upstream();
            // The FIN is acknowledged at once (RFC 9293, §3.10.7.4), never on the delayed-ACK timer.
            self.call_lhs(ctx, |r, ctx| {
                if r.ack_pending() {
                    r.ack_now(ctx)
                }
            });
        }
        if advanced > 0 {
            self.accept(advanced, spec, ctx);
        }
        self.stamp_window(mark, spec, ctx);
    }

    fn rcv_nxt(&self) -> u64 {
        self.lhs
            .as_ref()
            .map_or(self.accepted, TcpReceiver::rcv_nxt)
    }

    /// Marks the upstream side closed (a FIN, the last byte before a FIN flag, or a leg's
    /// close record): every byte it sent is in order here, so the relayed stream ends at
    /// `rcv_nxt` and the leg gets its close record.
    pub(crate) fn close_upstream(&mut self) {
        if std::mem::replace(&mut self.fin_seen, true) {
            return;
        }
        self.relay_end = Some(self.rcv_nxt());
        if let Some(share) = self.leg_share_mut() {
            share.close();
        }
    }

    /// Hands `bytes` newly in order at the LHS (or out of a leg) to the RHS or the leg.
    pub(crate) fn accept(&mut self, bytes: u64, spec: &GatewaySpec, ctx: &mut AgentCtx) {
        self.accepted += bytes;
        if spec.flush_period.0 > 0 && self.lhs.is_some() {
            self.unflushed += bytes;
            if !self.flush_armed {
                self.flush_armed = true;
                ctx.set_timer(
                    ctx.now.saturating_add(spec.flush_period.0),
                    self.tokens | FLUSH_TIMER,
                );
            }
        }
        match &mut self.rhs {
            Downstream::Leg(share) => share.queue(bytes),
            Downstream::Own(_) => self.call_rhs(ctx, |s, ctx| {
                s.push(bytes, ctx);
            }),
        }
        self.after_rhs(spec, ctx);
    }

    /// After the RHS (or the leg) acted: answers a waiting SYN, offers a grown window.
    pub(crate) fn after_rhs(&mut self, spec: &GatewaySpec, ctx: &mut AgentCtx) {
        if self.downstream_open() {
            if let Some(syn) = self.syn_waiting.take() {
                self.answer_syn(&syn, spec, ctx);
            }
        }
        self.update_window(spec, ctx);
        self.close_rhs_if_due(ctx);
    }

    /// The window the LHS can offer now.
    fn window(&self, spec: &GatewaySpec) -> u64 {
        let o = self.occupancy();
        let controlled = self
            .flow_control
            .as_ref()
            .map_or(u64::MAX, |fc| fc.window(o.held()));
        offered_window(
            spec,
            self.lhs_rwnd.saturating_sub(self.unflushed),
            o.unsent,
            controlled,
        )
    }

    pub(crate) fn update_window(&mut self, spec: &GatewaySpec, ctx: &mut AgentCtx) {
        self.report_held();
        if !self.lhs_open {
            return;
        }
        let threshold = (self.lhs_rwnd / 2).min(spec.lhs.mss).max(1);
        if self.window(spec) >= self.advertised + threshold {
            let mark = ctx.mark();
            self.call_lhs(ctx, |r, ctx| r.ack_now(ctx));
            self.stamp_window(mark, spec, ctx);
        }
    }

    /// Reports the bytes held to the user's pool, if the connection shares one.
    fn report_held(&mut self) {
        let held = self.occupancy().held();
        if let Some(fc) = &mut self.flow_control {
            fc.report(held);
        }
    }

    /// Writes the current window into the LHS packets sent since `mark`.
    fn stamp_window(&mut self, mark: (usize, usize), spec: &GatewaySpec, ctx: &mut AgentCtx) {
        self.report_held();
        let window = self.window(spec);
        let ack_flow = self.ack_flow;
        let mut stamped = false;
        ctx.edit_sent_since(mark, |p| {
            if p.flow == ack_flow {
                p.aux = window;
                stamped = true;
            }
        });
        if stamped {
            self.advertised = window;
            self.right_edge = self.right_edge.max(self.rcv_nxt() + window);
        }
    }

    fn call_lhs(&mut self, ctx: &mut AgentCtx, f: impl FnOnce(&mut TcpReceiver, &mut AgentCtx)) {
        let hosting = self.hosting(LHS_TIMER, None);
        if let Some(lhs) = self.lhs.as_mut() {
            hosting.call(lhs, ctx, f);
        }
    }

    fn call_rhs(&mut self, ctx: &mut AgentCtx, f: impl FnOnce(&mut TcpSender, &mut AgentCtx)) {
        let hosting = self.hosting(RHS_TIMER, Some(&self.rhs_trace_prefix));
        let Downstream::Own(rhs) = &mut self.rhs else {
            return;
        };
        let gate = &mut self.gate;
        let counts = hosting.call(rhs, ctx, |s, ctx| gate.send_within(s, ctx, f));
        self.leg.retransmits += counts.retransmits;
        self.leg.timeouts += counts.timeouts;
        self.fin_flagged |= counts.fin_flagged;
    }

    /// Where an inner transport's effects go: this connection's flow, timers and `conn`, so
    /// that the far end point of a multiplexing workload finds its connection.
    fn hosting<'a>(&self, base: u64, trace_prefix: Option<&'a str>) -> Hosting<'a> {
        Hosting {
            flow: self.flow,
            tokens: self.tokens,
            base,
            conn: self.conn,
            flags: 0,
            fin_at: self.relay_end,
            trace_prefix,
        }
    }
}

/// The window a receiving side offers: min(`lhs_free` (its receive buffer not waiting for a
/// flush), `send_buffer` - `unsent`, the flow-control window `controlled`), rounded down to
/// the LHS window scale.
pub(crate) fn offered_window(
    spec: &GatewaySpec,
    lhs_free: u64,
    unsent: u64,
    controlled: u64,
) -> u64 {
    let buffer_free = spec
        .send_buffer
        .map_or(u64::MAX, |limit| limit.saturating_sub(unsent));
    let scale = spec.lhs.window_scale;
    (lhs_free.min(buffer_free).min(controlled) >> scale) << scale
}

/// The environment of a connection's own RHS sender, toward the destination of `p`.
fn rhs_env(p: &Packet, ack_flow: u32, ctx: &AgentCtx) -> SourceEnv {
    SourceEnv {
        flow: p.flow,
        ack_flow: Some(ack_flow),
        src_node: ctx.node,
        dst_node: p.dst,
        sender_agent: ctx.agent,
        receiver_agent: p.dst_agent,
        first_hop_rate_bps: ctx.first_hop_rate_bps,
        start: ctx.now,
        stop: None,
    }
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
