//! TCP NewReno: fast recovery that stays in recovery over partial ACKs (RFC 6582).
//!
//! Sources: RFC 6582 (Henderson, Floyd, Gurtov, Nishida, "The NewReno Modification to TCP's
//! Fast Recovery Algorithm", 2012) §3.2; Hoe, "Improving the Start-up Behavior of a Congestion
//! Control Scheme for TCP", SIGCOMM 1996.
//!
//! Decisions where the sources are silent or offer a choice:
//! - On a full ACK, cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS), the first of the two
//!   options of §3.2 step 6 (it avoids a burst).
//! - The retransmission timer is reset on the first partial ACK only ("Impatient", §3.2 step 5
//!   and §4 of RFC 6582's discussion).

use super::cc::{AckEvent, CongestionControl, Reaction, TcpState};

#[derive(Default)]
pub struct NewReno {
    in_recovery: bool,
    seen_partial: bool,
}

impl NewReno {
    fn enter(&mut self, s: &mut TcpState) -> Reaction {
        s.recover = Some(s.snd_max);
        s.reduce_ssthresh();
        s.cwnd = s.ssthresh + 3 * s.mss;
        self.in_recovery = true;
        self.seen_partial = false;
        Reaction {
            retransmit: Some(s.snd_una),
            fast_retransmit: true,
            keep_timer: false,
        }
    }

    fn new_data_in_recovery(&mut self, s: &mut TcpState, acked: u64) -> Reaction {
        if s.recover.is_none_or(|r| s.snd_una >= r) {
            s.cwnd = s.ssthresh.min(s.flight().max(s.mss) + s.mss);
            self.in_recovery = false;
            return Reaction::default();
        }
        let add_back = if acked >= s.mss { s.mss } else { 0 };
        s.cwnd = s.cwnd.saturating_sub(acked) + add_back;
        let first = !self.seen_partial;
        self.seen_partial = true;
        Reaction {
            retransmit: Some(s.snd_una),
            fast_retransmit: false,
            keep_timer: !first,
        }
    }
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }

    fn on_ack(&mut self, s: &mut TcpState, ack: &AckEvent) -> Reaction {
        match (self.in_recovery, ack.duplicate) {
            (true, true) => {
                s.cwnd += s.mss;
                Reaction::default()
            }
            (true, false) => self.new_data_in_recovery(s, ack.acked),
            (false, false) => {
                s.grow(ack.acked);
                Reaction::default()
            }
            (false, true) if s.dupacks == s.dupthresh && s.may_fast_retransmit() => self.enter(s),
            (false, true) => Reaction::default(),
        }
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
    fn partial_acks_retransmit_and_deflate_full_ack_exits() {
        let mut s = TcpState::new(1000, 10, u64::MAX);
        s.app_end = u64::MAX / 2;
        s.snd_nxt = 10_000;
        s.snd_max = 10_000;
        let mut n = NewReno::default();
        s.dupacks = 3;
        assert_eq!(n.on_ack(&mut s, &ack(0, 0)).retransmit, Some(0));
        assert_eq!((s.ssthresh, s.cwnd, s.recover), (5000, 8000, Some(10_000)));
        // Partial ACK of 3000 bytes: cwnd = 8000 - 3000 + 1000, retransmit 3000, reset timer.
        s.snd_una = 3000;
        let r = n.on_ack(&mut s, &ack(3000, 3000));
        assert_eq!(
            (r.retransmit, r.keep_timer, s.cwnd),
            (Some(3000), false, 6000)
        );
        // Second partial ACK of 500: no add-back, timer kept.
        s.snd_una = 3500;
        let r = n.on_ack(&mut s, &ack(3500, 500));
        assert_eq!(
            (r.retransmit, r.keep_timer, s.cwnd),
            (Some(3500), true, 5500)
        );
        // Full ACK: cwnd = min(5000, max(0, 1000) + 1000) = 2000.
        s.snd_una = 10_000;
        let r = n.on_ack(&mut s, &ack(10_000, 6500));
        assert_eq!((r.retransmit, s.cwnd), (None, 2000));
        assert!(!n.in_recovery());
    }
}
