//! fairgate-core: a packet-level simulator of congestion control at routers and gateways.
//!
//! # Layers
//!
//! Each layer uses only the layers above it in this list (a test checks the imports):
//!
//! 1. Ground: [`engine`] (simulated time, the event queue, random-number streams) and
//!    [`config`] (units, distributions, tagged `kind = "..."` configs, [`ScenarioError`]).
//! 2. The network: [`net`] (packets, links, nodes, routing, the [`net::Agent`] interface) and
//!    [`stats`] (per-flow and per-port counters, series, drop reasons and causes); beside them
//!    [`traces`] reads real packet traces (pcap, ERF, TSH, ITA, CSV) into header fields.
//! 3. The algorithms, one per file, each with its config: [`qdisc`] (schedulers, AQMs, buffer
//!    managers, filters, and the structures and flow classification they share),
//!    [`transport`] (the TCP family and Keshav's sources) and [`traffic`] (open-loop sources,
//!    sinks and the source registry). Gateway nodes that split connections (performance
//!    enhancing proxies) are neither a queue discipline nor a host transport: they are in
//!    [`gateway`], beside `transport`, and are wired by [`sim`] like hosts.
//! 4. The simulation: [`sim`] (a [`sim::port::Port`] is one discipline plus one link; the
//!    [`Simulation`] dispatches every event to the port or agent it concerns); [`atm`] is the
//!    cell-level counterpart for ATM GFR networks: AAL5 edges, cell ports and links, TCPs on
//!    named VCs).
//! 5. The top: [`scenario`] (the schema, its validation and building a [`Simulation`] from
//!    it), [`results`] (what a run reports) and [`studies`] (cost and data-structure studies).
//!
//! # A packet's path
//!
//! A source agent ([`traffic`], [`transport`]) hands a packet to its [`net::AgentCtx`]. The
//! [`Simulation`] looks up the next hop in the node's routing table ([`net::routing`]) and
//! offers the packet to that output [`sim::port::Port`], whose discipline ([`qdisc::Qdisc`])
//! accepts, drops or marks it; every drop is counted by reason in [`stats`] (and by the
//! discipline's own cause when it names one). When the link is free the port dequeues the
//! next packet, which arrives at the next node after its transmission and propagation time
//! ([`net::link`]); at its destination the receiving agent takes it and may answer (an ACK)
//! along the reverse route. Each packet is at every moment delivered, dropped or held by
//! exactly one port or link: conservation is checked at the end.

pub mod atm;
pub mod config;
pub mod engine;
pub mod gateway;
pub mod net;
pub mod qdisc;
pub mod results;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod studies;
pub mod traces;
pub mod traffic;
pub mod transport;

pub use config::ScenarioError;
pub use scenario::Scenario;
pub use sim::Simulation;
