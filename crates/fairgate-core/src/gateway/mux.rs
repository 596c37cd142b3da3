//! Several end-to-end connections multiplexed onto one satellite-leg connection between two
//! gateways ([Byun07, §2.1]: "one PEP flow may carry several TCP flows"; the source does not
//! say how). The sending gateway writes what each of its split connections accepts into the
//! leg's byte stream as records, a header of [`RECORD_HEADER`] bytes (connection id, kind,
//! length) followed by the payload; the far gateway reads the records out of the in-order
//! byte stream and hands each payload to its own split connection for that end-to-end
//! connection, which relays it to the destination.
//!
//! Decisions (long form on `docs/models/gateway.md`):
//! - Records: an open record (header only) when a connection opens, data records of at most
//!   one segment's payload (MSS - header), a close record after the last data once the
//!   source's FIN has reached the LHS. A data record's payload passes on as its bytes arrive
//!   in order, once its header has arrived.
//! - The connections keep their accepted bytes in their own PEP buffers; the leg takes a record
//!   from each connection in turn (round robin) whenever its sender has sent everything it
//!   holds, so one connection's backlog does not hold the others' bytes behind it in the
//!   stream (no head-of-line blocking beyond one round of records and the leg's window).
//! - The records travel in band; packets carry no payload in fairgate, so the framing is kept
//!   beside the stream ([`Framing`]) and the far gateway reads a record only once the leg's
//!   receiver has every byte of its header in order, exactly what reading it off the wire gives.
//! - Connection k (in the order they open) goes onto leg k mod `legs`; a leg opens with the
//!   first connection it carries (with a handshake if that one began with a SYN) and then stays
//!   open: later connections find it open and get their SYN-ACK at once. A leg whose sender
//!   gives up (`max_retries`) takes no more connections (a new leg takes its place) and those
//!   on it are abandoned as a split whose own RHS gives up is.
//! - A leg's packets belong to the flow of its first connection (fairgate's flow table holds
//!   the scenario's flows): a per-flow discipline after the gateway sees one flow per leg.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::leg_window::LegWindow;
use super::split::Occupancy;
use crate::transport::tcp::receiver::TcpReceiver;
use crate::transport::tcp::sender::TcpSender;

/// Bytes of a record header: connection id (4), kind and length (4).
pub const RECORD_HEADER: u64 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// A connection opens (`handshake`: it began with a SYN).
    Open {
        handshake: bool,
    },
    Data,
    Close,
}

/// One record in a leg's byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// The end-to-end connection: its flow, `conn`, destination node and agent.
    pub flow: u32,
    pub conn: u32,
    pub dst: u32,
    pub dst_agent: u32,
    pub kind: RecordKind,
    /// The record's place in the leg's stream, header included: `[start, end)`.
    pub start: u64,
    pub end: u64,
}

impl Record {
    fn payload_start(&self) -> u64 {
        self.start + RECORD_HEADER
    }
}

/// The records of every multiplexed leg not yet read by the far gateway, by (sending gateway
/// node, leg); shared by the gateways of a simulation.
#[derive(Clone, Debug, Default)]
pub struct Framing(Arc<Mutex<LegRecords>>);

/// Per (sending gateway node, leg): the records not yet read.
type LegRecords = HashMap<(u32, u32), VecDeque<Record>>;

impl Framing {
    fn write(&self, leg: (u32, u32), record: Record) {
        let mut legs = self.0.lock().expect("framing lock");
        legs.entry(leg).or_default().push_back(record);
    }

    /// Reads leg `leg`'s stream from `read` up to `in_order`: the payload bytes and records
    /// now readable, in stream order; advances `read`.
    fn read(&self, leg: (u32, u32), read: &mut u64, in_order: u64) -> Vec<(Record, u64)> {
        let mut legs = self.0.lock().expect("framing lock");
        let Some(records) = legs.get_mut(&leg) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        while let Some(&r) = records.front() {
            if in_order < r.payload_start() {
                break;
            }
            let to = in_order.min(r.end);
            let from = (*read).max(r.payload_start());
            *read = to;
            if to == r.end {
                records.pop_front();
                out.push((r, to - from));
            } else {
                out.push((r, to - from));
                break;
            }
        }
        out
    }
}

