//! Random distributions of durations and sizes in scenario files.
//!
//! A plain value is a constant; a table picks a distribution:
//! `{ dist = "exponential", mean = "5s" }`, `{ dist = "uniform", min = "20ms", max = "200ms" }`,
//! `{ dist = "pareto", mean = 1000, shape = 1.5 }`, `{ dist = "lognormal", mean = .., sigma = .. }`,
//! `{ dist = "normal", mean = .., std = .. }` (truncated at 0).

use super::error::{join, ScenarioError};
use super::units::{parse_duration, MAX_DURATION_S, MAX_DURATION_WORDS};
use crate::engine::Rng;
use rand::Rng as _;
use rand_distr::{Distribution, Exp, LogNormal, Normal, Pareto};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

/// A distribution over non-negative reals (seconds or bytes), with parameters in base units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "dist", rename_all = "lowercase")]
pub enum Dist {
    Constant { value: f64 },
    Uniform { min: f64, max: f64 },
    Exponential { mean: f64 },
    Pareto { mean: f64, shape: f64 },
    LogNormal { mean: f64, sigma: f64 },
    Normal { mean: f64, std: f64 },
}

impl Dist {
    pub fn constant(value: f64) -> Dist {
        Dist::Constant { value }
    }

    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Constant { value } => value,
            Dist::Uniform { min, max } => (min + max) / 2.0,
            Dist::Exponential { mean }
            | Dist::Pareto { mean, .. }
            | Dist::LogNormal { mean, .. }
            | Dist::Normal { mean, .. } => mean,
        }
    }

    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Dist::Constant { value } => value,
            Dist::Uniform { min, max } => min + (max - min) * rng.random::<f64>(),
            Dist::Exponential { mean } => Exp::new(1.0 / mean).map_or(0.0, |d| d.sample(rng)),
            Dist::Pareto { mean, shape } => {
                let scale = mean * (shape - 1.0) / shape;
                Pareto::new(scale, shape).map_or(mean, |d| d.sample(rng))
            }
            Dist::LogNormal { mean, sigma } => {
                let mu = mean.ln() - sigma * sigma / 2.0;
                LogNormal::new(mu, sigma).map_or(mean, |d| d.sample(rng))
            }
            Dist::Normal { mean, std } => {
                let d = Normal::new(mean, std).expect("validated std");
                (0..64)
                    .map(|_| d.sample(rng))
                    .find(|x| *x >= 0.0)
                    .unwrap_or(mean)
            }
        }
    }

    /// Checks the parameters; `path` names the field.
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        let non_negative = |v: f64| v.is_finite() && v >= 0.0;
        let (field, value, ok, what) = match *self {
            Dist::Constant { value } => ("value", value, non_negative(value), "a value >= 0"),
            Dist::Uniform { min, max } => (
                "max",
                max,
                non_negative(min) && max.is_finite() && max >= min,
                "0 <= min <= max",
            ),
            Dist::Exponential { mean } => ("mean", mean, positive(mean), "a mean > 0"),
            Dist::Pareto { shape, .. } if !(shape.is_finite() && shape > 1.0) => {
                ("shape", shape, false, "a shape > 1 (finite mean)")
            }
            Dist::Pareto { mean, .. } => ("mean", mean, positive(mean), "a mean > 0"),
            Dist::LogNormal { sigma, .. } if !non_negative(sigma) => {
                ("sigma", sigma, false, "sigma >= 0")
            }
            Dist::LogNormal { mean, .. } => ("mean", mean, positive(mean), "a mean > 0"),
            Dist::Normal { std, .. } if !non_negative(std) => ("std", std, false, "std >= 0"),
            Dist::Normal { mean, .. } => ("mean", mean, non_negative(mean), "a mean >= 0"),
        };
        if ok {
            Ok(())
        } else {
            Err(ScenarioError::new(
                join(path, field),
                format!("got {value}, expected {what}"),
            ))
        }
    }
}

/// How plain numbers and strings inside a distribution are read.
#[derive(Clone, Copy)]
enum Quantity {
    Seconds,
    Plain,
}

fn quantity(value: &toml::Value, q: Quantity, field: &str) -> Result<f64, String> {
    match (value, q) {
        (toml::Value::Integer(i), _) => Ok(*i as f64),
        (toml::Value::Float(f), _) => Ok(*f),
        (toml::Value::String(s), Quantity::Seconds) => parse_duration(s),
        _ => {
            // A bare value (field "") is the distribution itself: no field to name.
            let expected = match q {
                Quantity::Seconds => "a duration such as \"10ms\" or a number of seconds",
                Quantity::Plain => "a number",
            };
            if field.is_empty() {
                Err(format!(
                    "got {value}, expected {expected}, or a table with a `dist` key"
                ))
            } else {
                Err(format!("field `{field}`: got {value}, expected {expected}"))
            }
        }
    }
}

