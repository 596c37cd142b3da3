//! A gateway's multiplexed legs (see `mux.rs` for the framing and `docs/models/gateway.md`):
//! on the sending side the legs its connections share, on the receiving side the legs other
//! gateways send to it, each read record by record into split connections of its own.

use std::collections::HashMap;

use super::config::{LegAssignment, MAX_LEGS};
use super::mux::{Leg, LegReceiver, RecordKind, RECORD_HEADER};
use super::node::{Gateway, Peer};
use super::relay::{Hosting, PortGate};
use super::split::{SplitConnection, TIMER_BITS};
use crate::net::{flags, Agent, AgentCtx, Packet, PacketKind};
use crate::traffic::SourceEnv;
use crate::transport::tcp::receiver::{Reply, TcpReceiver};
use crate::transport::tcp::sender::TcpSender;

/// Timer tokens of legs: a sending leg's, a receiving leg's.
const LEG_OUT: u64 = 1 << 62;
const LEG_IN: u64 = 1 << 61;
pub(super) const LEG_TOKENS: u64 = LEG_OUT | LEG_IN;
/// The low token of a sending leg's port wake-up (the sender's own timers are below).
const RESUME: u64 = 16;
/// The low token of a receiving leg's flush (the receiver's own timers are below).
pub(super) const LEG_IN_FLUSH: u64 = 15;

/// The legs a multiplexing gateway sends on.
pub(crate) struct LegsOut {
    peer: Peer,
    assignment: LegAssignment,
    /// Connections opened so far.
    opened: u64,
    legs: Vec<Leg>,
    gates: Vec<PortGate>,
    /// Under `legs = N`: the leg at each turn of the rotation (a dead one replaced).
    rotation: Vec<usize>,
}

impl LegsOut {
    pub fn new(peer: Peer, assignment: LegAssignment) -> Self {
        LegsOut {
            peer,
            assignment,
            opened: 0,
            legs: Vec::new(),
            gates: Vec::new(),
            rotation: Vec::new(),
        }
    }

    /// The leg the next connection rides (`legs.len()`: a new one). A leg whose sender gave
    /// up takes no more connections: under `legs = N` a new leg takes its turn in the
    /// rotation, under `connections_per_leg` it counts as full and not toward [`MAX_LEGS`].
    fn next_leg(&mut self) -> usize {
        let k = self.opened;
        self.opened += 1;
        match self.assignment {
            LegAssignment::RoundRobin(count) => self.rotate((k % count as u64) as usize),
            LegAssignment::Fill(per_leg) => {
                let live: Vec<&Leg> = self.legs.iter().filter(|l| !l.gave_up()).collect();
                let room = live.iter().find(|l| l.members.len() < per_leg as usize);
                match room {
                    Some(leg) => leg.index as usize,
                    None if live.len() < MAX_LEGS as usize => self.legs.len(),
                    None => live[(k % live.len() as u64) as usize].index as usize,
                }
            }
        }
    }

    /// The leg at `turn` of the rotation, or a new one in its place if it has none or a dead one.
    fn rotate(&mut self, turn: usize) -> usize {
        if let Some(&leg) = self.rotation.get(turn) {
            if !self.legs[leg].gave_up() {
                return leg;
            }
        }
        let new = self.legs.len();
        if turn < self.rotation.len() {
            self.rotation[turn] = new;
        } else {
            self.rotation.push(new);
        }
        new
    }

    /// Connection `index` (retired) no longer rides leg `leg`.
    pub fn leave(&mut self, leg: u32, index: usize) {
        self.legs[leg as usize].members.retain(|&m| m != index);
    }
}

/// The legs other gateways send to this one, by (sending node, leg).
#[derive(Default)]
pub(crate) struct LegsIn {
    index_of: HashMap<(u32, u32), usize>,
    pub(super) legs: Vec<LegReceiver>,
}

impl LegsIn {
    /// The high bits of receiving leg `index`'s timer tokens.
    pub(super) fn token(&self, index: usize) -> u64 {
        tokens(LEG_IN, index)
    }
}

fn tokens(kind: u64, index: usize) -> u64 {
    kind | ((index as u64 + 1) << TIMER_BITS)
}

fn out_hosting<'a>(leg: &Leg, trace_prefix: Option<&'a str>) -> Hosting<'a> {
    Hosting {
        flow: leg.flow,
        tokens: tokens(LEG_OUT, leg.index as usize),
        base: 0,
        conn: leg.index,
        flags: flags::MUX_LEG,
        fin_at: None,
        trace_prefix,
    }
}