/// A connection's part of a leg, as the sending gateway sees it.
#[derive(Clone, Debug)]
pub struct LegShare {
    pub leg: u32,
    /// The end-to-end connection's destination node and agent (named in its records).
    pub target: (u32, u32),
    /// Whether the leg has done its handshake.
    pub established: bool,
    /// Payload ranges written into the leg's stream and not yet wholly acknowledged.
    ranges: VecDeque<(u64, u64)>,
    written: u64,
    delivered: u64,
    in_flight: u64,
    /// Bytes accepted and not yet written into the leg; an open or close record to write.
    queued: u64,
    open: Option<bool>,
    closing: bool,
    /// Whether the leg's sender gave up (`max_retries`): the leg is dead, nothing more of
    /// this connection will cross it.
    leg_gave_up: bool,
}

impl LegShare {
    pub fn new(leg: u32, handshake: bool, target: (u32, u32)) -> Self {
        LegShare {
            leg,
            target,
            established: false,
            ranges: VecDeque::new(),
            written: 0,
            delivered: 0,
            in_flight: 0,
            queued: 0,
            open: Some(handshake),
            closing: false,
            leg_gave_up: false,
        }
    }

    pub(crate) fn queue(&mut self, bytes: u64) {
        self.queued += bytes;
    }

    pub(crate) fn close(&mut self) {
        self.closing = true;
    }

    /// Whether the connection has a record to write.
    pub fn has_records(&self) -> bool {
        self.open.is_some() || self.queued > 0 || self.closing
    }

    /// Whether the leg gave up (see [`Leg::gave_up`]).
    pub fn leg_gave_up(&self) -> bool {
        self.leg_gave_up
    }

    /// Payload bytes written into the leg or queued for it.
    pub fn handed_on(&self) -> u64 {
        self.written + self.queued
    }

    pub fn occupancy(&self, accepted: u64) -> Occupancy {
        Occupancy {
            accepted,
            delivered: self.delivered,
            in_flight: self.in_flight,
            unsent: accepted - self.delivered - self.in_flight,
        }
    }

    /// Recomputes delivered and in-flight bytes from the leg's `snd_una` and `snd_max`.
    fn sync(&mut self, snd_una: u64, snd_max: u64, established: bool) {
        self.established = established;
        while let Some(&(start, end)) = self.ranges.front() {
            if end > snd_una {
                break;
            }
            self.delivered += end - start;
            self.ranges.pop_front();
        }
        let overlap = |lo: u64, hi: u64| -> u64 {
            let ranges = self.ranges.iter();
            ranges
                .map(|&(s, e)| e.min(hi).saturating_sub(s.max(lo)))
                .sum()
        };
        let partly_acked = overlap(0, snd_una);
        self.in_flight = overlap(snd_una, snd_max);
        self.delivered += partly_acked;
        if let Some(front) = self.ranges.front_mut() {
            front.0 += partly_acked;
        }
    }
}

/// A multiplexed leg at the sending gateway: one TCP sender toward the peer gateway.
pub struct Leg {
    pub index: u32,
    pub sender: TcpSender,
    /// The flow whose id the leg's packets carry (its first connection's).
    pub flow: u32,
    /// Indices (in the gateway's connections) of the connections it carries, not retired.
    pub members: Vec<usize>,
    pub retransmits: u64,
    pub timeouts: u64,
    pub records: u64,
    /// Bytes written into the stream (records, headers included).
    pub written: u64,
    /// The member whose turn it is to write next (round robin).
    pub turn: usize,
    /// `<gateway>.leg<i>_`: the prefix of the leg sender's own traces.
    pub trace_prefix: String,
}

impl Leg {
    /// Writes `conn`'s next records into the stream: its open record if not yet written, at
    /// most `max_payload` of its queued bytes, and its close record once nothing is queued;
    /// returns the bytes written.
    pub(crate) fn write(
        &mut self,
        framing: &Framing,
        key: (u32, u32),
        conn: (u32, u32),
        share: &mut LegShare,
        max_payload: u64,
    ) -> u64 {
        let start = self.sender.state().app_end;
        let mut at = start;
        let mut put = |kind: RecordKind, payload: u64| {
            let end = at + RECORD_HEADER + payload;
            let record = Record {
                flow: conn.0,
                conn: conn.1,
                dst: share.target.0,
                dst_agent: share.target.1,
                kind,
                start: at,
                end,
            };
            framing.write(key, record);
            at = end;
            end
        };
        if let Some(handshake) = share.open.take() {
            put(RecordKind::Open { handshake }, 0);
            self.records += 1;
        }
        let payload = share.queued.min(max_payload);
        if payload > 0 {
            let end = put(RecordKind::Data, payload);
            share.ranges.push_back((end - payload, end));
            share.written += payload;
            share.queued -= payload;
            self.records += 1;
        }
        if share.queued == 0 && std::mem::take(&mut share.closing) {
            put(RecordKind::Close, 0);
            self.records += 1;
        }
        self.written += at - start;
        at - start
    }

