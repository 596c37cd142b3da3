//! The configuration of a GFR network run: the paper's topology [Goyal98, §4] with named VCs,
//! cell links, the backbone buffer discipline and the TCP connections: a scenario's `[atm]`
//! section, timed by its `[simulation]`.
//!
//! Decisions (docs/models/cell_link.md, docs/models/gfr.md): OC-3c cells at 353,207 cells/s,
//! 5 µs/km, 10 km local hops and a 1000 km backbone by default; the TCP defaults are SACK with
//! a 1460-byte MSS and a 1 MB window (window scale 5); TCPs start uniformly within
//! `start_spread` seconds.

use super::gfr::{TaggingConfig, VcConfig};
use crate::config::error::{check, join, ScenarioError};
use crate::config::memory_limit::MemoryLimit;
use crate::config::units::Duration;
use crate::qdisc::buffer::dfba::DfbaConfig;
use crate::qdisc::buffer::epd::EpdConfig;
use crate::qdisc::buffer::fba::FbaConfig;
use crate::qdisc::buffer::ppd::PpdConfig;
use crate::qdisc::buffer::selective_drop::SelectiveDropConfig;
use crate::qdisc::QdiscConfig;
use crate::traffic::SourceConfig;
use crate::transport::tcp::config::{CcKind, TcpConfig};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The discipline of the backbone switch's output buffer. Read by its `kind` with the path of
/// an error inside kept (`atm.buffer.z`), as queue disciplines are.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BackboneBuffer {
    Dfba(DfbaConfig),
    Epd(EpdConfig),
    Ppd(PpdConfig),
    SelectiveDrop(SelectiveDropConfig),
    Fba(FbaConfig),
    Fifo(CellFifo),
}

crate::config::tagged::deserialize_by_kind!(BackboneBuffer, {
    "dfba" => Dfba,
    "epd" => Epd,
    "ppd" => Ppd,
    "selective_drop" => SelectiveDrop,
    "fba" => Fba,
    "fifo" => Fifo,
});

/// Cell drop-tail without frame awareness.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CellFifo {
    pub limit: u64,
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
            BackboneBuffer::Fifo(CellFifo { limit }) => check::positive_int(path, "limit", *limit),
        }
    }
}

/// Occupancy samples a run may keep (VCs × duration / sample interval).
const MAX_SAMPLES: f64 = 2e7;
/// Memory per TCP of the cell network, sender, receiver and their segmentation state: 5.2 KiB
/// measured at 100,000 and 400,000 TCPs (peak RSS), rounded up.
const BYTES_PER_TCP: f64 = 6144.0;
const MIB: f64 = 1024.0 * 1024.0;
/// Cells per second: a cell time of at least 10 ps.
const MAX_CELL_RATE: f64 = 1e11;

fn default_start_spread() -> f64 {
    0.5
}

/// Every link of the topology: one cell rate, lengths in km.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CellLinks {
    /// Cells per second (OC-3c: 149.76 Mb/s of SONET payload / 424 bits).
    pub cell_rate: f64,
    pub us_per_km: f64,
    /// x: local switch to backbone switch.
    pub local_km: f64,
    /// y: backbone switch to backbone switch.
    pub backbone_km: f64,
}

