//! The sources of Keshav's experiments [Keshav91, ch. 4-6] that are not TCP: Generic and the
//! DECbit source over a shared packet-counting window, Packet-Pair, and the control-theoretic
//! PP_CTH with its fuzzy estimator.

pub mod decbit;
pub mod fuzzy;
pub mod generic;
pub mod packet_pair;
pub mod packet_window;
pub mod pair_core;
pub mod pp_cth;
