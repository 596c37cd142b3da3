//! Keshav's fuzzy exponential-averaging predictor: theta_hat(k+1) = alpha theta_hat(k) +
//! (1 - alpha) theta(k), where alpha comes from a fuzzy controller on the (smoothed) relative
//! prediction error and the smoothing constant beta from a second fuzzy controller on the change
//! in that error.
//!
//! Sources: [Keshav91, §5.6];
//! Keshav, ICSI TR-91-028 (the original membership functions, not available here).
//!
//! Rules (the text): error low -> alpha high, medium -> medium, high -> alpha low; change in error
//! low -> beta low, medium -> medium, high -> beta high (a spike is ignored). Centroid
//! defuzzification.
//!
//! Decisions where the text is silent (fig. 5.2 is missing from it):
//! - Membership functions are triangles `[left, peak, right]` on [0, 1], configurable; defaults
//!   low = [0, 0, 0.5], medium = [0, 0.5, 1], high = [0.5, 1, 1]. The output sets (alpha, beta)
//!   are the same triangles. Inference is Mamdani (min, then max), centroid over [0, 1] by the
//!   midpoint rule on `CELLS` = 200 cells (error < 10^-4 on the default sets).
//! - The relative error |theta - theta_hat| / theta is clipped to [0, 1].
//! - "Change in error" is |e(k) - e(k-1)| of the raw relative errors by default
//!   (`change = "raw"`), or of the smoothed errors one step back (`change = "smoothed"`).
//! - The first observation initialises theta_hat (no prior); the smoothed error starts at 0.

use crate::config::error::{join, ScenarioError};
use serde::{Deserialize, Serialize};

const CELLS: usize = 200;

/// A triangular membership function `[left, peak, right]`.
pub type Triangle = [f64; 3];

fn membership(t: &Triangle, x: f64) -> f64 {
    let [left, peak, right] = *t;
    if x < left || x > right {
        0.0
    } else if x <= peak {
        if peak == left {
            1.0
        } else {
            (x - left) / (peak - left)
        }
    } else if right == peak {
        1.0
    } else {
        (right - x) / (right - peak)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeInput {
    #[default]
    Raw,
    Smoothed,
}

/// The linguistic sets, shared by inputs and outputs (`fuzzy = { ... }` in a source).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FuzzyConfig {
    pub low: Triangle,
    pub medium: Triangle,
    pub high: Triangle,
    pub change: ChangeInput,
}

impl Default for FuzzyConfig {
    fn default() -> Self {
        FuzzyConfig {
            low: [0.0, 0.0, 0.5],
            medium: [0.0, 0.5, 1.0],
            high: [0.5, 1.0, 1.0],
            change: ChangeInput::Raw,
        }
    }
}

impl FuzzyConfig {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        for (name, t) in [
            ("low", &self.low),
            ("medium", &self.medium),
            ("high", &self.high),
        ] {
            let ordered = t[0] <= t[1] && t[1] <= t[2];
            let inside = t.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v));
            if !(ordered && inside && t[0] < t[2]) {
                return Err(ScenarioError::new(
                    join(path, name),
                    format!("got {t:?}, expected [left, peak, right] with 0 <= left <= peak <= right <= 1 and left < right"),
                ));
            }
        }
        Ok(())
    }

    fn sets(&self) -> [&Triangle; 3] {
        [&self.low, &self.medium, &self.high]
    }

    /// Rule strengths (low, medium, high) of input `x`.
    fn fuzzify(&self, x: f64) -> [f64; 3] {
        self.sets().map(|t| membership(t, x))
    }

    /// Centroid of the output sets clipped at `strengths` (low, medium, high) and joined by max.
    fn defuzzify(&self, strengths: [f64; 3]) -> f64 {
        let sets = self.sets();
        let (mut moment, mut area) = (0.0, 0.0);
        for i in 0..CELLS {
            let y = (i as f64 + 0.5) / CELLS as f64;
            let m = (0..3)
                .map(|s| membership(sets[s], y).min(strengths[s]))
                .fold(0.0, f64::max);
            moment += m * y;
            area += m;
        }
        if area > 0.0 {
            moment / area
        } else {
            0.5
        }
    }

    /// Controller 1: error low -> alpha high, medium -> medium, high -> low.
    pub fn alpha(&self, error: f64) -> f64 {
        let [low, medium, high] = self.fuzzify(error.clamp(0.0, 1.0));
        self.defuzzify([high, medium, low])
    }

    /// Controller 2: change low -> beta low, medium -> medium, high -> high.
    pub fn beta(&self, change: f64) -> f64 {
        self.defuzzify(self.fuzzify(change.clamp(0.0, 1.0)))
    }
}

/// The predictor's state.
#[derive(Clone, Debug)]
pub struct FuzzyPredictor {
    config: FuzzyConfig,
    estimate: Option<f64>,
    raw_error: f64,
    smoothed_error: f64,
    previous_smoothed_error: f64,
    alpha: f64,
    beta: f64,
}

impl FuzzyPredictor {
    pub fn new(config: FuzzyConfig) -> Self {
        FuzzyPredictor {
            config,
            estimate: None,
            raw_error: 0.0,
            smoothed_error: 0.0,
            previous_smoothed_error: 0.0,
            alpha: f64::NAN,
            beta: f64::NAN,
        }
    }

