//! A gateway node's configuration: `[[nodes]] kind = "gateway"` with a `gateway = { ... }`
//! table. The decisions behind each option are on the docs page `docs/models/gateway.md`.

use crate::config::error::{check, join, ScenarioError};
use crate::config::units::Duration;
use crate::traffic::SourceConfig;
use crate::transport::app::AppSpec;
use crate::transport::tcp::config::TcpConfig;
use serde::{Deserialize, Serialize};

/// When the gateway answers a source's SYN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SynAck {
    /// Once the far side has answered the gateway's own SYN [Vaidyanathan99, §4.2].
    #[default]
    AfterFarSide,
    /// At once, before the far side is reached.
    Immediate,
}

/// `gateway = { lhs = {...}, rhs = {...}, send_buffer = ..., syn_ack = ..., flush_period = ... }`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewaySpec {
    /// The side facing the sources (LHS): the receiver options of a TCP config apply
    /// (`rwnd`, `window_scale`, `delayed_ack`, `cc = "sack"` for SACK blocks, `mss` for the
    /// window-update threshold).
    pub lhs: TcpConfig,
    /// The sending side toward the far end (RHS), the satellite leg's transport: any TCP
    /// sender option (`cc`, `initial_window`, `window_scale`, `rate_cap`, ...). `app` and
    /// `handshake` are set by the gateway.
    pub rhs: TcpConfig,
    /// Bytes of not-yet-sent data the RHS may hold per connection; absent = infinite.
    pub send_buffer: Option<u64>,
    /// Back-pressure from the output port, packets: the RHS sends only while the port toward
    /// the destination holds fewer than this many packets; absent = off.
    pub transmit_limit: Option<u64>,
    pub syn_ack: SynAck,
    /// Period of the LHS receive-buffer flush; 0 = data leaves the LHS buffer at once.
    pub flush_period: Duration,
    /// Buffer flow control [Byun07, eq. 2.1]; absent = off (a plain PEP).
    pub flow_control: Option<FlowControlSpec>,
    /// The two-server model [Vaidyanathan99, §4.3]; absent = packets reach the TCP layer at once.
    pub two_server: Option<super::two_server::TwoServerSpec>,
    /// Several end-to-end connections on one leg to a peer gateway; absent = one RHS each.
    pub multiplex: Option<MultiplexSpec>,
    /// Trace the first this many connections the gateway opens one by one (web and HTTP
    /// flows carry many per flow), beside the per-flow sums; 0 = none.
    pub trace_connections: u32,
}

/// `multiplex = { peer = "gw2", legs = 1 }`: every connection the gateway splits is relayed
/// over one of `legs` connections to the gateway node `peer`, which demultiplexes them; or
/// `multiplex = { peer = "gw2", connections_per_leg = N }`: at most N connections ride one
/// leg at once, and a connection that finds every leg full opens another.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct MultiplexSpec {
    pub peer: String,
    /// Legs to the peer, connection k riding leg k mod `legs` (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub legs: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections_per_leg: Option<u32>,
}

/// How a multiplexing gateway assigns connections to legs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LegAssignment {
    /// Connection k (in the order they open) rides leg k mod this many legs.
    RoundRobin(u32),
    /// A connection rides the first leg carrying fewer than this many connections.
    Fill(u32),
}

impl MultiplexSpec {
    pub fn assignment(&self) -> LegAssignment {
        match self.connections_per_leg {
            Some(n) => LegAssignment::Fill(n),
            None => LegAssignment::RoundRobin(self.legs.unwrap_or(1)),
        }
    }

    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        if let (Some(_), Some(_)) = (self.legs, self.connections_per_leg) {
            return Err(ScenarioError::new(
                join(path, "connections_per_leg"),
                "got both `legs` and `connections_per_leg`, expected one of them",
            ));
        }
        if let Some(n) = self.connections_per_leg {
            check::positive_int(path, "connections_per_leg", n as u64)?;
        }
        let legs = self.legs.unwrap_or(1);
        check::positive_int(path, "legs", legs as u64)?;
        if legs > MAX_LEGS {
            return Err(ScenarioError::new(
                join(path, "legs"),
                format!("got {legs}, expected at most {MAX_LEGS}"),
            ));
        }
        Ok(())
    }
}

/// The most legs one gateway may open to its peer.
pub const MAX_LEGS: u32 = 65_536;

