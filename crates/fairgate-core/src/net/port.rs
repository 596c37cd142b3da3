//! An output port: a queue discipline feeding a simplex link.

use super::link::Link;
use crate::engine::{Rng, Time};
use crate::net::packet::PacketId;
use crate::qdisc::{Qdisc, QueueView};
use crate::stats::PortStats;
use std::collections::VecDeque;

pub struct Port {
    /// "from->to".
    pub name: String,
    pub from: u32,
    pub to: u32,
    pub qdisc: Box<dyn Qdisc>,
    pub link: Link,
    /// The discipline's random stream.
    pub rng: Rng,
    /// The packet being serialised onto the link.
    pub in_service: Option<PacketId>,
    /// When the link last went idle (None while busy).
    pub idle_since: Option<Time>,
    /// Port whose queue this discipline monitors (None = its own).
    pub monitor: Option<u32>,
    /// Pending discipline timer.
    pub timer_at: Option<Time>,
    /// Packets that left on the link and have not reached the far node yet.
    pub in_transit: u64,
    /// On order-preserving links: (arrival time, packet) of the packets in flight, oldest first.
    pub in_flight: VecDeque<(Time, PacketId)>,
    pub stats: PortStats,
}

impl Port {
    pub fn busy(&self) -> bool {
        self.in_service.is_some()
    }

    pub fn view(&self) -> QueueView {
        QueueView {
            len_packets: self.qdisc.len_packets(),
            len_bytes: self.qdisc.len_bytes(),
            link_rate_bps: self.link.rate_bps,
            idle_since: self.idle_since,
            congestion_probability: self.qdisc.congestion_probability(),
        }
    }

    /// Brings the time integrals up to `now`; call before any change of length or state.
    pub fn integrate(&mut self, now: Time) {
        let (pkts, bytes, busy) = (
            self.qdisc.len_packets(),
            self.qdisc.len_bytes(),
            self.busy(),
        );
        self.stats.integrate(now, pkts, bytes, busy);
    }
}
