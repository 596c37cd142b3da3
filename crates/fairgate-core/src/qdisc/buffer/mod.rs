//! Buffer managers for per-flow schedulers: the hook that decides which packet a scheduler
//! drops when its shared buffer fills (or early, for PFD), independent of the service order.
//!
//! Protocol, followed by every per-flow scheduler: the scheduler first appends the arrival to
//! its flow's queue, then
//! 1. calls [`BufferManager::early`] once (an early, probabilistic decision: PFD), and removes
//!    the victim it names, if any;
//! 2. while [`BufferManager::over_capacity`] holds, calls [`BufferManager::overflow`] and
//!    removes the victim it names;
//! 3. calls [`BufferManager::on_change`] for every queue whose length changed (arrivals,
//!    departures and discards), for managers that track occupancy incrementally
//!    (quasi-pushout).
//!
//! A victim is the head or the tail of one flow queue; the arrival itself is the tail of its
//! own queue. The scheduler drops the victim through `QdiscCtx::drop` with the victim's reason
//! and must keep its own bookkeeping (finish numbers, deficits) consistent.

pub mod dfba;
pub mod drop_front;
pub mod droptail;
pub mod epd;
pub mod fba;
pub mod fq_red;
pub mod frame_fifo;
pub mod lqd;
pub mod pfd;
pub mod ppd;
pub mod quasi_pushout;
pub mod registry;
pub mod rnd;
pub mod selective_drop;
pub mod soft_threshold;
#[cfg(test)]
pub(crate) mod testing;

pub use registry::{check_manager_keys, BufferSpec};

use super::{Cause, DropReason, QdiscCtx};
use crate::config::ScenarioError;

/// Which end of a flow queue a victim is taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Head,
    Tail,
}

/// A packet to discard: the head or tail of flow queue `queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Victim {
    pub queue: u32,
    pub end: End,
    pub reason: DropReason,
    /// The manager's own name for the drop (`pfd_pushout`), reported beside `reason`.
    pub cause: Option<Cause>,
}

/// The scheduler's per-flow queues as a buffer manager sees them. Queue indices are the
/// scheduler's own (stable while a queue is non-empty).
pub trait FlowQueues {
    /// Indices of the queues that hold at least one packet.
    fn backlogged(&self) -> &[u32];
    fn len_packets(&self, queue: u32) -> usize;
    fn len_bytes(&self, queue: u32) -> u64;
    /// Scheduling weight of the queue (1 when unweighted).
    fn weight(&self, queue: u32) -> f64;
    /// The flow id of the packets in the queue (for per-flow thresholds such as RTT-based
    /// soft thresholds); `None` for hashed buckets that mix flows.
    fn flow_of(&self, queue: u32) -> Option<u32>;
    fn total_packets(&self) -> usize;
    fn total_bytes(&self) -> u64;
}

/// Decides what a per-flow scheduler discards.
pub trait BufferManager: Send {
    /// Whether the shared buffer is above its hard capacity.
    fn over_capacity(&self, queues: &dyn FlowQueues) -> bool;
    /// The victim to discard while over capacity.
    fn overflow(
        &mut self,
        arrival_queue: u32,
        queues: &dyn FlowQueues,
        ctx: &mut QdiscCtx,
    ) -> Victim;
    /// An early discard decided once per arrival (none by default).
    fn early(
        &mut self,
        _arrival_queue: u32,
        _queues: &dyn FlowQueues,
        _ctx: &mut QdiscCtx,
    ) -> Option<Victim> {
        None
    }
    /// A queue's length changed.
    fn on_change(&mut self, _queue: u32, _queues: &dyn FlowQueues) {}
    fn name(&self) -> &'static str;
}

/// Each buffer manager's configuration implements this; the registry dispatches to it.
pub trait BufferConfig {
    fn validate(&self, _path: &str) -> Result<(), ScenarioError> {
        Ok(())
    }
    fn build(&self) -> Box<dyn BufferManager>;
}
