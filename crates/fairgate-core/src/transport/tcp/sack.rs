//! TCP SACK: loss recovery driven by the SACK scoreboard (RFC 6675, with RFC 2018 blocks).
//!
//! Sources: RFC 6675 §5 (Blanton et al. 2012) and RFC 2018; Fall and Floyd, "Simulation-based
//! Comparisons of Tahoe, Reno, and SACK TCP", CCR 1996.
//!
//! Decisions where the sources are silent or offer a choice:
//! - Recovery starts on the third duplicate ACK or when IsLost(HighACK + 1) holds (§5 step 2
//!   and 3), guarded by RFC 6582's `recover` after timeouts and recoveries.
//! - On entering recovery ssthresh = cwnd = max(FlightSize / 2, 2 MSS) (RFC 5681 eq. 4).
//! - NextSeg uses all four rules of RFC 6675 §4: a lost hole above HighRxt, new data, an
//!   un-SACKed hole above HighRxt below HighSACK, and once per recovery the rescue
//!   retransmission of the last segment holding un-SACKed data (RescueRxt = RecoveryPoint;
//!   HighRxt is not moved by it, so the pipe does not count it). Rule 4 is the option
//!   `rescue_retransmit`, off by default as ns-3 leaves it out.
//! - Sending in recovery is bounded by cwnd - pipe >= 1 MSS (§5 step C) and new data by the
//!   receive window from `snd_una`, never by `snd_una + cwnd`.
//! - After a timeout the sender goes back to `snd_una` and skips what the scoreboard shows
//!   SACKed. The scoreboard is kept (`keep_sack_on_rto`, as ns-3 does under RFC 6675 §5.1's
//!   erratum 1610; no reneging is modelled) or cleared (RFC 2018 §8); later SACK blocks refill
//!   it either way.
//! - The FlightSize a timeout halves is the pipe (ns-3's `BytesInFlight`), not `snd_max -
//!   snd_una`, which counts data SACKed during a recovery whose retransmission was lost.

use super::cc::{AckEvent, CongestionControl, Reaction, TcpState};
use super::scoreboard::Scoreboard;

#[derive(Default)]
pub struct Sack {
    scoreboard: Scoreboard,
    in_recovery: bool,
    recovery_point: u64,
    high_rxt: u64,
    rescue_rxt: Option<u64>,
    /// The start of the segment NextSeg last returned, if it came from rule 4.
    rescue_pending: Option<u64>,
    /// Whether rule 4 is used at all.
    rescue_enabled: bool,
    /// Whether the scoreboard survives a retransmission timeout.
    keep_on_rto: bool,
}

impl Sack {
    pub fn new(rescue_enabled: bool, keep_on_rto: bool) -> Self {
        Sack {
            rescue_enabled,
            keep_on_rto,
            ..Default::default()
        }
    }

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

    /// NextSeg (RFC 6675 §4).
    fn next_in_recovery(&mut self, s: &TcpState) -> Option<(u64, u64)> {
        self.rescue_pending = None;
        let from = self.high_rxt.max(s.snd_una);
        let high_sacked = self.scoreboard.high_sacked().unwrap_or(0);
        let first_hole = self
            .scoreboard
            .holes(from, s.snd_max, s.mss)
            .next()
            .filter(|&(seq, _)| seq < high_sacked);
        // Rule 1: IsLost is monotone in the sequence, so only the first hole can qualify.
        if let Some((seq, len)) = first_hole {
            if self.scoreboard.is_lost(seq, s.mss, s.dupthresh) {
                return Some((seq, len));
            }
        }
        let len = s.segment_len(s.snd_max);
        if len > 0 && s.snd_max + len <= s.snd_una + s.rwnd {
            return Some((s.snd_max, len));
        }
        first_hole.or_else(|| self.rescue(s))
    }

    /// Rule 4: one segment ending at the highest un-SACKed byte, once per recovery.
    fn rescue(&mut self, s: &TcpState) -> Option<(u64, u64)> {
        if !self.rescue_enabled || self.rescue_rxt.is_some_and(|r| s.snd_una <= r) {
            return None;
        }
        let (seq, len) = self.scoreboard.holes(s.snd_una, s.snd_max, s.mss).last()?;
        let start = (seq + len).saturating_sub(s.mss).max(s.snd_una);
        self.rescue_pending = Some(start);
        Some((start, seq + len - start))
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
        if !self.keep_on_rto {
            self.scoreboard.clear();
        }
        self.high_rxt = s.snd_una;
    }

    fn flight_at_timeout(&self, s: &TcpState) -> u64 {
        self.pipe(s)
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
        if self.rescue_pending.take() == Some(seq) {
            self.rescue_rxt = Some(self.recovery_point);
        } else if seq < s.snd_max {
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
