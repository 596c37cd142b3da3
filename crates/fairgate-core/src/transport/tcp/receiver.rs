//! The TCP receiver shared by every congestion-control variant: cumulative ACKs, an
//! out-of-order buffer, SACK blocks (RFC 2018), delayed ACKs (RFC 1122 / RFC 5681 §4.2), the
//! ECN echo (RFC 3168 §6.1.3) and the SYN-ACK / FIN-ACK of the optional handshake.
//!
//! Decisions where the sources are silent:
//! - The application reads in-order data at once, so the advertised window is the configured
//!   receive buffer at all times (carried in the ACK's `aux`, already scaled back to bytes).
//! - With delayed ACKs an ACK is sent at once for an out-of-order segment, for a segment that
//!   fills a hole (RFC 5681 §4.2), and for every `ack_every`-th in-order segment; otherwise
//!   when the delayed-ACK timer expires.
//! - SACK blocks: the block holding the latest segment first, then the blocks of earlier
//!   arrivals by recency (RFC 2018 §4), at most `max_sack_blocks`.
//! - Without timestamps, every data segment's send time is echoed in `echo` (for tools; the
//!   sender times RTT itself). With timestamps (RFC 7323 §4.3) `echo` is TS.Recent: the send
//!   time of a segment at or below the last ACK sent, so a delayed ACK echoes the earlier of
//!   its two segments and a duplicate ACK the last in-sequence one.
//! - ACKs carry the option bytes of their SACK blocks and timestamps (see `tcp_options`).

use super::tcp_options::{option_bytes, sack_block_limit};
use crate::engine::Time;
use crate::net::packet::MAX_SACK_BLOCKS;
use crate::net::{flags, Agent, AgentCtx, Packet, PacketKind};
use crate::transport::timer::LazyTimer;

pub const PROTO_TCP: u8 = 6;

/// Receiver settings, taken from the TCP source config.
#[derive(Clone, Copy, Debug)]
pub struct ReceiverParams {
    pub header: u32,
    pub rwnd: u64,
    pub sack: bool,
    pub max_sack_blocks: usize,
    pub delayed_ack: bool,
    pub ack_every: u32,
    pub delack_timeout: Time,
    pub timestamps: bool,
}

/// Where ACKs go.
#[derive(Clone, Copy, Debug)]
pub struct Reply {
    pub ack_flow: u32,
    pub dst: u32,
    pub dst_agent: u32,
}

const DELACK: u64 = 1;

pub struct TcpReceiver {
    params: ReceiverParams,
    reply: Reply,
    rcv_nxt: u64,
    /// Out-of-order data above `rcv_nxt`: disjoint, sorted `[start, end)` ranges.
    ooo: Vec<(u64, u64)>,
    /// Start sequences of recent out-of-order arrivals, newest first (SACK block order).
    recent: Vec<u64>,
    unacked_segments: u32,
    ce_pending: bool,
    last_echo: Time,
    /// The ACK number of the last ACK sent (RFC 7323 Last.ACK.sent).
    last_ack_sent: u64,
    delack: LazyTimer,
}

