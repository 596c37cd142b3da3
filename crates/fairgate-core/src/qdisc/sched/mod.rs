//! Per-flow schedulers ([Keshav91, ch. 2-3], [Vaidyanathan99, ch. 2]): one file per algorithm,
//! sharing the data structures of [`super::structures`] (per-flow queue table, tag-ordered
//! queues, heaps, FQ's round number).

pub mod drr;
pub mod fq;
pub mod fqbit;
pub mod nagle;
pub mod scfq;
pub mod selective_decbit;
pub mod stfq;
pub mod stochastic_fq;
pub mod wfq;
pub mod wrr;
