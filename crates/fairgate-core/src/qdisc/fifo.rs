//! FIFO queues: drop-tail and drop-from-front.
//!
//! Sources: every source work uses drop-tail FIFO as the baseline (\[Keshav91] "FCFS", \[Chung06]
//! "Drop-Tail", Byun's PEP queues). Drop-from-front: Lakshman, Neidhardt and Ott, "The drop
//! from front strategy in TCP and in TCP over ATM", INFOCOM 1996; [Vaidyanathan99, §3.2] lists it.
//!
//! Decisions:
//! - The limit is in packets (`limit`, default 50 as ns-2's `Queue/DropTail`) and optionally
//!   also in bytes (`limit_bytes`); an arrival must fit both.
//! - Drop-from-front discards from the head until the arrival fits; an arrival larger than the
//!   whole byte limit is itself dropped as overflow.

use super::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use crate::config::ScenarioError;
use crate::engine::prefetch::{prefetch, prefetch_lines, prefetch_pointer};
use crate::net::packet::PacketId;
use crate::qdisc::limit::limited_config;
use std::collections::VecDeque;

limited_config! {
    /// Buffer limits shared by the FIFO variants.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct FifoConfig {}
}

impl FifoConfig {
    fn check(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)
    }
}

impl QdiscConfig for FifoConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.check(path)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Fifo::new(*self, false))
    }
}

limited_config! {
    /// Drop-from-front takes the same limits as drop-tail.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    pub struct DropFromFrontConfig {}
}

impl DropFromFrontConfig {
    fn limits(&self) -> FifoConfig {
        FifoConfig { limit: self.limit }
    }
}

impl QdiscConfig for DropFromFrontConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limits().check(path)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Fifo::new(self.limits(), true))
    }
}

/// A first-come first-served queue of packet handles with byte accounting.
#[derive(Default)]
pub struct PacketFifo {
    queue: VecDeque<PacketId>,
    bytes: u64,
}

impl PacketFifo {
    /// Handles a small queue holds without growing; reserved when a discipline is built, so
    /// the ring lies next to the discipline in memory instead of wherever its first packet
    /// finds room.
    pub const FIRST_CAPACITY: u64 = 4;

    pub fn with_capacity(packets: u64) -> Self {
        PacketFifo {
            queue: VecDeque::with_capacity(packets as usize),
            bytes: 0,
        }
    }

    pub fn push(&mut self, packet: PacketId, size: u32) {
        self.queue.push_back(packet);
        self.bytes += size as u64;
    }
    pub fn pop(&mut self, ctx: &QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_front()?;
        self.bytes -= ctx.size(p) as u64;
        Some(p)
    }
    pub fn pop_back(&mut self, ctx: &QdiscCtx) -> Option<PacketId> {
        let p = self.queue.pop_back()?;
        self.bytes -= ctx.size(p) as u64;
        Some(p)
    }
    pub fn front(&self) -> Option<PacketId> {
        self.queue.front().copied()
    }
    pub fn back(&self) -> Option<PacketId> {
        self.queue.back().copied()
    }
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn get(&self, index: usize) -> Option<PacketId> {
        self.queue.get(index).copied()
    }
    /// Removes the packet at `index` (for CHOKe-style random victims).
    pub fn remove(&mut self, index: usize, ctx: &QdiscCtx) -> Option<PacketId> {
        let p = self.queue.remove(index)?;
        self.bytes -= ctx.size(p) as u64;
        Some(p)
    }
    pub fn iter(&self) -> impl Iterator<Item = PacketId> + '_ {
        self.queue.iter().copied()
    }

    /// A cache hint for the ring's slots an arrival and the next departure use: the oldest
    /// packet's and the newest's, or, when the queue is empty, the ring's start (a small
    /// ring, [`Self::FIRST_CAPACITY`] handles, lies in one line). Reads this record, so give
    /// it once a hint of the record has had time to arrive.
    pub fn prefetch_ends(&self) {
        prefetch_pointer(self.queue.as_slices().0.as_ptr());
        if let Some(back) = self.queue.back() {
            prefetch(back);
        }
    }
}

/// The four `Qdisc` methods of a discipline that serves one [`PacketFifo`] field in order:
/// `impl Qdisc for X { serve_fifo!(queue); ... }`.
macro_rules! serve_fifo {
    ($field:ident) => {
        fn dequeue(
            &mut self,
            ctx: &mut $crate::qdisc::QdiscCtx,
        ) -> Option<$crate::net::packet::PacketId> {
            self.$field.pop(ctx)
        }

        fn peek(&self) -> Option<$crate::net::packet::PacketId> {
            self.$field.front()
        }

        fn len_packets(&self) -> usize {
            self.$field.len()
        }

        fn len_bytes(&self) -> u64 {
            self.$field.bytes()
        }
    };
}
pub(crate) use serve_fifo;

