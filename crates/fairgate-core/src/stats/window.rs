//! The measurement window `[simulation] warmup` .. `end`: snapshots of the cumulative
//! counters at the window's edges, so every summary metric is the difference of two
//! snapshots divided by the window's length (`docs/scenarios.md`, measurement window).
//!
//! Decisions: extremes (maximum queue, minimum and maximum delay and RTT) cannot be
//! differenced and stay whole-run values; a flow's active time is clipped to the window.

use super::{FlowStats, PortStats};
use crate::engine::Time;

/// Cumulative counters at one instant; `busy_ps` is each port's serialisation time up to then.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub ports: Vec<PortStats>,
    pub busy_ps: Vec<u128>,
    pub flows: Vec<FlowStats>,
}

/// Where the summaries start and stop, and the counters taken there.
#[derive(Clone, Debug, Default)]
pub struct Window {
    pub start: Time,
    pub stop: Option<Time>,
    pub at_start: Option<Snapshot>,
    pub at_stop: Option<Snapshot>,
}

impl Window {
    /// The counters accumulated inside the window, given the counters now.
    pub fn delta(&self, now: Snapshot) -> Snapshot {
        let end = self.at_stop.clone().unwrap_or(now);
        match &self.at_start {
            None => end,
            Some(start) => end.minus(start),
        }
    }

    /// Start and end of the window as it applies to a run that has reached `now`.
    pub fn span(&self, now: Time) -> (Time, Time) {
        let end = self.stop.map_or(now, |s| s.min(now));
        (self.start.min(end), end)
    }
}

impl Snapshot {
    /// The counters accumulated since `earlier`.
    pub fn minus(&self, earlier: &Snapshot) -> Snapshot {
        Snapshot {
            ports: zip_with(&self.ports, &earlier.ports, PortStats::minus),
            busy_ps: zip_with(&self.busy_ps, &earlier.busy_ps, |a, b| a - b),
            flows: zip_with(&self.flows, &earlier.flows, FlowStats::minus),
        }
    }
}

fn zip_with<T, F: Fn(&T, &T) -> T>(a: &[T], b: &[T], f: F) -> Vec<T> {
    a.iter().zip(b).map(|(x, y)| f(x, y)).collect()
}

fn sub_each<const N: usize>(a: &[u64; N], b: &[u64; N]) -> [u64; N] {
    std::array::from_fn(|i| a[i] - b[i])
}

impl PortStats {
    /// Counters and integrals since `earlier`; extremes keep the later value.
    pub fn minus(&self, earlier: &PortStats) -> PortStats {
        PortStats {
            arrivals_pkts: self.arrivals_pkts - earlier.arrivals_pkts,
            arrivals_bytes: self.arrivals_bytes - earlier.arrivals_bytes,
            departures_pkts: self.departures_pkts - earlier.departures_pkts,
            departures_bytes: self.departures_bytes - earlier.departures_bytes,
            drops_pkts: sub_each(&self.drops_pkts, &earlier.drops_pkts),
            drops_bytes: sub_each(&self.drops_bytes, &earlier.drops_bytes),
            marks: sub_each(&self.marks, &earlier.marks),
            delivered_pkts: self.delivered_pkts - earlier.delivered_pkts,
            queue_pkt_ps: self.queue_pkt_ps - earlier.queue_pkt_ps,
            queue_sq_pkt_ps: self.queue_sq_pkt_ps - earlier.queue_sq_pkt_ps,
            queue_byte_ps: self.queue_byte_ps - earlier.queue_byte_ps,
            device_pkt_ps: self.device_pkt_ps - earlier.device_pkt_ps,
            busy_ps: self.busy_ps - earlier.busy_ps,
            wait_ps: self.wait_ps - earlier.wait_ps,
            ..self.clone()
        }
    }
}

impl FlowStats {
    /// Counters since `earlier`; extremes, completion and abort keep the later value.
    pub fn minus(&self, earlier: &FlowStats) -> FlowStats {
        FlowStats {
            offered_pkts: self.offered_pkts - earlier.offered_pkts,
            offered_bytes: self.offered_bytes - earlier.offered_bytes,
            delivered_pkts: self.delivered_pkts - earlier.delivered_pkts,
            delivered_bytes: self.delivered_bytes - earlier.delivered_bytes,
            dropped_pkts: sub_each(&self.dropped_pkts, &earlier.dropped_pkts),
            dropped_bytes: self.dropped_bytes - earlier.dropped_bytes,
            goodput_bytes: self.goodput_bytes - earlier.goodput_bytes,
            delay_sum_ps: self.delay_sum_ps - earlier.delay_sum_ps,
            rtt_sum: self.rtt_sum - earlier.rtt_sum,
            rtt_count: self.rtt_count - earlier.rtt_count,
            retransmits: self.retransmits - earlier.retransmits,
            timeouts: self.timeouts - earlier.timeouts,
            fast_retransmits: self.fast_retransmits - earlier.fast_retransmits,
            ecn_reactions: self.ecn_reactions - earlier.ecn_reactions,
            ..self.clone()
        }
    }
}
