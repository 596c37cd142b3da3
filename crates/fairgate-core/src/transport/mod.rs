//! Transport protocols: the TCP family ([`tcp`]), the other sources of Keshav's experiments
//! ([`keshav`]), the applications above them ([`app`]) and the lazy timer both use.

pub mod app;
pub mod keshav;
pub mod tcp;
#[cfg(test)]
pub(crate) mod testing;
pub mod timer;
