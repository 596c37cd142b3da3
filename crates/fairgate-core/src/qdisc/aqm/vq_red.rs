//! VQ-RED: per-flow virtual queues with a RED-like rule (Lin, Chang, Muppala, "VQ-RED: an
//! efficient virtual queue management approach to improve fairness in infrastructure WLAN",
//! 2005).
//!
//! Source: [Byun07, §2], described
//! but not simulated there:
//!   every period: rate = 0.1 rate + 0.9 avg_rate_per_conn
//!   every inactivity period: delete inactive virtual queues
//!   per arrival of flow i: vq_i > max_th: drop; vq_i < min_th: vq_i += len;
//!     else drop with p = (vq_i - min_th)/(max_th - min_th), vq_i += len if not dropped;
//!     vq_i -= (now - last_i) rate, vq_i >= 0, last_i = now
//!
//! Decisions where the sources are silent:
//! - avg_rate_per_conn = link capacity / number of virtual queues (bytes/s); the rate starts at
//!   the capacity; `period` 100 ms, `inactivity` 1 s, checked at each period.
//! - Thresholds in bytes per virtual queue, default 5 and 15 packets of 1000 bytes (RED's
//!   typical 5/15 per flow).
//! - `drain_first = true` drains the virtual queue before the decision; `false` keeps the
//!   printed order (decide on the length left by the previous arrival, then drain).
//! - Drops above max_th are `forced`, probabilistic ones `early` (marks ECT with `ecn`).

use super::{later, notify, uniform, FlowMap};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::{to_secs, Time};
use crate::net::packet::PacketId;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct VqRedConfig {
        /// Per-flow thresholds in bytes.
        pub min_th: f64,
        pub max_th: f64,
        pub period: Duration,
        pub inactivity: Duration,
        pub drain_first: bool,
        pub key: FlowKey,
        pub ecn: bool,
    }
}

impl Default for VqRedConfig {
    fn default() -> Self {
        VqRedConfig {
            limit: Limit::packets(500),
            min_th: 5000.0,
            max_th: 15000.0,
            period: Duration::from_secs(0.1),
            inactivity: Duration::from_secs(1.0),
            drain_first: true,
            key: FlowKey::Flow,
            ecn: false,
        }
    }
}

impl QdiscConfig for VqRedConfig {
    fn periods(&self) -> Vec<Period> {
        vec![Period::one("period", self.period.secs())]
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        check::non_negative(path, "min_th", self.min_th)?;
        check::ordered(path, "min_th", self.min_th, "max_th", self.max_th)?;
        check::positive(path, "period", self.period.secs())?;
        check::positive(path, "inactivity", self.inactivity.secs())
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(VqRed::new(*self, env.link_rate_bps))
    }
}

/// One flow's virtual queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VirtualQueue {
    pub bytes: f64,
    pub last: Time,
}

pub struct VqRed {
    cfg: VqRedConfig,
    buffer: Limit,
    queue: PacketFifo,
    pub vqs: FlowMap<VirtualQueue>,
    /// Drain rate of every virtual queue (bytes/s).
    pub rate: f64,
}

impl VqRed {
    pub fn new(cfg: VqRedConfig, link_rate_bps: u64) -> Self {
        VqRed {
            buffer: cfg.limit,
            queue: PacketFifo::default(),
            vqs: FlowMap::default(),
            rate: link_rate_bps as f64 / 8.0,
            cfg,
        }
    }

    fn drain(vq: &mut VirtualQueue, now: Time, rate: f64) {
        let elapsed = to_secs(now.saturating_sub(vq.last));
        vq.bytes = (vq.bytes - elapsed * rate).max(0.0);
        vq.last = now;
    }

    /// The decision on an arrival of `size` bytes to `vq`: None to accept.
    fn decide(&self, vq: &VirtualQueue, u: f64) -> Option<DropReason> {
        let (min, max) = (self.cfg.min_th, self.cfg.max_th);
        if vq.bytes > max {
            Some(DropReason::Forced)
        } else if vq.bytes < min {
            None
        } else if u < (vq.bytes - min) / (max - min) {
            Some(DropReason::Early)
        } else {
            None
        }
    }

    /// The periodic rate update and inactivity sweep.
    pub fn tick(&mut self, now: Time, capacity_bytes: f64) {
        let timeout = self.cfg.inactivity.0;
        self.vqs
            .retain(|_, vq| now.saturating_sub(vq.last) < timeout);
        let per_conn = capacity_bytes / self.vqs.len().max(1) as f64;
        self.rate = 0.1 * self.rate + 0.9 * per_conn;
    }
}

