//! TCP Reno: Tahoe plus fast recovery (RFC 5681 §3.2).
//!
//! Sources: RFC 5681 (Allman, Paxson, Blanton 2009) §3.2; Jacobson, "Modified TCP congestion
//! avoidance algorithm", end2end-interest, 1990; 4.3BSD-Reno.
//!
//! Decisions where the sources are silent:
//! - Recovery ends on the first ACK of new data, partial or not (classic Reno); a second hole
//!   in the same window then needs three more duplicates and halves the window again, or waits
//!   for the retransmission timer.
//! - Limited Transmit (RFC 3042) is the sender's `limited_transmit` option (`super::tcp`).
//! - The `recover` guard is only set by timeouts (RFC 6582 §4), not by fast retransmits.

use super::cc::{AckEvent, CongestionControl, Reaction, TcpState};

#[derive(Default)]
pub struct Reno {
    in_recovery: bool,
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, s: &mut TcpState, ack: &AckEvent) -> Reaction {
        match (self.in_recovery, ack.duplicate) {
            (true, true) => s.cwnd += s.mss,
            (true, false) => {
                s.cwnd = s.ssthresh;
                self.in_recovery = false;
            }
            (false, false) => s.grow(ack.acked),
            (false, true) => {
                if s.dupacks == s.dupthresh && s.may_fast_retransmit() {
                    s.reduce_ssthresh();
                    s.cwnd = s.ssthresh + 3 * s.mss;
                    self.in_recovery = true;
                    return Reaction {
                        retransmit: Some(s.snd_una),
                        fast_retransmit: true,
                        keep_timer: false,
                    };
                }
            }
        }
        Reaction::default()
    }

    fn on_timeout(&mut self, _s: &mut TcpState) {
        self.in_recovery = false;
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(ack: u64, acked: u64) -> AckEvent<'static> {
        AckEvent {
            ack,
            acked,
            duplicate: acked == 0,
            sack: &[],
        }
    }

    #[test]
    fn fast_recovery_inflates_then_deflates() {
        let mut s = TcpState::new(1000, 10, u64::MAX);
        s.app_end = u64::MAX / 2;
        s.snd_nxt = 10_000;
        s.snd_max = 10_000;
        let mut r = Reno::default();
        s.dupacks = 3;
        let reaction = r.on_ack(&mut s, &ack(0, 0));
        assert_eq!(reaction.retransmit, Some(0));
        // ssthresh = 10000 / 2 = 5000; cwnd = 5000 + 3000.
        assert_eq!((s.ssthresh, s.cwnd), (5000, 8000));
        s.dupacks = 4;
        r.on_ack(&mut s, &ack(0, 0));
        assert_eq!(s.cwnd, 9000);
        s.snd_una = 4000;
        s.dupacks = 0;
        r.on_ack(&mut s, &ack(4000, 4000));
        assert_eq!(s.cwnd, 5000);
        assert!(!r.in_recovery());
    }
}
