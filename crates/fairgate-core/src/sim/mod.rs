//! The simulation: wires nodes, links, ports and agents together and runs the event loop.
//!
//! This layer sits above the algorithms: a [`port::Port`] is one queue discipline plus one
//! link, and [`Simulation`] dispatches every event (arrival, departure, timer) to the port or
//! agent it belongs to. Nothing below `sim` imports it.

pub mod device;
pub mod in_flight;
pub mod port;
pub mod progress;
pub mod simulation;

pub use simulation::{AgentSlot, FlowInfo, FlowRole, Footprint, SimParts, Simulation};
