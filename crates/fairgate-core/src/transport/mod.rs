//! Transport protocols, one per file: the TCP family (one congestion-control variant per file
//! over a shared sender, receiver, RTO estimator and SACK scoreboard), Keshav's Generic and
//! DECbit sources over a shared packet-counting window, and the applications above them.

pub mod app;
pub mod cc;
pub mod decbit;
pub mod fuzzy;
pub mod generic;
pub mod newreno;
pub mod packet_pair;
pub mod packet_window;
pub mod pair_core;
pub mod pp_cth;
pub mod reno;
pub mod rto;
pub mod sack;
pub mod scoreboard;
pub mod tahoe;
pub mod tcp;
pub mod tcp_config;
pub mod tcp_options;
pub mod tcp_receiver;
#[cfg(test)]
mod tcp_reference_tests;
#[cfg(test)]
mod tcp_wire;
#[cfg(test)]
pub(crate) mod testing;
pub mod timer;