impl Gateway {
    /// With multiplexing, the leg a new connection (at `index`) rides, opened if need be.
    pub(super) fn join_leg(
        &mut self,
        index: usize,
        ack_flow: u32,
        p: &Packet,
        ctx: &mut AgentCtx,
    ) -> Option<u32> {
        let out = self.legs_out.as_mut()?;
        let leg = out.next_leg();
        if leg == out.legs.len() {
            let env = SourceEnv {
                flow: p.flow,
                ack_flow: Some(ack_flow),
                src_node: ctx.node,
                dst_node: out.peer.node,
                sender_agent: ctx.agent,
                receiver_agent: out.peer.agent,
                first_hop_rate_bps: ctx.first_hop_rate_bps,
                start: ctx.now,
                stop: None,
            };
            let config = self.spec.rhs_config(p.kind == PacketKind::Syn);
            let mut new = Leg {
                index: leg as u32,
                sender: TcpSender::new(&config, &env),
                flow: p.flow,
                members: Vec::new(),
                retransmits: 0,
                timeouts: 0,
                records: 0,
                written: 0,
                turn: 0,
                trace_prefix: format!("{}.leg{leg}_", self.name),
            };
            let resume = tokens(LEG_OUT, leg) | RESUME;
            let mut gate = PortGate::new(out.peer.node, self.spec.transmit_limit, resume);
            out_hosting(&new, None).call(&mut new.sender, ctx, |s, ctx| {
                gate.send_within(s, ctx, Agent::start)
            });
            out.legs.push(new);
            out.gates.push(gate);
        }
        out.legs[leg].members.push(index);
        Some(leg as u32)
    }

    /// After connection `index` acted: its leg takes the records it can send now.
    pub(super) fn write_to_leg(&mut self, index: usize, ctx: &mut AgentCtx) {
        let leg = match self.conns.get(index) {
            Some(Some(c)) => c.leg_share().map(|share| share.leg as usize),
            _ => None,
        };
        if let Some(leg) = leg {
            self.fill_leg(leg, ctx);
        }
    }

    /// Writes records into leg `leg`, one connection after another, while its sender has sent
    /// everything it holds (the window has room) and a connection has something to write;
    /// then brings its connections up to date.
    fn fill_leg(&mut self, leg: usize, ctx: &mut AgentCtx) {
        self.write_records(leg, ctx);
        self.after_leg(leg, ctx);
    }

    fn write_records(&mut self, leg: usize, ctx: &mut AgentCtx) {
        let max_payload = self.spec.rhs.mss.saturating_sub(RECORD_HEADER).max(1);
        loop {
            let Some(out) = self.legs_out.as_mut() else {
                return;
            };
            let l = &mut out.legs[leg];
            let s = l.sender.state();
            if s.app_end > s.snd_max || l.members.is_empty() || l.gave_up() {
                return;
            }
            let n = l.members.len();
            let next = (0..n).map(|k| (l.turn + k) % n).find(|&k| {
                let c = self.conns[l.members[k]].as_ref();
                c.and_then(SplitConnection::leg_share)
                    .is_some_and(|share| share.has_records())
            });
            let Some(k) = next else {
                return;
            };
            l.turn = (k + 1) % n;
            let Some(c) = self.conns[l.members[k]].as_mut() else {
                return;
            };
            let (flow, conn) = (c.flow, c.conn);
            let share = c.leg_share_mut().expect("a member rides the leg");
            let key = (ctx.node, leg as u32);
            let bytes = l.write(&self.framing, key, (flow, conn), share, max_payload);
            self.push_leg(leg, bytes, ctx);
        }
    }

    /// Hands `bytes` just written into leg `leg`'s stream to its sender.
    fn push_leg(&mut self, leg: usize, bytes: u64, ctx: &mut AgentCtx) {
        self.call_leg_sender(leg, ctx, |s, ctx| {
            s.push(bytes, ctx);
        });
    }

    /// Runs `f` on sending leg `leg`, updates its connections and writes more records.
    fn call_leg(
        &mut self,
        leg: usize,
        ctx: &mut AgentCtx,
        f: impl FnOnce(&mut TcpSender, &mut AgentCtx),
    ) {
        self.call_leg_sender(leg, ctx, f);
        self.fill_leg(leg, ctx);
    }

