//! The SACK scoreboard of RFC 6675 §2-§4: which bytes above the cumulative ACK the receiver
//! holds, IsLost, the pipe estimate and NextSeg.
//!
//! Sources: RFC 2018 (Mathis, Mahdavi, Floyd, Romanow, "TCP Selective Acknowledgment
//! Options", 1996); RFC 6675 (Blanton, Allman, Wang, Jarvinen, Kojo, Nishida, "A Conservative
//! Loss Recovery Algorithm Based on SACK for TCP", 2012).
//!
//! Decisions where the sources are silent:
//! - Segments are the MSS-sized chunks of each un-SACKed range, counted from the range's
//!   start (octet-level scoreboard; RFC 6675 allows either).
//! - IsLost counts "discontiguous SACKed sequences" as MSS-sized SACKed segments (each block
//!   counts ceil(len / MSS)); suffix sums over the ranges make it O(log n), the MSS being the
//!   one given to the last `update`.

/// SACKed ranges above `snd_una`, disjoint and sorted.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    sacked: Vec<(u64, u64)>,
    /// `suffix[i]` = (bytes, MSS-segments) SACKed in ranges i.. (for IsLost in O(log n)).
    suffix: Vec<(u64, u64)>,
}

impl Scoreboard {
    pub fn clear(&mut self) {
        self.sacked.clear();
        self.suffix.clear();
    }

    fn refresh_suffix(&mut self, mss: u64) {
        self.suffix.clear();
        self.suffix.resize(self.sacked.len() + 1, (0, 0));
        for i in (0..self.sacked.len()).rev() {
            let (a, b) = self.sacked[i];
            let (bytes, segments) = self.suffix[i + 1];
            self.suffix[i] = (bytes + (b - a), segments + (b - a).div_ceil(mss));
        }
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.sacked
    }

    /// Adds the ACK's blocks and forgets everything below the cumulative ACK.
    pub fn update(&mut self, ack: u64, blocks: &[(u64, u64)], mss: u64) {
        for &(a, b) in blocks {
            self.insert(a.max(ack), b);
        }
        self.sacked.retain(|&(_, b)| b > ack);
        if let Some(first) = self.sacked.first_mut() {
            first.0 = first.0.max(ack);
        }
        self.refresh_suffix(mss);
    }

    fn insert(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        let mut merged = (start, end);
        self.sacked.retain(|&(a, b)| {
            let touches = a <= merged.1 && merged.0 <= b;
            if touches {
                merged = (merged.0.min(a), merged.1.max(b));
            }
            !touches
        });
        let at = self.sacked.partition_point(|&(a, _)| a < merged.0);
        self.sacked.insert(at, merged);
    }

    pub fn is_sacked(&self, seq: u64) -> bool {
        let i = self.sacked.partition_point(|&(_, b)| b <= seq);
        self.sacked.get(i).is_some_and(|&(a, _)| a <= seq)
    }

    /// The highest SACKed byte + 1, if any.
    pub fn high_sacked(&self) -> Option<u64> {
        self.sacked.last().map(|&(_, b)| b)
    }

    /// (bytes, MSS-segments) SACKed above `seq`.
    fn sacked_above(&self, seq: u64, mss: u64) -> (u64, u64) {
        let i = self.sacked.partition_point(|&(_, b)| b <= seq + 1);
        let Some(&(a, b)) = self.sacked.get(i) else {
            return (0, 0);
        };
        let tail = self.suffix[i + 1];
        let len = b - a.max(seq + 1);
        (tail.0 + len, tail.1 + len.div_ceil(mss))
    }

    /// RFC 6675 IsLost(seq): `dupthresh` SACKed segments above `seq`, or more than
    /// (dupthresh - 1) x MSS SACKed bytes above it.
    pub fn is_lost(&self, seq: u64, mss: u64, dupthresh: u32) -> bool {
        let (bytes, segments) = self.sacked_above(seq, mss);
        segments >= dupthresh as u64 || bytes > (dupthresh as u64 - 1) * mss
    }

    /// Un-SACKed chunks of at most `mss` bytes in `[from, to)`, in order.
    pub fn holes(&self, from: u64, to: u64, mss: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let mut cursor = from;
        let mut index = self.sacked.partition_point(|&(_, b)| b <= from);
        std::iter::from_fn(move || {
            while cursor < to {
                match self.sacked.get(index) {
                    Some(&(a, b)) if a <= cursor => {
                        cursor = cursor.max(b);
                        index += 1;
                    }
                    next => {
                        let limit = next.map_or(to, |&(a, _)| a.min(to));
                        let len = mss.min(limit - cursor);
                        let chunk = (cursor, len);
                        cursor += len;
                        return Some(chunk);
                    }
                }
            }
            None
        })
    }

    /// RFC 6675 SetPipe: bytes believed in the network.
    pub fn pipe(
        &self,
        snd_una: u64,
        high_data: u64,
        high_rxt: u64,
        mss: u64,
        dupthresh: u32,
    ) -> u64 {
        self.holes(snd_una, high_data, mss)
            .map(|(seq, len)| {
                let original = if self.is_lost(seq, mss, dupthresh) {
                    0
                } else {
                    len
                };
                let retransmitted = if seq < high_rxt { len } else { 0 };
                original + retransmitted
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_merge_and_fall_below_the_ack() {
        let mut sb = Scoreboard::default();
        sb.update(0, &[(2000, 3000), (4000, 5000)], 1000);
        sb.update(0, &[(3000, 4000)], 1000);
        assert_eq!(sb.ranges(), &[(2000, 5000)]);
        sb.update(2500, &[], 1000);
        assert_eq!(sb.ranges(), &[(2500, 5000)]);
    }

    #[test]
    fn is_lost_needs_three_segments_above() {
        let mut sb = Scoreboard::default();
        sb.update(0, &[(1000, 3000)], 1000);
        assert!(!sb.is_lost(0, 1000, 3));
        sb.update(0, &[(4000, 5000)], 1000);
        assert!(sb.is_lost(0, 1000, 3));
        assert!(!sb.is_lost(3000, 1000, 3));
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_plus_retransmitted() {
        let mut sb = Scoreboard::default();
        // Sent 0..8000; holes at 0, 2000, 3000; SACKed 1000..2000 and 4000..8000.
        sb.update(0, &[(1000, 2000), (4000, 8000)], 1000);
        let holes: Vec<_> = sb.holes(0, 8000, 1000).collect();
        assert_eq!(holes, vec![(0, 1000), (2000, 1000), (3000, 1000)]);
        // All three holes have >= 4 SACKed segments above them: lost. Nothing retransmitted.
        assert_eq!(sb.pipe(0, 8000, 0, 1000, 3), 0);
        // After retransmitting the first hole: it counts once.
        assert_eq!(sb.pipe(0, 8000, 1000, 1000, 3), 1000);
        // Sent up to 10000: 8000 and 9000 are not lost and count.
        assert_eq!(sb.pipe(0, 10_000, 1000, 1000, 3), 3000);
    }
}
