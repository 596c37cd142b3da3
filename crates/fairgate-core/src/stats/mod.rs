//! Counters, time series and fairness indices, kept in columnar buffers that are handed to
//! Python whole.

pub mod causes;
pub mod conservation_brief;
pub mod events;
pub mod flow_counters;
pub mod log_room;
pub mod phases;
pub mod premap;
pub mod reason;
pub mod sample_log;
pub mod series;
pub mod touched;
pub mod transfers;
pub mod window;

pub use reason::DropReason;

use crate::engine::prefetch::prefetch;
use crate::engine::Time;

/// Per-flow counters. "Offered" counts packets a source hands to the network (retransmissions
/// included); "goodput" counts unique application bytes the receiver accepted.
///
/// `repr(C)` keeps the order, one cache line per role: the sender's counters (a segment sent,
/// a timeout, an RTT sample), then those of a packet delivered, then those of a packet a
/// discipline drops (its bytes and the reasons a discipline gives: a tail drop at a full
/// bottleneck writes one line, not two), then what is counted rarely.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub struct FlowStats {
    pub offered_pkts: u64,
    pub offered_bytes: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Round-trip samples reported by a transport.
    pub rtt_sum: f64,
    pub rtt_count: u64,
    pub rtt_min: f64,
    pub rtt_max: f64,
    /// One-way delays of delivered packets, in picoseconds (exact).
    pub delay_sum_ps: u128,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub delay_min_ps: Time,
    pub delay_max_ps: Time,
    /// Time of the last delivery (and of the first, below).
    pub last_delivery: Time,
    pub goodput_bytes: u64,
    pub dropped_bytes: u64,
    pub dropped_pkts: [u64; DropReason::COUNT],
    pub first_delivery: Option<Time>,
    pub fast_retransmits: u64,
    pub ecn_reactions: u64,
    /// When a finite transfer completed.
    pub completed_at: Option<Time>,
    /// The transport gave up after too many retransmissions of one segment.
    pub aborted: bool,
}

const LINE: usize = 64;
const _: () = assert!(
    std::mem::offset_of!(FlowStats, delay_sum_ps) == LINE
        && std::mem::offset_of!(FlowStats, dropped_bytes) == 2 * LINE
        && std::mem::offset_of!(FlowStats, dropped_pkts)
            + (DropReason::Frame as usize + 1) * std::mem::size_of::<u64>()
            <= 3 * LINE
        && std::mem::size_of::<FlowStats>() == 5 * LINE,
    "a line for the sender's counters, one for a delivery's, one for a discipline's drop"
);

impl FlowStats {
    pub fn dropped_total(&self) -> u64 {
        self.dropped_pkts.iter().sum()
    }

    /// Counts a packet of `size` bytes delivered at `now` after `delay`; the first delivery
    /// also sets `first_delivery` (later ones read only the delivery line).
    pub fn record_delivery(&mut self, size: u32, delay: Time, now: Time) {
        self.delivered_pkts += 1;
        self.delivered_bytes += u64::from(size);
        self.record_delay(delay);
        if self.delivered_pkts == 1 {
            self.first_delivery = Some(now);
        }
        self.last_delivery = now;
    }

    /// Cache hints for the lines of the counters in the flow series.
    #[inline(always)]
    pub fn prefetch_series_lines(&self) {
        prefetch(&self.rtt_sum);
        prefetch(&self.delivered_pkts);
        prefetch(&self.dropped_pkts);
        prefetch(&self.dropped_pkts[DropReason::COUNT - 1]);
    }

    /// A cache hint for the line a segment sent, a timeout or an RTT sample updates.
    #[inline(always)]
    pub fn prefetch_sender_line(&self) {
        prefetch(self);
    }

    /// A cache hint for the line a delivery updates.
    #[inline(always)]
    pub fn prefetch_delivery_line(&self) {
        prefetch(&self.delay_sum_ps);
    }

    /// A cache hint for the line a discipline's drop updates.
    #[inline(always)]
    pub fn prefetch_drop_line(&self) {
        prefetch(&self.dropped_bytes);
    }

    /// Call after counting the delivery.
    pub fn record_delay(&mut self, delay: Time) {
        if self.delivered_pkts == 1 {
            self.delay_min_ps = delay;
            self.delay_max_ps = delay;
        } else {
            self.delay_min_ps = self.delay_min_ps.min(delay);
            self.delay_max_ps = self.delay_max_ps.max(delay);
        }
        self.delay_sum_ps += delay as u128;
    }

