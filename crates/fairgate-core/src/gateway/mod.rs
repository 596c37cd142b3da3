//! Split-connection gateways [Vaidyanathan99, §4.1-4.3; Byun07, §1.2]: a gateway node
//! terminates each TCP connection crossing it, acknowledges the data itself, holds it and
//! sends it on over a connection of its own. See `docs/models/gateway.md`.

pub mod config;
pub mod flow_control;
pub mod node;
pub mod split;
pub mod two_server;

pub use config::{GatewaySpec, SynAck};
pub use node::{FlowMap, Gateway};
pub use split::{Occupancy, SplitConnection};

use crate::engine::{FlowInfo, FlowRole};

/// The TCP data flows and their ACK flows, which a gateway may split.
pub fn tcp_flow_map(flows: &[FlowInfo]) -> FlowMap {
    let mut map = FlowMap {
        ack_flow_of: vec![None; flows.len()],
        data_flow_of: vec![None; flows.len()],
    };
    for (i, f) in flows.iter().enumerate() {
        if let (FlowRole::Ack, Some(data), "tcp") = (f.role, f.parent, f.kind.as_str()) {
            map.ack_flow_of[data as usize] = Some(i as u32);
            map.data_flow_of[i] = Some(data);
        }
    }
    map
}
