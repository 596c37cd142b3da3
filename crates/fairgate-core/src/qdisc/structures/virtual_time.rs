//! The common part of self-clocked FQ and start-time FQ: a tagged per-flow scheduler whose
//! system virtual time is read off the packet in service instead of a simulated GPS server.
//! `scfq.rs` and `stfq.rs` hold the two algorithms; this file holds the queue, buffer-manager
//! and bookkeeping code they share.
//!
//! Decisions shared by both:
//! - Tags are in bytes / weight. Packets of one flow get consecutive tags, so the flow's
//!   queue is served FIFO; ties between flows go to the earlier arrival.
//! - Dropping is the `buffer` manager's (default drop-tail, 50 packets). A dropped packet
//!   costs its flow nothing, wherever it was: a tail victim rolls the flow's last finish tag
//!   back to the victim's start tag; a head victim (push-out) takes its L/w off the flow's
//!   last finish tag and off every tag queued behind it, which are then the tags they would
//!   have had without it (a backlogged flow's tags are chained, S_next = F_prev). Charging
//!   pushed-out packets starved any flow above its share (docs/models/stfq.md).

use super::flow_table::{apply_buffer_manager, notify, validate_weights, FlowTable, Managed};
use super::tagged::TaggedQueues;
use crate::config::ScenarioError;
use crate::net::packet::PacketId;
use crate::qdisc::buffer::{BufferManager, BufferSpec, End, FlowQueues, Victim};
use crate::qdisc::classify::FlowKey;
use crate::qdisc::{QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// `queue = { kind = "scfq" | "stfq", weights = [...], buffer = {...} }`
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct VirtualTimeConfig {
    pub classify: FlowKey,
    pub weights: Vec<f64>,
    pub buffer: BufferSpec,
}

impl VirtualTimeConfig {
    pub fn check(&self, path: &str) -> Result<(), ScenarioError> {
        validate_weights(path, &self.weights)?;
        self.buffer.validate(&format!("{path}.buffer"))
    }

    pub fn core(&self, _env: &QdiscEnv) -> VirtualTimeCore {
        VirtualTimeCore {
            queues: TaggedQueues::new(FlowTable::new(self.classify, self.weights.clone()), false),
            last_finish: Vec::new(),
            manager: self.buffer.build(),
        }
    }
}

/// Start and finish tags of one arrival.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tags {
    pub start: f64,
    pub finish: f64,
}

pub struct VirtualTimeCore {
    pub queues: TaggedQueues,
    last_finish: Vec<f64>,
    manager: Box<dyn BufferManager>,
}

impl VirtualTimeCore {
    /// Classifies the arrival and computes S = max(v, F_prev), F = S + L/w.
    pub fn tags(&mut self, packet: PacketId, v: f64, ctx: &QdiscCtx) -> (u32, u32, Tags) {
        let p = ctx.packets.get(packet);
        let q = self.queues.table.queue_of(p);
        if self.last_finish.len() <= q as usize {
            self.last_finish.resize(q as usize + 1, 0.0);
        }
        let start = v.max(self.last_finish[q as usize]);
        let finish = start + p.size as f64 / self.queues.table.weight_of(q);
        self.last_finish[q as usize] = finish;
        (q, p.size, Tags { start, finish })
    }

    pub fn last_finish(&self, q: u32) -> f64 {
        self.last_finish.get(q as usize).copied().unwrap_or(0.0)
    }

    /// Queues the packet with service tag `tag` (`aux` = the tag the roll-back restores) and
    /// runs the buffer manager.
    pub fn admit(
        &mut self,
        q: u32,
        packet: PacketId,
        size: u32,
        tag: f64,
        start: f64,
        ctx: &mut QdiscCtx,
    ) {
        self.queues.push(q, packet, size, tag, start);
        apply_buffer_manager(self, q, ctx);
    }

    pub fn pop(&mut self, ctx: &mut QdiscCtx) -> Option<(u32, PacketId)> {
        let (q, packet) = self.queues.pop_min(ctx)?;
        notify(self, q);
        Some((q, packet))
    }

    pub fn len_packets(&self) -> usize {
        self.queues.table.total_packets()
    }

    pub fn len_bytes(&self) -> u64 {
        self.queues.table.total_bytes()
    }
}

impl Managed for VirtualTimeCore {
    fn parts(&mut self) -> (&mut dyn BufferManager, &FlowTable) {
        (self.manager.as_mut(), &self.queues.table)
    }
    fn discard(&mut self, victim: Victim, ctx: &mut QdiscCtx) {
        let q = victim.queue;
        let taken = match victim.end {
            End::Tail => self.queues.take(q, End::Tail, ctx).inspect(|&packet| {
                self.last_finish[q as usize] = self.queues.tag_of(packet).aux;
            }),
            End::Head => {
                let Some(head) = self.queues.table.queue(q).front() else {
                    return;
                };
                let charge = ctx.size(head) as f64 / self.queues.table.weight_of(q);
                self.last_finish[q as usize] -= charge;
                self.queues.take_head_uncharged(q, charge, ctx)
            }
        };
        if let Some(packet) = taken {
            ctx.drop_with(packet, victim.reason, victim.cause);
        }
    }
}