    pub fn record_rtt(&mut self, rtt_s: f64) {
        if self.rtt_count == 0 {
            self.rtt_min = rtt_s;
            self.rtt_max = rtt_s;
        } else {
            self.rtt_min = self.rtt_min.min(rtt_s);
            self.rtt_max = self.rtt_max.max(rtt_s);
        }
        self.rtt_count += 1;
        self.rtt_sum += rtt_s;
    }
}

/// Per-port counters with exact time integrals of the queue length. `repr(C)` keeps the
/// counters every packet updates first (`delivered_pkts`, the one an arrival updates, leading),
/// then the time integrals of the queue's length, which a packet passing an empty queue leaves
/// alone (64 bytes, a line of their own in a port's record), then the other counters a packet
/// sent updates, and the per-reason arrays last.
#[derive(Clone, Debug, Default)]
#[repr(C)]
pub struct PortStats {
    /// Packets that left on the link and reached the far node.
    pub delivered_pkts: u64,
    pub last_change: Time,
    pub arrivals_pkts: u64,
    pub arrivals_bytes: u64,
    pub departures_pkts: u64,
    pub departures_bytes: u64,
    /// Sum over time of queue length (packets waiting, not the one in service), in packet-ps.
    pub queue_pkt_ps: u128,
    /// Sum over time of the squared queue length, in packet²-ps (for the standard deviation).
    pub queue_sq_pkt_ps: u128,
    pub queue_byte_ps: u128,
    /// Sum over time of the device queue's length, in packet-ps.
    pub device_pkt_ps: u128,
    pub max_queue_pkts: u64,
    pub max_queue_bytes: u64,
    /// Serialisation time of every packet started (may run past the current time).
    pub busy_ps: u128,
    pub wait_ps: u128,
    pub max_device_pkts: u64,
    pub drops_pkts: [u64; DropReason::COUNT],
    pub drops_bytes: [u64; DropReason::COUNT],
    pub marks: [u64; DropReason::COUNT],
}

impl PortStats {
    /// Advances the time integrals to `now` with the lengths that held since the last change
    /// (an empty queue adds nothing, so its integrals are not written).
    pub fn integrate(&mut self, now: Time, queue_pkts: usize, queue_bytes: u64, device: usize) {
        let dt = (now - self.last_change) as u128;
        if dt > 0 {
            if queue_pkts != 0 || queue_bytes != 0 || device != 0 {
                self.queue_pkt_ps += queue_pkts as u128 * dt;
                self.queue_sq_pkt_ps += (queue_pkts as u128).pow(2) * dt;
                self.queue_byte_ps += queue_bytes as u128 * dt;
                self.device_pkt_ps += device as u128 * dt;
            }
            self.last_change = now;
        }
    }

    pub fn note_length(&mut self, queue_pkts: usize, queue_bytes: u64) {
        self.max_queue_pkts = self.max_queue_pkts.max(queue_pkts as u64);
        self.max_queue_bytes = self.max_queue_bytes.max(queue_bytes);
    }

    pub fn drops_total(&self) -> u64 {
        self.drops_pkts.iter().sum()
    }
}

/// Jain's fairness index of a set of allocations (1 = perfectly fair). The index does not
/// change when every value is scaled alike, so values whose squares overflow (above about
/// 1e154) are divided by the largest first; other values are used as they are.
pub fn jain_index(values: &[f64]) -> f64 {
    let (sum, sum_sq) = sums(values);
    if sum_sq.is_infinite() {
        let largest = values.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let scaled: Vec<f64> = values.iter().map(|v| v / largest).collect();
        return jain_index(&scaled);
    }
    if values.is_empty() || sum_sq == 0.0 {
        return 1.0;
    }
    sum * sum / (values.len() as f64 * sum_sq)
}

fn sums(values: &[f64]) -> (f64, f64) {
    let sum: f64 = values.iter().sum();
    let sum_sq: f64 = values.iter().map(|v| v * v).sum();
    (sum, sum_sq)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_extremes() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), 1.0);
        assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), 0.25);
    }

    #[test]
    fn jain_index_of_values_whose_squares_overflow() {
        assert_eq!(jain_index(&[1e300, 1e300]), 1.0);
        assert_eq!(jain_index(&[1e300, 0.0, 0.0, 0.0]), 0.25);
        assert!((jain_index(&[f64::MAX, f64::MAX / 2.0]) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn integrals_weight_by_time() {
        let mut s = PortStats::default();
        s.integrate(10, 0, 0, 0);
        s.integrate(30, 2, 200, 1);
        assert_eq!(s.queue_pkt_ps, 40);
        assert_eq!(s.device_pkt_ps, 20);
        assert_eq!(s.queue_byte_ps, 4000);
    }
}