/// The parameters of the distribution `kind` besides `dist`, or `None` for an unknown kind.
fn fields_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "constant" => &["value"],
        "uniform" => &["min", "max"],
        "exponential" => &["mean"],
        "pareto" => &["mean", "shape"],
        "lognormal" => &["mean", "sigma"],
        "normal" => &["mean", "std"],
        _ => return None,
    })
}

/// Refuses a key of a distribution table that is neither `dist`, a parameter of its kind nor
/// one of `extra` (the keys a table embedding the distribution adds, such as a link delay's
/// `per`), listing every key the table takes. A missing or unknown kind is reported where
/// the distribution is read.
pub fn check_keys(table: &toml::Table, extra: &[&str]) -> Result<(), String> {
    let kind = table
        .get("dist")
        .and_then(toml::Value::as_str)
        .unwrap_or_default();
    let Some(allowed) = fields_of(kind) else {
        return Ok(());
    };
    let known = |key: &str| key == "dist" || allowed.contains(&key) || extra.contains(&key);
    let Some(key) = table.keys().find(|key| !known(key)) else {
        return Ok(());
    };
    let expected: Vec<String> = allowed
        .iter()
        .chain(extra)
        .map(|f| format!("`{f}`"))
        .collect();
    Err(format!(
        "unknown field `{key}` for dist {kind:?}, expected one of `dist`, {}",
        expected.join(", ")
    ))
}

fn from_value(value: toml::Value, q: Quantity) -> Result<Dist, String> {
    let table = match value {
        toml::Value::Table(t) => t,
        other => return quantity(&other, q, "").map(Dist::constant),
    };
    const KINDS: &str = "one of constant, uniform, exponential, pareto, lognormal, normal";
    let kind = match table.get("dist") {
        None => return Err(format!("expected a `dist` key: {KINDS}")),
        Some(toml::Value::String(kind)) => kind.clone(),
        Some(other) => return Err(format!("`dist`: got {other}, expected {KINDS}")),
    };
    if fields_of(&kind).is_none() {
        return Err(format!("unknown dist {kind:?}, expected {KINDS}"));
    }
    check_keys(&table, &[])?;
    let get = |field: &str, q: Quantity| -> Result<f64, String> {
        let v = table
            .get(field)
            .ok_or_else(|| format!("missing field `{field}` for dist {kind:?}"))?;
        quantity(v, q, field)
    };
    Ok(match kind.as_str() {
        "constant" => Dist::Constant {
            value: get("value", q)?,
        },
        "uniform" => Dist::Uniform {
            min: get("min", q)?,
            max: get("max", q)?,
        },
        "exponential" => Dist::Exponential {
            mean: get("mean", q)?,
        },
        "pareto" => Dist::Pareto {
            mean: get("mean", q)?,
            shape: get("shape", Quantity::Plain)?,
        },
        "lognormal" => Dist::LogNormal {
            mean: get("mean", q)?,
            sigma: get("sigma", Quantity::Plain)?,
        },
        _ => Dist::Normal {
            mean: get("mean", q)?,
            std: get("std", q)?,
        },
    })
}

/// A distribution of durations, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct DurationDist(pub Dist);

/// The largest packet, in bytes (65,535 x 16).
pub const MAX_PACKET_BYTES: f64 = 1_048_560.0;

/// A distribution of sizes, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct SizeDist(pub Dist);

impl<'de> Deserialize<'de> for DurationDist {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = toml::Value::deserialize(d)?;
        let dist = from_value(value, Quantity::Seconds).map_err(D::Error::custom)?;
        check_duration_bound(&dist).map_err(D::Error::custom)?;
        Ok(DurationDist(dist))
    }
}

/// A fixed duration, a uniform maximum or a mean is at most MAX_DURATION_S, like every
/// duration; only the tail of an unbounded distribution reaches past it, and a time drawn
/// there saturates (an event never reached in the run).
fn check_duration_bound(dist: &Dist) -> Result<(), String> {
    let largest = match *dist {
        Dist::Constant { value } => value,
        Dist::Uniform { max, .. } => max,
        other => other.mean(),
    };
    if largest > MAX_DURATION_S {
        return Err(format!(
            "got a duration of up to {largest} s, expected at most {MAX_DURATION_WORDS}"
        ));
    }
    Ok(())
}