impl Qdisc for VqRed {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let flow = self.cfg.key.id(ctx.packets.get(packet));
        let (now, rate) = (ctx.now, self.rate);
        let mut vq = *self.vqs.entry(flow).or_insert(VirtualQueue {
            bytes: 0.0,
            last: now,
        });
        if self.cfg.drain_first {
            Self::drain(&mut vq, now, rate);
        }
        let u = uniform(ctx);
        let verdict = self.decide(&vq, u);
        let kept = match verdict {
            Some(reason) => {
                let cause = if reason == DropReason::Forced {
                    "vq_red_forced"
                } else {
                    "vq_red_early"
                };
                notify(ctx, packet, self.cfg.ecn, reason, cause)
            }
            None => true,
        };
        if kept {
            vq.bytes += size as f64;
        }
        if !self.cfg.drain_first {
            Self::drain(&mut vq, now, rate);
        }
        self.vqs.insert(flow, vq);
        if !kept {
            return;
        }
        if self.buffer.overflows(&self.queue, size) {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        self.queue.push(packet, size);
    }

    crate::qdisc::fifo::serve_fifo!(queue);

    fn init(&mut self, ctx: &mut QdiscCtx) {
        ctx.set_timer(later(ctx.now, self.cfg.period.0));
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        let link = ctx.monitored.map_or(ctx.link_rate_bps, |v| v.link_rate_bps);
        self.tick(ctx.now, link as f64 / 8.0);
        ctx.set_timer(later(ctx.now, self.cfg.period.0));
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("virtual_queues", self.vqs.len() as f64),
            ("drain_rate_bps", self.rate * 8.0),
        ]
    }

    fn name(&self) -> &'static str {
        "vq_red"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::qdisc::testing::Harness;

    fn small(drain_first: bool) -> VqRed {
        // 8 Mb/s: every virtual queue starts draining at 1e6 bytes/s.
        VqRed::new(
            VqRedConfig {
                min_th: 2000.0,
                max_th: 2500.0,
                drain_first,
                ..Default::default()
            },
            8_000_000,
        )
    }

    fn arrive(h: &mut Harness, q: &mut VqRed, flow: u32) -> PacketId {
        let id = h.packet(flow, 1000);
        h.enqueue(q, id);
        id
    }

    #[test]
    fn per_flow_virtual_queue_drains_and_drops_above_max() {
        let mut h = Harness::new();
        let mut q = small(true);
        arrive(&mut h, &mut q, 1); // 0 < 2000: 1000
        arrive(&mut h, &mut q, 1); // 2000
        arrive(&mut h, &mut q, 1); // 2000: p = 0, kept: 3000
        let dropped = arrive(&mut h, &mut q, 1); // 3000 > 2500: forced
        assert_eq!(h.dropped(), vec![(dropped, DropReason::Forced)]);
        assert_eq!(q.vqs[&1].bytes, 3000.0);
        arrive(&mut h, &mut q, 2); // another flow has its own queue
        assert_eq!(q.vqs[&2].bytes, 1000.0);
        h.now = secs(0.001); // flow 1 drains 1000 bytes: 2000, p = 0, kept
        arrive(&mut h, &mut q, 1);
        assert!((q.vqs[&1].bytes - 3000.0).abs() < 1e-9);
        assert_eq!(q.len_packets(), 5);
    }

    #[test]
    fn printed_order_decides_before_draining() {
        let mut h = Harness::new();
        let mut q = small(false);
        for _ in 0..3 {
            arrive(&mut h, &mut q, 1); // 1000, 2000, 3000
        }
        h.now = secs(0.001);
        let late = arrive(&mut h, &mut q, 1); // decided on 3000 (> max): dropped, then drained
        assert_eq!(h.dropped(), vec![(late, DropReason::Forced)]);
        assert!((q.vqs[&1].bytes - 2000.0).abs() < 1e-9);
    }

    #[test]
    fn rate_tracks_the_per_connection_share_and_idle_queues_expire() {
        let mut h = Harness::new();
        let mut q = small(true);
        arrive(&mut h, &mut q, 1);
        arrive(&mut h, &mut q, 2);
        q.tick(secs(0.1), 1e6); // two queues: 0.1 * 1e6 + 0.9 * 5e5
        assert!((q.rate - 550_000.0).abs() < 1e-6);
        h.now = secs(0.5);
        arrive(&mut h, &mut q, 2);
        q.tick(secs(1.2), 1e6); // flow 1 idle 1.2 s: deleted; 0.1 * 550e3 + 0.9 * 1e6
        assert_eq!(q.vqs.len(), 1);
        assert!((q.rate - 955_000.0).abs() < 1e-6);
    }
}
