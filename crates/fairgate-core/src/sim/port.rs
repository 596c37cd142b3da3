//! An output port: a queue discipline feeding a simplex link.
//!
//! A packet leaves the discipline when its serialisation starts; from then on it belongs to
//! the link (counted in `in_transit`) until it reaches the far node. The link is busy until
//! `busy_until`; a transmission-done event is scheduled only when packets wait behind the one
//! being serialised, so an uncongested link costs one event per packet, not two.

use super::device::DeviceQueue;
use super::in_flight::InFlight;
use crate::engine::prefetch::{prefetch, prefetch_lines};
use crate::engine::{Rng, Time};
use crate::net::link::Link;
use crate::qdisc::{Qdisc, QueueView};
use crate::stats::causes::CauseCounts;
use crate::stats::PortStats;
use std::collections::VecDeque;

/// `repr(C)` keeps the declaration order: what a packet arriving over the link reads comes
/// first (the first line, and `stats.delivered_pkts` at the start of the second), then the
/// fields a packet's enqueue and transmission read, up to the counters of `stats` (the first
/// two lines, then the fourth: what most ports never use is boxed); the third line holds the
/// queue-length integrals, which a packet passing an empty queue does not write; the link's
/// first line holds what it reads there, so [`Port::prefetch_hot`] fetches four lines instead
/// of the whole record and [`Port::prefetch_arrival`] two; names, causes and timers come last.
#[repr(C, align(64))]
pub struct Port {
    /// Packets handed to the link (being serialised or propagating) that have not reached the
    /// far node yet.
    pub in_transit: u32,
    /// The largest arrival that may skip the discipline onto the idle link
    /// ([`Qdisc::passes_to_idle_link`], kept after every call into the discipline; 0: none).
    pub(crate) pass_bytes: u32,
    /// On order-preserving links: (arrival time, packet) of the packets in flight, oldest first.
    pub in_flight: InFlight,
    pub to: u32,
    /// Whether a transmission-done event is pending.
    pub tx_scheduled: bool,
    /// Whether `waiting` holds an agent (kept by [`Port::wait`] and [`Port::next_waiting`],
    /// so a packet sent reads this byte, not the list among the cold fields).
    pub(crate) any_waiting: bool,
    /// When the link finishes serialising the last packet it started.
    pub busy_until: Time,
    pub qdisc: Box<dyn Qdisc>,
    /// Port whose queue this discipline monitors (None = its own).
    pub monitor: Option<u32>,
    /// Transmit ring between the discipline and the link (capacity 0 = none).
    pub device: DeviceQueue,
    pub stats: PortStats,
    pub link: Link,
    /// (agent, token) of the agents holding data until this port sends its next packet,
    /// woken one per packet sent, oldest first (a gateway's back-pressure).
    pub(crate) waiting: VecDeque<(u32, u64)>,
    /// The discipline's random stream.
    pub rng: Rng,
    /// Pending discipline timer.
    pub timer_at: Option<Time>,
    /// Drops and marks by the causes the discipline named, over the whole run.
    pub causes: CauseCounts,
    /// "from->to".
    pub name: String,
    pub from: u32,
}

/// Where a [`Port`]'s queue-length integrals and the other counters of a packet sent start.
const INTEGRALS: usize =
    std::mem::offset_of!(Port, stats) + std::mem::offset_of!(PortStats, queue_pkt_ps);
const SENT_COUNTERS: usize =
    std::mem::offset_of!(Port, stats) + std::mem::offset_of!(PortStats, max_queue_pkts);

const LINE: usize = 64;
const _: () = assert!(
    std::mem::offset_of!(Port, monitor) == LINE
        && std::mem::offset_of!(Port, stats) + std::mem::offset_of!(PortStats, delivered_pkts)
            < 2 * LINE
        && INTEGRALS == 2 * LINE
        && SENT_COUNTERS == 3 * LINE
        && std::mem::offset_of!(Port, stats) + std::mem::offset_of!(PortStats, drops_pkts)
            <= 4 * LINE,
    "an arrival reads two lines; a packet sent the first two, the fourth (and the third, the \
     integrals, while the queue is not empty) and the link's first"
);
const _: () = assert!(
    std::mem::size_of::<Port>() <= 12 * LINE,
    "a port takes 12 lines"
);

