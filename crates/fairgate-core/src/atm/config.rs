//! The configuration of a GFR network run: the paper's topology [Goyal98, §4] with named VCs,
//! cell links, the backbone buffer discipline and the TCP connections, read from JSON.
//!
//! Decisions (docs/models/cell_link.md, docs/models/gfr.md): OC-3c cells at 353,207 cells/s,
//! 5 µs/km, 10 km local hops and a 1000 km backbone by default; the TCP defaults are SACK with
//! a 1460-byte MSS and a 1 MB window (window scale 5); TCPs start uniformly within
//! `start_spread` seconds.

use super::gfr::{TaggingConfig, VcConfig};
use crate::config::error::{check, join, ScenarioError};
use crate::qdisc::buffer::dfba::DfbaConfig;
use crate::qdisc::buffer::epd::EpdConfig;
use crate::qdisc::buffer::fba::FbaConfig;
use crate::qdisc::buffer::ppd::PpdConfig;
use crate::qdisc::buffer::selective_drop::SelectiveDropConfig;
use crate::qdisc::QdiscConfig;
use crate::traffic::SourceConfig;
use crate::transport::tcp::config::{CcKind, TcpConfig};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// The discipline of the backbone switch's output buffer.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BackboneBuffer {
    Dfba(DfbaConfig),
    Epd(EpdConfig),
    Ppd(PpdConfig),
    SelectiveDrop(SelectiveDropConfig),
    Fba(FbaConfig),
    /// Cell drop-tail without frame awareness.
    Fifo {
        limit: u64,
    },
}

impl BackboneBuffer {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            BackboneBuffer::Dfba(c) => {
                if !c.mcrs.is_empty() || !c.z_values.is_empty() {
                    return Err(ScenarioError::new(
                        join(path, "mcrs"),
                        "expected none here: MCRs and Z values are set on the named VCs",
                    ));
                }
                c.validate(path)
            }
            BackboneBuffer::Epd(c) => c.validate(path),
            BackboneBuffer::Ppd(c) => c.validate(path),
            BackboneBuffer::SelectiveDrop(c) => c.validate(path),
            BackboneBuffer::Fba(c) => c.validate(path),
            BackboneBuffer::Fifo { limit } => check::positive_int(path, "limit", *limit),
        }
    }
}

/// Occupancy samples a run may keep (VCs × duration / sample interval).
const MAX_SAMPLES: f64 = 2e7;
/// Cells per second: a cell time of at least 10 ps.
const MAX_CELL_RATE: f64 = 1e11;

macro_rules! defaults {
    ($( $name:ident : $ty:ty = $value:expr ),* $(,)?) => {
        $( fn $name() -> $ty { $value } )*
    };
}

defaults! {
    default_cell_rate: f64 = 353_207.0,
    default_us_per_km: f64 = 5.0,
    default_local_km: f64 = 10.0,
    default_backbone_km: f64 = 1000.0,
    default_sample_interval: f64 = 0.01,
    default_start_spread: f64 = 0.5,
}

/// Every link of the topology: one cell rate, lengths in km.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CellLinks {
    /// Cells per second (OC-3c: 149.76 Mb/s of SONET payload / 424 bits).
    #[serde(default = "default_cell_rate")]
    pub cell_rate: f64,
    #[serde(default = "default_us_per_km")]
    pub us_per_km: f64,
    /// x: local switch to backbone switch.
    #[serde(default = "default_local_km")]
    pub local_km: f64,
    /// y: backbone switch to backbone switch.
    #[serde(default = "default_backbone_km")]
    pub backbone_km: f64,
}

impl Default for CellLinks {
    fn default() -> Self {
        CellLinks {
            cell_rate: default_cell_rate(),
            us_per_km: default_us_per_km(),
            local_km: default_local_km(),
            backbone_km: default_backbone_km(),
        }
    }
}

impl CellLinks {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::in_range(path, "cell_rate", self.cell_rate, 1.0, MAX_CELL_RATE)?;
        check::non_negative(path, "us_per_km", self.us_per_km)?;
        check::non_negative(path, "local_km", self.local_km)?;
        check::non_negative(path, "backbone_km", self.backbone_km)
    }
}

/// The TCP defaults of the reproduction (SACK, 1460-byte MSS, 1 MB window).
pub fn default_tcp() -> TcpConfig {
    let mut tcp: TcpConfig = serde_json::from_str("{}").expect("TCP defaults deserialize");
    tcp.cc = CcKind::Sack;
    tcp.mss = 1460;
    tcp.rwnd = 1 << 20;
    tcp.window_scale = 5;
    tcp
}

/// A run: `{ "vcs": [...], "buffer": { "kind": "dfba", ... }, "duration": 20, ... }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AtmConfig {
    #[serde(default)]
    pub seed: u64,
    /// Seconds simulated.
    pub duration: f64,
    /// Seconds before the measurement window opens.
    #[serde(default)]
    pub warmup: f64,
    /// Seconds between occupancy samples.
    #[serde(default = "default_sample_interval")]
    pub sample_interval: f64,
    pub vcs: Vec<VcConfig>,
    #[serde(default)]
    pub links: CellLinks,
    /// Add the 8-byte LLC/SNAP header to every frame.
    #[serde(default)]
    pub llc_snap: bool,
    /// F-GCRA tagging of frames beyond MCR at the ingress edge (off when absent).
    #[serde(default)]
    pub tagging: Option<TaggingConfig>,
    pub buffer: BackboneBuffer,
    #[serde(default = "default_tcp")]
    pub tcp: TcpConfig,
    /// TCPs start at uniform random times in [0, start_spread) seconds.
    #[serde(default = "default_start_spread")]
    pub start_spread: f64,
}

