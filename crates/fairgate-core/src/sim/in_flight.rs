//! The packets in flight on an order-preserving link, oldest first, with the oldest held in
//! the port record itself. An uncongested link rarely has more than one packet in flight, so
//! its arrival reads the port's own lines and not a ring allocated elsewhere (at 100,000 flows
//! that ring is one more cold page per hop); later packets queue in a ring behind it.

use crate::engine::Time;
use crate::net::packet::PacketId;
use std::collections::VecDeque;

/// (arrival time, packet) of each packet in flight.
#[derive(Debug, Default)]
pub struct InFlight {
    head: Option<(Time, PacketId)>,
    rest: VecDeque<(Time, PacketId)>,
}

impl InFlight {
    pub fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    pub fn len(&self) -> usize {
        usize::from(self.head.is_some()) + self.rest.len()
    }

    pub fn push_back(&mut self, entry: (Time, PacketId)) {
        if self.head.is_none() {
            self.head = Some(entry);
        } else {
            self.rest.push_back(entry);
        }
    }

    pub fn pop_front(&mut self) -> Option<(Time, PacketId)> {
        let head = self.head.take();
        self.head = self.rest.pop_front();
        head
    }

    pub fn front(&self) -> Option<&(Time, PacketId)> {
        self.head.as_ref()
    }

    /// The newest entry (where the next packet sent is queued behind).
    pub fn back(&self) -> Option<&(Time, PacketId)> {
        self.rest.back().or(self.head.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_leave_in_the_order_they_came() {
        let mut ring = InFlight::default();
        assert!(ring.is_empty() && ring.front().is_none() && ring.back().is_none());
        for i in 0..5u32 {
            ring.push_back((u64::from(i) * 10, i));
        }
        assert_eq!(
            (ring.len(), ring.front(), ring.back()),
            (5, Some(&(0, 0)), Some(&(40, 4)))
        );
        for i in 0..3u32 {
            assert_eq!(ring.pop_front(), Some((u64::from(i) * 10, i)));
        }
        ring.push_back((50, 5));
        let rest: Vec<_> = std::iter::from_fn(|| ring.pop_front()).collect();
        assert_eq!(rest, vec![(30, 3), (40, 4), (50, 5)]);
        assert!(ring.is_empty() && ring.pop_front().is_none());
    }
}
