//! AVQRED: a virtual queue drained at the desired service rate, whose size (not an EWMA)
//! drives RED's count-spaced marking; monitoring and marking both at the receive queue.
//!
//! Source: [Byun07, ch. 4-5]. Emulation parameters: min_th 60, max_th 120 packets,
//! min_capacity = max_capacity = 20 Mb/s (100 % target), AvgPktSize 1400 bytes.
//!
//! Per arrival of b bytes (the full pseudo-code is on `docs/models/avqred.md`): every
//! `update_interval` the virtual capacity follows the output rate (LPF weight alpha, clamped
//! to [min_capacity, max_capacity]) and drains VQ; q = VQ / avg_packet_size; between the
//! thresholds the arrival is notified with p_b / (1 - count p_b), above max_th always; VQ += b.
//!
//! Decisions where the sources are silent: p_a is read as p_b / (...) and clamped to [0, 1];
//! `vq_counts = "accepted"` adds only packets that enter the real queue (`"all"` every
//! arrival); the capacities default to the (monitored) link rate, v_capacity starts at
//! max_capacity, alpha 0.5; "bytes transmitted" is what this discipline dequeued;
//! notifications are `early` between the thresholds, `forced` above, ECN marks when on.

use super::avq::VqCounts;
use super::red::Verdict;
use super::{notify, uniform};
use crate::config::units::{Duration, Rate};
use crate::config::{check, ScenarioError};
use crate::engine::{to_secs, Time};
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{Cause, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct AvqRedConfig {
        /// Thresholds in packets of `avg_packet_size`.
        pub min_th: f64,
        pub max_th: f64,
        /// Low-pass weight of the measured output rate.
        pub alpha: f64,
        pub min_capacity: Option<Rate>,
        pub max_capacity: Option<Rate>,
        pub avg_packet_size: u32,
        pub update_interval: Duration,
        pub vq_counts: VqCounts,
        pub count_spacing: bool,
        pub ecn: bool,
    }
}

impl Default for AvqRedConfig {
    fn default() -> Self {
        AvqRedConfig {
            limit: Limit::packets(500),
            min_th: 60.0,
            max_th: 120.0,
            alpha: 0.5,
            min_capacity: None,
            max_capacity: None,
            avg_packet_size: 1400,
            update_interval: Duration::from_secs(0.001),
            vq_counts: VqCounts::Accepted,
            count_spacing: true,
            ecn: false,
        }
    }
}

impl AvqRedConfig {
    pub fn buffer(&self) -> Limit {
        self.limit
    }

    pub fn check(&self, path: &str) -> Result<(), ScenarioError> {
        self.buffer().validate(path)?;
        check::non_negative(path, "min_th", self.min_th)?;
        check::ordered(path, "min_th", self.min_th, "max_th", self.max_th)?;
        check::probability(path, "alpha", self.alpha)?;
        if let Some(c) = self.min_capacity {
            check::positive_int(path, "min_capacity", c.bps())?;
        }
        if let Some(c) = self.max_capacity {
            check::positive_int(path, "max_capacity", c.bps())?;
        }
        if let (Some(lo), Some(hi)) = (self.min_capacity, self.max_capacity) {
            if lo > hi {
                return Err(ScenarioError::new(
                    format!("{path}.max_capacity"),
                    format!(
                        "got {} bps, expected at least min_capacity = {} bps",
                        hi.0, lo.0
                    ),
                ));
            }
        }
        check::positive_int(path, "avg_packet_size", self.avg_packet_size as u64)?;
        check::non_negative(path, "update_interval", self.update_interval.secs())
    }
}

impl QdiscConfig for AvqRedConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.check(path)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(AvqRed::new(*self))
    }
}

/// AVQRED's virtual queue and marking state; PFAVQRED reuses it with a per-flow weight.
#[derive(Clone, Debug)]
pub struct AvqRedCore {
    cfg: AvqRedConfig,
    /// Virtual queue in bytes.
    pub vq: f64,
    /// Virtual capacity in bits/s (set at the first arrival).
    pub v_capacity: Option<f64>,
    pub count: i64,
    pub p_b: f64,
    pub p_a: f64,
    last_measure: Time,
    prev_tx_bytes: u64,
    /// Bytes this discipline has sent.
    pub tx_bytes: u64,
}

impl AvqRedCore {
    pub fn new(cfg: AvqRedConfig) -> Self {
        AvqRedCore {
            cfg,
            vq: 0.0,
            v_capacity: None,
            count: -1,
            p_b: 0.0,
            p_a: 0.0,
            last_measure: 0,
            prev_tx_bytes: 0,
            tx_bytes: 0,
        }
    }

    pub fn config(&self) -> &AvqRedConfig {
        &self.cfg
    }

