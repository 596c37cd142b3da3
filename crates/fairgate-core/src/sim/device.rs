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

/// The ring, boxed so that a port without one (the default) spends a word on it, not the
/// ring's own fields, in the lines every packet reads.
#[derive(Debug, Default)]
pub struct DeviceQueue {
    ring: Option<Box<Ring>>,
}

#[derive(Debug, Default)]
struct Ring {
    /// Packets the ring holds, besides the one being serialised.
    capacity: u64,
    packets: VecDeque<PacketId>,
    /// When a pull last found the discipline empty with room to spare, until the next packet.
    starved_since: Option<Time>,
}

impl DeviceQueue {
    /// A ring of `capacity` packets (0 = none).
    pub fn new(capacity: u64) -> Self {
        DeviceQueue {
            ring: (capacity > 0).then(|| {
                Box::new(Ring {
                    capacity,
                    ..Default::default()
                })
            }),
        }
    }

    pub fn enabled(&self) -> bool {
        self.ring.is_some()
    }

    pub fn len(&self) -> usize {
        self.ring.as_ref().map_or(0, |r| r.packets.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn has_room(&self) -> bool {
        self.ring
            .as_ref()
            .is_some_and(|r| (r.packets.len() as u64) < r.capacity)
    }

    /// Takes a packet the discipline released (call only while [`Self::has_room`]).
    pub fn push(&mut self, packet: PacketId) {
        let ring = self.ring.get_or_insert_with(Box::default);
        ring.packets.push_back(packet);
        ring.starved_since = None;
    }

    /// The next packet for the link.
    pub fn pop(&mut self) -> Option<PacketId> {
        self.ring.as_mut()?.packets.pop_front()
    }

    /// A pull found the discipline empty at `now`.
    pub fn note_starved(&mut self, now: Time) {
        if let Some(ring) = self.ring.as_mut() {
            ring.starved_since.get_or_insert(now);
        }
    }

    pub fn starved_since(&self) -> Option<Time> {
        self.ring.as_ref()?.starved_since
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