impl Default for CellLinks {
    fn default() -> Self {
        CellLinks {
            cell_rate: 353_207.0,
            us_per_km: 5.0,
            local_km: 10.0,
            backbone_km: 1000.0,
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

/// The TCP defaults of the reproduction (SACK, 1460-byte MSS, 1 MB window, no delayed ACKs,
/// no timestamps, 10 ms ticks), fixed here so they do not follow fairgate's packet-level TCP
/// defaults (docs/reproductions/dfba.md).
pub fn default_tcp() -> TcpConfig {
    let mut tcp: TcpConfig = serde_json::from_str("{}").expect("TCP defaults deserialize");
    tcp.cc = CcKind::Sack;
    tcp.mss = 1460;
    tcp.rwnd = 1 << 20;
    tcp.window_scale = 5;
    tcp.delayed_ack = false;
    tcp.timestamps = false;
    tcp.granularity = Duration::from_secs(0.01);
    tcp
}

/// The `[atm]` section of a scenario: the named VCs, the links, the backbone buffer and the
/// TCPs. Time, seed and sampling come from the scenario's `[simulation]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AtmSpec {
    pub vcs: Vec<VcConfig>,
    #[serde(default)]
    pub links: CellLinks,
    /// Add the 8-byte LLC/SNAP header to every frame.
    #[serde(default)]
    pub llc_snap: bool,
    /// F-GCRA tagging of frames beyond MCR at the ingress edge (off when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tagging: Option<TaggingConfig>,
    pub buffer: BackboneBuffer,
    #[serde(default = "default_tcp")]
    pub tcp: TcpConfig,
    /// TCPs start at uniform random times in [0, start_spread) seconds.
    #[serde(default = "default_start_spread")]
    pub start_spread: f64,
}

/// A run of the cell network: the `[atm]` section with the scenario's timing resolved.
#[derive(Clone, Debug)]
pub struct AtmConfig {
    pub seed: u64,
    /// Seconds simulated.
    pub duration: f64,
    /// Seconds before the measurement window opens.
    pub warmup: f64,
    /// Seconds between occupancy samples.
    pub sample_interval: f64,
    /// `simulation.memory_limit_mib`, or the packet scenarios' default.
    pub memory_limit_mib: u64,
    pub spec: AtmSpec,
}

impl AtmConfig {
    /// Checks the timing and the `[atm]` section; errors name the scenario's field path.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        check::positive("simulation", "duration", self.duration)?;
        check::positive("simulation", "sample_interval", self.sample_interval)?;
        let vcs = self.spec.vcs.len() as f64;
        if self.duration / self.sample_interval * vcs > MAX_SAMPLES {
            return Err(ScenarioError::new(
                "simulation.sample_interval",
                format!(
                    "got {} s, expected at least {} s: at most {MAX_SAMPLES} occupancy samples",
                    self.sample_interval,
                    self.duration * vcs / MAX_SAMPLES
                ),
            ));
        }
        self.spec.validate("atm")?;
        self.check_memory()
    }

    /// Refuses a network whose TCPs would not fit in `memory_limit_mib`, naming the VC with
    /// the most (six VCs of 100,000 TCPs each passed every check and aborted the process when
    /// their state was allocated).
    fn check_memory(&self) -> Result<(), ScenarioError> {
        let tcps: f64 = self.spec.vcs.iter().map(|vc| vc.tcps as f64).sum();
        let needed_mib = tcps * BYTES_PER_TCP / MIB;
        let limit = MemoryLimit::of(Some(self.memory_limit_mib));
        if needed_mib <= limit.mib as f64 {
            return Ok(());
        }
        let (i, largest) = self
            .spec
            .vcs
            .iter()
            .enumerate()
            .rev() // the first of the largest
            .max_by_key(|(_, vc)| vc.tcps)
            .expect("validate_vcs: at least one VC");
        Err(ScenarioError::new(
            format!("atm.vcs[{i}].tcps"),
            format!(
                "got {}: {tcps:.0} TCPs on {} VCs need about {needed_mib:.0} MiB, more than \
                 {}; expected fewer, {}",
                largest.tcps,
                self.spec.vcs.len(),
                limit.words(),
                limit.raise()
            ),
        ))
    }
}

impl AtmSpec {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::non_negative(path, "start_spread", self.start_spread)?;
        self.validate_vcs(path)?;
        self.links.validate(&join(path, "links"))?;
        if let Some(t) = &self.tagging {
            check::non_negative(&join(path, "tagging"), "tolerance_cells", t.tolerance_cells)?;
        }
        self.buffer.validate(&join(path, "buffer"))?;
        self.tcp.validate(&join(path, "tcp"))
    }

