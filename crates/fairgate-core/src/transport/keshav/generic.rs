//! Keshav's "Generic" flow control: a fixed sliding window with a timeout of beta x smoothed
//! RTT, retransmitting only the packet that timed out (XNS SPP / pre-Tahoe TCP).
//!
//! Sources: [Keshav91, §6.5]. The window machinery and its
//! decisions are in [`super::packet_window`].
//!
//! Decisions: window 5 packets (the text's "max window 5 unless stated"), beta = 2, gain 7/8.

use super::packet_window::{PacketSink, WindowParams, WindowPolicy, WindowSender};
use crate::config::error::{check, ScenarioError};
use crate::config::units::Duration;
use crate::traffic::{AgentPair, Population, SourceConfig, SourceEnv};
use serde::{Deserialize, Serialize};

/// `kind = "generic"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct GenericConfig {
    /// Window in packets.
    pub window: u64,
    /// Data packet size in bytes.
    pub size: u32,
    pub ack_size: u32,
    /// Timeout = beta x smoothed RTT.
    pub beta: f64,
    /// Weight of the old average in the RTT EWMA.
    pub gain: f64,
    pub initial_rtt: Duration,
    /// Largest number of timeout doublings.
    pub max_backoff: u32,
    /// Mean of the exponential gaps between the application's packets (the text's Telnet:
    /// 5 s); none = an FTP that always has data.
    pub app_gap: Option<Duration>,
}

impl Default for GenericConfig {
    fn default() -> Self {
        GenericConfig {
            window: 5,
            size: 1000,
            ack_size: 40,
            beta: 2.0,
            gain: 0.875,
            initial_rtt: Duration::from_secs(1.0),
            max_backoff: 6,
            app_gap: None,
        }
    }
}

impl GenericConfig {
    fn params(&self) -> WindowParams {
        WindowParams {
            size: self.size,
            ack_size: self.ack_size,
            beta: self.beta,
            gain: self.gain,
            initial_rtt: self.initial_rtt,
            max_backoff: self.max_backoff,
            app_gap: self.app_gap,
        }
    }
}

/// The fixed window.
pub struct FixedWindow(pub u64);

impl WindowPolicy for FixedWindow {
    fn name(&self) -> &'static str {
        "generic"
    }
    fn window(&self) -> f64 {
        self.0 as f64
    }
}

/// Builds a packet-window source pair with `policy`.
pub(crate) fn pair<P: WindowPolicy + 'static>(
    env: &SourceEnv,
    params: WindowParams,
    policy: P,
) -> AgentPair {
    let ack_flow = env.ack_flow.unwrap_or(env.flow);
    AgentPair {
        sender: Box::new(WindowSender::new(
            env.flow,
            env.dst_node,
            env.receiver_agent,
            params,
            policy,
        )),
        receiver: Box::new(PacketSink::new(
            ack_flow,
            env.src_node,
            env.sender_agent,
            params.ack_size,
        )),
    }
}

impl SourceConfig for GenericConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "window", self.window)?;
        self.params().validate(path)
    }

    fn has_reverse_flow(&self) -> bool {
        true
    }

    /// A full window leaves at once, each packet kept until acknowledged.
    fn population(&self) -> Vec<Population> {
        vec![Population {
            field: "window",
            count: self.window as f64,
            bytes_each: super::packet_window::OUTSTANDING_BYTES,
        }]
    }

    fn build(&self, env: &SourceEnv) -> AgentPair {
        pair(env, self.params(), FixedWindow(self.window))
    }
}
