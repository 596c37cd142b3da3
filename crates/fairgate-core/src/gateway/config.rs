//! A gateway node's configuration: `[[nodes]] kind = "gateway"` with a `gateway = { ... }`
//! table. The decisions behind each option are on the docs page `docs/models/gateway.md`.

use crate::scenario::error::{check, join, ScenarioError};
use crate::scenario::units::Duration;
use crate::traffic::SourceConfig;
use crate::transport::app::AppSpec;
use crate::transport::tcp_config::TcpConfig;
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

fn default_tcp() -> TcpConfig {
    TcpConfig::deserialize(toml::Value::Table(toml::Table::new()))
        .expect("every TCP option has a default")
}

/// `gateway = { lhs = {...}, rhs = {...}, send_buffer = ..., syn_ack = ..., flush_period = ... }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GatewaySpec {
    /// The side facing the sources (LHS): the receiver options of a TCP config apply
    /// (`rwnd`, `window_scale`, `delayed_ack`, `cc = "sack"` for SACK blocks, `mss` for the
    /// window-update threshold).
    #[serde(default = "default_tcp")]
    pub lhs: TcpConfig,
    /// The sending side toward the far end (RHS), the satellite leg's transport: any TCP
    /// sender option (`cc`, `initial_window`, `window_scale`, `rate_cap`, ...). `app` and
    /// `handshake` are set by the gateway.
    #[serde(default = "default_tcp")]
    pub rhs: TcpConfig,
    /// Bytes of not-yet-sent data the RHS may hold per connection; absent = infinite.
    #[serde(default)]
    pub send_buffer: Option<u64>,
    #[serde(default)]
    pub syn_ack: SynAck,
    /// Period of the LHS receive-buffer flush; 0 = data leaves the LHS buffer at once.
    #[serde(default)]
    pub flush_period: Duration,
}

impl Default for GatewaySpec {
    fn default() -> Self {
        GatewaySpec {
            lhs: default_tcp(),
            rhs: default_tcp(),
            send_buffer: None,
            syn_ack: SynAck::default(),
            flush_period: Duration::default(),
        }
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
        if let Some(bytes) = self.send_buffer {
            check::positive_int(path, "send_buffer", bytes)?;
        }
        check::non_negative(path, "flush_period", self.flush_period.secs())
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

/// Gateway options belong to gateway nodes; each node's options must be valid.
pub fn check_nodes(nodes: &[crate::scenario::schema::NodeSpec]) -> Result<(), ScenarioError> {
    use crate::net::node::NodeKind;
    for (i, n) in nodes.iter().enumerate() {
        let path = format!("nodes[{i}].gateway");
        match (&n.gateway, n.kind) {
            (Some(spec), NodeKind::Gateway) => spec.validate(&path)?,
            (Some(_), kind) => {
                return Err(ScenarioError::new(
                    path,
                    format!("got gateway options on a {kind:?} node; expected kind = \"gateway\""),
                ))
            }
            (None, _) => {}
        }
    }
    Ok(())
}
