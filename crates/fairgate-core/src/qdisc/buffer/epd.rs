//! EPD — Early Packet Discard: refuse every new frame while the buffer holds more than a
//! static threshold R; frames already accepted continue (and are cut by PPD if the buffer
//! fills).
//!
//! Source: \[Goyal98], buffer management schemes (EPD / PPD,
//! SA-ST, static, deterministic, not tag-sensitive)
//! item 8. Paper: A. Romanow, S. Floyd, IEEE JSAC 1995.
//!
//! Decisions: R = `threshold` * K with `threshold` = 0.8 (not given in the text); a new frame
//! is refused when X > R at its first cell; CLP is ignored; a refused frame is discarded
//! whole (EOM too unless `keep_eom`); K defaults to 25,000 cells.

use super::frame_fifo::{frame_qdisc, FrameArrival, FrameFifo, FramePolicy, FrameSettings, Frames};
use super::ppd::PpdConfig;
use crate::config::{check, ScenarioError};
use crate::engine::Rng;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::{Qdisc, QdiscConfig, QdiscEnv};
use serde::{Deserialize, Serialize};

/// `queue = { kind = "epd", limit = 25000, threshold = 0.8, frames = "cells" }`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EpdConfig {
    pub limit: u64,
    /// R as a fraction of K.
    pub threshold: f64,
    pub vc: FlowKey,
    pub frames: Frames,
    pub keep_eom: bool,
}

impl Default for EpdConfig {
    fn default() -> Self {
        EpdConfig {
            limit: PpdConfig::default().limit,
            threshold: 0.8,
            vc: FlowKey::Flow,
            frames: Frames::Packets,
            keep_eom: false,
        }
    }
}

impl EpdConfig {
    fn settings(&self) -> FrameSettings {
        FrameSettings {
            limit: self.limit,
            vc: self.vc,
            frames: self.frames,
            keep_eom: self.keep_eom,
        }
    }
}

impl QdiscConfig for EpdConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.settings().validate(path)?;
        check::probability(path, "threshold", self.threshold)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        let policy = EpdPolicy {
            threshold_cells: self.threshold * self.limit as f64,
        };
        Box::new(Epd(FrameFifo::new(self.settings(), policy)))
    }
}

pub struct EpdPolicy {
    pub threshold_cells: f64,
}

impl FramePolicy for EpdPolicy {
    fn accept(&mut self, frame: &FrameArrival, _rng: &mut Rng) -> bool {
        frame.total as f64 <= self.threshold_cells
    }
    fn name(&self) -> &'static str {
        "epd"
    }
}

pub struct Epd(pub FrameFifo<EpdPolicy>);
frame_qdisc!(Epd, "epd");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::frame_fifo::tests::cell;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::DropReason;

    #[test]
    fn frames_starting_above_r_are_refused_whole_and_started_frames_finish() {
        // K = 10, R = 0.5 * 10 = 5. Frame A (6 cells) starts at X = 0 and is queued whole
        // even past R; frame B starts at X = 6 > 5 and all 2 of its cells are refused.
        let mut h = Harness::new();
        let config = EpdConfig {
            limit: 10,
            threshold: 0.5,
            frames: Frames::Cells,
            ..Default::default()
        };
        let mut q = config.build(&QdiscEnv {
            link_rate_bps: 1,
            port: "p".into(),
        });
        for i in 0..6 {
            let id = cell(&mut h, 1, 0, i == 5, false);
            h.enqueue(q.as_mut(), id);
        }
        let b: Vec<_> = (0..2).map(|i| cell(&mut h, 2, 0, i == 1, false)).collect();
        for &id in &b {
            h.enqueue(q.as_mut(), id);
        }
        assert_eq!(
            h.dropped(),
            vec![(b[0], DropReason::Frame), (b[1], DropReason::Frame)]
        );
        // One departure leaves X = 5 = R: the next frame is accepted (refused only above R).
        h.dequeue(q.as_mut());
        let c = cell(&mut h, 2, 1, true, false);
        h.enqueue(q.as_mut(), c);
        assert_eq!(q.len_packets(), 6);
    }
}