/// Drop-tail or drop-from-front FIFO.
pub struct Fifo {
    limits: FifoConfig,
    drop_front: bool,
    queue: PacketFifo,
}

impl Fifo {
    pub fn new(limits: FifoConfig, drop_front: bool) -> Self {
        Fifo {
            limits,
            drop_front,
            queue: PacketFifo::with_capacity(limits.limit.packets.min(PacketFifo::FIRST_CAPACITY)),
        }
    }

    fn fits(&self, extra_packets: u64, extra_bytes: u64) -> bool {
        self.queue.len() as u64 + extra_packets <= self.limits.limit.packets
            && self
                .limits
                .limit
                .bytes
                .is_none_or(|b| self.queue.bytes() + extra_bytes <= b)
    }
}

impl Qdisc for Fifo {
    fn prefetch_sample(&self) {
        prefetch_lines(&self.queue, usize::MAX);
    }

    fn prefetch_enqueue_slot(&self) {
        self.queue.prefetch_ends();
    }

    /// An empty FIFO keeps any arrival within its byte limit and gives it back at once.
    fn passes_to_idle_link(&self) -> u32 {
        if !self.queue.is_empty() || self.limits.limit.packets == 0 {
            return 0;
        }
        self.limits
            .limit
            .bytes
            .map_or(u32::MAX, |bytes| bytes.min(u32::MAX as u64) as u32)
    }

    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet) as u64;
        if self.drop_front && self.limits.limit.bytes.is_none_or(|b| size <= b) {
            while !self.fits(1, size) {
                let victim = self.queue.pop(ctx).expect("non-empty when over limit");
                ctx.drop(victim, DropReason::Front);
            }
        }
        if self.fits(1, size) {
            self.queue.push(packet, size as u32);
        } else {
            ctx.drop(packet, DropReason::Overflow);
        }
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn name(&self) -> &'static str {
        if self.drop_front {
            "drop_from_front"
        } else {
            "fifo"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::Limit;

    #[test]
    fn drop_tail_refuses_arrivals_when_full() {
        let mut h = Harness::new();
        let mut q = Fifo::new(
            FifoConfig {
                limit: Limit::packets(2),
            },
            false,
        );
        let ids: Vec<_> = (0..3).map(|i| h.packet(i, 100)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id);
        }
        assert_eq!(h.dropped(), vec![(ids[2], DropReason::Overflow)]);
        assert_eq!(q.len_packets(), 2);
        assert_eq!(h.dequeue(&mut q), Some(ids[0]));
    }

    #[test]
    fn byte_limit_applies() {
        let mut h = Harness::new();
        let mut q = Fifo::new(
            FifoConfig {
                limit: Limit::packets_and_bytes(10, 250),
            },
            false,
        );
        let a = h.packet(0, 100);
        let b = h.packet(0, 100);
        let c = h.packet(0, 100);
        for id in [a, b, c] {
            h.enqueue(&mut q, id);
        }
        assert_eq!(h.dropped(), vec![(c, DropReason::Overflow)]);
        assert_eq!(q.len_bytes(), 200);
    }

    #[test]
    fn only_an_empty_fifo_lets_arrivals_within_its_byte_limit_pass() {
        let mut h = Harness::new();
        let mut q = Fifo::new(
            FifoConfig {
                limit: Limit::packets_and_bytes(10, 250),
            },
            false,
        );
        assert_eq!(q.passes_to_idle_link(), 250);
        let a = h.packet(0, 100);
        h.enqueue(&mut q, a);
        assert_eq!(q.passes_to_idle_link(), 0);
        assert_eq!(h.dequeue(&mut q), Some(a));
        assert_eq!(q.passes_to_idle_link(), 250);
        let front = Fifo::new(
            FifoConfig {
                limit: Limit::packets(1),
            },
            true,
        );
        assert_eq!(front.passes_to_idle_link(), u32::MAX);
    }

    #[test]
    fn drop_from_front_discards_the_head() {
        let mut h = Harness::new();
        let mut q = Fifo::new(
            FifoConfig {
                limit: Limit::packets(2),
            },
            true,
        );
        let ids: Vec<_> = (0..3).map(|i| h.packet(i, 100)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id);
        }
        assert_eq!(h.dropped(), vec![(ids[0], DropReason::Front)]);
        assert_eq!(h.dequeue(&mut q), Some(ids[1]));
        assert_eq!(h.dequeue(&mut q), Some(ids[2]));
    }
}
