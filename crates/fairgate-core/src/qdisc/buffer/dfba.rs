//! DFBA — Differential Fair Buffer Allocation for GFR virtual circuits.
//!
//! Source: \[Goyal98], the DFBA section (regions figure, drop probability, pseudo-code).
//!
//! At the first cell of a frame of VC i (CLP bit `clp`), with X the buffer occupancy, X_i the
//! VC's, fair share X * W_i / W:
//! - region 1, X < L: accept;
//! - region 4, X > H: drop (EPD, CLP ignored);
//! - region 3, X_i <= X * W_i / W: drop if CLP = 1, else accept;
//! - region 2, X_i > X * W_i / W: drop if CLP = 1, else drop with probability
//!   P = Z_i * ( alpha * (X_i - X W_i/W) / (X (1 - W_i/W)) + (1 - alpha) * (X - L) / (H - L) ).
//!
//! Decisions (the long form is on `docs/models/dfba.md`): L = 0.5 K and H = 0.9 K (not given);
//! W_i/W = MCR_i over all configured MCRs (`mcrs` per VC id, `default_mcr` 0), equal weights
//! 1/N_a without MCRs; the fairness term is 0 when W_i/W = 1 or X = 0 and P is clamped to
//! [0, 1]; Z_i is `z` ("one" as in the simulations) or per VC `z_values`; X and X_i are
//! instantaneous cell counts, CLP=1 cells included. Frames, K and PPD: `frame_fifo.rs`.

use super::frame_fifo::{frame_qdisc, FrameArrival, FrameFifo, FramePolicy, FrameSettings, Frames};
use super::ppd::PpdConfig;
use crate::config::units::Rate;
use crate::config::{check, ScenarioError};
use crate::engine::Rng;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::{Cause, Qdisc, QdiscConfig, QdiscEnv};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// How Z_i is derived from the VC's weight share.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZRule {
    #[default]
    One,
    OneMinusShare,
    OneMinusShareSquared,
}

impl ZRule {
    pub fn of(self, share: f64) -> f64 {
        match self {
            ZRule::One => 1.0,
            ZRule::OneMinusShare => 1.0 - share,
            ZRule::OneMinusShareSquared => (1.0 - share).powi(2),
        }
    }
}

/// `queue = { kind = "dfba", limit = 25000, mcrs = ["2.3Mbps", ...], alpha = 0.5 }`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DfbaConfig {
    /// K, cells.
    pub limit: u64,
    /// L as a fraction of K.
    pub low: f64,
    /// H as a fraction of K.
    pub high: f64,
    /// Weight of the fairness term against the efficiency term. \[Goyal98]: 0.5.
    pub alpha: f64,
    /// MCR of each VC id.
    pub mcrs: Vec<Rate>,
    pub default_mcr: Rate,
    pub z: ZRule,
    /// Z_i per VC id, overriding `z`.
    pub z_values: Vec<f64>,
    pub vc: FlowKey,
    pub frames: Frames,
    pub keep_eom: bool,
}

impl Default for DfbaConfig {
    fn default() -> Self {
        DfbaConfig {
            limit: PpdConfig::default().limit,
            low: 0.5,
            high: 0.9,
            alpha: 0.5,
            mcrs: Vec::new(),
            default_mcr: Rate(0),
            z: ZRule::One,
            z_values: Vec::new(),
            vc: FlowKey::Flow,
            frames: Frames::Packets,
            keep_eom: false,
        }
    }
}

impl DfbaConfig {
    fn settings(&self) -> FrameSettings {
        FrameSettings {
            limit: self.limit,
            vc: self.vc,
            frames: self.frames,
            keep_eom: self.keep_eom,
        }
    }

    fn check(&self, path: &str) -> Result<(), ScenarioError> {
        self.settings().validate(path)?;
        check::probability(path, "low", self.low)?;
        check::probability(path, "high", self.high)?;
        check::ordered(path, "low", self.low, "high", self.high)?;
        check::probability(path, "alpha", self.alpha)?;
        for (i, &z) in self.z_values.iter().enumerate() {
            check::probability(path, &format!("z_values[{i}]"), z)?;
        }
        Ok(())
    }

    pub fn policy(&self) -> DfbaPolicy {
        let total_mcr: u64 = self.mcrs.iter().map(|r| r.bps()).sum();
        DfbaPolicy {
            low: self.low * self.limit as f64,
            high: self.high * self.limit as f64,
            alpha: self.alpha,
            shares: self
                .mcrs
                .iter()
                .map(|r| r.bps() as f64 / total_mcr.max(1) as f64)
                .collect(),
            default_share: self.default_mcr.bps() as f64 / total_mcr.max(1) as f64,
            z: self.z,
            z_values: self.z_values.clone(),
        }
    }
}