    /// (min, max) capacity in bits/s, the link's rate `link_bps` by default.
    fn capacity_bounds(&self, link_bps: u64) -> (f64, f64) {
        let max = self.cfg.max_capacity.map_or(link_bps, |r| r.bps()) as f64;
        let min = self
            .cfg
            .min_capacity
            .map_or(max, |r| r.bps() as f64)
            .min(max);
        (min, max)
    }

    /// Drains the virtual queue when more than the update interval has passed.
    pub fn drain(&mut self, now: Time, link_bps: u64) {
        let elapsed = now.saturating_sub(self.last_measure);
        if elapsed <= self.cfg.update_interval.0 {
            return;
        }
        let seconds = to_secs(elapsed);
        let output_rate = (self.tx_bytes - self.prev_tx_bytes) as f64 * 8.0 / seconds;
        self.prev_tx_bytes = self.tx_bytes;
        let (min, max) = self.capacity_bounds(link_bps);
        let previous = self.v_capacity.unwrap_or(max);
        let smoothed = self.cfg.alpha * output_rate + (1.0 - self.cfg.alpha) * previous;
        let v_capacity = smoothed.clamp(min, max);
        self.v_capacity = Some(v_capacity);
        self.vq = (self.vq - v_capacity / 8.0 * seconds).max(0.0);
        self.last_measure = now;
    }

    /// The virtual queue in packets.
    pub fn q_size(&self) -> f64 {
        self.vq / self.cfg.avg_packet_size as f64
    }

    /// RED's decision on the virtual queue; the early probability is multiplied by `weight`.
    pub fn decide(&mut self, u: f64, weight: f64) -> Verdict {
        let (min, max) = (self.cfg.min_th, self.cfg.max_th);
        let q = self.q_size();
        if q >= max {
            self.p_b = 1.0;
            self.count = 0;
            return Verdict::Forced;
        }
        if q <= min {
            self.p_b = 0.0;
            self.count = -1;
            return Verdict::Accept;
        }
        self.count += 1;
        self.p_b = (q - min) / (max - min);
        self.p_a = (self.spaced(self.p_b) * weight).clamp(0.0, 1.0);
        if u < self.p_a {
            self.count = 0;
            return Verdict::Early;
        }
        Verdict::Accept
    }

    fn spaced(&self, p_b: f64) -> f64 {
        if !self.cfg.count_spacing {
            return p_b;
        }
        let denominator = 1.0 - self.count as f64 * p_b;
        if denominator <= p_b {
            1.0
        } else {
            p_b / denominator
        }
    }

    /// Adds an arrival to the virtual queue according to `vq_counts`.
    pub fn account(&mut self, bytes: u32, entered_queue: bool) {
        if entered_queue || self.cfg.vq_counts == VqCounts::All {
            self.vq += bytes as f64;
        }
    }

    pub fn state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("vq_packets", self.q_size()),
            ("p_b", self.p_b),
            ("virtual_capacity_bps", self.v_capacity.unwrap_or(0.0)),
        ]
    }
}

/// The link rate AVQRED defaults its capacity to.
pub fn capacity_link(ctx: &QdiscCtx) -> u64 {
    ctx.monitored
        .map_or(ctx.link_rate_bps, |view| view.link_rate_bps)
}

/// Notifies or queues an arrival after an AVQRED-family decision; a notification carries the
/// discipline's cause for its early or forced region (`causes`).
pub fn apply(
    (verdict, causes): (Verdict, [Cause; 2]),
    ecn: bool,
    buffer: &Limit,
    queue: &mut PacketFifo,
    packet: PacketId,
    ctx: &mut QdiscCtx,
) -> bool {
    let size = ctx.size(packet);
    if let Some((reason, cause)) = verdict.notification_as(causes) {
        if !notify(ctx, packet, ecn, reason, cause) {
            return false;
        }
    }
    if buffer.overflows(queue, size) {
        ctx.drop(packet, crate::qdisc::DropReason::Overflow);
        return false;
    }
    queue.push(packet, size);
    true
}

pub struct AvqRed {
    core: AvqRedCore,
    buffer: Limit,
    queue: PacketFifo,
}

impl AvqRed {
    pub fn new(cfg: AvqRedConfig) -> Self {
        AvqRed {
            buffer: cfg.buffer(),
            core: AvqRedCore::new(cfg),
            queue: PacketFifo::default(),
        }
    }

    pub fn core(&self) -> &AvqRedCore {
        &self.core
    }
}