    pub fn estimate(&self) -> Option<f64> {
        self.estimate
    }
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    pub fn beta(&self) -> f64 {
        self.beta
    }
    pub fn smoothed_error(&self) -> f64 {
        self.smoothed_error
    }

    /// Feeds one observation; returns the new prediction.
    pub fn observe(&mut self, observed: f64) -> f64 {
        let Some(predicted) = self.estimate else {
            self.estimate = Some(observed);
            return observed;
        };
        let error = relative_error(observed, predicted);
        let change = match self.config.change {
            ChangeInput::Raw => (error - self.raw_error).abs(),
            ChangeInput::Smoothed => (self.smoothed_error - self.previous_smoothed_error).abs(),
        };
        self.raw_error = error;
        self.beta = self.config.beta(change);
        self.previous_smoothed_error = self.smoothed_error;
        self.smoothed_error = self.beta * self.smoothed_error + (1.0 - self.beta) * error;
        self.alpha = self.config.alpha(self.smoothed_error);
        let next = self.alpha * predicted + (1.0 - self.alpha) * observed;
        self.estimate = Some(next);
        next
    }
}

fn relative_error(observed: f64, predicted: f64) -> f64 {
    if observed > 0.0 {
        ((observed - predicted).abs() / observed).min(1.0)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-4
    }

    #[test]
    fn centroids_of_the_default_sets() {
        let c = FuzzyConfig::default();
        // Error 0 fires only "low" -> alpha is the centroid of high = (0.5 + 1 + 1) / 3.
        assert!(close(c.alpha(0.0), 5.0 / 6.0), "{}", c.alpha(0.0));
        assert!(close(c.alpha(0.5), 0.5));
        assert!(close(c.alpha(1.0), 1.0 / 6.0));
        assert!(close(c.beta(0.0), 1.0 / 6.0));
        assert!(close(c.beta(1.0), 5.0 / 6.0));
        // Error 0.25: low and medium both fire at 0.5, so the high and medium outputs are
        // clipped at 0.5: a ramp 2y on [0, 0.25] then 0.5 up to 1. Area 1/16 + 3/8 = 7/16,
        // moment 1/96 + 15/64 = 47/192, centroid 47/84.
        assert!(close(c.alpha(0.25), 47.0 / 84.0), "{}", c.alpha(0.25));
    }

    #[test]
    fn alpha_falls_as_the_error_grows() {
        let c = FuzzyConfig::default();
        let alphas: Vec<f64> = [0.0, 0.25, 0.5, 0.75, 1.0]
            .iter()
            .map(|&e| c.alpha(e))
            .collect();
        assert!(alphas.windows(2).all(|w| w[1] < w[0]), "{alphas:?}");
        // Errors above 1 are clipped to 1.
        assert_eq!(c.alpha(7.0), c.alpha(1.0));
    }

    #[test]
    fn a_constant_input_is_tracked_exactly() {
        let mut p = FuzzyPredictor::new(FuzzyConfig::default());
        for _ in 0..50 {
            assert_eq!(p.observe(0.1), 0.1);
        }
        assert_eq!(p.smoothed_error(), 0.0);
        assert!(close(p.alpha(), 5.0 / 6.0));
        assert!(close(p.beta(), 1.0 / 6.0));
    }

    #[test]
    fn first_step_by_hand() {
        // theta_hat = 1, observe 2: e = 0.5, change 0.5 -> beta = 0.5; smoothed error
        // 0.5 x 0 + 0.5 x 0.5 = 0.25 -> alpha(0.25); prediction alpha x 1 + (1 - alpha) x 2.
        let c = FuzzyConfig::default();
        let mut p = FuzzyPredictor::new(c.clone());
        p.observe(1.0);
        let next = p.observe(2.0);
        assert!(close(p.beta(), 0.5));
        assert!(close(p.smoothed_error(), 0.25));
        let alpha = c.alpha(0.25);
        assert!((p.alpha() - alpha).abs() < 1e-6);
        assert!((next - (alpha + 2.0 * (1.0 - alpha))).abs() < 1e-12);
    }

    fn run(inputs: &[f64]) -> Vec<f64> {
        let mut p = FuzzyPredictor::new(FuzzyConfig::default());
        inputs.iter().map(|&x| p.observe(x)).collect()
    }

    #[test]
    fn a_single_spike_moves_the_estimate_less_than_a_sustained_step() {
        let mut spike = vec![1.0; 20];
        spike[10] = 2.0;
        let mut step = vec![1.0; 10];
        step.extend([2.0; 10]);
        let spiked = run(&spike);
        let stepped = run(&step);
        let spike_peak = spiked.iter().fold(0.0f64, |m, &x| m.max(x - 1.0));
        assert!(spike_peak > 0.0);
        assert!(
            stepped[13] - 1.0 > 2.0 * spike_peak,
            "{spiked:?} {stepped:?}"
        );
        // After the spike the estimate returns toward 1; after the step it approaches 2.
        assert!(spiked[19] < 1.0 + spike_peak);
        assert!((stepped[19] - 2.0).abs() < 0.05, "{stepped:?}");
    }

    #[test]
    fn bad_sets_name_the_field() {
        let c = FuzzyConfig {
            medium: [0.6, 0.5, 1.0],
            ..FuzzyConfig::default()
        };
        let e = c.validate("flows[0].source.fuzzy").unwrap_err();
        assert_eq!(e.path, "flows[0].source.fuzzy.medium");
    }
}
