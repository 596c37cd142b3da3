//! The sender's send buffer: bytes an application has handed over with
//! [`TcpSender::push`] and TCP has not sent yet, bounded by the `send_buffer` option.
//!
//! A workload that owns the sender (a split-connection gateway relaying one connection into
//! another, for example) pushes what it has, keeps what did not fit, and after forwarding an
//! event to the sender asks [`TcpSender::take_room_notice`] whether room opened since a push
//! was refused. No callbacks: the owner polls, as with [`TcpSender::transfers`].
//!
//! Decision: the bound counts unsent bytes only (data in flight is held for retransmission
//! but does not use the buffer), as the option is described; ns-3's `SndBufSize` and Linux's
//! `sk_sndbuf` also count unacknowledged data, so a gateway wanting that bound can compare
//! [`TcpSender::buffered`] with its own limit.

use super::{Conn, TcpSender};
use crate::net::AgentCtx;

/// The end of the byte stream (as for a bulk application).
const STREAM_LIMIT: u64 = u64::MAX / 4;

/// Capacity and the state of a writer waiting for room.
#[derive(Clone, Debug, Default)]
pub struct SendBuffer {
    capacity: Option<u64>,
    room_notice: bool,
}

impl SendBuffer {
    pub fn new(capacity: Option<u64>) -> Self {
        SendBuffer {
            capacity,
            ..Default::default()
        }
    }
}

impl TcpSender {
    /// Bytes handed over and never sent.
    pub fn unsent(&self) -> u64 {
        self.state.app_end.saturating_sub(self.state.snd_max)
    }

    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.state.flight()
    }

    /// Bytes the sender holds: unsent plus in flight.
    pub fn buffered(&self) -> u64 {
        self.unsent() + self.in_flight()
    }

    /// Bytes [`push`](Self::push) would accept now (without a `send_buffer`, all the
    /// sequence space left: 2^62 bytes per connection).
    pub fn room(&self) -> u64 {
        match self.buffer.capacity {
            Some(c) => c.saturating_sub(self.unsent()),
            None => STREAM_LIMIT.saturating_sub(self.state.app_end),
        }
    }

    /// Appends up to `bytes` to the stream (as much as the buffer has room for) and sends what
    /// the window allows; returns the bytes accepted. A partial push arms the room notice.
    pub fn push(&mut self, bytes: u64, ctx: &mut AgentCtx) -> u64 {
        let accepted = bytes.min(self.room());
        self.state.app_end += accepted;
        if accepted < bytes {
            self.writer_waiting = true;
        }
        if self.conn == Conn::Established {
            self.send_more(ctx);
            self.trace(ctx);
        }
        self.note_room();
        accepted
    }

    /// True once after room opened for a writer whose push was cut short.
    pub fn take_room_notice(&mut self) -> bool {
        std::mem::take(&mut self.buffer.room_notice)
    }

    pub(super) fn note_room(&mut self) {
        if self.writer_waiting && self.room() > 0 {
            self.writer_waiting = false;
            self.buffer.room_notice = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_sender as sender;
    use crate::net::{Agent, Packet, PacketKind};
    use crate::transport::testing::AgentHarness;

    fn ack(ack: u64) -> Packet {
        Packet {
            kind: PacketKind::Ack,
            ack,
            aux: 65_535,
            ..Default::default()
        }
    }

    #[test]
    fn push_fills_the_buffer_and_room_is_announced_once() {
        let mut h = AgentHarness::new(2);
        let config = "initial_window = 2\nsend_buffer = 3000\napp = { kind = \"manual\" }";
        let mut s = sender(config);
        h.call(|ctx| s.start(ctx));
        // cwnd 2000 sends two segments at once; 3000 more fit in the buffer, 5000 are refused.
        let mut accepted = 0;
        let sent = h.call(|ctx| accepted = s.push(2000, ctx));
        assert_eq!((accepted, sent.len()), (2000, 2));
        h.call(|ctx| accepted = s.push(5000, ctx));
        assert_eq!(accepted, 3000);
        assert_eq!(
            (s.unsent(), s.in_flight(), s.buffered()),
            (3000, 2000, 5000)
        );
        assert_eq!(s.room(), 0);
        assert!(!s.take_room_notice());
        // The ACK of the first segment opens the window (cwnd 3000): two more segments leave,
        // room opens and the writer is told once.
        let a = ack(1000);
        let sent = h.call(|ctx| s.on_packet(&a, ctx));
        assert_eq!(sent.len(), 2);
        assert_eq!((s.unsent(), s.room()), (1000, 2000));
        assert!(s.take_room_notice());
        assert!(!s.take_room_notice());
    }

    #[test]
    fn without_a_buffer_every_push_is_accepted() {
        let mut h = AgentHarness::new(2);
        let mut s = sender("app = { kind = \"manual\" }");
        h.call(|ctx| s.start(ctx));
        let mut accepted = 0;
        h.call(|ctx| accepted = s.push(1 << 40, ctx));
        assert_eq!(accepted, 1 << 40);
        assert!(!s.take_room_notice());
    }
}
