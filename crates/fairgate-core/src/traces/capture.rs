//! Binary capture formats: pcap and pcapng (through `pcap-parser`), DAG ERF and NLANR TSH.

use super::ip::{ethernet, hdlc, linux_cooked, parse_ip};
use super::{ReadCounts, Sink, TracePacket, NS_PER_SEC};
use pcap_parser::pcapng::Block;
use pcap_parser::{Linktype, PcapBlockOwned, PcapError};
use std::io::{BufRead, Read};

const TRUNCATED: &str = "it ends inside a record (a truncated file?)";

/// The largest record a capture may hold (a pcap-parser buffer grows to it).
const MAX_RECORD: usize = 16 << 20;

/// The IP packet of a frame of `linktype`, if it holds one; an unsupported link type is an
/// error naming it.
fn ip_of(linktype: Linktype, frame: &[u8]) -> Result<Option<&[u8]>, String> {
    Ok(match linktype {
        Linktype::ETHERNET => ethernet(frame),
        Linktype::RAW | Linktype(12) | Linktype(14) | Linktype::IPV4 | Linktype::IPV6 => {
            Some(frame)
        }
        Linktype::LINUX_SLL => linux_cooked(frame),
        Linktype(9) | Linktype(50) | Linktype(104) => hdlc(frame),
        Linktype(other) => {
            return Err(format!(
                "link type {other} is not read; expected Ethernet (1), raw IP (101, 228, 229), \
                 Linux cooked (113) or PPP/HDLC (9, 50, 104)"
            ))
        }
    })
}

/// Hands the frame's IP packet at `time_ns` to `sink`; false when the sink stops.
fn deliver(time_ns: u64, ip: Option<&[u8]>, counts: &mut ReadCounts, sink: &mut Sink) -> bool {
    match ip.and_then(parse_ip) {
        Some(packet) => sink(TracePacket { time_ns, ..packet }),
        None => {
            counts.non_ip += 1;
            true
        }
    }
}

/// An interface of a pcapng section: its link type and time stamp units per second.
struct Interface {
    linktype: Linktype,
    units_per_sec: u64,
    offset_s: i64,
}

/// What reading one block of a capture gave.
enum Step {
    Block(usize, bool),
    End,
    Incomplete,
    Truncated,
    TooSmall,
    Damaged(String),
}

/// Reads a pcap or pcapng file.
pub fn read_pcap(input: Box<dyn BufRead + Send>, sink: &mut Sink) -> Result<ReadCounts, String> {
    let mut reader = pcap_parser::create_reader(1 << 16, input).map_err(|e| {
        let why = match e {
            PcapError::HeaderNotRecognized => "its first bytes are neither header".to_string(),
            other => format!("{other:?}"),
        };
        format!(
            "not a pcap or pcapng file ({why}); expected one, or the trace's format given \
                 (erf, tsh, ita, csv)"
        )
    })?;
    let mut counts = ReadCounts::default();
    let mut legacy: Option<(Linktype, u64)> = None;
    let mut interfaces: Vec<Interface> = Vec::new();
    let mut capacity = 1 << 16;
    loop {
        let step = match reader.next() {
            Ok((used, block)) => Step::Block(
                used,
                on_block(block, &mut legacy, &mut interfaces, &mut counts, sink)?,
            ),
            Err(PcapError::Eof) => Step::End,
            Err(PcapError::Incomplete(_)) => Step::Incomplete,
            Err(PcapError::UnexpectedEof) => Step::Truncated,
            Err(PcapError::BufferTooSmall) => Step::TooSmall,
            Err(e) => Step::Damaged(format!("{e:?}")),
        };
        match step {
            Step::Block(used, keep_going) => {
                reader.consume(used);
                if !keep_going {
                    break;
                }
            }
            Step::End => break,
            Step::Truncated => return Err(TRUNCATED.into()),
            Step::Incomplete if reader.reader_exhausted() => return Err(TRUNCATED.into()),
            Step::Incomplete => reader
                .refill()
                .map_err(|e| format!("cannot read it ({e:?})"))?,
            Step::TooSmall if capacity < MAX_RECORD => {
                capacity *= 2;
                reader.grow(capacity);
            }
            Step::TooSmall => return Err(format!("a record longer than {MAX_RECORD} bytes")),
            Step::Damaged(e) => {
                return Err(format!("damaged after byte {} ({e})", reader.consumed()))
            }
        }
    }
    Ok(counts)
}

