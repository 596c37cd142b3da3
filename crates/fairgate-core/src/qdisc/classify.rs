//! Flow classification shared by every per-flow component (schedulers, per-flow AQMs,
//! filters, trace tools).
//!
//! Addresses are node ids (or IPv4 addresses in trace replay); "ports" are agent ids. \[Keshav91]
//! allocates per conversation (source-destination pair, with ACKs a conversation of their
//! own since they travel the other way); \[Vaidyanathan99] studies 5-tuple, address-pair, source,
//! destination and classful network-prefix aggregation (its Table 2.3).
//!
//! Decisions:
//! - `conversation` is the ordered (src, dst) address pair, which makes the ACK stream of a
//!   connection a separate conversation, as \[Keshav91] states.
//! - `address_pair` is unordered, so both directions of a connection share a class.
//! - `network` keeps the classful prefix of each address (class A /8, B /16, C /24) when the
//!   address is an IPv4 address; node ids below 2^24 are their own network.
//! - Hashing uses a keyed 64-bit mix so a perturbation only changes the salt.

use crate::net::Packet;
use serde::{Deserialize, Serialize};

/// What makes two packets the same flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowKey {
    /// The simulator's own flow id (exact, never collides).
    #[default]
    Flow,
    /// Source and destination address and port, and protocol.
    FiveTuple,
    /// Ordered source and destination addresses (Keshav's conversation).
    Conversation,
    /// Unordered address pair.
    AddressPair,
    Source,
    Destination,
    /// Classful network prefix of source and destination.
    Network,
    /// The simulator's flow id and the connection within it: each connection a web or HTTP
    /// workload multiplexes on one flow is a flow of its own (a 5-tuple per TCP connection).
    Connection,
}

pub fn classful(addr: u32) -> u32 {
    if addr < 1 << 24 {
        return addr;
    }
    match addr >> 24 {
        0..=127 => addr & 0xff00_0000,
        128..=191 => addr & 0xffff_0000,
        _ => addr & 0xffff_ff00,
    }
}

impl FlowKey {
    /// A 64-bit class identifier (exact, before hashing).
    pub fn id(&self, p: &Packet) -> u64 {
        let pair = |a: u32, b: u32| (a as u64) << 32 | b as u64;
        match self {
            FlowKey::Flow => p.flow as u64,
            FlowKey::FiveTuple => {
                let ports =
                    (p.src_agent as u64) << 24 ^ p.dst_agent as u64 ^ (p.proto as u64) << 56;
                pair(p.src, p.dst) ^ mix(ports, 0x5eed)
            }
            FlowKey::Conversation => pair(p.src, p.dst),
            FlowKey::AddressPair => pair(p.src.min(p.dst), p.src.max(p.dst)),
            FlowKey::Source => p.src as u64,
            FlowKey::Destination => p.dst as u64,
            FlowKey::Network => pair(classful(p.src), classful(p.dst)),
            FlowKey::Connection => pair(p.flow, p.conn),
        }
    }

    /// The class hashed into `buckets` bins with `salt` (change the salt to perturb).
    pub fn bucket(&self, p: &Packet, salt: u64, buckets: usize) -> usize {
        (mix(self.id(p), salt) % buckets as u64) as usize
    }
}

/// A keyed 64-bit mixer (SplitMix64 finaliser over key ^ salt).
pub fn mix(key: u64, salt: u64) -> u64 {
    let mut z = key ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(src: u32, dst: u32, sa: u32, da: u32) -> Packet {
        Packet {
            src,
            dst,
            src_agent: sa,
            dst_agent: da,
            proto: 6,
            ..Default::default()
        }
    }

    #[test]
    fn conversations_are_directional_and_pairs_are_not() {
        let data = pkt(1, 2, 10, 11);
        let ack = pkt(2, 1, 11, 10);
        assert_ne!(
            FlowKey::Conversation.id(&data),
            FlowKey::Conversation.id(&ack)
        );
        assert_eq!(
            FlowKey::AddressPair.id(&data),
            FlowKey::AddressPair.id(&ack)
        );
    }

    #[test]
    fn five_tuple_separates_ports() {
        let a = pkt(1, 2, 10, 11);
        let b = pkt(1, 2, 12, 11);
        assert_ne!(FlowKey::FiveTuple.id(&a), FlowKey::FiveTuple.id(&b));
        assert_eq!(FlowKey::Conversation.id(&a), FlowKey::Conversation.id(&b));
    }

    #[test]
    fn connections_of_one_flow_are_separate() {
        let mut a = pkt(1, 2, 3, 4);
        let mut b = pkt(1, 2, 3, 4);
        a.conn = 1;
        b.conn = 2;
        assert_ne!(FlowKey::Connection.id(&a), FlowKey::Connection.id(&b));
        assert_eq!(FlowKey::Flow.id(&a), FlowKey::Flow.id(&b));
    }

    #[test]
    fn classful_prefixes() {
        assert_eq!(classful(0x0a01_0203), 0x0a00_0000);
        assert_eq!(classful(0x8001_0203), 0x8001_0000);
        assert_eq!(classful(0xc001_0203), 0xc001_0200);
        let a = pkt(0xc001_0203, 0x0a00_0001, 1, 2);
        let b = pkt(0xc001_0204, 0x0a07_0001, 3, 4);
        assert_eq!(FlowKey::Network.id(&a), FlowKey::Network.id(&b));
    }

    #[test]
    fn salt_perturbs_buckets() {
        let moved = (0..64u32)
            .filter(|&i| {
                let p = pkt(i, 99, 1, 2);
                FlowKey::Conversation.bucket(&p, 1, 16) != FlowKey::Conversation.bucket(&p, 2, 16)
            })
            .count();
        assert!(moved > 32, "{moved}");
    }
}
