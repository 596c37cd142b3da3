//! Data structures the per-flow schedulers share: the per-flow queue table (`flow_table`) over
//! packet lists (`packet_lists`), the bucket table of stochastic FQ (`bucket_table`), the
//! indexed and lazy heaps (`heap`), the tag-ordered queues (`tagged`), FQ's round number
//! (`round_number`) and the virtual-time core of SCFQ and start-time FQ (`virtual_time`).

pub mod bucket_table;
pub mod flow_table;
pub mod heap;
pub mod packet_lists;
pub mod round_number;
pub mod tagged;
pub mod virtual_time;
