//! The window a peer gateway advertises on a multiplexed leg it receives, when it has
//! `send_buffer`, `flush_period` or `flow_control` [Vaidyanathan99, §4.2; Byun07, eq. 2.1]:
//! the leg's receiver is the peer's LHS for every connection the leg carries, so it offers
//! min(leg rwnd - bytes not yet flushed, the smallest free send buffer of the connections it
//! feeds, the flow-control window of the leg), stamps its ACKs with it and refuses segments
//! beyond it. Without any of the three the leg's window is its `lhs.rwnd`, as the receiver
//! advertises it, and nothing here runs.
//!
//! Decisions (long form on `docs/models/buffer_flow_control.md`):
//! - One window per leg (the leg is one TCP connection): a connection whose send buffer is
//!   full closes the leg for the others too, the head-of-line blocking of one byte stream.
//!   A connection not yet open counts as an empty buffer, so the bound is `send_buffer` minus
//!   the largest unsent backlog among them.
//! - Flow control is per leg (B for the leg, the bytes the peer holds for its connections);
//!   a mark on a leg segment shrinks the leg's B, and the gateway consumes it. `pool = "user"`
//!   pools a gateway's source-facing connections; at the peer the leg is the pooled unit.
//! - The flush counts every in-order byte of the leg's stream (record headers included): the
//!   receive buffer holds them until the flush.
//! - As at the LHS, the right edge never moves left, and a window update goes when the window
//!   has grown by min(rwnd / 2, mss) since the last advertisement.

use super::flow_control::BufferFlowControl;
use super::legs::LEG_IN_FLUSH;
use super::node::Gateway;
use super::split::offered_window;
use crate::net::{flags, AgentCtx, Packet, PacketKind};

/// A controlled leg receiver's window state.
pub(crate) struct LegWindow {
    unflushed: u64,
    flush_armed: bool,
    advertised: u64,
    right_edge: u64,
    /// Segments beyond the advertised window, refused.
    refused: u64,
    fc: Option<BufferFlowControl>,
    /// Gateway slots of the connections the leg feeds, not retired.
    members: Vec<usize>,
}

impl Gateway {
    /// Whether this gateway controls the windows of the legs it receives.
    pub(super) fn controls_leg_windows(&self) -> bool {
        self.spec.flush_period.0 > 0
            || self.spec.send_buffer.is_some()
            || self.spec.flow_control.is_some()
    }

    /// The window state of a new receiving leg, if this gateway controls leg windows.
    pub(super) fn new_leg_window(&self) -> Option<LegWindow> {
        if !self.controls_leg_windows() {
            return None;
        }
        let mut w = LegWindow {
            unflushed: 0,
            flush_armed: false,
            advertised: 0,
            right_edge: 0,
            refused: 0,
            fc: self.spec.flow_control.as_ref().map(BufferFlowControl::new),
            members: Vec::new(),
        };
        let window = self.window_of(&w);
        (w.advertised, w.right_edge) = (window, window);
        Some(w)
    }

    /// The window receiving leg `w` can offer now.
    fn window_of(&self, w: &LegWindow) -> u64 {
        let rwnd = self.spec.lhs.receiver_params().rwnd;
        let (mut largest_unsent, mut held) = (0, 0);
        for &m in &w.members {
            if let Some(Some(c)) = self.conns.get(m) {
                let o = c.occupancy();
                largest_unsent = largest_unsent.max(o.unsent);
                held += o.held();
            }
        }
        let controlled = w.fc.as_ref().map_or(u64::MAX, |fc| fc.window(held));
        let lhs_free = rwnd.saturating_sub(w.unflushed);
        offered_window(&self.spec, lhs_free, largest_unsent, controlled)
    }

    /// A segment for receiving leg `index`: None if it lies beyond the window (refused),
    /// else the segment to take in, its mark consumed by the leg's flow control.
    pub(super) fn admit_leg_segment(
        &mut self,
        index: usize,
        p: &Packet,
        now: u64,
    ) -> Option<Packet> {
        let Some(w) = self.legs_in.legs[index].window.as_mut() else {
            return Some(*p);
        };
        if p.kind != PacketKind::Data {
            return Some(*p);
        }
        if p.seq + p.aux > w.right_edge {
            w.refused += 1;
            return None;
        }
        let mut p = *p;
        if let Some(fc) = &mut w.fc {
            fc.on_arrival(p.has(flags::CE), now);
            p.clear(flags::CE);
        }
        Some(p)
    }

