//! Calling a transport hosted inside the gateway: a split connection's RHS sender or a
//! multiplexed leg's sender and receiver. The inner transport writes to the engine as if it
//! were an end point; around each call the gateway keeps the end-to-end flow's counters
//! untouched (the leg's retransmissions are its own), names the inner timers with the host's
//! tokens, prefixes the inner traces, labels the packets sent with their connection, and
//! applies the output port's back-pressure (`transmit_limit`, see `docs/models/gateway.md`).

use crate::net::{flags, AgentCtx, PacketKind};
use crate::transport::tcp::sender::TcpSender;

/// Where a hosted transport's side effects go.
pub(crate) struct Hosting<'a> {
    /// The flow whose counters the inner transport would write (kept as they were).
    pub flow: u32,
    /// The host's timer token: high bits, plus `base` added to the inner token.
    pub tokens: u64,
    pub base: u64,
    /// The `conn` label of every packet sent.
    pub conn: u32,
    /// Flags set on every packet sent (a multiplexed leg's mark).
    pub flags: u16,
    /// Where the relayed stream ends once the upstream side has closed: the data segment
    /// ending there carries the FIN flag on (see `split.rs`).
    pub fin_at: Option<u64>,
    /// Prefix of the inner traces (None = no traces expected).
    pub trace_prefix: Option<&'a str>,
}

/// What a hosted call did to the counters it was kept from.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CallCounts {
    pub retransmits: u64,
    pub timeouts: u64,
    /// Whether a segment sent carried the FIN flag on (it ended the relayed stream).
    pub fin_flagged: bool,
}

impl Hosting<'_> {
    /// Runs `f` against the inner transport `t` with the side effects redirected.
    pub fn call<T>(
        &self,
        t: &mut T,
        ctx: &mut AgentCtx,
        f: impl FnOnce(&mut T, &mut AgentCtx),
    ) -> CallCounts {
        let mark = ctx.mark();
        let trace_mark = ctx.trace_mark();
        let saved = ctx.flow(self.flow).clone();
        f(t, ctx);
        if let Some(prefix) = self.trace_prefix {
            if ctx.trace_mark() > trace_mark {
                ctx.prefix_traces_since(trace_mark, prefix);
            }
        }
        let after = std::mem::replace(ctx.flow(self.flow), saved);
        let before = ctx.flow(self.flow);
        let mut counts = CallCounts {
            retransmits: after.retransmits - before.retransmits,
            timeouts: after.timeouts - before.timeouts,
            fin_flagged: false,
        };
        for timer in ctx.timers_since(mark) {
            timer.1 = self.tokens | (self.base + timer.1);
        }
        let (conn, mark_flags, fin_at) = (self.conn, self.flags, self.fin_at);
        ctx.edit_sent_since(mark, |q| {
            q.conn = conn;
            q.flags |= mark_flags;
            if q.kind == PacketKind::Data && Some(q.seq + q.aux) == fin_at {
                q.set(flags::FIN);
                counts.fin_flagged = true;
            }
        });
        counts
    }
}

/// Back-pressure from the output port toward `dst`: the sender may send only as many
/// segments as the port has room for below `limit`, and waits for its next departure.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortGate {
    pub dst: u32,
    pub limit: Option<u64>,
    /// The timer token that resumes the sender once the port has sent.
    pub resume_token: u64,
    waiting: bool,
}

impl PortGate {
    pub fn new(dst: u32, limit: Option<u64>, resume_token: u64) -> Self {
        PortGate {
            dst,
            limit,
            resume_token,
            waiting: false,
        }
    }

    /// Calls `f` on `sender` within the port's room, then arms the wake-up if it ran out.
    pub fn send_within(
        &mut self,
        sender: &mut TcpSender,
        ctx: &mut AgentCtx,
        f: impl FnOnce(&mut TcpSender, &mut AgentCtx),
    ) {
        let port = self.limit.and_then(|limit| {
            let (port, queued) = ctx.backlog_toward(self.dst)?;
            sender.set_send_budget(Some(limit.saturating_sub(queued as u64)));
            Some(port)
        });
        f(sender, ctx);
        let Some(port) = port else {
            return;
        };
        if sender.send_budget() == Some(0) && !self.waiting {
            self.waiting = true;
            ctx.wake_when_port_sends(port, self.resume_token);
        }
        sender.set_send_budget(None);
    }

    /// The port has sent: the sender may try again.
    pub fn resumed(&mut self) {
        self.waiting = false;
    }
}
