//! GFR virtual circuits by name and the frame-based GCRA that tags frames beyond MCR.
//!
//! A VC [Goyal98, §1, §4] carries several TCP connections between a pair of local switches and
//! holds a minimum cell rate (MCR, cells/s) and an optional DFBA scaling Z. The F-GCRA of the
//! ATM Forum GFR definition decides conformance per frame at its first cell: a frame that
//! arrives earlier than its theoretical arrival time minus the tolerance is tagged (CLP = 1)
//! whole. Decisions (docs/models/gfr.md):
//! - The edge segments a frame at once, so a conforming frame advances the theoretical arrival
//!   time by its whole length: TAT = max(now, TAT) + cells / MCR; a tagged frame leaves it.
//! - The tolerance is given in cells at MCR (`tolerance_cells`, default 64: two 1500-byte
//!   frames); tagging is off unless asked for (the paper describes none).

use crate::engine::{secs, Time};
use serde::{Deserialize, Serialize};

/// `{ name = "vc1", mcr = 20000, tcps = 20, z = 0.9 }`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VcConfig {
    pub name: String,
    /// Minimum cell rate, cells/s.
    pub mcr: f64,
    /// TCP connections multiplexed onto the VC.
    pub tcps: u32,
    /// DFBA's Z_i for this VC (default: the buffer's Z rule).
    #[serde(default)]
    pub z: Option<f64>,
}

/// `tagging = { tolerance_cells = 64 }`: F-GCRA tagging at the ingress edge.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct TaggingConfig {
    pub tolerance_cells: f64,
}

impl Default for TaggingConfig {
    fn default() -> Self {
        TaggingConfig {
            tolerance_cells: 64.0,
        }
    }
}

/// The F-GCRA state of one VC.
#[derive(Clone, Copy, Debug)]
pub struct FGcra {
    /// Picoseconds per cell at MCR.
    increment: f64,
    tolerance: f64,
    tat: f64,
}

impl FGcra {
    pub fn new(mcr: f64, tolerance_cells: f64) -> Self {
        let increment = secs(1.0) as f64 / mcr;
        FGcra {
            increment,
            tolerance: tolerance_cells * increment,
            tat: 0.0,
        }
    }

    /// Whether a frame of `cells` arriving at `now` is tagged (CLP = 1).
    pub fn tag(&mut self, now: Time, cells: u32) -> bool {
        let now = now as f64;
        if now < self.tat - self.tolerance {
            return true;
        }
        self.tat = self.tat.max(now) + cells as f64 * self.increment;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_beyond_mcr_and_tolerance_are_tagged() {
        // MCR 1000 cells/s: one cell per ms; tolerance 10 cells = 10 ms.
        let mut g = FGcra::new(1000.0, 10.0);
        let ms = secs(0.001);
        // A 32-cell frame at t = 0 conforms and books 32 ms.
        assert!(!g.tag(0, 32));
        // At 21 ms, TAT - tolerance = 22 ms: too early, tagged; TAT unchanged.
        assert!(g.tag(21 * ms, 32));
        // At 22 ms it conforms again.
        assert!(!g.tag(22 * ms, 32));
        // After a long idle period the TAT restarts from now.
        assert!(!g.tag(1000 * ms, 1));
        assert!(!g.tag(1000 * ms, 1));
    }
}
