//! A transmit queue under the queue discipline: ns-3's point-to-point device queue, a Linux
//! driver ring. The discipline hands it packets while it has room; the link serialises them
//! in order. It is flow-controlled (the discipline stops when it is full, as ns-3's traffic
//! control layer and Linux's BQL do), so it never drops; its length is counted apart from
//! the discipline's, and RED and the other AQMs see only their own queue.
//!
//! A pull that finds the discipline empty while the ring has room starts the discipline's
//! idle period (ns-3 `RedQueueDisc::DoDequeue`); with no ring (`capacity = 0`, the default)
//! the link's own idle time is used instead and nothing here runs.

use crate::engine::Time;
use crate::net::packet::PacketId;
use std::collections::VecDeque;

#[derive(Debug, Default)]
pub struct DeviceQueue {
    /// Packets the ring holds, besides the one being serialised (0 = no ring).
    pub capacity: u64,
    packets: VecDeque<PacketId>,
    /// When a pull last found the discipline empty with room to spare, until the next packet.
    starved_since: Option<Time>,
}

impl DeviceQueue {
    pub fn new(capacity: u64) -> Self {
        DeviceQueue {
            capacity,
            ..Default::default()
        }
    }

    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    pub fn len(&self) -> usize {
        self.packets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    pub fn has_room(&self) -> bool {
        (self.packets.len() as u64) < self.capacity
    }

    /// Takes a packet the discipline released.
    pub fn push(&mut self, packet: PacketId) {
        self.packets.push_back(packet);
        self.starved_since = None;
    }

    /// The next packet for the link.
    pub fn pop(&mut self) -> Option<PacketId> {
        self.packets.pop_front()
    }

    /// A pull found the discipline empty at `now`.
    pub fn note_starved(&mut self, now: Time) {
        self.starved_since.get_or_insert(now);
    }

    pub fn starved_since(&self) -> Option<Time> {
        self.starved_since
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_fills_to_capacity_and_keeps_its_first_starvation_time() {
        let mut ring = DeviceQueue::new(2);
        assert!(ring.enabled() && ring.has_room());
        ring.note_starved(5);
        ring.note_starved(9);
        assert_eq!(ring.starved_since(), Some(5));
        ring.push(1);
        assert_eq!(ring.starved_since(), None);
        ring.push(2);
        assert!(!ring.has_room());
        assert_eq!(ring.pop(), Some(1));
        assert_eq!(ring.len(), 1);
        assert!(!DeviceQueue::new(0).enabled());
    }
}
