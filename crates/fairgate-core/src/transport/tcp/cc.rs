//! What every TCP congestion-control variant shares: the sender's sequence state, the window
//! arithmetic of RFC 5681, and the interface a variant implements.
//!
//! Sources: RFC 5681 (Allman, Paxson, Blanton, "TCP Congestion Control", 2009) §3.1 (slow
//! start, congestion avoidance, equation 4 for ssthresh), RFC 3465 (Appropriate Byte Counting,
//! the `abc_limit` L), RFC 6582 §3.2 step 1 and §4 (the `recover` guard against false fast
//! retransmits after a timeout).
//!
//! Decisions where the sources are silent:
//! - Congestion avoidance adds `mss * mss / cwnd` bytes per ACK (RFC 5681 eq. 3), at least 1.
//! - Slow start adds `min(acked, abc_limit * mss)` per ACK; `abc_limit = 1` is RFC 5681.
//! - FlightSize is `snd_max - snd_una` (data sent and not cumulatively acknowledged); at a
//!   timeout a variant may estimate it better (SACK: RFC 6675's pipe).

/// The sender's sequence and window state (bytes).
#[derive(Clone, Debug)]
pub struct TcpState {
    pub mss: u64,
    /// First unacknowledged byte.
    pub snd_una: u64,
    /// Next byte to send (below `snd_max` after a go-back-N timeout).
    pub snd_nxt: u64,
    /// One past the highest byte ever sent (HighData + 1).
    pub snd_max: u64,
    /// One past the last byte the application has handed over.
    pub app_end: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    /// The peer's advertised window.
    pub rwnd: u64,
    pub dupacks: u32,
    pub dupthresh: u32,
    pub abc_limit: u64,
    /// `snd_max` at the last loss event; fast retransmit needs `snd_una >= recover`.
    pub recover: Option<u64>,
    /// Limited Transmit (RFC 3042): bytes beyond cwnd the duplicate ACKs so far allow.
    pub lt_allowance: u64,
    /// Bytes sent beyond cwnd under Limited Transmit since the last new ACK; they are left
    /// out of FlightSize when ssthresh is set (RFC 5681 §3.2 step 2).
    pub lt_sent: u64,
}

impl TcpState {
    pub fn new(mss: u64, initial_window: u64, rwnd: u64) -> Self {
        TcpState {
            mss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: 0,
            cwnd: initial_window * mss,
            ssthresh: u64::MAX / 4,
            rwnd,
            dupacks: 0,
            dupthresh: 3,
            abc_limit: 1,
            recover: None,
            lt_allowance: 0,
            lt_sent: 0,
        }
    }

    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Slow start or congestion avoidance for `acked` newly acknowledged bytes.
    pub fn grow(&mut self, acked: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(self.abc_limit * self.mss);
        } else {
            self.cwnd += (self.mss * self.mss / self.cwnd).max(1);
        }
    }

    /// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 SMSS), Limited Transmit data excluded.
    pub fn reduce_ssthresh(&mut self) {
        self.halve_into_ssthresh(self.flight().saturating_sub(self.lt_sent));
    }

    /// ssthresh = max(`flight` / 2, 2 SMSS).
    pub fn halve_into_ssthresh(&mut self, flight: u64) {
        self.ssthresh = (flight / 2).max(2 * self.mss);
    }

    /// Whether a dupack-triggered fast retransmit is allowed (RFC 6582 §3.2 step 1).
    pub fn may_fast_retransmit(&self) -> bool {
        self.recover.is_none_or(|r| self.snd_una >= r)
    }

    /// Length of the segment starting at `seq`.
    pub fn segment_len(&self, seq: u64) -> u64 {
        self.mss.min(self.app_end.saturating_sub(seq))
    }

    /// Whether `[seq, seq + len)` is non-empty and inside min(cwnd + Limited Transmit
    /// allowance, rwnd) from `snd_una`.
    pub fn fits(&self, seq: u64, len: u64) -> bool {
        let window = (self.cwnd + self.lt_allowance).min(self.rwnd);
        len > 0 && seq + len <= self.snd_una + window
    }

    /// The next segment the plain window allows: `snd_nxt` if it fits.
    pub fn window_next(&self) -> Option<(u64, u64)> {
        let len = self.segment_len(self.snd_nxt);
        self.fits(self.snd_nxt, len).then_some((self.snd_nxt, len))
    }
}

/// One acknowledgement as the variant sees it, after the sender updated `snd_una`/`dupacks`.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent<'a> {
    pub ack: u64,
    /// Bytes this ACK newly acknowledged (0 for a duplicate).
    pub acked: u64,
    pub duplicate: bool,
    pub sack: &'a [(u64, u64)],
}

/// What the variant asks the sender to do about an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reaction {
    /// Retransmit the segment at this sequence now, outside the window.
    pub retransmit: Option<u64>,
    /// This ACK started a fast retransmit (counted in the flow's statistics).
    pub fast_retransmit: bool,
    /// Leave the retransmission timer as it is although new data was acknowledged.
    pub keep_timer: bool,
}

/// A congestion-control variant: Tahoe, Reno, NewReno, SACK.
pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// Every ACK that is new or a duplicate.
    fn on_ack(&mut self, s: &mut TcpState, ack: &AckEvent) -> Reaction;
    /// After the sender's common timeout handling (ssthresh, cwnd = 1 MSS, go-back-N).
    fn on_timeout(&mut self, _s: &mut TcpState) {}
    /// The FlightSize a retransmission timeout halves into ssthresh: `snd_max - snd_una`
    /// unless the variant knows better (SACK: RFC 6675's pipe).
    fn flight_at_timeout(&self, s: &TcpState) -> u64 {
        s.flight()
    }
    fn in_recovery(&self) -> bool;
    /// The next segment to send, if the window allows one.
    fn next_segment(&mut self, s: &TcpState) -> Option<(u64, u64)> {
        s.window_next()
    }
    /// A segment was handed to the network.
    fn on_sent(&mut self, _s: &TcpState, _seq: u64, _len: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_then_avoidance() {
        let mut s = TcpState::new(1000, 1, u64::MAX);
        s.ssthresh = 4000;
        s.grow(1000);
        s.grow(5000);
        assert_eq!(s.cwnd, 3000);
        s.grow(1000);
        assert_eq!(s.cwnd, 4000);
        // Avoidance: 1000 * 1000 / 4000 = 250 per ACK.
        s.grow(1000);
        assert_eq!(s.cwnd, 4250);
    }

    #[test]
    fn ssthresh_is_half_the_flight_at_least_two_segments() {
        let mut s = TcpState::new(1000, 1, u64::MAX);
        s.snd_max = 9000;
        s.snd_una = 1000;
        s.reduce_ssthresh();
        assert_eq!(s.ssthresh, 4000);
        s.snd_una = 8000;
        s.reduce_ssthresh();
        assert_eq!(s.ssthresh, 2000);
    }

    #[test]
    fn window_limits_the_next_segment() {
        let mut s = TcpState::new(1000, 2, 1500);
        s.app_end = 10_000;
        assert_eq!(s.window_next(), Some((0, 1000)));
        s.snd_nxt = 1000;
        assert_eq!(s.window_next(), None, "rwnd 1500 allows one segment");
        s.rwnd = 10_000;
        assert_eq!(s.window_next(), Some((1000, 1000)));
        s.app_end = 1500;
        assert_eq!(s.window_next(), Some((1000, 500)));
    }
}
