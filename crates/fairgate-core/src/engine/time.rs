//! Simulation time: an integer count of picoseconds.
//!
//! Integer time makes runs bit-reproducible and keeps ATM cell times at 155 Mb/s and packet
//! times at 100 Gb/s exact enough (a picosecond is 1/2,730 of a 155 Mb/s cell time).

/// Simulation time in picoseconds.
pub type Time = u64;

pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// Converts seconds to picoseconds, rounding to the nearest picosecond.
pub fn secs(s: f64) -> Time {
    (s * PS_PER_SEC as f64).round() as Time
}

/// Converts picoseconds to seconds.
pub fn to_secs(t: Time) -> f64 {
    t as f64 / PS_PER_SEC as f64
}

/// Serialisation time of `bytes` on a link of `rate_bps`, rounded to the nearest picosecond.
pub fn tx_time(bytes: u32, rate_bps: u64) -> Time {
    let bits = bytes as u64 * 8;
    match bits
        .checked_mul(PS_PER_SEC)
        .and_then(|scaled| scaled.checked_add(rate_bps / 2))
    {
        Some(scaled) => scaled / rate_bps,
        None => {
            let scaled = bits as u128 * PS_PER_SEC as u128 + rate_bps as u128 / 2;
            (scaled / rate_bps as u128) as Time
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_time_is_exact() {
        assert_eq!(tx_time(1000, 10_000_000), 800_000_000);
        assert_eq!(tx_time(53, 155_520_000), 2_726_337);
        assert_eq!(tx_time(1500, 100_000_000_000), 120_000);
        assert_eq!(tx_time(u32::MAX, 8_000), 4_294_967_295_000_000_000);
    }

    #[test]
    fn seconds_round_trip() {
        assert_eq!(secs(1.5), 1_500_000_000_000);
        assert_eq!(to_secs(secs(0.25)), 0.25);
    }
}
