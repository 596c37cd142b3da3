//! Split-connection gateways [Vaidyanathan99, §4.1-4.3; Byun07, §1.2]: a gateway node
//! terminates each TCP connection crossing it, acknowledges the data itself, holds it and
//! sends it on over a connection of its own. See `docs/models/gateway.md`.

pub mod config;
pub mod flow_control;
mod leg_window;
mod legs;
pub mod mux;
pub mod node;
mod pool;
mod relay;
pub mod split;
pub mod two_server;

pub use config::{GatewaySpec, MultiplexSpec, SynAck};
pub use mux::Framing;
pub use node::{FlowMap, Gateway, Peer};
pub use split::{Occupancy, SplitConnection};
