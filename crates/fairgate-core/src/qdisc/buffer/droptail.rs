//! Drop-tail buffer management for per-flow schedulers: when the shared buffer is full the
//! arrival is refused. The baseline every source work compares against.

use super::{BufferConfig, BufferManager, Capacity, End, FlowQueues, Victim};
use crate::config::{check, ScenarioError};
use crate::qdisc::{DropReason, QdiscCtx};
use serde::{Deserialize, Serialize};

/// `buffer = { kind = "droptail", limit = 50 }` (packets; `limit_bytes` optional).
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DropTailConfig {
    pub limit: u64,
    pub limit_bytes: Option<u64>,
}

impl Default for DropTailConfig {
    fn default() -> Self {
        DropTailConfig {
            limit: 50,
            limit_bytes: None,
        }
    }
}

impl BufferConfig for DropTailConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.limit)
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(DropTail {
            capacity: Capacity {
                packets: self.limit,
                bytes: self.limit_bytes,
            },
        })
    }
}

pub struct DropTail {
    pub capacity: Capacity,
}

impl BufferManager for DropTail {
    fn over_capacity(&self, queues: &dyn FlowQueues) -> bool {
        self.capacity.exceeded(queues)
    }
    fn overflow(
        &mut self,
        arrival_queue: u32,
        _queues: &dyn FlowQueues,
        _ctx: &mut QdiscCtx,
    ) -> Victim {
        Victim {
            queue: arrival_queue,
            end: End::Tail,
            reason: DropReason::Overflow,
        }
    }
    fn name(&self) -> &'static str {
        "droptail"
    }
}