impl Qdisc for AvqRed {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        self.core.drain(ctx.now, capacity_link(ctx));
        let u = uniform(ctx);
        let verdict = self.core.decide(u, 1.0);
        let ecn = self.core.config().ecn;
        let decision = (verdict, ["avqred_early", "avqred_forced"]);
        let entered = apply(decision, ecn, &self.buffer, &mut self.queue, packet, ctx);
        self.core.account(size, entered);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let packet = self.queue.pop(ctx)?;
        self.core.tx_bytes += ctx.size(packet) as u64;
        Some(packet)
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
        self.core.p_b
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        self.core.state()
    }

    fn name(&self) -> &'static str {
        "avqred"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::net::packet::{flags, Packet};
    use crate::qdisc::testing::Harness;
    use crate::qdisc::DropReason;

    fn small() -> AvqRedConfig {
        AvqRedConfig {
            min_th: 2.0,
            max_th: 6.0,
            avg_packet_size: 1000,
            ..Default::default()
        }
    }

    #[test]
    fn red_on_the_virtual_queue_with_count_spacing() {
        let mut core = AvqRedCore::new(small());
        let mut verdicts = Vec::new();
        for _ in 0..6 {
            let v = core.decide(0.5, 1.0);
            core.account(1000, v == Verdict::Accept);
            verdicts.push(v);
        }
        // q = 0, 1, 2 (not above min_th): accepted; q = 3: p_a = 0.25, accepted;
        // q = 4: count 1, p_b = 0.5, p_a = 0.5 / 0.5 = 1: notified twice (VQ unchanged).
        use Verdict::*;
        assert_eq!(verdicts, vec![Accept, Accept, Accept, Accept, Early, Early]);
        assert_eq!(core.vq, 4000.0);
        assert_eq!(core.count, 0);
        core.vq = 6000.0;
        assert_eq!(core.decide(0.999, 1.0), Forced);
    }

    #[test]
    fn the_virtual_queue_drains_at_the_smoothed_output_rate() {
        let mut core = AvqRedCore::new(AvqRedConfig {
            min_capacity: Some(Rate(4_000_000)),
            max_capacity: Some(Rate(16_000_000)),
            ..small()
        });
        core.vq = 5000.0;
        core.drain(secs(0.001), 8_000_000); // exactly 1 ms: not more than the interval
        assert_eq!(core.vq, 5000.0);
        core.tx_bytes = 1000;
        core.drain(secs(0.002), 8_000_000);
        // output 1000 B in 2 ms = 4 Mb/s; 0.5 * 4 + 0.5 * 16 = 10 Mb/s; drains 2500 bytes.
        assert_eq!(core.v_capacity, Some(10_000_000.0));
        assert!((core.vq - 2500.0).abs() < 1e-9);
        core.drain(secs(0.004), 8_000_000); // nothing sent: 0.5 * 10 = 5 Mb/s, drains 1250
        assert!((core.vq - 1250.0).abs() < 1e-9);
        core.drain(secs(0.006), 8_000_000); // 2.5 Mb/s clamps at 4 Mb/s: drains 1000
        assert!((core.vq - 250.0).abs() < 1e-9);
    }

    #[test]
    fn queue_drops_notified_packets_and_counts_only_accepted_ones() {
        let mut h = Harness::new();
        h.link_rate_bps = 8_000_000;
        let mut q = AvqRed::new(AvqRedConfig {
            min_th: 0.0,
            max_th: 1.0,
            avg_packet_size: 1000,
            ..Default::default()
        });
        let ids: Vec<_> = (0..3).map(|i| h.packet(i, 1000)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id); // q = 0: accepted; q = 1 = max_th: forced, VQ stays 1000
        }
        assert_eq!(
            h.dropped(),
            vec![(ids[1], DropReason::Forced), (ids[2], DropReason::Forced)]
        );
        assert_eq!(q.core().vq, 1000.0);
        // 2 ms later, nothing sent: the capacity clamps at the 8 Mb/s link, draining 2000 B.
        h.now = secs(0.002);
        let late = h.packet(9, 1000);
        h.enqueue(&mut q, late);
        assert_eq!(q.core().v_capacity, Some(8_000_000.0));
        assert_eq!(q.core().vq, 1000.0);
        assert_eq!(q.len_packets(), 2);
    }

    #[test]
    fn ecn_marks_and_the_marked_packet_enters_the_virtual_queue() {
        let mut h = Harness::new();
        let mut q = AvqRed::new(AvqRedConfig {
            min_th: 0.0,
            max_th: 1.0,
            avg_packet_size: 1000,
            ecn: true,
            ..Default::default()
        });
        for _ in 0..2 {
            let id = h.packet_from(Packet {
                size: 1000,
                flags: flags::ECT,
                ..Default::default()
            });
            h.enqueue(&mut q, id);
        }
        assert_eq!(h.marks(DropReason::Forced), 1);
        assert_eq!(q.core().vq, 2000.0);
        assert_eq!(q.len_packets(), 2);
    }
}
