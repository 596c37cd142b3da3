//! Fair Buffer Allocation (FBA): like Selective Drop, with a bar that falls as the buffer
//! fills: refuse a new frame of VC i when X > R and X_i * N_a / X > Z * (K - R) / (X - R).
//!
//! Source: \[Goyal98], buffer management schemes (MA-ST, dynamic,
//! deterministic). Paper: J. Heinanen, K. Kilkki,
//! "A fair buffer allocation scheme", unpublished manuscript, 1995.
//!
//! Decisions: R = `threshold` * K with `threshold` = 0.5 and Z = 0.8 (not given in the text);
//! N_a counts VCs with at least one cell queued, before the arrival; CLP is ignored; frames and
//! K as in `frame_fifo.rs` (K = 25,000 cells by default).

use super::frame_fifo::{frame_qdisc, FrameArrival, FrameFifo, FramePolicy, Frames};
use super::ppd::PpdConfig;
use super::selective_drop::{load_ratio, SelectiveDropConfig};
use crate::config::ScenarioError;
use crate::engine::Rng;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::{Qdisc, QdiscConfig, QdiscEnv};
use serde::{Deserialize, Serialize};

/// `queue = { kind = "fba", limit = 25000, threshold = 0.5, z = 0.8 }`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FbaConfig {
    pub limit: u64,
    /// R as a fraction of K.
    pub threshold: f64,
    pub z: f64,
    pub vc: FlowKey,
    pub frames: Frames,
    pub keep_eom: bool,
}

impl Default for FbaConfig {
    fn default() -> Self {
        FbaConfig {
            limit: PpdConfig::default().limit,
            threshold: 0.5,
            z: 0.8,
            vc: FlowKey::Flow,
            frames: Frames::Packets,
            keep_eom: false,
        }
    }
}

impl FbaConfig {
    fn as_selective_drop(&self) -> SelectiveDropConfig {
        SelectiveDropConfig {
            limit: self.limit,
            threshold: self.threshold,
            z: self.z,
            vc: self.vc,
            frames: self.frames,
            keep_eom: self.keep_eom,
        }
    }
}

impl QdiscConfig for FbaConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.as_selective_drop().check(path)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        let policy = FbaPolicy {
            capacity: self.limit as f64,
            threshold_cells: self.threshold * self.limit as f64,
            z: self.z,
        };
        let settings = self.as_selective_drop().settings();
        Box::new(Fba(FrameFifo::new(settings, policy)))
    }
}

pub struct FbaPolicy {
    pub capacity: f64,
    pub threshold_cells: f64,
    pub z: f64,
}

impl FbaPolicy {
    /// Z * (K - R) / (X - R), for X > R.
    pub fn bar(&self, total: u64) -> f64 {
        self.z * (self.capacity - self.threshold_cells) / (total as f64 - self.threshold_cells)
    }
}

impl FramePolicy for FbaPolicy {
    fn accept(&mut self, frame: &FrameArrival, _rng: &mut Rng) -> bool {
        let above = frame.total as f64 > self.threshold_cells;
        !(above && load_ratio(frame) > self.bar(frame.total))
    }
    fn name(&self) -> &'static str {
        "fba"
    }
}

pub struct Fba(pub FrameFifo<FbaPolicy>);
frame_qdisc!(Fba, "fba");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng;

    fn arrival(total: u64, vc_cells: u64, active_vcs: u64) -> FrameArrival {
        FrameArrival {
            vc: 0,
            clp: false,
            total,
            vc_cells,
            active_vcs,
            capacity: 100,
        }
    }

    #[test]
    fn the_bar_falls_as_the_buffer_fills() {
        // K = 100, R = 50, Z = 0.8: at X = 60 the bar is 0.8 * 50 / 10 = 4; at X = 90 it
        // is 0.8 * 50 / 40 = 1.
        let mut p = FbaPolicy {
            capacity: 100.0,
            threshold_cells: 50.0,
            z: 0.8,
        };
        let mut r = rng::stream(1, "t");
        assert_eq!(p.bar(60), 4.0);
        assert_eq!(p.bar(90), 1.0);
        // N_a = 2, X = 60: X_i = 120 would be needed; 59 cells give 1.97 < 4: accepted.
        assert!(p.accept(&arrival(60, 59, 2), &mut r));
        // X = 90, N_a = 2: X_i = 46 gives 1.022 > 1: refused; 45 gives exactly 1: accepted.
        assert!(!p.accept(&arrival(90, 46, 2), &mut r));
        assert!(p.accept(&arrival(90, 45, 2), &mut r));
        assert!(p.accept(&arrival(50, 50, 1), &mut r), "X = R: accepted");
    }
}