    fn validate_vcs(&self, path: &str) -> Result<(), ScenarioError> {
        if self.vcs.is_empty() {
            return Err(ScenarioError::new(
                join(path, "vcs"),
                "got none, expected at least one VC",
            ));
        }
        let mut names = HashMap::new();
        for (i, vc) in self.vcs.iter().enumerate() {
            let path = format!("{}[{i}]", join(path, "vcs"));
            if let Some(expected) = check::label_problem(&vc.name) {
                return Err(ScenarioError::new(
                    join(&path, "name"),
                    format!("got {:?}, expected {expected}", vc.name),
                ));
            }
            if let Some(taken) = names.insert(check::look(&vc.name), i) {
                return Err(ScenarioError::new(
                    join(&path, "name"),
                    check::taken_message(&vc.name, &self.vcs[taken].name, "VC"),
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

    fn parse(text: &str) -> Result<AtmConfig, ScenarioError> {
        let scenario = crate::scenario::parse(text, &[])?;
        crate::scenario::atm::atm_config(&scenario)
    }

    fn err(text: &str) -> ScenarioError {
        parse(text).expect_err("bad config")
    }

    const VCS: &str = "[[atm.vcs]]\nname = \"a\"\nmcr = 1000\ntcps = 2\n";

    fn with(simulation: &str, atm: &str) -> String {
        format!("[simulation]\nduration = 1\n{simulation}\n[atm]\n{atm}\n{VCS}")
    }

    #[test]
    fn a_minimal_scenario_takes_the_paper_defaults() {
        let c = parse(&with("", "buffer = { kind = \"dfba\" }")).expect("valid");
        assert_eq!(c.spec.links, CellLinks::default());
        assert_eq!(c.spec.tcp.cc, CcKind::Sack);
        assert!(matches!(c.spec.buffer, BackboneBuffer::Dfba(_)));
        assert_eq!((c.seed, c.duration, c.sample_interval), (1, 1.0, 0.001));
    }

    #[test]
    fn bad_fields_are_named_by_path() {
        let fifo = "buffer = { kind = \"fifo\", limit = 10 }";
        let dup = format!("[simulation]\nduration = 1\n[atm]\n{fifo}\n{VCS}{VCS}");
        assert_eq!(err(&dup).path, "atm.vcs[1].name");
        for unlabelled in ["", " a", "a\\nb", "a\\u001b[31m", "a\\u200b"] {
            let text = with("", fifo).replace("name = \"a\"", &format!("name = \"{unlabelled}\""));
            assert_eq!(err(&text).path, "atm.vcs[0].name", "{unlabelled:?}");
        }
        let vcs: String = (0..7)
            .map(|i| format!("[[atm.vcs]]\nname = \"v{i}\"\nmcr = 1000\ntcps = 100000\n"))
            .collect();
        let many = format!("[simulation]\nduration = 1\n[atm]\n{fifo}\n{vcs}");
        let e = err(&many);
        assert_eq!(e.path, "atm.vcs[0].tcps", "{e}");
        assert!(e.message.contains("700000 TCPs on 7 VCs need about"), "{e}");
        let raised = many.replace("duration = 1", "duration = 1\nmemory_limit_mib = 8192");
        assert!(parse(&raised).is_ok(), "a limit raised on purpose");
        let named = format!("name = \"a\\u0007\"\n{}", with("", fifo));
        assert_eq!(err(&named).path, "name");
        let mcr = with("", fifo).replace("mcr = 1000", "mcr = 0");
        assert_eq!(err(&mcr).path, "atm.vcs[0].mcr");
        let limit = with("", "buffer = { kind = \"fifo\", limit = 0 }");
        assert_eq!(err(&limit).path, "atm.buffer.limit");
        let mcrs = with("", "buffer = { kind = \"dfba\", mcrs = [1] }");
        assert_eq!(err(&mcrs).path, "atm.buffer.mcrs");
        let unknown = with("", &format!("{fifo}\nx = 1"));
        assert!(err(&unknown).message.contains("unknown field"), "{unknown}");
        let warm = with("warmup = 2", fifo);
        assert_eq!(err(&warm).path, "simulation.warmup");
        let fine = with("sample_interval = \"1ns\"", fifo);
        assert_eq!(err(&fine).path, "simulation.sample_interval");
        let fast = with("", &format!("{fifo}\nlinks = {{ cell_rate = 1e13 }}"));
        assert_eq!(err(&fast).path, "atm.links.cell_rate");
        let end = with("end = 0.5", fifo);
        assert_eq!(err(&end).path, "simulation.end");
        let nodes = format!("{}\n[[nodes]]\nname = \"h\"\n", with("", fifo));
        assert_eq!(err(&nodes).path, "nodes");
    }

    #[test]
    fn links_and_tagging_default_key_by_key_and_refuse_unknown_keys() {
        let fifo = "buffer = { kind = \"fifo\", limit = 10 }";
        let partial = with(
            "",
            &format!("{fifo}\nlinks = {{ local_km = 5 }}\ntagging = {{}}"),
        );
        let c = parse(&partial).expect("valid");
        let links = CellLinks {
            local_km: 5.0,
            ..CellLinks::default()
        };
        assert_eq!((c.spec.links, c.spec.links.backbone_km), (links, 1000.0));
        assert_eq!(c.spec.tagging.map(|t| t.tolerance_cells), Some(64.0));
        let typo = with("", &format!("{fifo}\nlinks = {{ local = 5 }}"));
        assert!(err(&typo).message.contains("unknown field `local`"));
    }
}