impl<'de> Deserialize<'de> for SizeDist {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = toml::Value::deserialize(d)?;
        from_value(value, Quantity::Plain)
            .map(SizeDist)
            .map_err(D::Error::custom)
    }
}

impl SizeDist {
    pub fn constant(bytes: u32) -> Self {
        SizeDist(Dist::constant(bytes as f64))
    }

    /// A packet size in whole bytes, at least 1 and at most `MAX_PACKET_BYTES`: validation
    /// refuses a size whose fixed value, upper bound or mean lies above it, so only the tail
    /// of an unbounded distribution (exponential, Pareto, ...) is cut there.
    pub fn sample_bytes(&self, rng: &mut Rng) -> u32 {
        let bytes = self.0.sample(rng).round();
        bytes.clamp(1.0, MAX_PACKET_BYTES) as u32
    }

    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.0.validate(path)?;
        if self.0.mean() < 1.0 {
            return Err(ScenarioError::new(
                path,
                format!(
                    "got a mean of {} bytes, expected at least 1 byte",
                    self.0.mean()
                ),
            ));
        }
        let largest = match self.0 {
            Dist::Constant { value } => value,
            Dist::Uniform { max, .. } => max,
            other => other.mean(),
        };
        if largest > MAX_PACKET_BYTES {
            return Err(ScenarioError::new(
                path,
                format!(
                    "got a size of up to {largest} bytes, expected at most {MAX_PACKET_BYTES} \
                     bytes (65,535 x 16) per packet"
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_distribution_is_bounded_like_a_duration() {
        let parse = |text: &str| -> Result<DurationDist, String> {
            let value: toml::Value =
                format!("v = {text}").parse::<toml::Table>().unwrap()["v"].clone();
            DurationDist::deserialize(value).map_err(|e| e.to_string())
        };
        for text in [
            "1e9",
            "{ dist = \"uniform\", min = 0, max = 2e7 }",
            "{ dist = \"exponential\", mean = 1e8 }",
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains("expected at most 1.8e7 s"), "{text}: {e}");
        }
        assert!(parse("{ dist = \"exponential\", mean = 1.8e7 }").is_ok());
    }
    use crate::engine::rng;

    fn parse_size(text: &str) -> Result<SizeDist, String> {
        let v: toml::Table = toml::from_str(&format!("x = {text}")).unwrap();
        from_value(v["x"].clone(), Quantity::Plain).map(SizeDist)
    }

    #[test]
    fn plain_number_is_constant() {
        assert_eq!(parse_size("1000").unwrap().0, Dist::constant(1000.0));
        let e = parse_size("\"abc\"").unwrap_err();
        assert!(
            e.starts_with("got \"abc\", expected a number, or a table"),
            "{e}"
        );
    }

    #[test]
    fn exponential_mean_is_right() {
        let d = parse_size("{ dist = \"exponential\", mean = 500 }").unwrap();
        let mut r = rng::stream(3, "t");
        let n = 200_000;
        let mean: f64 = (0..n).map(|_| d.0.sample(&mut r)).sum::<f64>() / n as f64;
        assert!((mean - 500.0).abs() < 5.0, "{mean}");
    }

    #[test]
    fn durations_read_units() {
        let v: toml::Table =
            toml::from_str("x = { dist = \"uniform\", min = \"20ms\", max = \"200ms\" }").unwrap();
        let d = from_value(v["x"].clone(), Quantity::Seconds).unwrap();
        assert_eq!(
            d,
            Dist::Uniform {
                min: 0.02,
                max: 0.2
            }
        );
    }

    #[test]
    fn sizes_above_the_largest_packet_are_refused() {
        let huge = parse_size("2000000").unwrap();
        let err = huge.validate("flows[0].source.size").unwrap_err();
        assert!(err.to_string().contains("at most 1048560"), "{err}");
        let wide = parse_size("{ dist = \"uniform\", min = 1, max = 2e6 }").unwrap();
        assert!(wide.validate("size").is_err());
        assert!(parse_size("1048560").unwrap().validate("size").is_ok());
    }

    #[test]
    fn unknown_fields_are_named() {
        let e = parse_size("{ dist = \"exponential\", meen = 5 }").unwrap_err();
        assert!(e.contains("meen"), "{e}");
        assert!(e.ends_with("expected one of `dist`, `mean`"), "{e}");
    }
}
