//! Text traces: the Internet Traffic Archive's `.tcp` layout (`timestamp src dst sport dport
//! bytes`, TCP only, hosts renumbered) and fairgate's CSV (`ts,src,dst,proto,sport,dport,ip_len`).

use super::ip::fold_ipv6;
use super::{ReadCounts, Sink, TracePacket, NS_PER_SEC};
use std::io::{BufRead, Read};
use std::net::{Ipv4Addr, Ipv6Addr};

const MAX_LINE: u64 = 4096;
const TCP: u8 = 6;
/// An ITA line gives the TCP data bytes; the IP length adds 20-byte IP and TCP headers.
const ITA_HEADERS: u32 = 40;
pub const CSV_HEADER: &str = "ts,src,dst,proto,sport,dport,ip_len";

/// The next line into `line` (without its end); false at the end of the input.
fn next_line(input: &mut dyn BufRead, line: &mut Vec<u8>, number: usize) -> Result<bool, String> {
    line.clear();
    let read = input
        .take(MAX_LINE + 1)
        .read_until(b'\n', line)
        .map_err(|e| format!("cannot read it ({e})"))?;
    if read as u64 > MAX_LINE {
        return Err(format!(
            "line {number} is longer than {MAX_LINE} bytes; expected a text trace"
        ));
    }
    while line.last().is_some_and(|c| *c == b'\n' || *c == b'\r') {
        line.pop();
    }
    Ok(read > 0)
}

/// What [`decimal_ns`] reads: the nanoseconds of a u64, written without an exponent.
const SECONDS: &str = "decimal seconds from 0 to 18446744073.709551615, without an exponent \
                       (such as 1411929002.000054)";

/// A decimal number of seconds (`1411929002.000054`) in nanoseconds, exactly.
fn decimal_ns(text: &str) -> Option<u64> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    if frac.len() > 9 && !frac[9..].bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits = &frac[..frac.len().min(9)];
    let secs: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let nanos: u64 = if digits.is_empty() {
        0
    } else {
        format!("{digits:0<9}").parse().ok()?
    };
    secs.checked_mul(NS_PER_SEC)?.checked_add(nanos)
}

/// An address: dotted IPv4, IPv6 (folded to 32 bits), or a host number.
fn address(text: &str) -> Option<u32> {
    if let Ok(v4) = text.parse::<Ipv4Addr>() {
        return Some(u32::from(v4));
    }
    if let Ok(v6) = text.parse::<Ipv6Addr>() {
        return Some(fold_ipv6(&v6.octets()));
    }
    text.parse().ok()
}

fn field<T>(
    parsed: Option<T>,
    number: usize,
    name: &str,
    text: &str,
    expected: &str,
) -> Result<T, String> {
    parsed.ok_or_else(|| {
        format!(
            "line {number}: `{name}`: got {:?}, expected {expected}",
            crate::config::error::clipped(text)
        )
    })
}

/// Reads the fields of each line with `parse` and hands the packets on.
fn read_lines(
    mut input: Box<dyn BufRead + Send>,
    sink: &mut Sink,
    mut parse: impl FnMut(&str, usize) -> Result<Option<TracePacket>, String>,
) -> Result<ReadCounts, String> {
    let mut line = Vec::new();
    let mut number = 0;
    while next_line(&mut input, &mut line, number + 1)? {
        number += 1;
        let text = std::str::from_utf8(&line)
            .map_err(|_| format!("line {number} is not text; expected a text trace"))?;
        if let Some(packet) = parse(text, number)? {
            if !sink(packet) {
                break;
            }
        }
    }
    Ok(ReadCounts::default())
}

/// Reads an ITA `.tcp` trace; blank lines are skipped.
pub fn read_ita(input: Box<dyn BufRead + Send>, sink: &mut Sink) -> Result<ReadCounts, String> {
    read_lines(input, sink, |text, n| {
        let cols: Vec<&str> = text.split_whitespace().collect();
        if cols.is_empty() {
            return Ok(None);
        }
        if cols.len() != 6 {
            return Err(format!(
                "line {n}: got {} columns, expected 6 (timestamp src dst sport dport bytes)",
                cols.len()
            ));
        }
        let whole = "a whole number from 0 to 65535";
        let bytes: u32 = field(cols[5].parse().ok(), n, "bytes", cols[5], "a whole number")?;
        Ok(Some(TracePacket {
            time_ns: field(decimal_ns(cols[0]), n, "timestamp", cols[0], SECONDS)?,
            src: field(cols[1].parse().ok(), n, "src", cols[1], "a host number")?,
            dst: field(cols[2].parse().ok(), n, "dst", cols[2], "a host number")?,
            proto: TCP,
            sport: field(cols[3].parse().ok(), n, "sport", cols[3], whole)?,
            dport: field(cols[4].parse().ok(), n, "dport", cols[4], whole)?,
            ip_len: bytes.saturating_add(ITA_HEADERS),
        }))
    })
}

/// Reads a CSV trace whose first line is `CSV_HEADER`.
pub fn read_csv(input: Box<dyn BufRead + Send>, sink: &mut Sink) -> Result<ReadCounts, String> {
    read_lines(input, sink, |text, n| {
        if n == 1 {
            return if text.trim() == CSV_HEADER {
                Ok(None)
            } else {
                Err(format!(
                    "line 1: got {:?}, expected the header {CSV_HEADER:?}",
                    crate::config::error::clipped(text)
                ))
            };
        }
        if text.trim().is_empty() {
            return Ok(None);
        }
        let cols: Vec<&str> = text.split(',').map(str::trim).collect();
        if cols.len() != 7 {
            return Err(format!(
                "line {n}: got {} columns, expected 7 ({CSV_HEADER})",
                cols.len()
            ));
        }
        let port = "a whole number from 0 to 65535";
        let address_of = |col: usize, name: &str| {
            field(
                address(cols[col]),
                n,
                name,
                cols[col],
                "an IPv4 or IPv6 address",
            )
        };
        Ok(Some(TracePacket {
            time_ns: field(decimal_ns(cols[0]), n, "ts", cols[0], SECONDS)?,
            src: address_of(1, "src")?,
            dst: address_of(2, "dst")?,
            proto: field(
                cols[3].parse().ok(),
                n,
                "proto",
                cols[3],
                "a whole number from 0 to 255",
            )?,
            sport: field(cols[4].parse().ok(), n, "sport", cols[4], port)?,
            dport: field(cols[5].parse().ok(), n, "dport", cols[5], port)?,
            ip_len: field(cols[6].parse().ok(), n, "ip_len", cols[6], "a whole number")?,
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_seconds_are_read_to_the_nanosecond() {
        assert_eq!(
            decimal_ns("1411929002.000054"),
            Some(1_411_929_002_000_054_000)
        );
        assert_eq!(decimal_ns("0.5"), Some(500_000_000));
        assert_eq!(decimal_ns("3"), Some(3 * NS_PER_SEC));
        assert_eq!(decimal_ns("1.0000000019"), Some(NS_PER_SEC + 1));
        for bad in ["-1", "x", "1e3", "1.2.3", "99999999999999999999"] {
            assert_eq!(decimal_ns(bad), None, "{bad}");
        }
        // The bound SECONDS states.
        assert_eq!(decimal_ns("18446744073.709551615"), Some(u64::MAX));
        assert_eq!(decimal_ns("18446744073.709551616"), None);
    }
}
