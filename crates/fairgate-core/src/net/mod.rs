//! Packets, nodes, links, routing and the agent interface. Ports (a discipline plus a link)
//! are wired above the disciplines, in [`crate::sim`].

pub mod agent;
pub mod in_order;
pub mod link;
pub mod node;
pub mod packet;
pub mod routing;

pub use agent::{Agent, AgentCtx};
pub use packet::{flags, Packet, PacketArena, PacketId, PacketKind};