impl Port {
    /// A cache hint for the fields a packet passing through reads (a hint never changes a
    /// result).
    #[inline(always)]
    pub fn prefetch_hot(&self) {
        prefetch_lines(self, INTEGRALS);
        prefetch(&self.stats.max_queue_pkts);
        prefetch_lines(&self.link, Link::HOT_BYTES);
    }

    /// [`Port::prefetch_hot`] and the queue-length integrals, for a port whose queue holds
    /// packets (a transmission-done event, a discipline's timer).
    #[inline(always)]
    pub fn prefetch_queued(&self) {
        self.prefetch_hot();
        prefetch(&self.stats.queue_pkt_ps);
    }

    /// A cache hint for the fields a packet arriving over the link reads: the in-flight
    /// queue's head, the far node and the delivered count (a hint never changes a result).
    #[inline(always)]
    pub fn prefetch_arrival(&self) {
        prefetch(self);
        prefetch(&self.stats.delivered_pkts);
    }

    /// Holds `agent` (with its `token`) until this port sends its next packet.
    pub fn wait(&mut self, agent: u32, token: u64) {
        self.waiting.push_back((agent, token));
        self.any_waiting = true;
    }

    /// The agent to wake as a packet leaves, if one waits.
    pub fn next_waiting(&mut self) -> Option<(u32, u64)> {
        if !self.any_waiting {
            return None;
        }
        let next = self.waiting.pop_front();
        self.any_waiting = !self.waiting.is_empty();
        next
    }

    pub fn busy(&self, now: Time) -> bool {
        now < self.busy_until
    }

    /// When the discipline's idle period began, if it is idle at `now`: the link's idle
    /// time, or with a device queue the pull that last found the discipline empty.
    pub fn idle_since(&self, now: Time) -> Option<Time> {
        if self.device.enabled() {
            return self
                .device
                .starved_since()
                .filter(|_| self.qdisc.len_packets() == 0);
        }
        (now >= self.busy_until).then_some(self.busy_until)
    }

    pub fn view(&self, now: Time) -> QueueView {
        let (len_packets, len_bytes) = self.queue_lengths();
        QueueView {
            len_packets,
            len_bytes,
            link_rate_bps: self.link.rate_bps,
            idle_since: self.idle_since(now),
            congestion_probability: self.qdisc.congestion_probability(),
        }
    }

    /// Brings the queue-length integrals up to `now`; call before the length changes.
    pub fn integrate(&mut self, now: Time) {
        let (pkts, bytes) = self.queue_lengths();
        self.stats.integrate(now, pkts, bytes, self.device.len());
    }

    /// Whether an arrival of `size` bytes at `now` skips the discipline onto the link: the
    /// link is idle, the discipline lets it pass ([`Qdisc::passes_to_idle_link`]), and no
    /// device queue or monitored port takes part.
    #[inline(always)]
    pub fn passes(&self, size: u32, now: Time) -> bool {
        size <= self.pass_bytes
            && !self.busy(now)
            && self.monitor.is_none()
            && !self.device.enabled()
    }

    /// Whether the discipline lets arrivals pass ([`Qdisc::passes_to_idle_link`]), so is
    /// empty: the port record says so without reading the discipline's lines.
    #[inline(always)]
    pub fn lets_arrivals_pass(&self) -> bool {
        self.pass_bytes != 0
    }

    /// Keeps what the discipline now says of arrivals passing; after every call into it.
    #[inline(always)]
    pub(crate) fn refresh_pass(&mut self) {
        self.pass_bytes = self.qdisc.passes_to_idle_link();
    }

    /// Whether the discipline holds packets.
    #[inline(always)]
    pub fn has_queued(&self) -> bool {
        !self.lets_arrivals_pass() && self.qdisc.len_packets() > 0
    }

    /// The discipline's length in packets and bytes (read from the port record for one that
    /// lets arrivals pass, which is empty).
    #[inline(always)]
    pub fn queue_lengths(&self) -> (usize, u64) {
        if self.lets_arrivals_pass() {
            return (0, 0);
        }
        (self.qdisc.len_packets(), self.qdisc.len_bytes())
    }

    /// Packets waiting in the discipline and the device queue.
    pub fn backlog_packets(&self) -> usize {
        self.queue_lengths().0 + self.device.len()
    }

    /// Time the link has spent serialising up to `now`.
    pub fn busy_ps(&self, now: Time) -> u128 {
        self.stats.busy_ps - self.busy_until.saturating_sub(now) as u128
    }
}
