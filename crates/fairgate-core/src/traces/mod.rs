//! Packet traces read for the trace-driven gateway study ([Vaidyanathan99, §2.5]): pcap and
//! pcapng (through `pcap-parser`), DAG ERF, NLANR TSH, the Internet Traffic Archive's ASCII
//! `.tcp` layout and fairgate's CSV (`ts,src,dst,proto,sport,dport,ip_len`), each plain or
//! gzipped. Every format is reduced to the header fields a gateway classifies on; the
//! decisions (IPv6 addresses folded, out-of-order times, what an ITA line's size means) are on
//! `docs/studies/trace_fq.md`.

mod capture;
mod ip;
mod text;

use crate::config::ScenarioError;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

const NS_PER_SEC: u64 = 1_000_000_000;

/// One packet of a trace: its arrival time in nanoseconds since the epoch (or the trace's own
/// origin, as the file gives it) and the fields a gateway classifies on. Addresses are IPv4
/// (IPv6 ones folded to 32 bits); ports are 0 for protocols without them and for fragments
/// after the first.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TracePacket {
    pub time_ns: u64,
    pub src: u32,
    pub dst: u32,
    pub proto: u8,
    pub sport: u16,
    pub dport: u16,
    /// The IP total length (IPv6: payload + 40), not the captured length.
    pub ip_len: u32,
}

/// What the reader hands each packet to: `false` stops the reading.
pub type Sink<'a> = dyn FnMut(TracePacket) -> bool + 'a;

/// What a trace held besides the packets handed on.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ReadCounts {
    /// Records that carried no IP packet (ARP, other link protocols): skipped.
    pub non_ip: u64,
}

/// The formats, with the names `format` takes.
pub const FORMATS: [&str; 6] = ["pcap", "pcapng", "erf", "tsh", "ita", "csv"];

/// Reads the trace at `path` (format by its content or, for ERF, TSH, ITA and CSV, by its
/// extension; `format` overrides), handing each IP packet to `sink` until it returns false.
pub fn read_trace(
    path: &Path,
    format: Option<&str>,
    sink: &mut Sink,
) -> Result<ReadCounts, ScenarioError> {
    let shown = path.display().to_string();
    let bad = |m: String| ScenarioError::new("trace", format!("{shown}: {m}"));
    let file = File::open(path).map_err(|e| bad(format!("cannot open it ({e})")))?;
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    if !regular {
        // A device or a pipe may never end (TSH records of /dev/zero are all non-IP).
        return Err(bad("not a regular file; expected a trace file".into()));
    }
    let mut file = BufReader::new(file);
    let gzipped = file.fill_buf().is_ok_and(|b| b.starts_with(&[0x1f, 0x8b]));
    let mut input: Box<dyn BufRead + Send> = if gzipped {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(file)))
    } else {
        Box::new(file)
    };
    let name = shown.trim_end_matches(".gz").to_ascii_lowercase();
    let format = match format {
        Some(f) => f.to_string(),
        None => detect(read_head(&mut input).map_err(bad)?, &name).ok_or_else(|| {
            bad(format!(
                "neither a pcap or pcapng file nor named .erf, .tsh, .tcp, .ita or .csv; \
                 expected one of those, or the format given as one of {}",
                FORMATS.join(", ")
            ))
        })?,
    };
    let result = match format.as_str() {
        "pcap" | "pcapng" => capture::read_pcap(input, sink),
        "erf" => capture::read_erf(input, sink),
        "tsh" => capture::read_tsh(input, sink),
        "ita" => text::read_ita(input, sink),
        "csv" => text::read_csv(input, sink),
        other => {
            return Err(ScenarioError::new(
                "format",
                format!("got {other:?}, expected one of {}", FORMATS.join(", ")),
            ))
        }
    };
    result.map_err(bad)
}

/// The first bytes of the input, without consuming them.
fn read_head(input: &mut Box<dyn BufRead + Send>) -> Result<&[u8], String> {
    input
        .fill_buf()
        .map_err(|e| format!("cannot read it ({e})"))
}

/// The format of a trace: pcap and pcapng by their magic numbers; the others by the file's
/// extension (ERF, TSH and ITA files have no magic number).
fn detect(head: &[u8], name: &str) -> Option<String> {
    let magic = head
        .get(..4)
        .map(|m| u32::from_le_bytes([m[0], m[1], m[2], m[3]]));
    let by_magic = match magic {
        Some(0xa1b2_c3d4 | 0xd4c3_b2a1 | 0xa1b2_3c4d | 0x4d3c_b2a1) => Some("pcap"),
        Some(0x0a0d_0d0a) => Some("pcapng"),
        _ => None,
    };
    let by_name = [
        (".erf", "erf"),
        (".tsh", "tsh"),
        (".tcp", "ita"),
        (".ita", "ita"),
        (".csv", "csv"),
    ]
    .into_iter()
    .find(|(ext, _)| name.ends_with(ext))
    .map(|(_, f)| f);
    by_magic.or(by_name).map(str::to_string)
}
