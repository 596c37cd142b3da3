//! Quantities with units in scenario files: durations ("10ms", or a number of seconds) and
//! rates ("10Mbps", or a number of bits per second).

use super::error::clipped;
use crate::engine::{secs, to_secs, Time};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A duration; written as seconds (`0.5`) or with a unit (`"500ms"`: ps, ns, us, ms, s, min).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Duration(pub Time);

impl Duration {
    pub fn secs(&self) -> f64 {
        to_secs(self.0)
    }
    pub fn from_secs(s: f64) -> Self {
        Duration(secs(s))
    }
}

/// A link or source rate in bits per second; written as a number or `"10Mbps"`, `"1.5 Gb/s"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Rate(pub u64);

impl Rate {
    pub fn bps(&self) -> u64 {
        self.0
    }
}

pub(crate) fn split_number(text: &str) -> Option<(f64, String)> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+')))
        .unwrap_or(text.len());
    // "1e3s" style exponents are fine; a bare unit like "s" is not.
    let (num, unit) = text.split_at(end);
    let value: f64 = num.parse().ok()?;
    Some((value, unit.trim().to_string()))
}

/// Duration units, matched exactly (case matters: "Ms" is not "ms").
const DURATION_UNITS: [(&str, f64); 9] = [
    ("ps", 1e-12),
    ("ns", 1e-9),
    ("us", 1e-6),
    ("µs", 1e-6), // the micro sign, U+00B5
    ("μs", 1e-6), // the Greek mu, U+03BC: keyboards and editors give either
    ("ms", 1e-3),
    ("s", 1.0),
    ("sec", 1.0),
    ("min", 60.0),
];

pub fn parse_duration(text: &str) -> Result<f64, String> {
    let expected = "expected a duration such as \"10ms\" or a number of seconds";
    let shown = clipped(text);
    let (value, unit) = split_number(text).ok_or_else(|| format!("got {shown:?}, {expected}"))?;
    let scale = match unit.as_str() {
        "" => 1.0,
        _ => scale_of(&DURATION_UNITS, &unit).ok_or_else(|| {
            format!(
                "got {shown:?}: unknown unit {:?}; {expected}, with one of the units {}",
                clipped(&unit),
                listed(&DURATION_UNITS)
            )
        })?,
    };
    check_duration(value * scale, &shown)
}

fn scale_of(units: &[(&str, f64)], unit: &str) -> Option<f64> {
    units.iter().find(|(u, _)| *u == unit).map(|&(_, s)| s)
}

fn listed(units: &[(&str, f64)]) -> String {
    units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

/// The longest duration a scenario may give (about 208 days): the clock counts picoseconds in
/// 64 bits, which last 1.8e7 s.
pub const MAX_DURATION_S: f64 = 1.8e7;
/// [`MAX_DURATION_S`] as the errors write it.
pub const MAX_DURATION_WORDS: &str = "1.8e7 s (about 208 days)";

fn check_duration(seconds: f64, shown: &str) -> Result<f64, String> {
    if seconds.is_nan() || seconds < 0.0 {
        return Err(format!("got {shown}, expected a duration >= 0"));
    }
    if seconds > MAX_DURATION_S {
        // also a number too large for a float (1e400s): it reads as infinite
        return Err(format!(
            "got {shown}, expected a duration below {MAX_DURATION_WORDS}"
        ));
    }
    if seconds > 0.0 && secs(seconds) == 0 {
        return Err(format!(
            "got {shown}, which rounds to 0 on the 1 ps clock; expected 0 or at least 1 ps"
        ));
    }
    Ok(seconds)
}

/// Rate units in bits per second, matched exactly: a capital B means bytes ("MB/s", "MBps"
/// are 8e6 bit/s), a lower-case b or "bit" means bits; "k" is lower case, M, G and T upper
/// case. Anything else ("mbps", "MBPS", "Kbps") is refused rather than guessed.
const RATE_UNITS: [(&str, f64); 24] = [
    ("bps", 1.0),
    ("b/s", 1.0),
    ("bit/s", 1.0),
    ("kbps", 1e3),
    ("kb/s", 1e3),
    ("kbit/s", 1e3),
    ("kbit", 1e3),
    ("Mbps", 1e6),
    ("Mb/s", 1e6),
    ("Mbit/s", 1e6),
    ("Mbit", 1e6),
    ("Gbps", 1e9),
    ("Gb/s", 1e9),
    ("Gbit/s", 1e9),
    ("Gbit", 1e9),
    ("Tbps", 1e12),
    ("B/s", 8.0),
    ("Bps", 8.0),
    ("kB/s", 8e3),
    ("kBps", 8e3),
    ("MB/s", 8e6),
    ("MBps", 8e6),
    ("GB/s", 8e9),
    ("GBps", 8e9),
];

/// The fastest rate a link or source may have: a 1-byte packet then still takes 8 ps, so
/// every transmission and every gap between packets of a source lasts at least 1 ps.
pub const MAX_RATE_BPS: f64 = 1e12;

pub fn parse_rate(text: &str) -> Result<f64, String> {
    check_rate(rate_in_bps(text)?, &clipped(text))
}

/// The bits per second `text` writes (`"10Mbps"`, `"1.5 MB/s"`, `"1e6"`), unbounded: a
/// caller with its own range checks it.
pub fn rate_in_bps(text: &str) -> Result<f64, String> {
    let expected = "expected a rate such as \"10Mbps\" or a number of bits per second";
    let shown = clipped(text);
    let (value, unit) = split_number(text).ok_or_else(|| format!("got {shown:?}, {expected}"))?;
    let scale = match unit.replace(' ', "").as_str() {
        "" => 1.0,
        joined => scale_of(&RATE_UNITS, joined).ok_or_else(|| {
            format!(
                "got {shown:?}: unknown unit {:?}; {expected}, with one of the units {} \
                 (case matters: b = bits, B = bytes)",
                clipped(&unit),
                listed(&RATE_UNITS)
            )
        })?,
    };
    Ok(value * scale)
}

fn check_rate(bps: f64, shown: &str) -> Result<f64, String> {
    if bps.is_nan() || bps < 1.0 {
        return Err(format!(
            "got {shown}, expected a positive rate of at least 1 bps"
        ));
    }
    if bps > MAX_RATE_BPS {
        // also a number too large for a float (10e1000bps): it reads as infinite
        return Err(format!(
            "got {shown}, expected a rate of at most 1 Tbps (1e12 bit/s), the fastest at which \
             every packet still takes at least 1 ps"
        ));
    }
    Ok(bps)
}

struct DurationVisitor;

impl Visitor<'_> for DurationVisitor {
    type Value = Duration;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a duration such as \"10ms\" or a number of seconds")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        parse_duration(v)
            .map(Duration::from_secs)
            .map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
        check_duration(v, &v.to_string())
            .map(Duration::from_secs)
            .map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        self.visit_f64(v as f64)
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.secs())
    }
}

