//! The logs no estimate can size before a run (every window change with
//! `trace_every_change`, every drop and mark with `record_drops = "all"`, every finished
//! transfer of a web or HTTP source with `record_transfers`) and the room a scenario leaves
//! them of its memory limit; the engine checks them at each sample (`docs/scenarios.md`,
//! limits).

use crate::config::memory_limit::MemoryLimit;

/// Bytes a window-change trace row takes, in the run and in its results.
pub const BYTES_PER_TRACE_ROW: f64 = 64.0;
/// Bytes a drop or mark event takes, in the run and in its results.
pub const BYTES_PER_DROP_EVENT: f64 = 96.0;
/// Bytes a finished transfer takes: its record, and its 15 columns in the results.
pub const BYTES_PER_TRANSFER: f64 =
    std::mem::size_of::<crate::stats::transfers::TransferRecord>() as f64 + 120.0;

/// What the unsized logs of a run may take.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRoom {
    /// Bytes the logs may take: the memory limit less the estimate of everything else.
    pub bytes: f64,
    /// The limit they come from (the scenario's, or the address space's).
    pub limit: MemoryLimit,
    pub traces_every_change: bool,
    pub drops_all: bool,
    /// The `record_transfers` field of the first source that records transfers, if one does.
    pub transfers: Option<String>,
}
