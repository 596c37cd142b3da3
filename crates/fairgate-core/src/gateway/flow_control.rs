//! Buffer flow control at a PEP [Byun07, eq. 2.1, §2.3, §6.1; after Karaliopoulos et al.]: an
//! AQM mark at the receive queue does not drop the packet; it shrinks the connection's PEP
//! buffer limit B (B × decr), and every unmarked arrival grows it again by incr × buffer, up
//! to the buffer. The window advertised upstream is min(B - bytes held, MaxRcvWind).
//!
//! Decisions (long form on `docs/models/buffer_flow_control.md`):
//! - The mark is carried from the receive queue to the PEP as CE on an ECT segment (the
//!   discipline at the receive queue marks with `ecn = true`); the gateway consumes it, so
//!   the source never sees an ECN echo.
//! - The freeze follows a decrement: no increment within `freeze` of the last decrement
//!   (the source's "freeze time applies to each increment", measured from the reaction).
//! - B starts at the buffer and never goes below 0; bytes held above B close the window.

use super::config::FlowControlSpec;
use crate::engine::Time;

#[derive(Clone, Debug)]
pub struct BufferFlowControl {
    buffer: f64,
    max_window: u64,
    decr: f64,
    incr_bytes: f64,
    freeze: Time,
    limit: f64,
    frozen_until: Time,
    marks: u64,
}

impl BufferFlowControl {
    pub fn new(spec: &FlowControlSpec) -> Self {
        let buffer = spec.buffer as f64;
        BufferFlowControl {
            buffer,
            max_window: spec.max_window,
            decr: spec.decr(),
            incr_bytes: spec.incr * buffer,
            freeze: spec.freeze.0,
            limit: buffer,
            frozen_until: 0,
            marks: 0,
        }
    }

    /// One data arrival at the PEP, `marked` by the receive queue or not.
    pub fn on_arrival(&mut self, marked: bool, now: Time) {
        if marked {
            self.marks += 1;
            self.limit *= self.decr;
            self.frozen_until = now.saturating_add(self.freeze);
        } else if now >= self.frozen_until {
            self.limit = (self.limit + self.incr_bytes).min(self.buffer);
        }
    }

    /// The window for `held` bytes in the PEP buffer.
    pub fn window(&self, held: u64) -> u64 {
        let free = (self.limit - held as f64).max(0.0) as u64;
        free.min(self.max_window)
    }

    /// The current PEP buffer limit B, bytes.
    pub fn limit(&self) -> f64 {
        self.limit
    }

    pub fn marks(&self) -> u64 {
        self.marks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;

    fn fc(decr: f64) -> BufferFlowControl {
        let spec: FlowControlSpec = toml::from_str(&format!("decr = {decr}")).unwrap();
        BufferFlowControl::new(&spec)
    }

    #[test]
    fn marks_shrink_the_limit_and_increments_wait_out_the_freeze() {
        let mut f = fc(0.9);
        assert_eq!(f.window(0), 16_000);
        f.on_arrival(true, secs(1.0));
        assert!((f.limit() - 562_500.0).abs() < 1e-6);
        f.on_arrival(false, secs(1.1));
        assert!((f.limit() - 562_500.0).abs() < 1e-6, "frozen for 200 ms");
        f.on_arrival(false, secs(1.2));
        assert!((f.limit() - 568_750.0).abs() < 1e-6, "+1% of 625 KB");
        assert_eq!(f.window(560_000), 8_750);
        assert_eq!(f.window(600_000), 0);
    }

    #[test]
    fn the_window_stays_at_max_rcv_wind_until_35_consecutive_marks() {
        // [Byun07, §6.1]: 625 KB per user, decr 0.9: B/B_max must fall below 16,000 / 625,000.
        let mut f = fc(0.9);
        let mut marks = 0;
        while f.window(0) >= 16_000 {
            f.on_arrival(true, 0);
            marks += 1;
        }
        assert_eq!(marks, 35);
        assert_eq!(f.marks(), 35);
    }
}
