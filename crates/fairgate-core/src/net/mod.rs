//! Packets, nodes, links, ports, routing and agents.

pub mod agent;
pub mod device;
pub mod link;
pub mod node;
pub mod packet;
pub mod port;
pub mod routing;

pub use agent::{Agent, AgentCtx};
pub use packet::{flags, Packet, PacketArena, PacketId, PacketKind};
