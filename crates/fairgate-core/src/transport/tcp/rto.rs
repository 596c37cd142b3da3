//! The TCP retransmission timer per RFC 6298, with Karn's rule and exponential backoff.
//!
//! Sources: RFC 6298 (Paxson, Allman, Chu, Sargent, "Computing TCP's Retransmission Timer",
//! 2011); Jacobson, "Congestion Avoidance and Control", SIGCOMM 1988; Karn and Partridge,
//! "Improving Round-Trip Time Estimates in Reliable Transport Protocols", SIGCOMM 1987.
//! [Keshav91, §6.5] asks for "RTO = srtt + 4 rttvar with Karn backoff".
//!
//! Decisions where the sources are silent:
//! - One segment is timed at a time (the BSD scheme); Karn's rule: a timing in progress is
//!   abandoned when anything is retransmitted, so no sample ever comes from a retransmission.
//! - The backoff is undone (multiplier back to 1) on the first valid RTT sample, as RFC 6298
//!   §5 note permits ("after the RTT of a new segment is measured").
//! - The RTO is rounded up to a whole number of clock ticks of `granularity`.

use crate::engine::{secs, to_secs, Time};

/// Parameters of the estimator (seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoParams {
    pub initial: f64,
    pub min: f64,
    pub max: f64,
    /// Clock granularity G of RFC 6298.
    pub granularity: f64,
}

/// SRTT, RTTVAR and the backoff of one connection. "None" is a marker value in `srtt` and
/// `timed_end`, so the estimator takes 72 bytes of a TCP sender's hot lines, not 88.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    params: RtoParams,
    /// NaN until the first sample.
    srtt: f64,
    rttvar: f64,
    /// The segment being timed: the sequence that must be acknowledged ([`NOT_TIMING`] when
    /// none is) and the time it was sent.
    timed_end: u64,
    timed_at: Time,
    backoff: u32,
}

/// `timed_end` when no segment is being timed (sequence numbers stay below 2^62).
const NOT_TIMING: u64 = u64::MAX;

/// RFC 6298 gains.
const ALPHA: f64 = 1.0 / 8.0;
const BETA: f64 = 1.0 / 4.0;
const K: f64 = 4.0;
const MAX_BACKOFF_SHIFT: u32 = 16;

impl RtoEstimator {
    pub fn new(params: RtoParams) -> Self {
        RtoEstimator {
            params,
            srtt: f64::NAN,
            rttvar: 0.0,
            timed_end: NOT_TIMING,
            timed_at: 0,
            backoff: 0,
        }
    }

    pub fn srtt(&self) -> Option<f64> {
        (!self.srtt.is_nan()).then_some(self.srtt)
    }

    pub fn rttvar(&self) -> f64 {
        self.rttvar
    }

    /// The configured maximum timeout in seconds.
    pub fn max_rto(&self) -> f64 {
        self.params.max
    }

    /// How many times the timer has been doubled.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    /// Feeds one RTT sample (seconds) through RFC 6298 §2.2-2.3.
    pub fn sample(&mut self, rtt: f64) {
        match self.srtt() {
            None => {
                self.srtt = rtt;
                self.rttvar = rtt / 2.0;
            }
            Some(srtt) => {
                self.rttvar = (1.0 - BETA) * self.rttvar + BETA * (srtt - rtt).abs();
                self.srtt = (1.0 - ALPHA) * srtt + ALPHA * rtt;
            }
        }
        self.backoff = 0;
    }

    /// The un-backed-off timeout in seconds.
    pub fn base_rto(&self) -> f64 {
        let raw = match self.srtt() {
            None => self.params.initial,
            Some(srtt) => srtt + (K * self.rttvar).max(self.params.granularity),
        };
        let ticks = if self.params.granularity > 0.0 {
            (raw / self.params.granularity - 1e-9).ceil() * self.params.granularity
        } else {
            raw
        };
        ticks.clamp(self.params.min, self.params.max)
    }