/// `flow_control = { preset = "fc1" }` or explicit parameters [Byun07, §2.3 and Table 3.2]:
/// the PEP buffer limit B is multiplied by `decr` on each marked arrival and grows by
/// `incr × buffer` on each unmarked one, except within `freeze` of the last decrement; the
/// window advertised upstream is min(B - bytes held, `max_window`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FlowControlSpec {
    /// FC1-FC5 of the source; explicit fields override the preset's.
    pub preset: Option<FcPreset>,
    /// The PEP buffer per connection, bytes (its starting and largest limit).
    pub buffer: u64,
    /// MaxRcvWind, bytes.
    pub max_window: u64,
    pub decr: Option<f64>,
    /// Fraction of `buffer` added per unmarked arrival.
    pub incr: f64,
    pub freeze: Duration,
    /// Whose buffer `buffer` is: each connection's, or each user's (destination host's),
    /// shared by its connections [Byun07, §6.1].
    pub pool: PoolKind,
}

/// `pool = "connection"` (default) or `"user"`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PoolKind {
    #[default]
    Connection,
    User,
}

/// The five parameter sets of [Byun07, Table 3.2]; they differ in `decr` only.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FcPreset {
    Fc1,
    Fc2,
    Fc3,
    Fc4,
    Fc5,
}

impl FcPreset {
    pub fn decr(self) -> f64 {
        match self {
            FcPreset::Fc1 => 0.97,
            FcPreset::Fc2 => 0.95,
            FcPreset::Fc3 => 0.90,
            FcPreset::Fc4 => 0.80,
            FcPreset::Fc5 => 0.50,
        }
    }
}

impl Default for FlowControlSpec {
    fn default() -> Self {
        FlowControlSpec {
            preset: None,
            buffer: 625_000,
            max_window: 16_000,
            decr: None,
            incr: 0.01,
            freeze: Duration::from_secs(0.2),
            pool: PoolKind::Connection,
        }
    }
}

impl FlowControlSpec {
    /// The decrement factor: explicit, else the preset's, else FC3's.
    pub fn decr(&self) -> f64 {
        self.decr
            .or(self.preset.map(FcPreset::decr))
            .unwrap_or(FcPreset::Fc3.decr())
    }

    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "buffer", self.buffer)?;
        check::positive_int(path, "max_window", self.max_window)?;
        if let Some(decr) = self.decr {
            check::in_range(path, "decr", decr, 0.0, 1.0)?;
        }
        check::in_range(path, "incr", self.incr, 0.0, 1.0)?;
        check::non_negative(path, "freeze", self.freeze.secs())
    }
}

impl GatewaySpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.lhs.validate(&join(path, "lhs"))?;
        self.rhs.validate(&join(path, "rhs"))?;
        for (side, app) in [("lhs", &self.lhs.app), ("rhs", &self.rhs.app)] {
            if *app != AppSpec::Bulk {
                return Err(ScenarioError::new(
                    join(&join(path, side), "app"),
                    "got an application, expected none (the gateway relays the source's data)",
                ));
            }
        }
        self.check_unread_side_keys(path)?;
        if self.rhs.send_buffer.is_some() {
            return Err(ScenarioError::new(
                join(&join(path, "rhs"), "send_buffer"),
                "got a send buffer, expected none here (the gateway's `send_buffer` bounds it)",
            ));
        }
        if let Some(bytes) = self.send_buffer {
            check::positive_int(path, "send_buffer", bytes)?;
        }
        if let Some(packets) = self.transmit_limit {
            check::positive_int(path, "transmit_limit", packets)?;
        }
        check::non_negative(path, "flush_period", self.flush_period.secs())?;
        if let Some(fc) = &self.flow_control {
            fc.validate(&join(path, "flow_control"))?;
        }
        if let Some(m) = &self.multiplex {
            m.validate(&join(path, "multiplex"))?;
        }
        match &self.two_server {
            Some(ts) => ts.validate(&join(path, "two_server")),
            None => Ok(()),
        }
    }

    /// Keys of the two sides the gateway never reads are refused rather than ignored: a
    /// sender's option at the LHS (a receiver) and the RHS `handshake` (set per connection).
    fn check_unread_side_keys(&self, path: &str) -> Result<(), ScenarioError> {
        if let Some(key) = self.lhs.sender_key_set() {
            return Err(ScenarioError::new(
                join(&join(path, "lhs"), key),
                "got a sender's option, which the LHS (a receiver: it only acknowledges the \
                 source's data) never reads; expected it in `rhs`, or not at all",
            ));
        }
        if self.rhs.handshake {
            return Err(ScenarioError::new(
                join(&join(path, "rhs"), "handshake"),
                "got true, which the gateway never reads: an RHS connection opens with a \
                 handshake when the source's connection did; expected none here",
            ));
        }
        Ok(())
    }

    /// The RHS sender's configuration for one connection.
    pub(crate) fn rhs_config(&self, handshake: bool) -> TcpConfig {
        TcpConfig {
            app: AppSpec::Manual,
            handshake,
            ..self.rhs.clone()
        }
    }
}