impl QdiscConfig for DfbaConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.check(path)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Dfba(FrameFifo::new(self.settings(), self.policy())))
    }
}

/// The four operating regions of the text's figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// 1: X < L.
    Underload,
    /// 2: L <= X <= H, X_i above its fair share.
    AboveShare,
    /// 3: L <= X <= H, X_i at or below its fair share.
    WithinShare,
    /// 4: X > H.
    Severe,
}

/// The region of a VC holding `vc_cells` of `total` cells with weight share `share` = W_i/W.
pub fn region(total: f64, vc_cells: f64, share: f64, low: f64, high: f64) -> Region {
    if total < low {
        Region::Underload
    } else if total > high {
        Region::Severe
    } else if vc_cells > total * share {
        Region::AboveShare
    } else {
        Region::WithinShare
    }
}

/// P{drop} in region 2, clamped to [0, 1].
pub fn drop_probability(
    total: f64,
    vc_cells: f64,
    share: f64,
    low: f64,
    high: f64,
    alpha: f64,
    z: f64,
) -> f64 {
    let fairness = if share >= 1.0 || total <= 0.0 {
        0.0
    } else {
        (vc_cells - total * share) / (total * (1.0 - share))
    };
    let efficiency = (total - low) / (high - low);
    (z * (alpha * fairness + (1.0 - alpha) * efficiency)).clamp(0.0, 1.0)
}

pub struct DfbaPolicy {
    pub low: f64,
    pub high: f64,
    pub alpha: f64,
    /// W_i / W per VC id (empty: equal weights).
    pub shares: Vec<f64>,
    pub default_share: f64,
    pub z: ZRule,
    pub z_values: Vec<f64>,
}

impl DfbaPolicy {
    /// W_i / W of the arriving frame's VC.
    pub fn share(&self, frame: &FrameArrival) -> f64 {
        if self.shares.is_empty() {
            let arriving_is_new = u64::from(frame.vc_cells == 0);
            return 1.0 / (frame.active_vcs + arriving_is_new) as f64;
        }
        usize::try_from(frame.vc)
            .ok()
            .and_then(|i| self.shares.get(i).copied())
            .unwrap_or(self.default_share)
    }

    fn z_of(&self, vc: u64, share: f64) -> f64 {
        usize::try_from(vc)
            .ok()
            .and_then(|i| self.z_values.get(i).copied())
            .unwrap_or_else(|| self.z.of(share))
    }
}

impl FramePolicy for DfbaPolicy {
    fn accept(&mut self, frame: &FrameArrival, rng: &mut Rng) -> bool {
        let (x, x_i) = (frame.total as f64, frame.vc_cells as f64);
        let share = self.share(frame);
        match region(x, x_i, share, self.low, self.high) {
            Region::Underload => true,
            Region::Severe => false,
            Region::WithinShare => !frame.clp,
            Region::AboveShare if frame.clp => false,
            Region::AboveShare => {
                let z = self.z_of(frame.vc, share);
                let p = drop_probability(x, x_i, share, self.low, self.high, self.alpha, z);
                rng.random::<f64>() >= p
            }
        }
    }
    fn name(&self) -> &'static str {
        "dfba"
    }
    fn refusal_cause(&self, frame: &FrameArrival) -> Cause {
        let (x, x_i) = (frame.total as f64, frame.vc_cells as f64);
        match region(x, x_i, self.share(frame), self.low, self.high) {
            Region::Severe => "dfba_severe",
            _ if frame.clp => "dfba_clp",
            _ => "dfba_random",
        }
    }
}