impl TcpReceiver {
    pub fn new(params: ReceiverParams, reply: Reply) -> Self {
        TcpReceiver {
            params,
            reply,
            rcv_nxt: 0,
            ooo: Vec::new(),
            recent: Vec::new(),
            unacked_segments: 0,
            ce_pending: false,
            last_echo: 0,
            last_ack_sent: 0,
            delack: LazyTimer::default(),
        }
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    pub fn out_of_order(&self) -> &[(u64, u64)] {
        &self.ooo
    }

    /// Sends a pure ACK now (a window update from an agent that changes its window).
    pub fn ack_now(&mut self, ctx: &mut AgentCtx) {
        self.send_ack(ctx);
    }

    /// Whether a segment received is not yet acknowledged (a delayed ACK is due).
    pub fn ack_pending(&self) -> bool {
        self.unacked_segments > 0
    }

    fn control(&self, kind: PacketKind, ctx: &mut AgentCtx) {
        ctx.send(Packet {
            flow: self.reply.ack_flow,
            dst: self.reply.dst,
            dst_agent: self.reply.dst_agent,
            proto: PROTO_TCP,
            kind,
            size: self.params.header + option_bytes(self.params.timestamps, 0),
            ack: self.rcv_nxt,
            aux: self.params.rwnd,
            echo: self.last_echo,
            ..Default::default()
        });
    }

    fn send_ack(&mut self, ctx: &mut AgentCtx) {
        let mut ack = Packet {
            flow: self.reply.ack_flow,
            dst: self.reply.dst,
            dst_agent: self.reply.dst_agent,
            proto: PROTO_TCP,
            kind: PacketKind::Ack,
            size: self.params.header,
            ack: self.rcv_nxt,
            aux: self.params.rwnd,
            echo: self.last_echo,
            ..Default::default()
        };
        if self.ce_pending {
            ack.set(flags::ECE);
        }
        let blocks = if self.params.sack {
            self.sack_blocks()
        } else {
            Vec::new()
        };
        ack.sack_len = blocks.len() as u8;
        ack.sack[..blocks.len()].copy_from_slice(&blocks);
        ack.size += option_bytes(self.params.timestamps, blocks.len());
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_segments = 0;
        self.delack.cancel();
        ctx.send(ack);
    }

    /// SACK blocks in RFC 2018 order.
    pub fn sack_blocks(&self) -> Vec<(u64, u64)> {
        let limit = sack_block_limit(
            self.params.timestamps,
            self.params.max_sack_blocks.min(MAX_SACK_BLOCKS),
        );
        let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(limit);
        for &start in &self.recent {
            if blocks.len() == limit {
                break;
            }
            let Some(&block) = self.ooo.iter().find(|(a, b)| *a <= start && start < *b) else {
                continue;
            };
            if !blocks.contains(&block) {
                blocks.push(block);
            }
        }
        blocks
    }

    /// Stores `[start, end)`; returns true if any of it was new.
    fn store(&mut self, start: u64, end: u64) -> bool {
        let start = start.max(self.rcv_nxt);
        if end <= start {
            return false;
        }
        let covered = self.ooo.iter().any(|&(a, b)| a <= start && end <= b);
        if covered {
            return false;
        }
        let mut merged = (start, end);
        self.ooo.retain(|&(a, b)| {
            let overlaps = a <= merged.1 && merged.0 <= b;
            if overlaps {
                merged = (merged.0.min(a), merged.1.max(b));
            }
            !overlaps
        });
        let at = self.ooo.partition_point(|&(a, _)| a < merged.0);
        self.ooo.insert(at, merged);
        true
    }

    /// Advances `rcv_nxt` over the buffered data now in sequence; returns the bytes advanced.
    fn advance(&mut self) -> u64 {
        let before = self.rcv_nxt;
        while let Some(&(a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(b);
            self.ooo.remove(0);
        }
        let rcv_nxt = self.rcv_nxt;
        self.recent.retain(|&s| s >= rcv_nxt);
        self.rcv_nxt - before
    }

    fn note_recent(&mut self, start: u64) {
        self.recent.retain(|&s| s != start);
        self.recent.insert(0, start);
        self.recent.truncate(4 * MAX_SACK_BLOCKS);
    }

    fn update_echo(&mut self, p: &Packet) {
        let in_window = p.seq <= self.last_ack_sent && p.created >= self.last_echo;
        if !self.params.timestamps || in_window {
            self.last_echo = p.created;
        }
    }

    fn on_data(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        if p.has(flags::CE) {
            self.ce_pending = true;
        } else if p.has(flags::CWR) {
            self.ce_pending = false;
        }
        self.update_echo(p);
        let end = p.seq + p.aux;
        let had_holes = !self.ooo.is_empty();
        let in_order = p.seq <= self.rcv_nxt;
        let new = self.store(p.seq, end);
        if new && !in_order {
            self.note_recent(p.seq);
        }
        let advanced = self.advance();
        if advanced > 0 {
            ctx.goodput(p.flow, advanced);
        }
        self.unacked_segments += 1;
        let immediate = !self.params.delayed_ack
            || !in_order
            || !new
            || had_holes
            || self.unacked_segments >= self.params.ack_every;
        if immediate {
            self.send_ack(ctx);
        } else {
            let at = ctx.now.saturating_add(self.params.delack_timeout);
            if !self.delack.is_armed() {
                self.delack.arm(at, DELACK, ctx);
            }
        }
    }
}

impl Agent for TcpReceiver {
    fn idle_at_start(&self) -> bool {
        true
    }

    fn on_packet(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        match p.kind {
            PacketKind::Data => self.on_data(p, ctx),
            PacketKind::Syn => self.control(PacketKind::SynAck, ctx),
            PacketKind::Fin => self.control(PacketKind::FinAck, ctx),
            _ => {}
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        if token == DELACK && self.delack.fire(token, ctx) && self.unacked_segments > 0 {
            self.send_ack(ctx);
        }
    }

    fn samples_nothing(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "tcp_receiver"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::testing::AgentHarness;

    fn params(sack: bool, delayed_ack: bool) -> ReceiverParams {
        ReceiverParams {
            header: 40,
            rwnd: 65_535,
            sack,
            max_sack_blocks: 3,
            delayed_ack,
            ack_every: 2,
            delack_timeout: 200,
            timestamps: false,
        }
    }

    fn reply() -> Reply {
        Reply {
            ack_flow: 1,
            dst: 7,
            dst_agent: 3,
        }
    }

    fn data(seq: u64, flags: u16) -> Packet {
        Packet {
            kind: PacketKind::Data,
            seq,
            aux: 1000,
            size: 1040,
            flags,
            ..Default::default()
        }
    }

    fn deliver(h: &mut AgentHarness, r: &mut TcpReceiver, p: Packet) -> Vec<Packet> {
        h.call(|ctx| r.on_packet(&p, ctx))
    }

    #[test]
    fn cumulative_acks_and_sack_blocks_in_rfc2018_order() {
        let mut h = AgentHarness::new(2);
        let mut r = TcpReceiver::new(params(true, false), reply());
        let acks = deliver(&mut h, &mut r, data(0, 0));
        assert_eq!((acks[0].ack, acks[0].size, acks[0].flow), (1000, 40, 1));
        assert_eq!(
            (acks[0].dst, acks[0].dst_agent, acks[0].sack_len),
            (7, 3, 0)
        );
        // 1000 lost; 2000 arrives, then 4000, then 3000 (which joins 2000..4000 and 4000..5000).
        let a = deliver(&mut h, &mut r, data(2000, 0));
        assert_eq!((a[0].ack, &a[0].sack[..1]), (1000, &[(2000, 3000)][..]));
        let a = deliver(&mut h, &mut r, data(4000, 0));
        assert_eq!(&a[0].sack[..2], &[(4000, 5000), (2000, 3000)]);
        let a = deliver(&mut h, &mut r, data(6000, 0));
        assert_eq!(&a[0].sack[..3], &[(6000, 7000), (4000, 5000), (2000, 3000)]);
        let a = deliver(&mut h, &mut r, data(3000, 0));
        assert_eq!(&a[0].sack[..2], &[(2000, 5000), (6000, 7000)]);
        assert_eq!(a[0].sack_len, 2);
        // The hole is filled: ACK 5000, one block left; goodput counts in-order bytes once.
        let a = deliver(&mut h, &mut r, data(1000, 0));
        assert_eq!((a[0].ack, a[0].sack_len), (5000, 1));
        assert_eq!(h.flows[0].goodput_bytes, 5000);
        let a = deliver(&mut h, &mut r, data(1000, 0));
        assert_eq!(a[0].ack, 5000, "a duplicate is acknowledged at once");
        assert_eq!(h.flows[0].goodput_bytes, 5000);
    }

    #[test]
    fn delayed_acks_every_second_segment_or_on_the_timer() {
        let mut h = AgentHarness::new(2);
        let mut r = TcpReceiver::new(params(false, true), reply());
        assert!(deliver(&mut h, &mut r, data(0, 0)).is_empty());
        assert_eq!(h.timers, vec![(200, DELACK)]);
        let a = deliver(&mut h, &mut r, data(1000, 0));
        assert_eq!(a[0].ack, 2000);
        assert!(deliver(&mut h, &mut r, data(2000, 0)).is_empty());
        // The timer set for the first segment fires at 200 and ACKs the third.
        h.now = 200;
        let a = h.call(|ctx| r.on_timer(DELACK, ctx));
        assert_eq!(a[0].ack, 3000);
        // Out of order: at once.
        let a = deliver(&mut h, &mut r, data(5000, 0));
        assert_eq!(a[0].ack, 3000);
    }

    #[test]
    fn ack_size_counts_sack_and_timestamp_options() {
        let mut h = AgentHarness::new(2);
        let mut r = TcpReceiver::new(params(true, false), reply());
        let sizes = |acks: Vec<Packet>| (acks[0].size, acks[0].sack_len);
        assert_eq!(sizes(deliver(&mut h, &mut r, data(0, 0))), (40, 0));
        // One block: 2 + 8 option bytes, padded to 12; two blocks: 18 -> 20.
        assert_eq!(sizes(deliver(&mut h, &mut r, data(2000, 0))), (52, 1));
        assert_eq!(sizes(deliver(&mut h, &mut r, data(4000, 0))), (60, 2));
        // With timestamps: 10 + 2 + 8n padded; at most 3 blocks fit (10 + 26 = 36 <= 40).
        let mut p = params(true, false);
        p.timestamps = true;
        p.max_sack_blocks = 4;
        let mut r = TcpReceiver::new(p, reply());
        assert_eq!(sizes(deliver(&mut h, &mut r, data(0, 0))), (52, 0));
        for seq in [2000, 4000, 6000] {
            deliver(&mut h, &mut r, data(seq, 0));
        }
        assert_eq!(sizes(deliver(&mut h, &mut r, data(8000, 0))), (76, 3));
    }

    #[test]
    fn timestamp_echo_follows_rfc_7323() {
        let mut h = AgentHarness::new(2);
        let mut p = params(false, true);
        p.timestamps = true;
        let mut r = TcpReceiver::new(p, reply());
        let at = |seq: u64, created: Time| Packet {
            created,
            ..data(seq, 0)
        };
        // Delayed ACK of two segments echoes the first one's timestamp.
        deliver(&mut h, &mut r, at(0, 10));
        let a = deliver(&mut h, &mut r, at(1000, 20));
        assert_eq!((a[0].ack, a[0].echo), (2000, 10));
        // Out of order: the duplicate echoes the last in-sequence segment, not the new one.
        let a = deliver(&mut h, &mut r, at(3000, 40));
        assert_eq!((a[0].ack, a[0].echo), (2000, 10));
        // The segment filling the hole is at the left edge: its timestamp is echoed.
        let a = deliver(&mut h, &mut r, at(2000, 50));
        assert_eq!((a[0].ack, a[0].echo), (4000, 50));
    }

    #[test]
    fn ce_is_echoed_until_cwr() {
        let mut h = AgentHarness::new(2);
        let mut r = TcpReceiver::new(params(false, false), reply());
        let a = deliver(&mut h, &mut r, data(0, flags::ECT | flags::CE));
        assert!(a[0].has(flags::ECE) && !a[0].has(flags::ECT));
        let a = deliver(&mut h, &mut r, data(1000, flags::ECT));
        assert!(a[0].has(flags::ECE));
        let a = deliver(&mut h, &mut r, data(2000, flags::ECT | flags::CWR));
        assert!(!a[0].has(flags::ECE));
    }

    #[test]
    fn syn_and_fin_are_answered() {
        let mut h = AgentHarness::new(2);
        let mut r = TcpReceiver::new(params(false, false), reply());
        let syn = Packet {
            kind: PacketKind::Syn,
            size: 40,
            ..Default::default()
        };
        let a = deliver(&mut h, &mut r, syn);
        assert_eq!(
            (a[0].kind, a[0].size, a[0].flags),
            (PacketKind::SynAck, 40, 0)
        );
        let fin = Packet {
            kind: PacketKind::Fin,
            ..syn
        };
        assert_eq!(deliver(&mut h, &mut r, fin)[0].kind, PacketKind::FinAck);
    }
}
