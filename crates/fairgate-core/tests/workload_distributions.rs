//! The distributions the web and HTTP workloads draw from, tested as distributions: a
//! Kolmogorov-Smirnov test of 10^6 Pareto draws against the CDF of ns-2's parameterisation
//! (`RandomVariable/Pareto`: scale = mean (shape - 1) / shape), the median against its closed
//! form, and the mean of exponential think times.

use fairgate_core::config::dist::Dist;
use fairgate_core::engine::rng;

const DRAWS: usize = 1_000_000;

fn draws(dist: Dist, key: &str) -> Vec<f64> {
    let mut r = rng::stream(11, key);
    let mut v: Vec<f64> = (0..DRAWS).map(|_| dist.sample(&mut r)).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// The web workload's default object size: shape 1.2, mean 5 KB.
const SHAPE: f64 = 1.2;
const MEAN: f64 = 5000.0;

fn pareto_scale() -> f64 {
    MEAN * (SHAPE - 1.0) / SHAPE
}

fn pareto_cdf(x: f64) -> f64 {
    if x < pareto_scale() {
        0.0
    } else {
        1.0 - (pareto_scale() / x).powf(SHAPE)
    }
}

#[test]
fn pareto_draws_pass_kolmogorov_smirnov_at_one_percent() {
    let v = draws(
        Dist::Pareto {
            mean: MEAN,
            shape: SHAPE,
        },
        "pareto-ks",
    );
    let n = v.len() as f64;
    let d = v
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = pareto_cdf(x);
            (f - i as f64 / n).abs().max((i as f64 + 1.0) / n - f)
        })
        .fold(0.0, f64::max);
    // Critical value of the one-sample KS statistic at alpha = 0.01: 1.628 / sqrt(n).
    let critical = 1.628 / n.sqrt();
    assert!(d < critical, "D = {d}, critical {critical}");
    assert!(
        v[0] >= pareto_scale(),
        "no draw below the scale {}",
        pareto_scale()
    );
}

#[test]
fn pareto_median_is_within_one_percent_of_its_closed_form() {
    let v = draws(
        Dist::Pareto {
            mean: MEAN,
            shape: SHAPE,
        },
        "pareto-median",
    );
    let median = v[DRAWS / 2];
    let closed_form = pareto_scale() * 2f64.powf(1.0 / SHAPE);
    let error = (median - closed_form).abs() / closed_form;
    assert!(error < 0.01, "median {median} vs {closed_form}");
}

#[test]
fn exponential_think_time_mean_is_within_one_percent() {
    let v = draws(Dist::Exponential { mean: 7.0 }, "think");
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    assert!((mean - 7.0).abs() / 7.0 < 0.01, "mean {mean}");
}