impl AtmConfig {
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let config: AtmConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            ScenarioError::new(path, e.into_inner().to_string())
        })?;
        config.validate()?;
        Ok(config)
    }

    pub fn validate(&self) -> Result<(), ScenarioError> {
        check::positive("", "duration", self.duration)?;
        check::in_range("", "warmup", self.warmup, 0.0, self.duration)?;
        check::positive("", "sample_interval", self.sample_interval)?;
        let samples = self.duration / self.sample_interval * self.vcs.len() as f64;
        if samples > MAX_SAMPLES {
            return Err(ScenarioError::new(
                "sample_interval",
                format!(
                    "got {} s, expected at least {} s: at most {MAX_SAMPLES} occupancy samples",
                    self.sample_interval,
                    self.duration * self.vcs.len() as f64 / MAX_SAMPLES
                ),
            ));
        }
        check::non_negative("", "start_spread", self.start_spread)?;
        self.validate_vcs()?;
        self.links.validate("links")?;
        if let Some(t) = &self.tagging {
            check::non_negative("tagging", "tolerance_cells", t.tolerance_cells)?;
        }
        self.buffer.validate("buffer")?;
        self.tcp.validate("tcp")
    }

    fn validate_vcs(&self) -> Result<(), ScenarioError> {
        if self.vcs.is_empty() {
            return Err(ScenarioError::new(
                "vcs",
                "got none, expected at least one VC",
            ));
        }
        let mut names = HashSet::new();
        for (i, vc) in self.vcs.iter().enumerate() {
            let path = format!("vcs[{i}]");
            if !names.insert(vc.name.as_str()) {
                return Err(ScenarioError::new(
                    join(&path, "name"),
                    format!("got {:?} twice, expected unique VC names", vc.name),
                ));
            }
            check::positive(&path, "mcr", vc.mcr)?;
            check::in_range(&path, "tcps", vc.tcps as f64, 1.0, 100_000.0)?;
            if let Some(z) = vc.z {
                check::probability(&path, "z", z)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> ScenarioError {
        AtmConfig::from_json(text).expect_err("bad config")
    }

    const VCS: &str = r#""vcs": [{"name": "a", "mcr": 1000, "tcps": 2}]"#;

    #[test]
    fn a_minimal_config_takes_the_paper_defaults() {
        let text = format!(r#"{{"duration": 1, {VCS}, "buffer": {{"kind": "dfba"}}}}"#);
        let c = AtmConfig::from_json(&text).expect("valid");
        assert_eq!(c.links, CellLinks::default());
        assert_eq!(c.tcp.cc, CcKind::Sack);
        assert!(matches!(c.buffer, BackboneBuffer::Dfba(_)));
    }

    #[test]
    fn bad_fields_are_named_by_path() {
        let dup = r#"{"duration": 1, "buffer": {"kind": "fifo", "limit": 10},
            "vcs": [{"name": "a", "mcr": 1, "tcps": 1}, {"name": "a", "mcr": 1, "tcps": 1}]}"#;
        assert_eq!(err(dup).path, "vcs[1].name");
        let mcr = r#"{"duration": 1, "buffer": {"kind": "fifo", "limit": 10},
            "vcs": [{"name": "a", "mcr": 0, "tcps": 1}]}"#;
        assert_eq!(err(mcr).path, "vcs[0].mcr");
        let limit =
            format!(r#"{{"duration": 1, {VCS}, "buffer": {{"kind": "fifo", "limit": 0}}}}"#);
        assert_eq!(err(&limit).path, "buffer.limit");
        let mcrs =
            format!(r#"{{"duration": 1, {VCS}, "buffer": {{"kind": "dfba", "mcrs": [1]}}}}"#);
        assert_eq!(err(&mcrs).path, "buffer.mcrs");
        let unknown = format!(r#"{{"duration": 1, {VCS}, "buffer": {{"kind": "dfba"}}, "x": 1}}"#);
        assert!(err(&unknown).message.contains("unknown field"));
        let warm = format!(r#"{{"duration": 1, "warmup": 2, {VCS}, "buffer": {{"kind": "ppd"}}}}"#);
        assert_eq!(err(&warm).path, "warmup");
        let fine = format!(
            r#"{{"duration": 10, "sample_interval": 1e-9, {VCS}, "buffer": {{"kind": "ppd"}}}}"#
        );
        assert_eq!(err(&fine).path, "sample_interval");
        let fast = format!(
            r#"{{"duration": 1, "links": {{"cell_rate": 1e13}}, {VCS}, "buffer": {{"kind": "ppd"}}}}"#
        );
        assert_eq!(err(&fast).path, "links.cell_rate");
    }
}
