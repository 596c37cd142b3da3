//! Selective Drop (SD): above a global threshold R, refuse a new frame of a VC whose buffer
//! occupancy exceeds Z times its equal share X / N_a.
//!
//! Source: \[Goyal98], buffer management schemes (MA-ST, dynamic,
//! deterministic). Paper: R. Goyal, R. Jain et al.,
//! "Improving the performance of TCP over the ATM-UBR service", Computer Communications 1998.
//!
//! Rule at the first cell of a frame of VC i: drop if X > R and X_i * N_a / X > Z.
//!
//! Decisions: R = `threshold` * K (the text states R as a fraction of K but uses it in cells);
//! `threshold` = 0.9 and Z = 0.8 are not given in the text (values from the UBR+ literature);
//! N_a counts VCs with at least one cell queued, before the arrival; CLP is ignored (not
//! tag-sensitive); frames and K as in `frame_fifo.rs` (K = 25,000 cells by default).

use super::frame_fifo::{frame_qdisc, FrameArrival, FrameFifo, FramePolicy, FrameSettings, Frames};
use super::ppd::PpdConfig;
use crate::config::{check, ScenarioError};
use crate::engine::Rng;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::{Qdisc, QdiscConfig, QdiscEnv};
use serde::{Deserialize, Serialize};

/// `queue = { kind = "selective_drop", limit = 25000, threshold = 0.9, z = 0.8 }`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SelectiveDropConfig {
    pub limit: u64,
    /// R as a fraction of K.
    pub threshold: f64,
    /// Z, 0 < Z <= 1.
    pub z: f64,
    pub vc: FlowKey,
    pub frames: Frames,
    pub keep_eom: bool,
}

impl Default for SelectiveDropConfig {
    fn default() -> Self {
        SelectiveDropConfig {
            limit: PpdConfig::default().limit,
            threshold: 0.9,
            z: 0.8,
            vc: FlowKey::Flow,
            frames: Frames::Packets,
            keep_eom: false,
        }
    }
}

impl SelectiveDropConfig {
    pub fn settings(&self) -> FrameSettings {
        FrameSettings {
            limit: self.limit,
            vc: self.vc,
            frames: self.frames,
            keep_eom: self.keep_eom,
        }
    }

    pub fn check(&self, path: &str) -> Result<(), ScenarioError> {
        self.settings().validate(path)?;
        check::probability(path, "threshold", self.threshold)?;
        check::in_range(path, "z", self.z, f64::MIN_POSITIVE, 1.0)
    }
}

impl QdiscConfig for SelectiveDropConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.check(path)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        let policy = SelectiveDropPolicy {
            threshold_cells: self.threshold * self.limit as f64,
            z: self.z,
        };
        Box::new(SelectiveDrop(FrameFifo::new(self.settings(), policy)))
    }
}

pub struct SelectiveDropPolicy {
    pub threshold_cells: f64,
    pub z: f64,
}

/// X_i * N_a / X: the VC's occupancy relative to an equal share (0 for an empty buffer).
pub fn load_ratio(frame: &FrameArrival) -> f64 {
    if frame.total == 0 {
        return 0.0;
    }
    frame.vc_cells as f64 * frame.active_vcs as f64 / frame.total as f64
}

impl FramePolicy for SelectiveDropPolicy {
    fn accept(&mut self, frame: &FrameArrival, _rng: &mut Rng) -> bool {
        !(frame.total as f64 > self.threshold_cells && load_ratio(frame) > self.z)
    }
    fn name(&self) -> &'static str {
        "selective_drop"
    }
}

pub struct SelectiveDrop(pub FrameFifo<SelectiveDropPolicy>);
frame_qdisc!(SelectiveDrop, "selective_drop");

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
    fn drops_only_above_r_and_above_z_times_the_equal_share() {
        // K = 100, R = 90, Z = 0.8. X = 95, N_a = 4: equal share 23.75, Z * share = 19.
        let mut p = SelectiveDropPolicy {
            threshold_cells: 90.0,
            z: 0.8,
        };
        let mut r = rng::stream(1, "t");
        assert!(
            p.accept(&arrival(95, 19, 4), &mut r),
            "19 * 4 / 95 = 0.8, not above Z"
        );
        assert!(
            !p.accept(&arrival(95, 20, 4), &mut r),
            "20 * 4 / 95 = 0.842 > 0.8"
        );
        assert!(
            p.accept(&arrival(90, 80, 4), &mut r),
            "X = R is not above R"
        );
        assert!(p.accept(&arrival(0, 0, 0), &mut r));
    }

    #[test]
    fn bad_z_names_the_field() {
        let c = SelectiveDropConfig {
            z: 0.0,
            ..Default::default()
        };
        assert_eq!(c.check("q").expect_err("z").path, "q.z");
    }
}