    /// Runs `f` on sending leg `leg`'s sender within its port's room.
    fn call_leg_sender(
        &mut self,
        leg: usize,
        ctx: &mut AgentCtx,
        f: impl FnOnce(&mut TcpSender, &mut AgentCtx),
    ) {
        let Some(out) = self.legs_out.as_mut() else {
            return;
        };
        let (l, gate) = (&mut out.legs[leg], &mut out.gates[leg]);
        let hosting = out_hosting(l, Some(&l.trace_prefix));
        let counts = hosting.call(&mut l.sender, ctx, |s, ctx| gate.send_within(s, ctx, f));
        l.retransmits += counts.retransmits;
        l.timeouts += counts.timeouts;
    }

    /// Brings leg `leg`'s connections up to date (bytes delivered, the leg open) and lets each
    /// answer a waiting SYN or offer a grown window; retires those finished.
    fn after_leg(&mut self, leg: usize, ctx: &mut AgentCtx) {
        let Some(out) = self.legs_out.as_ref() else {
            return;
        };
        let l = &out.legs[leg];
        let members = l.members.clone();
        for &index in &members {
            let Some(Some(c)) = self.conns.get_mut(index) else {
                continue;
            };
            if let Some(share) = c.leg_share_mut() {
                l.sync(share);
            }
            c.after_rhs(&self.spec, ctx);
        }
        for index in members {
            self.retire_if_finished(index);
        }
    }

    /// A packet addressed to this gateway: a multiplexed leg's segment or its ACK.
    pub(super) fn on_leg_packet(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        match p.kind {
            PacketKind::Data | PacketKind::Syn | PacketKind::Fin => self.on_leg_segment(p, ctx),
            _ => {
                let known = self
                    .legs_out
                    .as_ref()
                    .is_some_and(|out| (p.conn as usize) < out.legs.len());
                if known {
                    self.call_leg(p.conn as usize, ctx, |s, ctx| Agent::on_packet(s, p, ctx));
                }
            }
        }
    }

    /// A segment of a leg another gateway sends here: ACK it, then read its records.
    fn on_leg_segment(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        let key = (p.src, p.conn);
        let index = match self.legs_in.index_of.get(&key) {
            Some(&i) => i,
            None => {
                let Some(Some(ack_flow)) = self.flows.ack_flow_of.get(p.flow as usize) else {
                    return;
                };
                let reply = Reply {
                    ack_flow: *ack_flow,
                    dst: p.src,
                    dst_agent: p.src_agent,
                };
                let receiver = TcpReceiver::new(self.spec.lhs.receiver_params(), reply);
                let window = self.new_leg_window();
                self.legs_in
                    .legs
                    .push(LegReceiver::new(key, receiver, p.flow, window));
                self.legs_in
                    .index_of
                    .insert(key, self.legs_in.legs.len() - 1);
                self.legs_in.legs.len() - 1
            }
        };
        let Some(p) = self.admit_leg_segment(index, p, ctx.now) else {
            return;
        };
        let mark = ctx.mark();
        let before = self.legs_in.legs[index].receiver.rcv_nxt();
        self.call_leg_in(index, ctx, |r, ctx| Agent::on_packet(r, &p, ctx));
        self.read_leg(index, ctx);
        let advanced = self.legs_in.legs[index].receiver.rcv_nxt() - before;
        self.note_leg_bytes(index, advanced, ctx);
        self.stamp_leg_window(index, mark, ctx);
    }

    pub(super) fn call_leg_in(
        &mut self,
        index: usize,
        ctx: &mut AgentCtx,
        f: impl FnOnce(&mut TcpReceiver, &mut AgentCtx),
    ) {
        let leg = &mut self.legs_in.legs[index];
        let hosting = Hosting {
            flow: leg.flow,
            tokens: tokens(LEG_IN, index),
            base: 0,
            conn: leg.key.1,
            flags: flags::MUX_LEG,
            fin_at: None,
            trace_prefix: None,
        };
        hosting.call(&mut leg.receiver, ctx, f);
    }

