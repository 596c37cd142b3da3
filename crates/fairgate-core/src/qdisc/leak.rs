//! `test_leak`: a deliberately broken FIFO for testing how conservation failures are reported.
//!
//! Not an algorithm of any work: every `every`-th arriving packet is freed without being
//! queued, dropped or counted, so the port's and the flow's conservation laws fail. The
//! test suites use it to check that such a run is an error everywhere (CLI exit code and
//! stderr, Python exception, summary marked invalid); a scenario should never use it.

use super::fifo::PacketFifo;
use super::{Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use crate::config::{check, ScenarioError};
use crate::net::packet::PacketId;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LeakConfig {
    /// Every this many arrivals, one packet vanishes.
    pub every: u64,
}

impl Default for LeakConfig {
    fn default() -> Self {
        LeakConfig { every: 10 }
    }
}

impl QdiscConfig for LeakConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "every", self.every)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Leak {
            every: self.every,
            arrivals: 0,
            queue: PacketFifo::default(),
        })
    }
}

pub struct Leak {
    every: u64,
    arrivals: u64,
    queue: PacketFifo,
}

impl Qdisc for Leak {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        self.arrivals += 1;
        if self.arrivals % self.every == 0 {
            ctx.packets.free(packet);
            return;
        }
        let size = ctx.size(packet);
        self.queue.push(packet, size);
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn name(&self) -> &'static str {
        "test_leak"
    }
}
