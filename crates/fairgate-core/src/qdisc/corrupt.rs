//! `test_corrupt`: a deliberately broken FIFO for testing how a connection's byte-accounting
//! failure is reported.
//!
//! Not an algorithm of any work: the `at`-th data packet of a request/response connection
//! (a packet with a connection id) that arrives is queued with its payload length raised by
//! `extra` bytes, so its receiver delivers bytes its sender never handed to TCP. Packet
//! counts are untouched: only the per-connection law of the web and http workloads breaks.
//! The test suites use it to check that this is detected and named; a scenario should never
//! use it.

use super::fifo::PacketFifo;
use super::{Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use crate::config::{check, ScenarioError};
use crate::net::packet::PacketId;
use crate::net::PacketKind;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CorruptConfig {
    /// Which connection data packet (counted from 1) is corrupted.
    pub at: u64,
    /// Bytes added to its payload length.
    pub extra: u64,
}

impl Default for CorruptConfig {
    fn default() -> Self {
        CorruptConfig {
            at: 1,
            extra: 1 << 30,
        }
    }
}

impl QdiscConfig for CorruptConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "at", self.at)?;
        check::positive_int(path, "extra", self.extra)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Corrupt {
            cfg: *self,
            seen: 0,
            queue: PacketFifo::default(),
        })
    }
}

pub struct Corrupt {
    cfg: CorruptConfig,
    seen: u64,
    queue: PacketFifo,
}

impl Qdisc for Corrupt {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let p = ctx.packets.get_mut(packet);
        if p.kind == PacketKind::Data && p.conn != 0 {
            self.seen += 1;
            if self.seen == self.cfg.at {
                p.aux += self.cfg.extra;
            }
        }
        let size = ctx.size(packet);
        self.queue.push(packet, size);
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn name(&self) -> &'static str {
        "test_corrupt"
    }
}
