//! The scenario schema: the single source of truth for TOML files and Python builders.

use super::topology::TopologySpec;
use crate::config::dist::DurationDist;
use crate::config::units::{Duration, Rate};
use crate::net::link::{deserialize_loss, DelaySpec, LossSpec};
use crate::net::node::NodeKind;
use crate::qdisc::QdiscSpec;
use crate::traffic::SourceSpec;
use serde::{Deserialize, Serialize};

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub simulation: SimulationSpec,
    #[serde(default)]
    pub topology: Option<TopologySpec>,
    #[serde(default)]
    pub nodes: Vec<NodeSpec>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// A cell-level GFR network [Goyal98, §4] instead of nodes, links and flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atm: Option<crate::atm::AtmSpec>,
}

/// `[simulation]`: how long, which seed, how often to sample.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    pub duration: Duration,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Interval of the queue-length and flow-counter series (default: duration / 1000).
    #[serde(default)]
    pub sample_interval: Option<Duration>,
    /// Transports trace every window change, not only the sampled values.
    #[serde(default)]
    pub trace_every_change: bool,
    /// Refuse scenarios whose estimated memory exceeds this (default 4096 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_mib: Option<u64>,
    /// Summaries count only from this time on (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Duration>,
    /// Summaries count only up to this time (default: the duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<Duration>,
    /// Keep a row per drop and per mark: `"all"` or the first N (default: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_drops: Option<crate::stats::events::EventLimit>,
    /// Times that cut the run into traffic phases for the per-phase summary (default: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phase_edges: Vec<Duration>,
}

fn default_seed() -> u64 {
    1
}

/// `[[nodes]]`: a host, a router or a gateway.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    #[serde(default)]
    pub kind: NodeKind,
    /// Options of a `kind = "gateway"` node (defaults when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<crate::gateway::GatewaySpec>,
}

/// `[[links]]`: a simplex link, or a pair when `duplex` (the default).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub from: String,
    pub to: String,
    pub rate: Rate,
    #[serde(default)]
    pub delay: DelaySpec,
    #[serde(default, deserialize_with = "deserialize_loss")]
    pub loss: Option<LossSpec>,
    #[serde(default)]
    pub queue: QdiscSpec,
    /// Also create the link `to -> from` with the same rate, delay and queue (no loss).
    #[serde(default = "yes")]
    pub duplex: bool,
    /// Overrides for the reverse direction.
    #[serde(default)]
    pub reverse: Option<LinkOverride>,
    /// A port ("a->b") whose queue this port's discipline watches instead of its own.
    #[serde(default)]
    pub monitor: Option<String>,
    /// Packets a transmit ring under the discipline holds, in both directions (0 = none).
    #[serde(default)]
    pub device_queue: u64,
}

fn yes() -> bool {
    true
}

/// Parameters of the reverse direction of a duplex link that differ from the forward one.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkOverride {
    pub rate: Option<Rate>,
    pub delay: Option<DelaySpec>,
    #[serde(deserialize_with = "deserialize_loss")]
    pub loss: Option<LossSpec>,
    pub queue: Option<QdiscSpec>,
    pub monitor: Option<String>,
}

/// `[[flows]]`: a source on `src` sending to `dst`. With `count = N`, N flows are made and
/// `{i}` in `name`, `src` and `dst` is replaced by 0..N-1.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    #[serde(default)]
    pub start: StartSpec,
    #[serde(default)]
    pub stop: Option<Duration>,
    #[serde(default)]
    pub count: Option<u32>,
    pub source: SourceSpec,
    /// A schedule of active-flow counts, expanded into groups when read (`super::phases`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<super::phases::PhaseSpec>,
    /// The `[[flows]]` entry this flow was written as, when phases were expanded.
    #[serde(skip)]
    pub entry: Option<usize>,
}

/// A start time, or a distribution of start times (drawn per flow).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(transparent)]
pub struct StartSpec(pub DurationDist);

impl Default for StartSpec {
    fn default() -> Self {
        StartSpec(DurationDist(crate::config::dist::Dist::constant(0.0)))
    }
}

/// Rate and delay of a link class in a topology builder.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    pub rate: Rate,
    #[serde(default)]
    pub delay: DelaySpec,
    #[serde(default, deserialize_with = "deserialize_loss")]
    pub loss: Option<LossSpec>,
    #[serde(default)]
    pub queue: QdiscSpec,
    /// Queue of the reverse direction (default: the same as `queue`).
    #[serde(default)]
    pub reverse_queue: Option<QdiscSpec>,
    /// Packets a transmit ring under the discipline holds (0 = none).
    #[serde(default)]
    pub device_queue: u64,
}