    /// After receiving leg `index` took in `advanced` bytes in order: counts them until the
    /// next flush.
    pub(super) fn note_leg_bytes(&mut self, index: usize, advanced: u64, ctx: &mut AgentCtx) {
        let period = self.spec.flush_period.0;
        let Some(w) = self.legs_in.legs[index].window.as_mut() else {
            return;
        };
        if period == 0 || advanced == 0 {
            return;
        }
        w.unflushed += advanced;
        if !std::mem::replace(&mut w.flush_armed, true) {
            ctx.set_timer(
                ctx.now.saturating_add(period),
                self.legs_in.token(index) | LEG_IN_FLUSH,
            );
        }
    }

    /// The flush period of receiving leg `index` ended: its buffer is free again.
    pub(super) fn flush_leg(&mut self, index: usize, ctx: &mut AgentCtx) {
        if let Some(w) = self.legs_in.legs[index].window.as_mut() {
            (w.unflushed, w.flush_armed) = (0, false);
        }
        self.update_leg_window(index, ctx);
    }

    /// Writes the window of receiving leg `index` into its ACKs sent since `mark`.
    pub(super) fn stamp_leg_window(
        &mut self,
        index: usize,
        mark: (usize, usize),
        ctx: &mut AgentCtx,
    ) {
        let leg = &self.legs_in.legs[index];
        let Some(w) = leg.window.as_ref() else {
            return;
        };
        let window = self.window_of(w);
        let (peer, conn) = leg.key;
        let mut stamped = false;
        ctx.edit_sent_since(mark, |q| {
            let answer = matches!(
                q.kind,
                PacketKind::Ack | PacketKind::SynAck | PacketKind::FinAck
            );
            if answer && q.has(flags::MUX_LEG) && q.dst == peer && q.conn == conn {
                q.aux = window;
                stamped = true;
            }
        });
        let leg = &mut self.legs_in.legs[index];
        let rcv_nxt = leg.receiver.rcv_nxt();
        if let (true, Some(w)) = (stamped, leg.window.as_mut()) {
            w.advertised = window;
            w.right_edge = w.right_edge.max(rcv_nxt + window);
        }
    }

    /// Sends a window update on receiving leg `index` if its window has grown enough.
    pub(super) fn update_leg_window(&mut self, index: usize, ctx: &mut AgentCtx) {
        let Some(w) = self.legs_in.legs[index].window.as_ref() else {
            return;
        };
        let rwnd = self.spec.lhs.receiver_params().rwnd;
        let threshold = (rwnd / 2).min(self.spec.lhs.mss).max(1);
        if self.window_of(w) < w.advertised + threshold {
            return;
        }
        let mark = ctx.mark();
        self.call_leg_in(index, ctx, |r, ctx| r.ack_now(ctx));
        self.stamp_leg_window(index, mark, ctx);
    }

    /// Connection `slot` now takes bytes from receiving leg `index`.
    pub(super) fn feed_from_leg(&mut self, index: usize, slot: usize) {
        if let Some(w) = self.legs_in.legs[index].window.as_mut() {
            w.members.push(slot);
        }
    }

    /// Connection `slot`, retired, no longer takes bytes from receiving leg `index`.
    pub(super) fn unfeed_from_leg(&mut self, index: usize, slot: usize) {
        if let Some(w) = self.legs_in.legs[index].window.as_mut() {
            w.members.retain(|&m| m != slot);
        }
    }

    /// Per controlled receiving leg, under its flow: `<gw>.in_leg<i>.advertised_window`,
    /// `.pep_buffer` (bytes held for its connections), `.refused`, and with flow control
    /// `.pep_limit` and `.fc_marks`.
    pub(super) fn trace_leg_windows(&self, ctx: &mut AgentCtx) {
        for (i, leg) in self.legs_in.legs.iter().enumerate() {
            let Some(w) = leg.window.as_ref() else {
                continue;
            };
            let held: u64 = w
                .members
                .iter()
                .filter_map(|&m| self.conns.get(m).and_then(Option::as_ref))
                .map(|c| c.occupancy().held())
                .sum();
            let mut values = vec![
                ("advertised_window", w.advertised as f64),
                ("pep_buffer", held as f64),
                ("refused", w.refused as f64),
            ];
            if let Some(fc) = &w.fc {
                values.push(("pep_limit", fc.limit()));
                values.push(("fc_marks", fc.marks() as f64));
            }
            for (var, value) in values {
                ctx.trace(leg.flow, &format!("{}.in_leg{i}.{var}", self.name), value);
            }
        }
    }
}