    /// Whether the leg's sender gave up after its `max_retries`: the leg is dead and leaves
    /// service (no connection joins it, those on it are abandoned).
    pub fn gave_up(&self) -> bool {
        self.sender.gave_up()
    }

    /// Brings a share up to date with the leg's sender.
    pub(crate) fn sync(&self, share: &mut LegShare) {
        share.leg_gave_up = self.gave_up();
        let s = self.sender.state();
        let open = self.sender.conn() == crate::transport::tcp::sender::Conn::Established;
        share.sync(s.snd_una, s.snd_max, open);
    }
}

/// A multiplexed leg at the receiving gateway: the TCP receiver that acknowledges the peer,
/// and how far the records have been read.
pub struct LegReceiver {
    /// (sending gateway node, leg index).
    pub key: (u32, u32),
    pub receiver: TcpReceiver,
    /// The flow the leg's packets carry.
    pub flow: u32,
    read: u64,
    /// The window this gateway controls on the leg (None: the leg's `rwnd`, see `leg_window.rs`).
    pub(crate) window: Option<LegWindow>,
}

impl LegReceiver {
    pub(crate) fn new(
        key: (u32, u32),
        receiver: TcpReceiver,
        flow: u32,
        window: Option<LegWindow>,
    ) -> Self {
        LegReceiver {
            key,
            receiver,
            flow,
            read: 0,
            window,
        }
    }

    /// The records and payload bytes readable now that the receiver has more in order.
    pub(crate) fn read(&mut self, framing: &Framing) -> Vec<(Record, u64)> {
        let in_order = self.receiver.rcv_nxt();
        framing.read(self.key, &mut self.read, in_order)
    }

    /// Whether every in-order byte was read, but for a record header still arriving.
    pub fn check(&self) -> Option<String> {
        let in_order = self.receiver.rcv_nxt();
        (in_order.saturating_sub(self.read) >= RECORD_HEADER || self.read > in_order).then(|| {
            format!(
                "multiplexed leg {:?}: {} B in order but records read up to {}",
                self.key, in_order, self.read
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: RecordKind, start: u64, payload: u64) -> Record {
        Record {
            flow: 0,
            conn: 3,
            dst: 9,
            dst_agent: 11,
            kind,
            start,
            end: start + RECORD_HEADER + payload,
        }
    }

    #[test]
    fn a_payload_is_read_as_it_arrives_once_its_header_has() {
        let framing = Framing::default();
        let open = record(RecordKind::Open { handshake: true }, 0, 0);
        let data = record(RecordKind::Data, 8, 1000);
        framing.write((1, 0), open);
        framing.write((1, 0), data);
        let mut read = 0;
        assert_eq!(framing.read((1, 0), &mut read, 4), vec![]);
        assert_eq!(framing.read((1, 0), &mut read, 12), vec![(open, 0)]);
        assert_eq!(read, 8);
        assert_eq!(framing.read((1, 0), &mut read, 516), vec![(data, 500)]);
        assert_eq!(framing.read((1, 0), &mut read, 1016), vec![(data, 500)]);
        assert_eq!(
            (read, framing.read((1, 0), &mut read, 1016)),
            (1016, vec![])
        );
    }

    #[test]
    fn a_share_counts_its_own_bytes_of_the_leg() {
        let mut share = LegShare::new(0, false, (9, 11));
        share.ranges = VecDeque::from([(8, 1008), (2016, 3016)]);
        share.written = 2000;
        // Another connection's record sits in [1008, 2016).
        share.sync(500, 2500, true);
        assert_eq!((share.delivered, share.in_flight), (492, 508 + 484));
        share.sync(3016, 3016, true);
        assert_eq!((share.delivered, share.in_flight), (2000, 0));
        assert!(share.ranges.is_empty());
        let o = share.occupancy(2500);
        assert_eq!((o.delivered, o.in_flight, o.unsent), (2000, 0, 500));
    }
}
