//! The IP and transport header fields of one captured packet, and the link layers in front of
//! them (Ethernet with VLAN tags, Linux cooked capture, PPP/HDLC).

use super::TracePacket;

const TCP: u8 = 6;
const UDP: u8 = 17;

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// An IPv6 address as 32 bits: the XOR of its four words (`docs/studies/trace_fq.md`).
pub fn fold_ipv6(addr: &[u8]) -> u32 {
    (0..4).fold(0, |acc, w| acc ^ be32(addr, 4 * w))
}

/// The header fields of the IP packet starting at `b` (at time 0); `None` when it is not IPv4
/// or IPv6 or its fixed header was not captured. Ports are read when captured, for TCP and UDP
/// and only in the first fragment.
pub fn parse_ip(b: &[u8]) -> Option<TracePacket> {
    match b.first()? >> 4 {
        4 if b.len() >= 20 => {
            let header = usize::from(b[0] & 0x0f) * 4;
            let first_fragment = be16(b, 6) & 0x1fff == 0;
            let mut f = TracePacket {
                src: be32(b, 12),
                dst: be32(b, 16),
                proto: b[9],
                ip_len: u32::from(be16(b, 2)),
                ..TracePacket::default()
            };
            if first_fragment && header >= 20 {
                read_ports(&mut f, b, header);
            }
            Some(f)
        }
        6 if b.len() >= 40 => {
            let mut f = TracePacket {
                src: fold_ipv6(&b[8..24]),
                dst: fold_ipv6(&b[24..40]),
                proto: b[6],
                ip_len: u32::from(be16(b, 4)) + 40,
                ..TracePacket::default()
            };
            read_ports(&mut f, b, 40);
            Some(f)
        }
        _ => None,
    }
}

fn read_ports(f: &mut TracePacket, b: &[u8], at: usize) {
    if (f.proto == TCP || f.proto == UDP) && b.len() >= at + 4 {
        f.sport = be16(b, at);
        f.dport = be16(b, at + 2);
    }
}

/// The IP packet inside an Ethernet frame (after any 802.1Q or 802.1ad tags), if it holds one.
pub fn ethernet(frame: &[u8]) -> Option<&[u8]> {
    let mut at = 12;
    loop {
        let ethertype = be16(frame.get(..at + 2)?, at);
        match ethertype {
            0x8100 | 0x88a8 | 0x9100 => at += 4,
            0x0800 | 0x86dd => return frame.get(at + 2..),
            _ => return None,
        }
    }
}

/// The IP packet of a Linux cooked capture (SLL): a 16-byte header with the protocol last.
pub fn linux_cooked(frame: &[u8]) -> Option<&[u8]> {
    match be16(frame.get(..16)?, 14) {
        0x0800 | 0x86dd => frame.get(16..),
        _ => None,
    }
}

/// The IP packet of a PPP-in-HDLC (or Cisco HDLC) frame: a 4-byte header with the protocol
/// last (0x0021 or 0x0800 for IPv4, 0x0057 or 0x86dd for IPv6).
pub fn hdlc(frame: &[u8]) -> Option<&[u8]> {
    match be16(frame.get(..4)?, 2) {
        0x0021 | 0x0800 | 0x0057 | 0x86dd => frame.get(4..),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn ipv4_udp(src: u32, dst: u32, sport: u16, dport: u16, len: u16) -> Vec<u8> {
        let mut b = vec![0x45, 0, 0, 0, 0, 0, 0, 0, 64, UDP, 0, 0];
        b[2..4].copy_from_slice(&len.to_be_bytes());
        b.extend(src.to_be_bytes());
        b.extend(dst.to_be_bytes());
        b.extend(sport.to_be_bytes());
        b.extend(dport.to_be_bytes());
        b
    }

    #[test]
    fn ipv4_fields_ports_only_in_the_first_fragment() {
        let b = ipv4_udp(0x0a00_0001, 0x0a00_0002, 53, 4000, 120);
        let f = parse_ip(&b).unwrap();
        assert_eq!(
            (f.src, f.dst, f.proto, f.sport, f.dport, f.ip_len),
            (0x0a00_0001, 0x0a00_0002, UDP, 53, 4000, 120)
        );
        let mut later = b.clone();
        later[7] = 10; // fragment offset 10
        assert_eq!(parse_ip(&later).unwrap().sport, 0);
        assert_eq!(parse_ip(&b[..20]).unwrap().sport, 0, "ports not captured");
        assert!(parse_ip(&b[..19]).is_none() && parse_ip(&[0x60; 39]).is_none());
    }

    #[test]
    fn ipv6_addresses_fold_to_32_bits_and_link_layers_are_stripped() {
        let mut b = vec![0x60, 0, 0, 0, 0, 20, TCP, 64];
        b.extend([0u8; 12].iter().chain(&1u32.to_be_bytes()));
        b.extend([0u8; 12].iter().chain(&2u32.to_be_bytes()));
        b.extend([0, 80, 0x1f, 0x90]);
        let f = parse_ip(&b).unwrap();
        assert_eq!(
            (f.src, f.dst, f.sport, f.dport, f.ip_len),
            (1, 2, 80, 8080, 60)
        );
        let mut eth = vec![0u8; 12];
        eth.extend([0x81, 0x00, 0, 5, 0x86, 0xdd]);
        eth.extend(&b);
        assert_eq!(ethernet(&eth), Some(&b[..]));
        assert_eq!(ethernet(&[0u8; 14]), None, "ethertype 0 is not IP");
        assert_eq!(hdlc(&[0xff, 0x03, 0x00, 0x21, 0x45]), Some(&[0x45][..]));
    }
}
