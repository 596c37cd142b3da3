//! A small harness for driving a discipline by hand in unit tests: fixed arrivals and
//! departures, then checks on its decisions.

use super::{Cause, DropReason, Effects, Qdisc, QdiscCtx, QueueView};
use crate::engine::{rng, Rng, Time};
use crate::net::packet::{Packet, PacketArena, PacketId};

pub struct Harness {
    pub now: Time,
    pub packets: PacketArena,
    pub rng: Rng,
    pub link_rate_bps: u64,
    pub monitored: Option<QueueView>,
    pub idle_since: Option<Time>,
    pub effects: Effects,
    dropped: Vec<(PacketId, DropReason)>,
    /// The cause named for each entry of `dropped` (None = none named).
    causes: Vec<Option<Cause>>,
}

impl Default for Harness {
    fn default() -> Self {
        Self::new()
    }
}

impl Harness {
    pub fn new() -> Self {
        Harness {
            now: 0,
            packets: PacketArena::default(),
            rng: rng::stream(1, "harness"),
            link_rate_bps: 10_000_000,
            monitored: None,
            idle_since: None,
            effects: Effects::default(),
            dropped: Vec::new(),
            causes: Vec::new(),
        }
    }

    /// Allocates a packet of `flow` with `size` bytes.
    pub fn packet(&mut self, flow: u32, size: u32) -> PacketId {
        self.packets.alloc(Packet {
            flow,
            size,
            src: flow,
            ..Default::default()
        })
    }

    /// Allocates a packet from a template.
    pub fn packet_from(&mut self, packet: Packet) -> PacketId {
        self.packets.alloc(packet)
    }

    pub fn ctx(&mut self) -> QdiscCtx<'_> {
        QdiscCtx {
            now: self.now,
            packets: &mut self.packets,
            rng: &mut self.rng,
            link_rate_bps: self.link_rate_bps,
            monitored: self.monitored,
            idle_since: self.idle_since,
            effects: &mut self.effects,
        }
    }

    fn collect(&mut self) {
        self.effects.dirty = false;
        let first = self.causes.len();
        self.causes.resize(first + self.effects.drops.len(), None);
        for (index, cause) in self.effects.drop_causes.drain(..) {
            self.causes[first + index as usize] = Some(cause);
        }
        self.dropped.append(&mut self.effects.drops);
    }

    pub fn enqueue(&mut self, q: &mut dyn Qdisc, packet: PacketId) {
        self.packets.get_mut(packet).enqueued = self.now;
        let mut ctx = self.ctx();
        q.enqueue(packet, &mut ctx);
        self.collect();
    }

    pub fn dequeue(&mut self, q: &mut dyn Qdisc) -> Option<PacketId> {
        let mut ctx = self.ctx();
        let p = q.dequeue(&mut ctx);
        self.collect();
        p
    }

    pub fn timer(&mut self, q: &mut dyn Qdisc) {
        let mut ctx = self.ctx();
        q.on_timer(&mut ctx);
        self.collect();
    }

    /// Every drop so far, in order.
    pub fn dropped(&self) -> Vec<(PacketId, DropReason)> {
        self.dropped.clone()
    }

    /// Every drop so far with the cause the discipline named for it, in order.
    pub fn dropped_because(&self) -> Vec<(PacketId, DropReason, Option<Cause>)> {
        let causes = self.causes.iter();
        let drops = self.dropped.iter().zip(causes);
        drops.map(|(&(p, r), &c)| (p, r, c)).collect()
    }

    pub fn marks(&self, reason: DropReason) -> u64 {
        self.effects.marks(reason)
    }
}
