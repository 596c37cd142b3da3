//! Studies that map a cost or performance surface rather than run one scenario: Keshav's
//! buffer data structures for fair queueing [Keshav91, ch. 3] and Vaidyanathan's per-packet
//! cost model of fair-queueing overhead [Vaidyanathan99, §2.3-2.6]. `fairgate study` runs
//! them from Python.

pub mod cost_model;
pub mod keshav_buffers;
pub mod trace_gateway;