struct RateVisitor;

impl Visitor<'_> for RateVisitor {
    type Value = Rate;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a rate such as \"10Mbps\" or a number of bits per second")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Rate, E> {
        parse_rate(v)
            .map(|b| Rate(b.round() as u64))
            .map_err(E::custom)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Rate, E> {
        check_rate(v, &v.to_string())
            .map(|b| Rate(b.round() as u64))
            .map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Rate, E> {
        self.visit_f64(v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Rate, E> {
        self.visit_f64(v as f64)
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RateVisitor)
    }
}

impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_below_the_clocks_resolution_is_refused_not_rounded_to_zero() {
        for text in ["1e-300", "0.4ps", "0.0000000000001"] {
            let value = format!(
                "d = {}",
                if text.ends_with("ps") {
                    format!("\"{text}\"")
                } else {
                    text.to_string()
                }
            );
            let table: toml::Table = toml::from_str(&value).unwrap();
            let err = table["d"]
                .clone()
                .try_into::<Duration>()
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("rounds to 0 on the 1 ps clock"),
                "{text}: {err}"
            );
        }
        for (text, ps) in [("0", 0), ("\"0.6ps\"", 1), ("1e-12", 1)] {
            let table: toml::Table = toml::from_str(&format!("d = {text}")).unwrap();
            assert_eq!(
                table["d"].clone().try_into::<Duration>().unwrap().0,
                ps,
                "{text}"
            );
        }
    }

    #[test]
    fn an_error_shows_a_long_text_clipped() {
        let long = format!("1{}", "x".repeat(100_000));
        for e in [parse_duration(&long), parse_rate(&long)] {
            let e = e.unwrap_err();
            assert!(e.len() < 600 && e.contains("(100001 characters)"), "{e}");
        }
        let e = parse_rate(&"9".repeat(10_000)).unwrap_err();
        assert!(e.len() < 300 && e.contains("(10000 characters)"), "{e}");
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("10ms").unwrap(), 0.01);
        assert_eq!(parse_duration("2 s").unwrap(), 2.0);
        assert_eq!(parse_duration("250us").unwrap(), 250e-6);
        assert_eq!(parse_duration("250\u{b5}s").unwrap(), 250e-6);
        assert_eq!(parse_duration("250\u{3bc}s").unwrap(), 250e-6);
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("10 parsecs").is_err());
    }

    #[test]
    fn rates_parse_with_units() {
        assert_eq!(parse_rate("10Mbps").unwrap(), 1e7);
        assert_eq!(parse_rate("1.5 Gb/s").unwrap(), 1.5e9);
        assert_eq!(parse_rate("80000").unwrap(), 8e4);
        assert!(parse_rate("0Mbps").is_err());
        assert!(parse_rate("-5Mbps").is_err());
    }

    #[test]
    fn rate_units_are_case_sensitive_and_bytes_mean_bytes() {
        assert_eq!(parse_rate("10MBps").unwrap(), 8e7);
        assert_eq!(parse_rate("10 MB/s").unwrap(), 8e7);
        assert_eq!(parse_rate("2kB/s").unwrap(), 16e3);
        assert_eq!(parse_rate("3 Mbit").unwrap(), 3e6);
        assert_eq!(parse_rate("64 kbit/s").unwrap(), 64e3);
        for ambiguous in ["10mbps", "10MBPS", "10Kbps", "10 megabits"] {
            let err = parse_rate(ambiguous).unwrap_err();
            assert!(err.contains("Mbps, Mb/s"), "{err}");
        }
    }

    #[test]
    fn rates_above_one_terabit_are_refused() {
        assert_eq!(parse_rate("1Tbps").unwrap(), 1e12);
        assert!(parse_rate("1e17").unwrap_err().contains("at most 1 Tbps"));
        assert!(parse_duration("10MS").is_err());
        // Past a float's range a number reads as infinite: too large, not negative.
        assert!(parse_rate("10e1000bps")
            .unwrap_err()
            .contains("at most 1 Tbps"));
        assert!(parse_duration("1e400s")
            .unwrap_err()
            .contains("below 1.8e7 s"));
        let spaced = parse_rate("10 Mbps extra").unwrap_err();
        assert!(spaced.contains("unknown unit \"Mbps extra\""), "{spaced}");
    }
}