    /// The timeout to arm now, backoff included.
    pub fn rto(&self) -> Time {
        let backed = self.base_rto() * f64::from(1u32 << self.backoff.min(MAX_BACKOFF_SHIFT));
        secs(backed.min(self.params.max))
    }

    /// The initial RTO in seconds (the base until the first sample).
    pub fn initial(&self) -> f64 {
        self.params.initial
    }

    /// Restarts the timer at `initial` seconds without backoff, until the first RTT sample
    /// (after a retransmitted SYN, RFC 6298 §5.7).
    pub fn restart_at(&mut self, initial: f64) {
        self.params.initial = initial;
        self.backoff = 0;
    }

    /// Doubles the timeout (RFC 6298 §5.5) and abandons the timing (Karn).
    pub fn on_timeout(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF_SHIFT);
        self.timed_end = NOT_TIMING;
    }

    /// Starts timing the segment ending at `end` if nothing is being timed.
    pub fn start_timing(&mut self, end: u64, now: Time) {
        if self.timed_end == NOT_TIMING {
            self.timed_end = end;
            self.timed_at = now;
        }
    }

    /// Karn's rule: a retransmission invalidates the timing in progress.
    pub fn on_retransmit(&mut self) {
        self.timed_end = NOT_TIMING;
    }

    /// A cumulative ACK of `ack` at `now`; returns the RTT sample it yields, if any.
    pub fn on_ack(&mut self, ack: u64, now: Time) -> Option<f64> {
        if self.timed_end == NOT_TIMING || ack < self.timed_end {
            return None;
        }
        self.timed_end = NOT_TIMING;
        let rtt = to_secs(now - self.timed_at);
        self.sample(rtt);
        Some(rtt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> RtoParams {
        RtoParams {
            initial: 1.0,
            min: 0.2,
            max: 60.0,
            granularity: 0.0,
        }
    }

    #[test]
    fn first_and_second_samples_follow_rfc6298() {
        let mut e = RtoEstimator::new(params());
        assert_eq!(e.rto(), secs(1.0));
        assert_eq!(e.srtt(), None, "no sample yet");
        e.sample(0.1);
        // SRTT = 0.1, RTTVAR = 0.05, RTO = 0.1 + 4 x 0.05 = 0.3.
        assert!((e.base_rto() - 0.3).abs() < 1e-12);
        e.sample(0.2);
        // RTTVAR = 0.75 x 0.05 + 0.25 x 0.1 = 0.0625; SRTT = 0.875 x 0.1 + 0.125 x 0.2 = 0.1125.
        assert!((e.rttvar() - 0.0625).abs() < 1e-12);
        assert!((e.srtt().unwrap() - 0.1125).abs() < 1e-12);
        assert!((e.base_rto() - 0.3625).abs() < 1e-12);
    }

    #[test]
    fn minimum_granularity_and_backoff() {
        let mut e = RtoEstimator::new(RtoParams {
            granularity: 0.5,
            min: 1.0,
            ..params()
        });
        e.sample(0.1);
        // 0.1 + max(0.5, 0.2) = 0.6 -> 2 ticks of 0.5 = 1.0, at the 1 s minimum.
        assert_eq!(e.rto(), secs(1.0));
        e.on_timeout();
        assert_eq!(e.rto(), secs(2.0));
        e.on_timeout();
        assert_eq!(e.rto(), secs(4.0));
        e.sample(0.1);
        assert_eq!(e.rto(), secs(1.0));
    }

    #[test]
    fn karn_rule_discards_timing_of_retransmitted_data() {
        let mut e = RtoEstimator::new(params());
        e.start_timing(1000, secs(1.0));
        e.on_retransmit();
        assert_eq!(e.on_ack(1000, secs(1.5)), None);
        e.start_timing(2000, secs(2.0));
        assert_eq!(e.on_ack(1999, secs(2.1)), None);
        let rtt = e.on_ack(2000, secs(2.25)).unwrap();
        assert!((rtt - 0.25).abs() < 1e-12);
    }
}
