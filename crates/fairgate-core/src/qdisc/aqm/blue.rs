//! BLUE (Feng, Kandlur, Saha, Shin, "BLUE: A new class of active queue management
//! algorithms", U. Michigan CSE-TR-387-99 / IEEE/ACM ToN 2002): one notification probability
//! p_m, raised on packet loss (or a queue above a threshold) and lowered when the link goes
//! idle, each change at most once per freeze time.
//!
//! Source: [Chung06, §4]: the BLUE
//! inside each SFB bin uses increment 0.005, decrement 0.001, freeze time 100 ms; those are the
//! defaults here too.
//!
//!   on loss or q > threshold:  if now - last_update > freeze: p_m += d1; last_update = now
//!   on link idle:              if now - last_update > freeze: p_m -= d2; last_update = now
//!   on arrival:                notify with probability p_m
//!
//! Decisions where the sources are silent:
//! - The first event is never frozen (no update has happened yet).
//! - "Link idle" is a dequeue that finds the queue empty; when a monitored port is watched,
//!   an arrival that finds it idle counts as the idle event and one that finds it above
//!   `threshold` (or, without a threshold, at `limit` packets) as the loss event.
//! - `threshold` (packets) is optional; without it only buffer overflow raises p_m.
//! - An overflowing arrival raises p_m before it is dropped; p_m is clamped to [0, 1].

use super::{notify, uniform};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::Time;
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

/// BLUE's probability with its freeze time; also the per-bin state of SFB.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlueProbability {
    pub p: f64,
    pub last_update: Option<Time>,
}

impl BlueProbability {
    fn may_update(&self, now: Time, freeze: Time) -> bool {
        self.last_update
            .is_none_or(|last| now.saturating_sub(last) > freeze)
    }

    /// Raises p by `step` unless frozen.
    pub fn increase(&mut self, step: f64, now: Time, freeze: Time) {
        if self.may_update(now, freeze) {
            self.p = (self.p + step).min(1.0);
            self.last_update = Some(now);
        }
    }

    /// Lowers p by `step` unless frozen.
    pub fn decrease(&mut self, step: f64, now: Time, freeze: Time) {
        if self.may_update(now, freeze) {
            self.p = (self.p - step).max(0.0);
            self.last_update = Some(now);
        }
    }
}

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct BlueConfig {
        /// d1: step on loss.
        pub increment: f64,
        /// d2: step on idle.
        pub decrement: f64,
        pub freeze_time: Duration,
        /// Queue length (packets) above which an arrival counts as a loss event.
        pub threshold: Option<u64>,
        pub ecn: bool,
    }
}

impl Default for BlueConfig {
    fn default() -> Self {
        BlueConfig {
            limit: Limit::packets(50),
            increment: 0.005,
            decrement: 0.001,
            freeze_time: Duration::from_secs(0.1),
            threshold: None,
            ecn: false,
        }
    }
}

impl QdiscConfig for BlueConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.buffer().validate(path)?;
        check::probability(path, "increment", self.increment)?;
        check::probability(path, "decrement", self.decrement)?;
        if let Some(t) = self.threshold {
            check::positive_int(path, "threshold", t)?;
        }
        Ok(())
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Blue::new(*self))
    }
}

impl BlueConfig {
    fn buffer(&self) -> Limit {
        self.limit
    }
}

pub struct Blue {
    cfg: BlueConfig,
    buffer: Limit,
    queue: PacketFifo,
    pub state: BlueProbability,
}

impl Blue {
    pub fn new(cfg: BlueConfig) -> Self {
        Blue {
            buffer: cfg.buffer(),
            queue: PacketFifo::default(),
            state: BlueProbability::default(),
            cfg,
        }
    }

    fn on_loss(&mut self, now: Time) {
        let freeze = self.cfg.freeze_time.0;
        self.state.increase(self.cfg.increment, now, freeze);
    }

    fn on_idle(&mut self, now: Time) {
        let freeze = self.cfg.freeze_time.0;
        self.state.decrease(self.cfg.decrement, now, freeze);
    }

    /// Loss and idle events seen on the monitored port at an arrival.
    fn watch_monitored(&mut self, ctx: &QdiscCtx) {
        let Some(view) = ctx.monitored else {
            return;
        };
        let queue = view.len_packets as u64;
        let congested = match self.cfg.threshold {
            Some(t) => queue > t,
            None => queue >= self.cfg.limit.packets,
        };
        if congested {
            self.on_loss(ctx.now);
        } else if view.len_packets == 0 && view.idle_since.is_some() {
            self.on_idle(ctx.now);
        }
    }
}

