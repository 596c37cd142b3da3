//! Drop-tail buffer management for per-flow schedulers: when the shared buffer is full the
//! arrival is refused. The baseline every source work compares against.

use super::{BufferConfig, BufferManager, End, FlowQueues, Victim};
use crate::config::ScenarioError;
use crate::qdisc::limit::limited_config;
use crate::qdisc::{DropReason, Limit, QdiscCtx};

limited_config! {
    /// `buffer = { kind = "droptail", limit = 50 }` (packets; `limit_bytes` optional).
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct DropTailConfig {}
}

impl BufferConfig for DropTailConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)
    }
    fn build(&self) -> Box<dyn BufferManager> {
        Box::new(DropTail {
            capacity: self.limit,
        })
    }
}

pub struct DropTail {
    pub capacity: Limit,
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
            cause: None,
        }
    }
    fn name(&self) -> &'static str {
        "droptail"
    }
}
