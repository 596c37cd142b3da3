//! The drop and mark events table: one row per packet dropped (at a queue, by link loss or for
//! lack of a route) or marked (ECN CE, DECbit), kept only when the scenario asks for it with
//! `[simulation] record_drops`, for all events or the first N (`docs/results.md`, drops).
//!
//! Decisions: off by default, because a congested run drops millions of packets; a bounded log
//! stops recording at its limit and counts the events it left out, so a reader knows the table
//! is a prefix. Events are not clipped to the measurement window: each row has its time.

use super::causes::Cause;
use super::DropReason;
use crate::engine::Time;
use crate::net::packet::Packet;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What happened to the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventAction {
    Drop,
    Mark,
}

impl EventAction {
    pub fn as_str(self) -> &'static str {
        match self {
            EventAction::Drop => "drop",
            EventAction::Mark => "mark",
        }
    }
}

/// One drop or mark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropEvent {
    pub time: Time,
    /// The port whose discipline or link dropped or marked it; `None` for a missing route.
    pub port: Option<u32>,
    pub flow: u32,
    pub size: u32,
    /// The packet's sequence number (bytes for TCP), to plot the drop sequence.
    pub seq: u64,
    pub reason: DropReason,
    /// The discipline's own cause, when it named one.
    pub cause: Option<Cause>,
    pub action: EventAction,
    /// The port's arrival counter at the event (packets that have arrived at it so far, this
    /// one included when it is dropped on arrival); 0 for a packet without a route.
    pub arrival_index: u64,
}

impl DropEvent {
    /// An event of `packet` at `port`, whose arrival counter stands at `arrival_index`.
    pub fn of(
        packet: &Packet,
        time: Time,
        port: Option<u32>,
        reason: DropReason,
        arrival_index: u64,
    ) -> Self {
        DropEvent {
            time,
            port,
            flow: packet.flow,
            size: packet.size,
            seq: packet.seq,
            reason,
            cause: None,
            action: EventAction::Drop,
            arrival_index,
        }
    }
}

/// How many events to keep: `record_drops = "all"` or a count (the first N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventLimit {
    All,
    First(u64),
}

impl EventLimit {
    fn cap(self) -> u64 {
        match self {
            EventLimit::All => u64::MAX,
            EventLimit::First(n) => n,
        }
    }
}

/// The recorded events in time order, and how many more happened after the limit.
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    cap: u64,
    pub rows: Vec<DropEvent>,
    pub not_recorded: u64,
}

impl EventLog {
    pub fn new(limit: Option<EventLimit>) -> Self {
        EventLog {
            cap: limit.map_or(0, EventLimit::cap),
            ..EventLog::default()
        }
    }

    /// Whether the scenario asked for events at all (lets the engine skip building rows).
    pub fn enabled(&self) -> bool {
        self.cap > 0
    }

    pub fn record(&mut self, event: DropEvent) {
        if (self.rows.len() as u64) < self.cap {
            self.rows.push(event);
        } else if self.cap > 0 {
            self.not_recorded += 1;
        }
    }
}

impl Serialize for EventLimit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            EventLimit::All => s.serialize_str("all"),
            EventLimit::First(n) => s.serialize_u64(*n),
        }
    }
}

impl<'de> Deserialize<'de> for EventLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LimitVisitor)
    }
}

struct LimitVisitor;

impl Visitor<'_> for LimitVisitor {
    type Value = EventLimit;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("\"all\" or a number of events (0 records none)")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<EventLimit, E> {
        Ok(EventLimit::First(n))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<EventLimit, E> {
        u64::try_from(n)
            .map(EventLimit::First)
            .map_err(|_| E::invalid_value(de::Unexpected::Signed(n), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<EventLimit, E> {
        match v {
            "all" => Ok(EventLimit::All),
            _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(time: Time) -> DropEvent {
        DropEvent {
            time,
            port: Some(0),
            flow: 0,
            size: 1000,
            seq: 0,
            reason: DropReason::Overflow,
            cause: None,
            action: EventAction::Drop,
            arrival_index: 0,
        }
    }

    #[test]
    fn a_bounded_log_keeps_the_first_events_and_counts_the_rest() {
        let mut log = EventLog::new(Some(EventLimit::First(2)));
        for t in 0..5 {
            log.record(event(t));
        }
        assert_eq!(log.rows.iter().map(|e| e.time).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(log.not_recorded, 3);
    }

    #[test]
    fn an_absent_limit_records_nothing() {
        let mut log = EventLog::new(None);
        log.record(event(0));
        assert!(!log.enabled());
        assert!(log.rows.is_empty());
        assert_eq!(log.not_recorded, 0);
    }
}