impl Qdisc for Blue {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        self.watch_monitored(ctx);
        if ctx.monitored.is_none()
            && self
                .cfg
                .threshold
                .is_some_and(|t| self.queue.len() as u64 > t)
        {
            self.on_loss(ctx.now);
        }
        if self.buffer.overflows(&self.queue, size) {
            self.on_loss(ctx.now);
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        if uniform(ctx) < self.state.p
            && !notify(ctx, packet, self.cfg.ecn, DropReason::Early, "blue_early")
        {
            return;
        }
        self.queue.push(packet, size);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let next = self.queue.pop(ctx);
        if next.is_none() && ctx.monitored.is_none() {
            self.on_idle(ctx.now);
        }
        next
    }

    fn peek(&self) -> Option<PacketId> {
        self.queue.front()
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn congestion_probability(&self) -> f64 {
        self.state.p
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![("p_m", self.state.p)]
    }

    fn name(&self) -> &'static str {
        "blue"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::net::packet::{flags, Packet};
    use crate::qdisc::testing::Harness;

    fn ect(h: &mut Harness) -> PacketId {
        h.packet_from(Packet {
            size: 1000,
            flags: flags::ECT,
            ..Default::default()
        })
    }

    #[test]
    fn loss_raises_and_idle_lowers_p_at_most_once_per_freeze_time() {
        let mut h = Harness::new();
        let mut q = Blue::new(BlueConfig {
            limit: Limit::packets(2),
            increment: 0.1,
            decrement: 0.04,
            ecn: true,
            ..Default::default()
        });
        for _ in 0..3 {
            let id = ect(&mut h);
            h.enqueue(&mut q, id); // third overflows: p = 0.1 (first event, not frozen)
        }
        assert!((q.state.p - 0.1).abs() < 1e-15);
        assert_eq!(h.dropped().len(), 1);
        h.now = secs(0.05);
        let id = ect(&mut h);
        h.enqueue(&mut q, id); // overflow within 100 ms: frozen
        assert!((q.state.p - 0.1).abs() < 1e-15);
        h.now = secs(0.101);
        let id = ect(&mut h);
        h.enqueue(&mut q, id); // overflow after 101 ms: p = 0.2
        assert!((q.state.p - 0.2).abs() < 1e-15);
        h.dequeue(&mut q);
        h.dequeue(&mut q);
        h.now = secs(0.15);
        assert_eq!(h.dequeue(&mut q), None); // idle, but frozen
        assert!((q.state.p - 0.2).abs() < 1e-15);
        h.now = secs(0.25);
        assert_eq!(h.dequeue(&mut q), None); // idle: p = 0.16
        assert!((q.state.p - 0.16).abs() < 1e-15);
        assert_eq!(q.congestion_probability(), q.state.p);
    }

    #[test]
    fn a_monitored_queue_supplies_the_loss_and_idle_events() {
        let mut h = Harness::new();
        let mut q = Blue::new(BlueConfig {
            threshold: Some(10),
            increment: 0.1,
            decrement: 0.05,
            freeze_time: Duration::from_secs(0.0),
            ecn: true,
            ..Default::default()
        });
        let watched = |packets: usize, idle: bool| crate::qdisc::QueueView {
            len_packets: packets,
            idle_since: idle.then_some(0),
            ..Default::default()
        };
        h.monitored = Some(watched(10, false)); // at the threshold: not above
        let a = ect(&mut h);
        h.enqueue(&mut q, a);
        assert_eq!(q.state.p, 0.0);
        h.now = secs(0.001);
        h.monitored = Some(watched(11, false)); // above: loss event
        let b = ect(&mut h);
        h.enqueue(&mut q, b);
        assert!((q.state.p - 0.1).abs() < 1e-15);
        h.now = secs(0.002);
        h.monitored = Some(watched(0, true)); // idle: 0.1 - 0.05
        let c = ect(&mut h);
        h.enqueue(&mut q, c);
        assert!((q.state.p - 0.05).abs() < 1e-15);
        assert_eq!(h.dequeue(&mut q), Some(a));
    }

    #[test]
    fn threshold_counts_as_loss_and_p_one_notifies_every_arrival() {
        let mut h = Harness::new();
        let mut q = Blue::new(BlueConfig {
            limit: Limit::packets(10),
            threshold: Some(1),
            increment: 1.0,
            ..Default::default()
        });
        let ids: Vec<_> = (0..4).map(|i| h.packet(i, 1000)).collect();
        for &id in &ids[..3] {
            h.enqueue(&mut q, id); // the third sees 2 > 1: p = 1, then dropped (no ECN)
        }
        assert_eq!(q.state.p, 1.0);
        assert_eq!(h.dropped(), vec![(ids[2], DropReason::Early)]);
        h.enqueue(&mut q, ids[3]);
        assert_eq!(h.dropped().len(), 2);
        assert_eq!(q.len_packets(), 2);
    }
}
