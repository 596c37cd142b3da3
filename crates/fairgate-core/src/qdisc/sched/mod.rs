//! Per-flow schedulers ([Keshav91, ch. 2-3], [Vaidyanathan99, ch. 2]): one file per algorithm,
//! sharing the per-flow queue table (`flow_table`), the tag-ordered queues (`tagged`), the
//! indexed heap (`heap`) and FQ's round number (`round_number`).

pub mod bucket_table;
pub mod cost_model;
pub mod drr;
pub mod flow_table;
pub mod fq;
pub mod fqbit;
pub mod heap;
pub mod keshav;
pub mod nagle;
pub mod packet_lists;
pub mod round_number;
pub mod scfq;
pub mod selective_decbit;
pub mod stfq;
pub mod stochastic_fq;
pub mod tagged;
pub mod virtual_time;
pub mod wfq;
pub mod wrr;
