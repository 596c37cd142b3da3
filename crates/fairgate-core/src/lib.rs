//! fairgate-core: a packet-level simulator of congestion control at routers and gateways.
//!
//! Layers: [`engine`] (time, events, the run loop), [`net`] (packets, links, ports, routing,
//! agents), [`qdisc`] (queue disciplines), [`traffic`] (sources and transports), [`stats`]
//! (counters and series), [`scenario`] (the config schema and builder), [`results`] (what a run
//! reports).

pub mod atm;
pub mod classify;
pub mod engine;
pub mod net;
pub mod qdisc;
pub mod results;
pub mod scenario;
pub mod stats;
pub mod traffic;
pub mod transport;

pub use engine::Simulation;
pub use scenario::{Scenario, ScenarioError};
