//! TCP SACK: loss recovery driven by the SACK scoreboard (RFC 6675, with RFC 2018 blocks).
//!
//! Sources: RFC 6675 §5 (Blanton et al. 2012) and RFC 2018; Fall and Floyd, "Simulation-based
//! Comparisons of Tahoe, Reno, and SACK TCP", CCR 1996.
//!
//! Decisions where the sources are silent or offer a choice:
//! - Recovery starts on the third duplicate ACK or when IsLost(HighACK + 1) holds (§5 step 2
//!   and 3), guarded by RFC 6582's `recover` after timeouts and recoveries.
//! - On entering recovery ssthresh = cwnd = max(FlightSize / 2, 2 MSS) (RFC 5681 eq. 4).
//! - NextSeg uses rules 1 and 2 of RFC 6675 §4. Rule 3 (retransmit an un-SACKed segment not
//!   yet deemed lost) is left out: whenever the receive window blocks new data it resends
//!   segments still in flight. The rescue retransmission (rule 4) is not used either.
//! - After a timeout the scoreboard is cleared (the receiver may renege, RFC 6675 §5.1 allows
//!   ignoring SACK information then) and the sender goes back to `snd_una`; SACK blocks that
//!   arrive afterwards let the go-back-N skip data the receiver holds.

use super::cc::{AckEvent, CongestionControl, Reaction, TcpState};
use super::scoreboard::Scoreboard;

#[derive(Default)]
pub struct Sack {
    scoreboard: Scoreboard,
    in_recovery: bool,
    recovery_point: u64,
    high_rxt: u64,
}

impl Sack {
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.scoreboard
    }

    fn pipe(&self, s: &TcpState) -> u64 {
        let high_rxt = self.high_rxt.max(s.snd_una);
        self.scoreboard
            .pipe(s.snd_una, s.snd_max, high_rxt, s.mss, s.dupthresh)
    }

    fn should_enter(&self, s: &TcpState, ack: &AckEvent) -> bool {
        let triggered = (ack.duplicate && s.dupacks == s.dupthresh)
            || (s.snd_max > s.snd_una && self.scoreboard.is_lost(s.snd_una, s.mss, s.dupthresh));
        triggered && s.may_fast_retransmit()
    }

    fn enter(&mut self, s: &mut TcpState) -> Reaction {
        self.in_recovery = true;
        self.recovery_point = s.snd_max;
        s.recover = Some(s.snd_max);
        s.reduce_ssthresh();
        s.cwnd = s.ssthresh;
        Reaction {
            retransmit: Some(s.snd_una),
            fast_retransmit: true,
            keep_timer: false,
        }
    }

    /// Outside recovery: the first un-SACKed data at or after `snd_nxt` (after a go-back-N
    /// timeout, SACK information that arrives later lets the sender skip what is held).
    fn next_unsacked(&self, s: &TcpState) -> Option<(u64, u64)> {
        let beyond = s.snd_max.max(s.snd_nxt);
        let (seq, len) = self
            .scoreboard
            .holes(s.snd_nxt, s.snd_max, s.mss)
            .next()
            .unwrap_or((beyond, s.segment_len(beyond)));
        s.fits(seq, len).then_some((seq, len))
    }

    /// NextSeg rules 1 and 2.
    fn next_in_recovery(&self, s: &TcpState) -> Option<(u64, u64)> {
        let from = self.high_rxt.max(s.snd_una);
        let first_hole = self.scoreboard.holes(from, s.snd_max, s.mss).next();
        if let Some((seq, len)) = first_hole {
            if self.scoreboard.is_lost(seq, s.mss, s.dupthresh) {
                return Some((seq, len));
            }
        }
        let len = s.segment_len(s.snd_max);
        (len > 0 && s.snd_max + len <= s.snd_una + s.rwnd).then_some((s.snd_max, len))
    }
}

impl CongestionControl for Sack {
    fn name(&self) -> &'static str {
        "sack"
    }

    fn on_ack(&mut self, s: &mut TcpState, ack: &AckEvent) -> Reaction {
        self.scoreboard.update(s.snd_una, ack.sack, s.mss);
        self.high_rxt = self.high_rxt.max(s.snd_una);
        if self.in_recovery {
            if s.snd_una >= self.recovery_point {
                self.in_recovery = false;
            }
            return Reaction::default();
        }
        if self.should_enter(s, ack) {
            return self.enter(s);
        }
        if !ack.duplicate {
            s.grow(ack.acked);
        }
        Reaction::default()
    }

    fn on_timeout(&mut self, s: &mut TcpState) {
        self.in_recovery = false;
        self.scoreboard.clear();
        self.high_rxt = s.snd_una;
    }

    fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    fn next_segment(&mut self, s: &TcpState) -> Option<(u64, u64)> {
        if !self.in_recovery {
            return self.next_unsacked(s);
        }
        if s.cwnd < self.pipe(s) + s.mss {
            return None;
        }
        self.next_in_recovery(s)
    }

    fn on_sent(&mut self, s: &TcpState, seq: u64, len: u64) {
        if seq < s.snd_max {
            self.high_rxt = self.high_rxt.max(seq + len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_holes_are_retransmitted_in_one_round() {
        let mut s = TcpState::new(1000, 10, u64::MAX);
        s.app_end = 10_000;
        s.snd_nxt = 10_000;
        s.snd_max = 10_000;
        let mut sack = Sack::default();
        // Segments 0, 2000 and 4000 lost; the others SACKed, one ACK per arrival.
        let blocks = [
            vec![(1000, 2000)],
            vec![(3000, 4000), (1000, 2000)],
            vec![(5000, 6000), (3000, 4000), (1000, 2000)],
        ];
        let mut reactions = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            s.dupacks = i as u32 + 1;
            let ev = AckEvent {
                ack: 0,
                acked: 0,
                duplicate: true,
                sack: b,
            };
            reactions.push(sack.on_ack(&mut s, &ev));
        }
        // IsLost(0) holds after the third SACKed segment: recovery on the third dupack.
        assert!(!reactions[1].fast_retransmit);
        assert_eq!(reactions[2].retransmit, Some(0));
        assert_eq!((s.ssthresh, s.cwnd), (5000, 5000));
        sack.on_sent(&s, 0, 1000);
        // Pipe: hole 0 is lost but retransmitted (1000); hole 2000 has 2 SACKed segments
        // above it, not lost (1000); hole 4000 has 1 (1000); 6000..10000 in flight (4000).
        assert_eq!(sack.pipe(&s), 1000 + 1000 + 1000 + 4000);
        assert_eq!(sack.next_segment(&s), None, "pipe 7000 >= cwnd 5000");
    }

    #[test]
    fn go_back_n_skips_sacked_data() {
        let mut s = TcpState::new(1000, 3, u64::MAX);
        s.app_end = 10_000;
        s.snd_max = 6000;
        let mut sack = Sack::default();
        // After a timeout: snd_nxt = snd_una = 0; later ACKs SACK 1000..3000.
        let ev = AckEvent {
            ack: 0,
            acked: 0,
            duplicate: true,
            sack: &[(1000, 3000)],
        };
        s.dupacks = 1;
        sack.on_ack(&mut s, &ev);
        assert_eq!(sack.next_segment(&s), Some((0, 1000)));
        s.snd_nxt = 1000;
        // 1000..3000 is held by the receiver: next is 3000, which needs cwnd >= 4000.
        assert_eq!(sack.next_segment(&s), None);
        s.cwnd = 4000;
        assert_eq!(sack.next_segment(&s), Some((3000, 1000)));
    }
}
