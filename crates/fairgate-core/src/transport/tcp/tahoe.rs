//! TCP Tahoe: slow start, congestion avoidance, fast retransmit, window to one segment on any
//! loss. This is "JK" (Jacobson-Karels) of \[Keshav91].
//!
//! Sources: [Keshav91, §6.5]; Jacobson,
//! "Congestion Avoidance and Control", SIGCOMM 1988; 4.3BSD-Tahoe.
//!
//! Decisions where the sources are silent (\[Keshav91] gives no JK constants):
//! - Three duplicate ACKs: ssthresh = max(FlightSize/2, 2 MSS), cwnd = 1 MSS, and the sender
//!   goes back to `snd_una` (go-back-N in slow start, as after a timeout). The receiver keeps
//!   out-of-order data, so the new cumulative ACK skips what already arrived.
//! - The `recover` guard of RFC 6582 (ns-2's `bug_fix_`): no new fast retransmit until the
//!   data outstanding at the last loss is acknowledged, so duplicates caused by go-back-N do
//!   not halve the window again.

use super::cc::{AckEvent, CongestionControl, Reaction, TcpState};

#[derive(Default)]
pub struct Tahoe;

impl CongestionControl for Tahoe {
    fn name(&self) -> &'static str {
        "tahoe"
    }

    fn on_ack(&mut self, s: &mut TcpState, ack: &AckEvent) -> Reaction {
        if !ack.duplicate {
            s.grow(ack.acked);
            return Reaction::default();
        }
        if s.dupacks != s.dupthresh || !s.may_fast_retransmit() {
            return Reaction::default();
        }
        s.reduce_ssthresh();
        s.cwnd = s.mss;
        s.recover = Some(s.snd_max);
        s.snd_nxt = s.snd_una;
        Reaction {
            fast_retransmit: true,
            ..Reaction::default()
        }
    }

    fn in_recovery(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dup(ack: u64) -> AckEvent<'static> {
        AckEvent {
            ack,
            acked: 0,
            duplicate: true,
            sack: &[],
        }
    }

    #[test]
    fn third_dupack_collapses_the_window_and_goes_back() {
        let mut s = TcpState::new(1000, 8, u64::MAX);
        s.app_end = u64::MAX / 2;
        s.snd_una = 2000;
        s.snd_nxt = 10_000;
        s.snd_max = 10_000;
        let mut t = Tahoe;
        for n in 1..=2 {
            s.dupacks = n;
            assert_eq!(t.on_ack(&mut s, &dup(2000)), Reaction::default());
        }
        s.dupacks = 3;
        let r = t.on_ack(&mut s, &dup(2000));
        assert!(r.fast_retransmit);
        assert_eq!((s.cwnd, s.ssthresh, s.snd_nxt), (1000, 4000, 2000));
        assert_eq!(s.window_next(), Some((2000, 1000)));
        // A later third duplicate before the old flight is acknowledged changes nothing.
        s.snd_una = 5000;
        assert!(!t.on_ack(&mut s, &dup(5000)).fast_retransmit);
    }
}