    /// Hands the records now readable on receiving leg `index` to their connections.
    fn read_leg(&mut self, index: usize, ctx: &mut AgentCtx) {
        let records = self.legs_in.legs[index].read(&self.framing);
        for (r, bytes) in records {
            if let RecordKind::Open { handshake } = r.kind {
                let target = (r.dst, r.dst_agent);
                self.open_from_leg(index, (r.flow, r.conn), target, handshake, ctx);
                continue;
            }
            let Some(&c) = self.conn_of.get(&(r.flow, r.conn)) else {
                self.violations.push(format!(
                    "gateway {}: a multiplexed record for flow {} connection {} that is not open",
                    self.name, r.flow, r.conn
                ));
                continue;
            };
            let Some(conn) = self.conns[c as usize].as_mut() else {
                continue;
            };
            match r.kind {
                RecordKind::Data if bytes > 0 => conn.accept(bytes, &self.spec, ctx),
                RecordKind::Close => {
                    conn.close_upstream();
                    conn.close_rhs_if_due(ctx);
                }
                _ => {}
            }
            self.retire_if_finished(c as usize);
        }
    }

    fn open_from_leg(
        &mut self,
        leg: usize,
        (flow, conn): (u32, u32),
        target: (u32, u32),
        handshake: bool,
        ctx: &mut AgentCtx,
    ) {
        let Some(Some(ack_flow)) = self.flows.ack_flow_of.get(flow as usize).copied() else {
            return;
        };
        let first = Packet {
            flow,
            conn,
            dst: target.0,
            dst_agent: target.1,
            kind: if handshake {
                PacketKind::Syn
            } else {
                PacketKind::Data
            },
            ..Default::default()
        };
        let Some(slot) = self.next_slot() else {
            return;
        };
        let mut c = SplitConnection::from_leg(&self.name, slot, ack_flow, &first, &self.spec, ctx);
        c.fed_by = Some(leg as u32);
        c.fin_packet = handshake && !self.opens_with_syn(flow);
        self.register(c);
        self.feed_from_leg(leg, slot.index);
    }

    /// A timer of a leg (its token has a bit of [`LEG_TOKENS`]).
    pub(super) fn on_leg_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        let index = ((token & !LEG_TOKENS) >> TIMER_BITS) as usize - 1;
        let local = token & ((1 << TIMER_BITS) - 1);
        if token & LEG_IN != 0 {
            if index >= self.legs_in.legs.len() {
                return;
            }
            if local == LEG_IN_FLUSH {
                return self.flush_leg(index, ctx);
            }
            let mark = ctx.mark();
            self.call_leg_in(index, ctx, |r, ctx| Agent::on_timer(r, local, ctx));
            return self.stamp_leg_window(index, mark, ctx);
        }
        let Some(out) = self.legs_out.as_mut().filter(|o| index < o.legs.len()) else {
            return;
        };
        if local == RESUME {
            out.gates[index].resumed();
            return self.call_leg(index, ctx, TcpSender::resume);
        }
        self.call_leg(index, ctx, |s, ctx| Agent::on_timer(s, local, ctx));
    }

    /// Per leg, at each sample, under the leg's flow: `<gw>.leg<i>.unsent`, `.unacked`,
    /// `.cwnd`, `.retransmits`, `.timeouts`, `.connections`, `.records`.
    pub(super) fn trace_legs(&self, ctx: &mut AgentCtx) {
        let Some(out) = &self.legs_out else {
            return;
        };
        for l in &out.legs {
            let s = l.sender.state();
            let values = [
                ("unsent", s.app_end.saturating_sub(s.snd_max)),
                ("unacked", s.snd_max - s.snd_una),
                ("cwnd", s.cwnd),
                ("retransmits", l.retransmits),
                ("timeouts", l.timeouts),
                ("connections", l.members.len() as u64),
                ("records", l.records),
            ];
            for (var, value) in values {
                let name = format!("{}.leg{}.{var}", self.name, l.index);
                ctx.trace(l.flow, &name, value as f64);
            }
        }
    }

    /// Broken invariants of the legs: a sender's stream is exactly the records written, and a
    /// receiver has read every byte it holds in order but for a header still arriving.
    pub(super) fn leg_violations(&self) -> Vec<String> {
        let out = self.legs_out.iter().flat_map(|o| &o.legs);
        let senders = out.filter_map(|l| {
            let app_end = l.sender.state().app_end;
            (app_end != l.written).then(|| {
                format!(
                    "gateway {}: leg {} carries {app_end} B but its records hold {} B",
                    self.name, l.index, l.written
                )
            })
        });
        let receivers = self.legs_in.legs.iter().filter_map(LegReceiver::check);
        senders.chain(receivers).collect()
    }
}