pub struct Dfba(pub FrameFifo<DfbaPolicy>);
frame_qdisc!(Dfba, "dfba");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng;

    // Worked example of the spec: K = 25,000, L = 12,500, H = 22,500, alpha = 0.5, Z = 1,
    // MCR set with W_5 / W = 100 / 300 = 1/3.
    const L: f64 = 12_500.0;
    const H: f64 = 22_500.0;

    fn policy() -> DfbaPolicy {
        DfbaConfig {
            limit: 25_000,
            mcrs: [20, 40, 60, 80, 100].map(|m| Rate(m * 1000)).to_vec(),
            ..Default::default()
        }
        .policy()
    }

    fn frame(vc: u64, clp: bool, total: u64, vc_cells: u64) -> FrameArrival {
        FrameArrival {
            vc,
            clp,
            total,
            vc_cells,
            active_vcs: 5,
            capacity: 25_000,
        }
    }

    #[test]
    fn drop_probability_at_the_worked_example() {
        // X = 17,500, X_5 = 8,000: fair share 5,833.3; fairness 0.5 * 2,166.7 / 11,666.7 =
        // 0.092857; efficiency 0.5 * 5,000 / 10,000 = 0.25; P = 0.342857.
        let p = drop_probability(17_500.0, 8_000.0, 1.0 / 3.0, L, H, 0.5, 1.0);
        assert!((p - (0.5 * (6_500.0 / 3.0) / (17_500.0 * 2.0 / 3.0) + 0.25)).abs() < 1e-12);
        assert!((p - 0.342857).abs() < 1e-6);
        // Terms at their ends: 0 at the fair share and X = L; alpha + (1 - alpha) when X_i = X
        // and X = H.
        assert!(drop_probability(L, L / 3.0, 1.0 / 3.0, L, H, 0.5, 1.0).abs() < 1e-12);
        assert!((drop_probability(H, H, 1.0 / 3.0, L, H, 0.5, 1.0) - 1.0).abs() < 1e-12);
        // Z scales: Z = (1 - 1/3)^2 = 4/9.
        let z = ZRule::OneMinusShareSquared.of(1.0 / 3.0);
        assert!(
            (drop_probability(17_500.0, 8_000.0, 1.0 / 3.0, L, H, 0.5, z) - p * 4.0 / 9.0).abs()
                < 1e-12
        );
        // W_i = W: no fairness term.
        assert_eq!(
            drop_probability(17_500.0, 17_500.0, 1.0, L, H, 0.5, 1.0),
            0.25
        );
    }

    #[test]
    fn four_regions_and_the_clp_bit() {
        let p = policy();
        assert!((p.share(&frame(4, false, 0, 0)) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(
            region(12_499.0, 12_000.0, 1.0 / 3.0, L, H),
            Region::Underload
        );
        assert_eq!(region(22_501.0, 0.0, 1.0 / 3.0, L, H), Region::Severe);
        assert_eq!(
            region(15_000.0, 5_001.0, 1.0 / 3.0, L, H),
            Region::AboveShare
        );
        assert_eq!(
            region(15_000.0, 4_999.0, 1.0 / 3.0, L, H),
            Region::WithinShare
        );
        let mut p = policy();
        let mut r = rng::stream(3, "dfba");
        // Region 1 accepts even CLP = 1; region 4 refuses even a VC with nothing queued;
        // region 3 refuses only CLP = 1; region 2 refuses every CLP = 1 frame.
        assert!(p.accept(&frame(4, true, 12_499, 12_000), &mut r));
        assert!(!p.accept(&frame(4, false, 22_501, 0), &mut r));
        assert!(p.accept(&frame(4, false, 15_000, 4_999), &mut r));
        assert!(!p.accept(&frame(4, true, 15_000, 4_999), &mut r));
        assert!(!p.accept(&frame(4, true, 15_000, 5_001), &mut r));
        // The refusal causes tell the regions apart.
        assert_eq!(p.refusal_cause(&frame(4, true, 22_501, 0)), "dfba_severe");
        assert_eq!(p.refusal_cause(&frame(4, true, 15_000, 4_999)), "dfba_clp");
        assert_eq!(
            p.refusal_cause(&frame(4, false, 15_000, 5_001)),
            "dfba_random"
        );
    }

    #[test]
    fn region_two_drops_clp0_frames_with_the_formula_probability() {
        let mut p = policy();
        let mut r = rng::stream(5, "dfba");
        let f = frame(4, false, 17_500, 8_000);
        let refused = (0..4000).filter(|_| !p.accept(&f, &mut r)).count();
        // Binomial(4000, 0.342857): mean 1371.4, sd 30.0.
        assert!((1251..=1492).contains(&refused), "{refused}");
    }

    #[test]
    fn without_mcrs_weights_are_equal_over_active_vcs() {
        let p = DfbaConfig::default().policy();
        // Three VCs queued; the arriving VC has none queued: share 1/4. Already queued: 1/3.
        let new_vc = FrameArrival {
            vc: 9,
            clp: false,
            total: 10,
            vc_cells: 0,
            active_vcs: 3,
            capacity: 100,
        };
        assert_eq!(p.share(&new_vc), 0.25);
        assert!(
            (p.share(&FrameArrival {
                vc_cells: 2,
                ..new_vc
            }) - 1.0 / 3.0)
                .abs()
                < 1e-12
        );
        // A VC beyond the MCR list takes default_mcr = 0.
        assert_eq!(policy().share(&frame(7, false, 0, 0)), 0.0);
    }

    #[test]
    fn bad_thresholds_name_the_field() {
        let c = DfbaConfig {
            low: 0.9,
            high: 0.5,
            ..Default::default()
        };
        assert_eq!(c.check("q").expect_err("high").path, "q.high");
        let c = DfbaConfig {
            z_values: vec![1.5],
            ..Default::default()
        };
        assert_eq!(c.check("q").expect_err("z").path, "q.z_values[0]");
    }
}
