//! Random Drop (Mankin, "Random drop congestion control", SIGCOMM 1990; Hashem 1989): when an
//! arrival finds the buffer full, a packet chosen at random is dropped instead of the arrival.
//!
//! Source: [Vaidyanathan99, §3.2]: "On
//! overflow, drop a packet at a random position in the buffer (expensive)."
//!
//! Decisions where the sources are silent:
//! - The victim is uniform over the queued packets and the arrival (`include_arrival = true`,
//!   Mankin's reading: the arrival is one of the N + 1 candidates) or over the queued packets
//!   only (`false`, the text's wording).
//! - A queued victim counts as `pushout`, the arrival as `overflow`; with a byte limit, victims
//!   are drawn until the arrival fits (or the arrival itself is drawn).

use super::uniform;
use crate::config::ScenarioError;
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct RandomDropConfig {
        pub include_arrival: bool,
    }
}

impl Default for RandomDropConfig {
    fn default() -> Self {
        RandomDropConfig {
            limit: Limit::packets(50),
            include_arrival: true,
        }
    }
}

impl RandomDropConfig {
    fn buffer(&self) -> Limit {
        self.limit
    }
}

impl QdiscConfig for RandomDropConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.buffer().validate(path)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(RandomDrop::new(*self))
    }
}

pub struct RandomDrop {
    cfg: RandomDropConfig,
    buffer: Limit,
    queue: PacketFifo,
}

impl RandomDrop {
    pub fn new(cfg: RandomDropConfig) -> Self {
        RandomDrop {
            buffer: cfg.buffer(),
            queue: PacketFifo::default(),
            cfg,
        }
    }

    /// The victim's index among the candidates; `len` means the arrival.
    fn draw(&self, ctx: &mut QdiscCtx) -> usize {
        let len = self.queue.len();
        let candidates = if self.cfg.include_arrival {
            len + 1
        } else {
            len
        };
        ((uniform(ctx) * candidates as f64) as usize).min(candidates.saturating_sub(1))
    }
}

impl Qdisc for RandomDrop {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let too_big = self.cfg.limit.bytes.is_some_and(|b| size as u64 > b);
        while !too_big && !self.queue.is_empty() && self.buffer.overflows(&self.queue, size) {
            let index = self.draw(ctx);
            if index >= self.queue.len() {
                ctx.drop_because(packet, DropReason::Overflow, "random_drop_arrival");
                return;
            }
            if let Some(victim) = self.queue.remove(index, ctx) {
                ctx.drop_because(victim, DropReason::PushOut, "random_drop_queued");
            }
        }
        if self.buffer.overflows(&self.queue, size) {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        self.queue.push(packet, size);
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn name(&self) -> &'static str {
        "random_drop"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    #[test]
    fn overflow_drops_one_random_packet_and_victims_are_uniform() {
        let mut h = Harness::new();
        let mut q = RandomDrop::new(RandomDropConfig {
            limit: Limit::packets(4),
            include_arrival: false,
        });
        let first: Vec<_> = (0..4).map(|i| h.packet(i, 100)).collect();
        for &id in &first {
            h.enqueue(&mut q, id);
        }
        assert!(h.dropped().is_empty());
        let arrival = h.packet(9, 100);
        h.enqueue(&mut q, arrival);
        let dropped = h.dropped();
        assert_eq!(dropped.len(), 1);
        assert!(first.contains(&dropped[0].0));
        assert_eq!(dropped[0].1, DropReason::PushOut);
        assert_eq!(q.len_packets(), 4);
        assert_eq!(q.len_bytes(), 400);
        // 4000 more overflows: each queued position is the victim about 1/4 of the time.
        let mut by_position = [0u32; 4];
        for _ in 0..4000 {
            let order: Vec<_> = (0..4).filter_map(|i| q.queue.get(i)).collect();
            let id = h.packet(9, 100);
            h.enqueue(&mut q, id);
            let victim = h.dropped().last().map(|d| d.0);
            if let Some(pos) = order.iter().position(|&p| Some(p) == victim) {
                by_position[pos] += 1;
            }
        }
        assert_eq!(by_position.iter().sum::<u32>(), 4000);
        for n in by_position {
            assert!((900..1100).contains(&n), "{by_position:?}");
        }
    }

    #[test]
    fn with_the_arrival_as_a_candidate_it_is_drawn_one_time_in_n_plus_one() {
        let mut h = Harness::new();
        let mut q = RandomDrop::new(RandomDropConfig {
            limit: Limit::packets(4),
            ..Default::default()
        });
        for i in 0..4 {
            let id = h.packet(i, 100);
            h.enqueue(&mut q, id);
        }
        let mut arrivals_dropped = 0;
        for _ in 0..5000 {
            let id = h.packet(9, 100);
            h.enqueue(&mut q, id);
            if h.dropped().last() == Some(&(id, DropReason::Overflow)) {
                arrivals_dropped += 1;
            }
        }
        // Expected 1000 of 5000 (one in five); 4 sigma is about 113.
        assert!(
            (887..1113).contains(&arrivals_dropped),
            "{arrivals_dropped}"
        );
        assert_eq!(q.len_packets(), 4);
    }
}
