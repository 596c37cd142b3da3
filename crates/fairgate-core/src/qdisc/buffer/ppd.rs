//! PPD — Partial Packet Discard: accept every frame; once a cell of a frame is lost to a full
//! buffer, discard the rest of that frame, keeping its EOM cell to delimit it.
//!
//! Source: \[Goyal98], section on buffer management schemes (EPD / PPD, SA-ST, static,
//! deterministic). Paper:
//! A. Romanow, S. Floyd, "Dynamics of TCP traffic over ATM networks", IEEE JSAC 1995.
//!
//! The frame machinery (per-VC accounting, frame boundaries, PPD on a full buffer) is in
//! `frame_fifo.rs`; PPD adds no admission rule of its own.
//! Decision: K defaults to 25,000 cells, the largest buffer of \[Goyal98].

use super::frame_fifo::{frame_qdisc, FrameArrival, FrameFifo, FramePolicy, FrameSettings, Frames};
use crate::config::ScenarioError;
use crate::engine::Rng;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::{Qdisc, QdiscConfig, QdiscEnv};
use serde::{Deserialize, Serialize};

/// `queue = { kind = "ppd", limit = 25000, frames = "cells" }`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PpdConfig {
    /// K, cells (or packets).
    pub limit: u64,
    pub vc: FlowKey,
    pub frames: Frames,
}

impl Default for PpdConfig {
    fn default() -> Self {
        PpdConfig {
            limit: 25_000,
            vc: FlowKey::Flow,
            frames: Frames::Packets,
        }
    }
}

impl PpdConfig {
    fn settings(&self) -> FrameSettings {
        FrameSettings {
            limit: self.limit,
            vc: self.vc,
            frames: self.frames,
            keep_eom: true,
        }
    }
}

impl QdiscConfig for PpdConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.settings().validate(path)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Ppd(FrameFifo::new(self.settings(), AcceptAll)))
    }
}

/// Admits every frame; the buffer limit does the rest.
pub struct AcceptAll;

impl FramePolicy for AcceptAll {
    fn accept(&mut self, _frame: &FrameArrival, _rng: &mut Rng) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "ppd"
    }
}

pub struct Ppd(pub FrameFifo<AcceptAll>);
frame_qdisc!(Ppd, "ppd");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::frame_fifo::tests::cell;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::DropReason;

    #[test]
    fn overflow_mid_frame_discards_the_rest_but_keeps_the_eom() {
        // K = 4. Frame A (3 cells) is queued; frame B (4 cells): its first cell fits (4th
        // slot), the second overflows, the third is discarded as part of the frame; one cell
        // leaves and B's EOM cell is kept. Frame C then starts afresh.
        let mut h = Harness::new();
        let config = PpdConfig {
            limit: 4,
            frames: Frames::Cells,
            ..Default::default()
        };
        let mut q = config.build(&QdiscEnv {
            link_rate_bps: 1,
            port: "p".into(),
        });
        for i in 0..3 {
            let id = cell(&mut h, 1, 0, i == 2, false);
            h.enqueue(q.as_mut(), id);
        }
        let b: Vec<_> = (0..4).map(|i| cell(&mut h, 2, 0, i == 3, false)).collect();
        for &id in &b[..3] {
            h.enqueue(q.as_mut(), id);
        }
        h.dequeue(q.as_mut());
        h.enqueue(q.as_mut(), b[3]);
        assert_eq!(
            h.dropped(),
            vec![(b[1], DropReason::Overflow), (b[2], DropReason::Frame)]
        );
        assert_eq!(q.len_packets(), 4);
        h.dequeue(q.as_mut());
        let c = cell(&mut h, 2, 1, true, false);
        h.enqueue(q.as_mut(), c);
        assert_eq!(h.dropped().len(), 2);
    }
}
