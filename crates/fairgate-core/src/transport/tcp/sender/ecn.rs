//! The sender's response to an ECN-Echo (RFC 3168 §6.1.2): halve once per window of data,
//! never grow on an ECE ACK, and with `ecn_floor = "one_segment"` go down to 1 MSS and, when
//! cwnd is already 1 MSS, restart the retransmit timer and send nothing new until it expires.
//! ns-3 and Linux keep 2 MSS (`ecn_floor = "two_segments"`, the default).

use super::{EcnFloor, TcpSender, NO_REDUCTION, RTO};
use crate::net::AgentCtx;
use crate::transport::tcp::cc::CongestionControl;

impl TcpSender {
    /// An ACK with ECE: no window growth for it, and a halving if this window has not reacted
    /// yet. Returns whether the sender must now wait for the retransmit timer.
    pub(super) fn ecn_reaction(
        &mut self,
        cwnd_before: u64,
        loss_now: bool,
        ctx: &mut AgentCtx,
    ) -> bool {
        let s = &mut self.state;
        if loss_now || self.cc.in_recovery() {
            return false;
        }
        s.cwnd = s.cwnd.min(cwnd_before);
        if self.ecn_recover != NO_REDUCTION && s.snd_una <= self.ecn_recover {
            return false;
        }
        let at_one_segment = s.cwnd <= s.mss;
        s.ssthresh = (s.cwnd / 2).max(2 * s.mss);
        s.cwnd = match self.ecn_floor {
            EcnFloor::TwoSegments => s.ssthresh,
            EcnFloor::OneSegment => (s.cwnd / 2).max(s.mss),
        };
        self.ecn_recover = s.snd_max;
        self.cwr_pending = true;
        ctx.flow(self.flow).ecn_reactions += 1;
        self.ecn_floor == EcnFloor::OneSegment && at_one_segment
    }

    /// Restarts the retransmit timer; nothing new leaves before it expires.
    pub(super) fn hold_until_timer(&mut self, ctx: &mut AgentCtx) {
        self.ecn_hold = true;
        self.rto_timer
            .arm(ctx.now.saturating_add(self.rto.rto()), RTO, ctx);
    }