fn on_block(
    block: PcapBlockOwned,
    legacy: &mut Option<(Linktype, u64)>,
    interfaces: &mut Vec<Interface>,
    counts: &mut ReadCounts,
    sink: &mut Sink,
) -> Result<bool, String> {
    match block {
        PcapBlockOwned::LegacyHeader(h) => {
            let units = if h.is_nanosecond_precision() {
                NS_PER_SEC
            } else {
                1_000_000
            };
            *legacy = Some((h.network, units));
        }
        PcapBlockOwned::Legacy(b) => {
            let (linktype, units) = legacy.ok_or("a record before the file header")?;
            let time =
                u64::from(b.ts_sec) * NS_PER_SEC + u64::from(b.ts_usec) * (NS_PER_SEC / units);
            return Ok(deliver(time, ip_of(linktype, b.data)?, counts, sink));
        }
        PcapBlockOwned::NG(Block::SectionHeader(_)) => interfaces.clear(),
        PcapBlockOwned::NG(Block::InterfaceDescription(i)) => interfaces.push(Interface {
            linktype: i.linktype,
            units_per_sec: i
                .ts_resolution()
                .filter(|&u| u > 0)
                .ok_or("an interface with an unreadable time stamp resolution")?,
            offset_s: i.if_tsoffset,
        }),
        PcapBlockOwned::NG(Block::EnhancedPacket(p)) => {
            let i = interfaces.get(p.if_id as usize).ok_or_else(|| {
                format!("a packet of interface {}, which was not described", p.if_id)
            })?;
            let ticks = (u64::from(p.ts_high) << 32) | u64::from(p.ts_low);
            let secs = (ticks / i.units_per_sec).saturating_add_signed(i.offset_s);
            let frac = u128::from(ticks % i.units_per_sec) * u128::from(NS_PER_SEC)
                / u128::from(i.units_per_sec);
            let time = secs.saturating_mul(NS_PER_SEC).saturating_add(frac as u64);
            let data = p.data.get(..p.caplen as usize).unwrap_or(p.data);
            return Ok(deliver(time, ip_of(i.linktype, data)?, counts, sink));
        }
        PcapBlockOwned::NG(Block::SimplePacket(_)) => {
            return Err(
                "a simple packet block, which has no time stamp; expected enhanced packet blocks"
                    .into(),
            )
        }
        PcapBlockOwned::NG(_) => {}
    }
    Ok(true)
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` at a clean end before the first byte.
fn record(input: &mut dyn Read, buf: &mut [u8]) -> Result<bool, String> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(TRUNCATED.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read it ({e})")),
        }
    }
    Ok(true)
}

const ERF_HDLC_POS: u8 = 1;
const ERF_ETH: u8 = 2;
const ERF_IPV4: u8 = 22;
const ERF_IPV6: u8 = 23;
const ERF_EXTENSION: u8 = 0x80;

/// Reads DAG ERF records: a 16-byte header (64-bit little-endian fixed-point time, type,
/// flags, record length, loss counter, wire length), extension headers, then the frame.
pub fn read_erf(mut input: Box<dyn BufRead + Send>, sink: &mut Sink) -> Result<ReadCounts, String> {
    let mut counts = ReadCounts::default();
    let mut header = [0u8; 16];
    let mut body = Vec::new();
    while record(&mut input, &mut header)? {
        let fixed = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
        let time = (fixed >> 32) * NS_PER_SEC + (((fixed & 0xffff_ffff) * NS_PER_SEC) >> 32);
        let rlen = usize::from(u16::from_be_bytes([header[10], header[11]]));
        if rlen < 16 {
            return Err(format!(
                "an ERF record of length {rlen}; expected at least 16"
            ));
        }
        body.resize(rlen - 16, 0);
        record(&mut input, &mut body)?;
        let frame = skip_extensions(header[8], &body)?;
        let ip = match header[8] & !ERF_EXTENSION {
            ERF_ETH => frame.get(2..).and_then(ethernet),
            ERF_HDLC_POS => hdlc(frame),
            ERF_IPV4 | ERF_IPV6 => Some(frame),
            other => {
                return Err(format!(
                    "ERF record type {other} is not read; expected Ethernet (2), HDLC/POS (1) \
                     or IP (22, 23)"
                ))
            }
        };
        if !deliver(time, ip, &mut counts, sink) {
            break;
        }
    }
    Ok(counts)
}

/// The record's body after its 8-byte extension headers (each says whether another follows).
fn skip_extensions(kind: u8, body: &[u8]) -> Result<&[u8], String> {
    let mut at = 0;
    let mut more = kind & ERF_EXTENSION != 0;
    while more {
        let ext = body
            .get(at..at + 8)
            .ok_or("an ERF extension header past its record")?;
        more = ext[0] & 0x80 != 0;
        at += 8;
    }
    Ok(&body[at..])
}

/// Reads NLANR TSH records of 44 bytes: seconds (32 bits), interface (8), microseconds (24),
/// the 20-byte IPv4 header and the first 16 bytes of the transport header.
pub fn read_tsh(mut input: Box<dyn BufRead + Send>, sink: &mut Sink) -> Result<ReadCounts, String> {
    let mut counts = ReadCounts::default();
    let mut rec = [0u8; 44];
    while record(&mut input, &mut rec)? {
        let secs = u64::from(u32::from_be_bytes(rec[..4].try_into().expect("4 bytes")));
        let micros = u64::from(u32::from_be_bytes([0, rec[5], rec[6], rec[7]]));
        let time = secs * NS_PER_SEC + micros * 1_000;
        if !deliver(time, Some(&rec[8..]), &mut counts, sink) {
            break;
        }
    }
    Ok(counts)
}
