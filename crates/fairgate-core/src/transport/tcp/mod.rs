//! The TCP family: one congestion-control variant per file (Tahoe, Reno, NewReno, SACK) over a
//! shared sender, receiver, RTO estimator and SACK scoreboard, configured as
//! `source = { kind = "tcp", cc = "..." }`.

pub mod cc;
pub mod config;
pub mod newreno;
pub mod receiver;
pub mod reno;
pub mod rto;
pub mod sack;
pub mod scoreboard;
pub mod sender;
pub mod tahoe;
pub mod tcp_options;
#[cfg(test)]
mod tcp_reference_tests;
#[cfg(test)]
mod tcp_wire;
pub mod variant;
