//! The in-order rule of `per = "packet_in_order"`: a delay drawn per packet [Byun07, §3] must
//! not reorder the packets of one transport connection, so a packet never arrives before the
//! previous packet of its connection on the link. The connection is (flow, `conn`): the
//! connections an HTTP or web flow multiplexes and the multiplexed legs between two gateways
//! (one `conn` per leg) are each kept in order on their own, not behind one another's draws.
//!
//! Connection 0 of every flow (most traffic) keeps its last arrival in a vector by flow; the
//! other connections in a map. A map entry whose last arrival is not after the current
//! packet's serialisation end holds no later packet back (draws are >= 0 and serialisation ends
//! never decrease on a link), so the map drops such entries whenever it has doubled since the
//! last pruning: its size stays within twice the connections with a packet in flight.

use std::collections::HashMap;

use crate::engine::Time;

/// Map entries below which pruning is not worth a pass.
const PRUNE_FLOOR: usize = 64;

/// Last arrival time on one link of each connection that crossed it.
pub struct LastArrivals {
    first_conn: Vec<Time>,
    other_conns: HashMap<(u32, u32), Time>,
    prune_at: usize,
}

impl Default for LastArrivals {
    fn default() -> Self {
        LastArrivals {
            first_conn: Vec::new(),
            other_conns: HashMap::new(),
            prune_at: PRUNE_FLOOR,
        }
    }
}

impl LastArrivals {
    /// Arrival of a packet of (`flow`, `conn`) that finished serialisation at `sent` and would
    /// arrive at `drawn` (>= `sent`) by its own draw: never before its connection's previous one.
    pub fn arrival(&mut self, flow: u32, conn: u32, sent: Time, drawn: Time) -> Time {
        let last = if conn == 0 {
            let i = flow as usize;
            if self.first_conn.len() <= i {
                self.first_conn.resize(i + 1, 0);
            }
            &mut self.first_conn[i]
        } else {
            if self.other_conns.len() >= self.prune_at {
                self.other_conns.retain(|_, last| *last > sent);
                self.prune_at = PRUNE_FLOOR.max(2 * self.other_conns.len());
            }
            self.other_conns.entry((flow, conn)).or_insert(0)
        };
        *last = drawn.max(*last);
        *last
    }

    /// Connections other than a flow's first that the map holds now.
    pub fn held(&self) -> usize {
        self.other_conns.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000_000;

    #[test]
    fn a_connection_is_not_held_behind_another_connections_draw() {
        let mut last = LastArrivals::default();
        assert_eq!(last.arrival(3, 0, 0, 400 * MS), 400 * MS);
        assert_eq!(last.arrival(3, 1, MS, 301 * MS), 301 * MS);
        assert_eq!(last.arrival(3, 0, 2 * MS, 302 * MS), 400 * MS);
        assert_eq!(last.arrival(3, 1, 3 * MS, 303 * MS), 303 * MS);
        assert_eq!(last.arrival(4, 1, 4 * MS, 304 * MS), 304 * MS);
    }

    #[test]
    fn pruning_keeps_the_connections_in_flight_and_bounds_the_map() {
        let mut last = LastArrivals::default();
        for conn in 1..=10_000u32 {
            let sent = Time::from(conn) * MS;
            last.arrival(0, conn, sent, sent + 350 * MS);
            assert!(last.held() <= 2 * 351 + PRUNE_FLOOR, "{}", last.held());
        }
        let sent = 10_001 * MS;
        assert_eq!(last.arrival(0, 9_999, sent, sent), (9_999 + 350) * MS);
    }
}
