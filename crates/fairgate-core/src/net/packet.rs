//! Packets and the arena that holds them.
//!
//! Packets are plain `Copy` records kept in one arena and passed around by handle. Freed slots
//! are reused, so a run in steady state allocates nothing per packet.

use crate::engine::Time;

/// Handle of a packet in the arena.
pub type PacketId = u32;

/// What a packet carries at the transport level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum PacketKind {
    #[default]
    Data,
    Ack,
    Syn,
    SynAck,
    Fin,
    FinAck,
}

/// Header flag bits (`Packet::flags`).
pub mod flags {
    /// ECN-capable transport (RFC 3168).
    pub const ECT: u16 = 1 << 0;
    /// Congestion experienced (set by a marking queue on an ECT packet).
    pub const CE: u16 = 1 << 1;
    /// ECN echo, carried by ACKs.
    pub const ECE: u16 = 1 << 2;
    /// Congestion window reduced, set by the sender after reacting to ECE.
    pub const CWR: u16 = 1 << 3;
    /// The DECbit congestion bit (Ramakrishnan-Jain), set by a switch, echoed by the sink.
    pub const DECBIT: u16 = 1 << 4;
    /// ATM cell loss priority: 1 = may be dropped first (untagged = 0).
    pub const CLP: u16 = 1 << 5;
    /// Last cell of an AAL5 frame (end of message).
    pub const EOM: u16 = 1 << 6;
    /// The packet is a retransmission.
    pub const RETX: u16 = 1 << 7;
    /// The packet belongs to a probe pair (Packet-Pair flow control).
    pub const PAIRED: u16 = 1 << 8;
    /// A segment or ACK of a leg that multiplexes connections between two gateways.
    pub const MUX_LEG: u16 = 1 << 9;
    /// The sender's FIN, piggybacked on the last data segment of its direction (no packet of
    /// its own: the end points ignore it, a split-connection gateway retires on it).
    pub const FIN: u16 = 1 << 10;
    /// Spare bits for protocols added later.
    pub const USER0: u16 = 1 << 12;
    pub const USER1: u16 = 1 << 13;
}

/// Maximum number of SACK blocks a packet carries (RFC 2018 allows 3 with timestamps).
pub const MAX_SACK_BLOCKS: usize = 4;

/// One packet (or ATM cell). All fields are public data; queue disciplines may read any of
/// them and set the marking flags.
///
/// `repr(C)`, aligned to half a cache line: what a hop reads and writes (routing, queueing,
/// a drop, a transmission, the hint for a delivery) fills the first 32 bytes, which thus never
/// straddle two lines, and [`PacketArena::prefetch`] fetches one line, not the two or three a
/// 152-byte record spreads them over; the end-to-end fields follow, the SACK blocks last.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
pub struct Packet {
    /// Destination node.
    pub dst: u32,
    /// Flow (conversation) this packet belongs to; ACK streams are flows of their own.
    pub flow: u32,
    /// Size on the wire in bytes.
    pub size: u32,
    /// Destination agent (agents play the role of transport ports).
    pub dst_agent: u32,
    /// Time the packet entered the queue it is in now.
    pub enqueued: Time,
    /// Header flags, see [`flags`].
    pub flags: u16,
    /// Hops taken so far.
    pub hops: u16,
    /// Protocol number for 5-tuple classification (6 = TCP, 17 = UDP-like).
    pub proto: u8,
    pub kind: PacketKind,
    pub sack_len: u8,
    /// Source node and agent.
    pub src: u32,
    pub src_agent: u32,
    /// Connection within a workload that multiplexes many connections on one agent pair
    /// (0 for sources with a single connection).
    pub conn: u32,
    /// Sequence number (bytes for TCP, packets for packet-counting protocols).
    pub seq: u64,
    /// Acknowledgement number.
    pub ack: u64,
    /// Protocol-specific word (frame number for AAL5 cells, pair number for Packet-Pair, ...).
    pub aux: u64,
    /// Time the sending agent handed the packet to the network.
    pub created: Time,
    /// Timestamp echoed back by the receiver (RTT measurement).
    pub echo: Time,
    /// SACK blocks `[start, end)`; the first `sack_len` are valid.
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
}

/// Bytes at the start of a [`Packet`] that a hop reads.
const HOP_BYTES: usize = 32;
const _: () = assert!(
    std::mem::offset_of!(Packet, sack_len) < HOP_BYTES
        && std::mem::align_of::<Packet>() == HOP_BYTES
        && std::mem::size_of::<Packet>() == 160,
    "a hop reads one aligned half line; a packet takes 160 bytes"
);

impl Packet {
    pub fn has(&self, flag: u16) -> bool {
        self.flags & flag != 0
    }

    pub fn set(&mut self, flag: u16) {
        self.flags |= flag;
    }

    pub fn clear(&mut self, flag: u16) {
        self.flags &= !flag;
    }
}

/// The packet arena: a vector of slots and a free list.
#[derive(Default)]
pub struct PacketArena {
    slots: Vec<Packet>,
    live: Vec<bool>,
    free: Vec<PacketId>,
    live_count: usize,
}

impl PacketArena {
    pub fn alloc(&mut self, packet: Packet) -> PacketId {
        self.live_count += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = packet;
            self.live[id as usize] = true;
            id
        } else {
            self.slots.push(packet);
            self.live.push(true);
            (self.slots.len() - 1) as PacketId
        }
    }

    pub fn free(&mut self, id: PacketId) {
        debug_assert!(self.live[id as usize], "double free of packet {id}");
        self.live[id as usize] = false;
        self.live_count -= 1;
        self.free.push(id);
    }

    pub fn get(&self, id: PacketId) -> &Packet {
        &self.slots[id as usize]
    }

    /// Hints the cache that packet `id` is about to be read by a hop: the line holding its
    /// routing, queueing and drop fields.
    pub fn prefetch(&self, id: PacketId) {
        if let Some(p) = self.slots.get(id as usize) {
            crate::engine::prefetch::prefetch(p);
        }
    }

    /// Hints every line of packet `id`, for a delivery, which hands the agent a copy.
    pub fn prefetch_whole(&self, id: PacketId) {
        if let Some(p) = self.slots.get(id as usize) {
            crate::engine::prefetch::prefetch_lines(p, usize::MAX);
        }
    }

    /// Where packet `id` lives in memory (0 for no such slot), for benchmarks that replay a
    /// run's memory accesses.
    pub fn address(&self, id: PacketId) -> usize {
        self.slots
            .get(id as usize)
            .map_or(0, |p| p as *const Packet as usize)
    }

    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.slots[id as usize]
    }

    /// Number of packets currently allocated (in queues, on links or in service).
    pub fn live(&self) -> usize {
        self.live_count
    }

    /// Slots ever allocated: the arena's high-water mark.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Every live packet, for conservation checks.
    pub fn iter_live(&self) -> impl Iterator<Item = &Packet> {
        self.slots
            .iter()
            .zip(&self.live)
            .filter_map(|(p, live)| live.then_some(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused() {
        let mut arena = PacketArena::default();
        let a = arena.alloc(Packet {
            size: 10,
            ..Default::default()
        });
        let b = arena.alloc(Packet {
            size: 20,
            ..Default::default()
        });
        arena.free(a);
        let c = arena.alloc(Packet {
            size: 30,
            ..Default::default()
        });
        assert_eq!(c, a);
        assert_eq!(arena.get(b).size, 20);
        assert_eq!(arena.get(c).size, 30);
        assert_eq!(arena.live(), 2);
        assert_eq!(arena.capacity(), 2);
    }
}