    /// At a timer expiry: ends a hold. With nothing outstanding the expiry only reopens
    /// sending (true); with data outstanding it is a retransmission timeout as usual (false).
    pub(super) fn release_hold(&mut self, ctx: &mut AgentCtx) -> bool {
        if !std::mem::take(&mut self.ecn_hold) || self.state.snd_una < self.state.snd_max {
            return false;
        }
        self.send_more(ctx);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_sender as sender;
    use super::super::RTO;
    use crate::engine::secs;
    use crate::net::{flags, Agent, Packet, PacketKind};
    use crate::transport::testing::AgentHarness;

    fn ece_ack(ack: u64) -> Packet {
        Packet {
            kind: PacketKind::Ack,
            ack,
            aux: 65_535,
            flags: flags::ECE,
            ..Default::default()
        }
    }

    /// RFC 3168 §6.1.2 floor: 2000 -> 1000 on the first ECE (ssthresh stays at 2 MSS); the ECE
    /// on the ACK of 2000 is for data sent before the cut (no reaction), so 2000 leaves with
    /// CWR; the ECE acknowledging it finds cwnd at 1 MSS: nothing is sent and the timer is
    /// restarted (RTO 1 s, the minimum); the next segment leaves when it expires, without a
    /// timeout or a retransmission.
    #[test]
    fn one_segment_floor_waits_for_the_timer() {
        let mut h = AgentHarness::new(2);
        let mut s = sender("ecn = true\ninitial_window = 2\necn_floor = \"one_segment\"");
        h.call(|ctx| s.start(ctx));
        h.now = secs(0.1);
        let sent = h.call(|ctx| s.on_packet(&ece_ack(1000), ctx));
        assert_eq!((s.state().cwnd, s.state().ssthresh), (1000, 2000));
        assert!(sent.is_empty(), "1000 B in flight = cwnd");
        h.now = secs(0.2);
        let sent = h.call(|ctx| s.on_packet(&ece_ack(2000), ctx));
        assert_eq!(sent.len(), 1);
        assert!(sent[0].seq == 2000 && sent[0].has(flags::CWR));
        h.now = secs(0.3);
        let sent = h.call(|ctx| s.on_packet(&ece_ack(3000), ctx));
        assert!(sent.is_empty(), "the ECE at 1 MSS holds the sender");
        assert_eq!(s.state().cwnd, 1000);
        assert_eq!(h.flows[0].ecn_reactions, 2);
        // The timer armed for 1 s finds the restarted deadline and moves to it.
        h.now = secs(1.0);
        assert!(h.call(|ctx| s.on_timer(RTO, ctx)).is_empty());
        assert_eq!(h.timers.last(), Some(&(secs(1.3), RTO)));
        h.now = secs(1.3);
        let sent = h.call(|ctx| s.on_timer(RTO, ctx));
        assert_eq!(sent.len(), 1);
        assert!(sent[0].seq == 3000 && sent[0].has(flags::CWR) && !sent[0].has(flags::RETX));
        assert_eq!((h.flows[0].timeouts, h.flows[0].retransmits), (0, 0));
    }

    /// A hold that starts with data outstanding outlives the ACK of the rest: the timer is not
    /// cancelled when nothing is left in flight, and its expiry reopens sending (before, the
    /// sender waited for a timer that no longer ran, for good). Path: after a timeout (cwnd
    /// 1 MSS, ECN reactions deferred to 2000) the original ACK of 2000 arrives late, 2000
    /// leaves; the duplicate ACK of the retransmission lets 3000 leave (Limited Transmit);
    /// the ECE on the ACK of 3000 finds cwnd at 1 MSS with 3000 still out. Without timestamps
    /// (Karn's one timed segment), so the late ACK of 4000 does not move the deadline.
    #[test]
    fn hold_survives_the_ack_of_everything_outstanding() {
        let mut h = AgentHarness::new(2);
        let mut s = sender(
            "ecn = true\ninitial_window = 2\necn_floor = \"one_segment\"\ntimestamps = false",
        );
        h.call(|ctx| s.start(ctx));
        h.now = secs(1.0);
        let sent = h.call(|ctx| s.on_timer(RTO, ctx));
        assert!(
            sent.len() == 1 && sent[0].seq == 0,
            "timeout: segment 0 again"
        );
        h.now = secs(1.1);
        let sent = h.call(|ctx| s.on_packet(&ece_ack(2000), ctx));
        assert!(sent.len() == 1 && sent[0].seq == 2000, "{sent:?}");
        let plain = |ack| Packet {
            flags: 0,
            ..ece_ack(ack)
        };
        h.now = secs(1.15);
        let sent = h.call(|ctx| s.on_packet(&plain(2000), ctx));
        assert!(sent.len() == 1 && sent[0].seq == 3000, "{sent:?}");
        h.now = secs(1.2);
        assert!(h.call(|ctx| s.on_packet(&ece_ack(3000), ctx)).is_empty());
        assert_eq!(s.state().cwnd, 1000);
        let (deadline, kind) = *h.timers.last().unwrap();
        assert_eq!(kind, RTO);
        h.now = secs(1.3);
        assert!(h.call(|ctx| s.on_packet(&plain(4000), ctx)).is_empty());
        h.now = deadline;
        let sent = h.call(|ctx| s.on_timer(RTO, ctx));
        assert!(sent.first().is_some_and(|p| p.seq == 4000), "{sent:?}");
        assert_eq!(
            h.flows[0].timeouts, 1,
            "the expiry ends the hold, no second timeout"
        );
    }

    /// The default (ns-3, Linux): cwnd never goes below 2 MSS and nothing waits.
    #[test]
    fn two_segment_floor_keeps_sending() {
        let mut h = AgentHarness::new(2);
        let mut s = sender("ecn = true\ninitial_window = 2");
        h.call(|ctx| s.start(ctx));
        h.now = secs(0.1);
        let sent = h.call(|ctx| s.on_packet(&ece_ack(1000), ctx));
        assert_eq!((s.state().cwnd, s.state().ssthresh), (2000, 2000));
        assert_eq!(sent.len(), 1);
        h.now = secs(0.2);
        let sent = h.call(|ctx| s.on_packet(&ece_ack(2000), ctx));
        assert_eq!(s.state().cwnd, 2000);
        assert_eq!(
            sent.len(),
            1,
            "ECE for data sent before the cut: no new reaction"
        );
    }
}
