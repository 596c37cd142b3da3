//! AVQ: the Adaptive Virtual Queue (Kunniyur and Srikant, "Analysis and design of an adaptive
//! virtual queue (AVQ) algorithm for active queue management", SIGCOMM 2001), after Gibbens
//! and Kelly's virtual queue.
//!
//! Source: [Byun07, §2]: the pseudo-code, gamma = 100 %, B = 123,750 bytes (33 ms at 20 Mb/s
//! plus half), C = 20 Mb/s, alpha "arbitrary".
//!
//! At each arrival of b bytes at time t (previous arrival at s):
//!   VQ = max(VQ - C' (t - s), 0)
//!   if VQ + b > B: notify the packet        else: VQ = VQ + b
//!   C' = max(min(C' + alpha gamma C (t - s), C) - alpha b, 0)
//!
//! Decisions (the long form is on `docs/models/avq.md`): bytes and bytes/s throughout, C'
//! starts at gamma C; alpha 0.15 (Kunniyur and Srikant; 0 keeps C' fixed, the text's reading);
//! `vq_counts = "accepted"` adds only packets not notified (a marked packet is queued but not
//! added), `"all"` every arrival; C is `capacity`, else the monitored or own link rate;
//! notifications are `early`; the real queue has its own drop-tail `limit`.

use super::{check_open_unit, notify};
use crate::config::units::Rate;
use crate::config::{check, ScenarioError};
use crate::engine::{to_secs, Time};
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// Which arrivals enter the virtual queue.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum VqCounts {
    #[default]
    Accepted,
    All,
}

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct AvqConfig {
        /// Virtual buffer B in bytes.
        pub virtual_buffer: u64,
        /// Target utilisation gamma.
        pub gamma: f64,
        pub alpha: f64,
        /// Real capacity C (default: the link's).
        pub capacity: Option<Rate>,
        pub vq_counts: VqCounts,
        pub ecn: bool,
    }
}

impl Default for AvqConfig {
    fn default() -> Self {
        AvqConfig {
            limit: Limit::packets(500),
            virtual_buffer: 123_750,
            gamma: 1.0,
            alpha: 0.15,
            capacity: None,
            vq_counts: VqCounts::Accepted,
            ecn: false,
        }
    }
}

impl QdiscConfig for AvqConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        check::positive_int(path, "virtual_buffer", self.virtual_buffer)?;
        check_open_unit(path, "gamma", self.gamma)?;
        check::non_negative(path, "alpha", self.alpha)?;
        if let Some(c) = self.capacity {
            check::positive_int(path, "capacity", c.bps())?;
        }
        Ok(())
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Avq::new(*self))
    }
}

pub struct Avq {
    cfg: AvqConfig,
    buffer: Limit,
    queue: PacketFifo,
    /// Virtual queue in bytes.
    pub vq: f64,
    /// Virtual capacity C' in bytes/s (set at the first arrival).
    pub virtual_capacity: Option<f64>,
    last_arrival: Option<Time>,
}

impl Avq {
    pub fn new(cfg: AvqConfig) -> Self {
        Avq {
            buffer: cfg.limit,
            queue: PacketFifo::default(),
            vq: 0.0,
            virtual_capacity: None,
            last_arrival: None,
            cfg,
        }
    }

    /// C in bytes/s.
    fn capacity(&self, ctx: &QdiscCtx) -> f64 {
        let bps = match (self.cfg.capacity, ctx.monitored) {
            (Some(c), _) => c.bps(),
            (None, Some(view)) => view.link_rate_bps,
            (None, None) => ctx.link_rate_bps,
        };
        bps as f64 / 8.0
    }

    /// The AVQ step for an arrival of `bytes` at `now`; true when the packet is notified.
    pub fn arrival(&mut self, bytes: u32, now: Time, capacity: f64) -> bool {
        let b = bytes as f64;
        let dt = self
            .last_arrival
            .map_or(0.0, |s| to_secs(now.saturating_sub(s)));
        let c_virtual = *self
            .virtual_capacity
            .get_or_insert(self.cfg.gamma * capacity);
        self.vq = (self.vq - c_virtual * dt).max(0.0);
        let notified = self.vq + b > self.cfg.virtual_buffer as f64;
        if !notified || self.cfg.vq_counts == VqCounts::All {
            self.vq += b;
        }
        let alpha = self.cfg.alpha;
        let grown = (c_virtual + alpha * self.cfg.gamma * capacity * dt).min(capacity);
        self.virtual_capacity = Some((grown - alpha * b).max(0.0));
        self.last_arrival = Some(now);
        notified
    }
}

