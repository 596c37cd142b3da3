//! ATM at cell level for GFR reproductions \[Goyal98]: AAL5 segmentation and reassembly at the
//! edge switches ([`aal5`]), named GFR VCs with F-GCRA tagging ([`gfr`]), cell links and the
//! backbone buffer disciplines ([`port`]), the paper's topology carrying SACK TCPs
//! ([`network`]) and what a run reports ([`results`]). Configured by a scenario's `[atm]`
//! section ([`config`]).

pub mod aal5;
pub mod config;
pub mod gfr;
pub mod network;
pub mod port;
pub mod results;

pub use config::{AtmConfig, AtmSpec};
pub use results::{run, AtmResults, AtmRun};
