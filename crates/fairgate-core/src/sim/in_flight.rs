//! The packets in flight on an order-preserving link, oldest first, with the oldest held in
//! the port record itself. An uncongested link rarely has more than one packet in flight, so
//! its arrival reads the port's own lines and not a ring allocated elsewhere (at 100,000 flows
//! that ring is one more cold page per hop); later packets queue in a ring behind it, boxed so
//! that it costs the port record one word.

use crate::engine::Time;
use crate::net::packet::PacketId;
use std::collections::VecDeque;

/// (arrival time, packet) of each packet in flight.
#[derive(Debug)]
pub struct InFlight {
    /// The oldest entry; its packet is [`NO_PACKET`] when there is none.
    head: (Time, PacketId),
    /// Boxed on purpose: one word in the port record instead of the ring's four.
    #[allow(clippy::box_collection)]
    rest: Option<Box<VecDeque<(Time, PacketId)>>>,
}

/// The head's packet when nothing is in flight (the arena never hands out this handle).
const NO_PACKET: PacketId = PacketId::MAX;

impl Default for InFlight {
    fn default() -> Self {
        InFlight {
            head: (0, NO_PACKET),
            rest: None,
        }
    }
}

impl InFlight {
    pub fn is_empty(&self) -> bool {
        self.head.1 == NO_PACKET
    }

    pub fn len(&self) -> usize {
        usize::from(!self.is_empty()) + self.rest.as_ref().map_or(0, |rest| rest.len())
    }

    pub fn push_back(&mut self, entry: (Time, PacketId)) {
        if self.is_empty() {
            self.head = entry;
        } else {
            self.rest.get_or_insert_with(Box::default).push_back(entry);
        }
    }

    pub fn pop_front(&mut self) -> Option<(Time, PacketId)> {
        let head = self.front().copied()?;
        let next = self.rest.as_mut().and_then(|rest| rest.pop_front());
        self.head = next.unwrap_or((0, NO_PACKET));
        Some(head)
    }

    pub fn front(&self) -> Option<&(Time, PacketId)> {
        (!self.is_empty()).then_some(&self.head)
    }

    /// The newest entry (where the next packet sent is queued behind). With nothing in
    /// flight it reads no further than the head: the ring a port once needed stays allocated,
    /// and the deep hints ask this of cold ports.
    pub fn back(&self) -> Option<&(Time, PacketId)> {
        if self.is_empty() {
            return None;
        }
        self.rest
            .as_ref()
            .and_then(|rest| rest.back())
            .or(self.front())
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