impl Qdisc for Avq {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let capacity = self.capacity(ctx);
        if self.arrival(size, ctx.now, capacity)
            && !notify(ctx, packet, self.cfg.ecn, DropReason::Early, "avq_virtual")
        {
            return;
        }
        if self.buffer.overflows(&self.queue, size) {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        self.queue.push(packet, size);
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn congestion_probability(&self) -> f64 {
        let b = self.cfg.virtual_buffer as f64;
        (self.vq / b).min(1.0)
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("vq_bytes", self.vq),
            (
                "virtual_capacity_bps",
                self.virtual_capacity.unwrap_or(0.0) * 8.0,
            ),
        ]
    }

    fn name(&self) -> &'static str {
        "avq"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::qdisc::testing::Harness;

    fn fixed(virtual_buffer: u64) -> AvqConfig {
        AvqConfig {
            virtual_buffer,
            alpha: 0.0,
            ..Default::default()
        }
    }

    #[test]
    fn virtual_queue_drains_at_the_virtual_capacity_and_notifies_overflow() {
        // 8 Mb/s = 1e6 bytes/s; B = 3000 bytes; 1000-byte packets.
        let mut h = Harness::new();
        h.link_rate_bps = 8_000_000;
        let mut q = Avq::new(fixed(3000));
        let ids: Vec<_> = (0..6).map(|i| h.packet(i, 1000)).collect();
        for &id in &ids[..4] {
            h.enqueue(&mut q, id); // VQ 1000, 2000, 3000, then 4000 > 3000: dropped
        }
        assert_eq!(q.vq, 3000.0);
        assert_eq!(h.dropped(), vec![(ids[3], DropReason::Early)]);
        h.now = secs(0.001); // drains 1000
        h.enqueue(&mut q, ids[4]);
        assert!((q.vq - 3000.0).abs() < 1e-6);
        h.now = secs(0.0015); // drains 500: 2500 + 1000 > 3000
        h.enqueue(&mut q, ids[5]);
        assert!((q.vq - 2500.0).abs() < 1e-6);
        assert_eq!(h.dropped().len(), 2);
        assert_eq!(q.len_packets(), 4);
    }

    #[test]
    fn with_ecn_the_overflowing_packet_is_marked_queued_and_not_counted() {
        let mut h = Harness::new();
        h.link_rate_bps = 8_000_000;
        let mut q = Avq::new(AvqConfig {
            ecn: true,
            ..fixed(2000)
        });
        let ids: Vec<_> = (0..3)
            .map(|_| {
                h.packet_from(crate::net::packet::Packet {
                    size: 1000,
                    flags: crate::net::packet::flags::ECT,
                    ..Default::default()
                })
            })
            .collect();
        for &id in &ids {
            h.enqueue(&mut q, id); // VQ 1000, 2000, then 3000 > 2000: the third is marked
        }
        assert_eq!(h.marks(DropReason::Early), 1);
        assert!(h.packets.get(ids[2]).has(crate::net::packet::flags::CE));
        assert!(!h.packets.get(ids[1]).has(crate::net::packet::flags::CE));
        assert_eq!(q.vq, 2000.0);
        assert_eq!(q.len_packets(), 3);
        assert!(h.dropped().is_empty());
    }

    #[test]
    fn counting_every_arrival_is_the_other_reading() {
        let mut q = Avq::new(AvqConfig {
            vq_counts: VqCounts::All,
            ..fixed(3000)
        });
        for _ in 0..4 {
            q.arrival(1000, 0, 1e6);
        }
        assert_eq!(q.vq, 4000.0);
    }

    #[test]
    fn virtual_capacity_adapts_with_alpha() {
        // C = 1e6 B/s, gamma = 0.9, alpha = 0.5: C' starts at 9e5.
        let mut q = Avq::new(AvqConfig {
            gamma: 0.9,
            alpha: 0.5,
            ..fixed(1_000_000)
        });
        q.arrival(1000, 0, 1e6); // min(9e5 + 0, 1e6) - 500 = 899,500
        assert_eq!(q.virtual_capacity, Some(899_500.0));
        q.arrival(1000, secs(0.01), 1e6); // + 0.5*0.9*1e6*0.01 = 4500 -> 904,000 - 500
        assert!((q.virtual_capacity.unwrap() - 903_500.0).abs() < 1e-6);
        // VQ: 1000, then drained by 899,500 * 0.01 to 0, plus 1000.
        assert_eq!(q.vq, 1000.0);
        q.arrival(1000, secs(1.0), 1e6); // growth capped at C: 1e6 - 500
        assert!((q.virtual_capacity.unwrap() - 999_500.0).abs() < 1e-6);
    }
}
