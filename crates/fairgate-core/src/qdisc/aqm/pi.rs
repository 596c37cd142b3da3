//! PI: the proportional-integral AQM of Hollot, Misra, Towsley and Gong ("On designing improved
//! controllers for AQM routers supporting TCP flows", INFOCOM 2001).
//!
//! Source: [Chung06, §4]: K_p = 0.71e-5, K_i = 2.8116e-5, chosen by Hollot's stability criteria
//! "with target queue length q_0 = 0"; ECN marking of ECT packets and dropping of the rest with
//! the same probability.
//!
//! Discrete controller, sampled every 1/f_s:
//!   `p[k] = p[k-1] + a (q[k] - q_ref) - b (q[k-1] - q_ref)`,  p clamped to [0, 1]
//! with b = K_p and a = K_p + K_i / f_s (`ki_unit = "per_second"`, Hollot's
//! C(s) = K_PI (s/z + 1)/s) or a = K_p + K_i (`ki_unit = "per_sample"`).
//!
//! Decisions where the sources are silent (reasons on docs/models/pi.md):
//! - q_0 = 0 is read as the operating point of Hollot's linearised design, not as the reference:
//!   with q_ref = 0 the integral part only grows p and the queue drains. The reference is the
//!   operating queue [Chung06, §4.1] reports, 100 KB: `q_ref = 100` in units of
//!   `mean_packet_size` = 1000 B, byte mode (the text's queue is byte-limited).
//! - Sampling frequency 170 Hz (ns-2's PI default); the clamp is the only anti-windup.
//! - `a` and `b` may be given directly, overriding the gains.
//! - ECN is on by default; notifications are Early; the first sample uses q[-1] = q_ref.

use super::red::QueueUnit;
use super::{later, notify, uniform, watched};
use crate::config::{check, ScenarioError};
use crate::engine::{secs, Time};
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// How the text's K_i is read.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KiUnit {
    #[default]
    PerSecond,
    PerSample,
}

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct PiConfig {
        pub kp: f64,
        pub ki: f64,
        pub ki_unit: KiUnit,
        /// Direct coefficients; when both are set they replace the gains.
        pub a: Option<f64>,
        pub b: Option<f64>,
        pub sampling_hz: f64,
        /// Reference queue in packets (byte mode: in units of `mean_packet_size` bytes).
        pub q_ref: f64,
        pub mode: QueueUnit,
        pub mean_packet_size: u32,
        pub ecn: bool,
    }
}

impl Default for PiConfig {
    fn default() -> Self {
        PiConfig {
            limit: Limit::packets(500),
            kp: 0.71e-5,
            ki: 2.8116e-5,
            ki_unit: KiUnit::PerSecond,
            a: None,
            b: None,
            sampling_hz: 170.0,
            q_ref: 100.0,
            mode: QueueUnit::Bytes,
            mean_packet_size: 1000,
            ecn: true,
        }
    }
}

impl PiConfig {
    /// The controller's (a, b).
    pub fn coefficients(&self) -> (f64, f64) {
        if let (Some(a), Some(b)) = (self.a, self.b) {
            return (a, b);
        }
        let integral = match self.ki_unit {
            KiUnit::PerSecond => self.ki / self.sampling_hz,
            KiUnit::PerSample => self.ki,
        };
        (self.kp + integral, self.kp)
    }
}

impl PiConfig {
    /// `a` and `b` replace the gains: a gain other than its default beside them would be
    /// unread, and is refused (a default cannot be told from the same value written out).
    fn check_replaced_gains(&self, path: &str) -> Result<(), ScenarioError> {
        if self.a.is_none() {
            return Ok(());
        }
        let default = PiConfig::default();
        let changed = [
            ("kp", self.kp != default.kp),
            ("ki", self.ki != default.ki),
            ("ki_unit", self.ki_unit != default.ki_unit),
        ];
        match changed.iter().find(|(_, changed)| *changed) {
            None => Ok(()),
            Some((key, _)) => Err(ScenarioError::new(
                format!("{path}.{key}"),
                "got a gain beside `a` and `b`, which replace the gains and leave it unread; \
                 expected the gains or `a` and `b`, not both",
            )),
        }
    }
}

impl QdiscConfig for PiConfig {
    fn periods(&self) -> Vec<Period> {
        vec![Period::one("sampling_hz", 1.0 / self.sampling_hz)]
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        check::non_negative(path, "kp", self.kp)?;
        check::non_negative(path, "ki", self.ki)?;
        if let Some(a) = self.a {
            check::non_negative(path, "a", a)?;
        }
        if let Some(b) = self.b {
            check::non_negative(path, "b", b)?;
        }
        if self.a.is_some() != self.b.is_some() {
            let (missing, given) = if self.a.is_none() {
                ("a", "b")
            } else {
                ("b", "a")
            };
            return Err(ScenarioError::new(
                format!("{path}.{missing}"),
                format!("missing, expected {missing} together with {given}"),
            ));
        }
        self.check_replaced_gains(path)?;
        check::in_range(path, "sampling_hz", self.sampling_hz, 1e-3, 1e9)?;
        check::non_negative(path, "q_ref", self.q_ref)?;
        check::positive_int(path, "mean_packet_size", self.mean_packet_size as u64)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Pi::new(*self))
    }
}

pub struct Pi {
    cfg: PiConfig,
    a: f64,
    b: f64,
    period: Time,
    buffer: Limit,
    queue: PacketFifo,
    /// Current notification probability.
    pub p: f64,
    /// Queue at the previous sample.
    pub q_old: f64,
}

impl Pi {
    pub fn new(cfg: PiConfig) -> Self {
        let (a, b) = cfg.coefficients();
        Pi {
            a,
            b,
            period: secs(1.0 / cfg.sampling_hz).max(1),
            buffer: cfg.limit,
            queue: PacketFifo::default(),
            p: 0.0,
            q_old: cfg.q_ref,
            cfg,
        }
    }

    /// One controller step with the sampled queue `q`.
    pub fn sample(&mut self, q: f64) {
        let q_ref = self.cfg.q_ref;
        let p = self.p + self.a * (q - q_ref) - self.b * (self.q_old - q_ref);
        self.p = p.clamp(0.0, 1.0);
        self.q_old = q;
    }

    fn queue_length(&self, ctx: &QdiscCtx) -> f64 {
        let seen = watched(ctx, &self.queue);
        match self.cfg.mode {
            QueueUnit::Packets => seen.packets as f64,
            QueueUnit::Bytes => seen.bytes as f64 / self.cfg.mean_packet_size as f64,
        }
    }
}

impl Qdisc for Pi {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        if uniform(ctx) < self.p
            && !notify(ctx, packet, self.cfg.ecn, DropReason::Early, "pi_early")
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

    fn init(&mut self, ctx: &mut QdiscCtx) {
        ctx.set_timer(later(ctx.now, self.period));
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        let q = self.queue_length(ctx);
        self.sample(q);
        ctx.set_timer(later(ctx.now, self.period));
    }

    fn congestion_probability(&self) -> f64 {
        self.p
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![("p", self.p), ("q_sampled", self.q_old)]
    }

    fn name(&self) -> &'static str {
        "pi"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{flags, Packet};
    use crate::qdisc::testing::Harness;

    #[test]
    fn both_readings_of_the_gains() {
        let per_second = PiConfig::default().coefficients();
        assert!((per_second.0 - (0.71e-5 + 2.8116e-5 / 170.0)).abs() < 1e-20);
        assert_eq!(per_second.1, 0.71e-5);
        let per_sample = PiConfig {
            ki_unit: KiUnit::PerSample,
            ..Default::default()
        }
        .coefficients();
        assert!((per_sample.0 - 3.5216e-5).abs() < 1e-18);
        let direct = PiConfig {
            a: Some(1.822e-5),
            b: Some(1.816e-5),
            ..Default::default()
        };
        assert_eq!(direct.coefficients(), (1.822e-5, 1.816e-5));
    }

    #[test]
    fn probability_after_k_samples() {
        let mut h = Harness::new();
        let mut pi = Pi::new(PiConfig {
            a: Some(0.002),
            b: Some(0.001),
            q_ref: 10.0,
            ..Default::default()
        });
        let ids: Vec<_> = (0..30).map(|_| h.packet(0, 1000)).collect();
        pi.p = 0.0;
        for &id in &ids {
            h.enqueue(&mut pi, id); // p = 0: all 30 accepted
        }
        h.timer(&mut pi); // q = 30: 0.002*20 - 0.001*0 = 0.04
        assert!((pi.p - 0.04).abs() < 1e-15);
        for _ in 0..10 {
            h.dequeue(&mut pi);
        }
        h.timer(&mut pi); // q = 20: 0.04 + 0.002*10 - 0.001*20 = 0.04
        assert!((pi.p - 0.04).abs() < 1e-15);
        for _ in 0..15 {
            h.dequeue(&mut pi);
        }
        h.timer(&mut pi); // q = 5: 0.04 - 0.01 - 0.01 = 0.02
        assert!((pi.p - 0.02).abs() < 1e-15);
        h.timer(&mut pi); // q = 5: 0.02 - 0.01 + 0.005 = 0.015
        assert!((pi.p - 0.015).abs() < 1e-15);
        for _ in 0..5 {
            h.dequeue(&mut pi);
        }
        for _ in 0..3 {
            h.timer(&mut pi); // q = 0: -0.02 + 0.005, then -0.02 + 0.01 each: clamps at 0
        }
        assert_eq!(pi.p, 0.0);
    }

    #[test]
    fn marks_ect_and_drops_the_rest_with_probability_p() {
        let mut h = Harness::new();
        let mut pi = Pi::new(PiConfig::default());
        pi.p = 1.0;
        let ect = h.packet_from(Packet {
            size: 1000,
            flags: flags::ECT,
            ..Default::default()
        });
        let plain = h.packet(1, 1000);
        h.enqueue(&mut pi, ect);
        h.enqueue(&mut pi, plain);
        assert_eq!(h.marks(DropReason::Early), 1);
        assert_eq!(h.dropped(), vec![(plain, DropReason::Early)]);
        assert_eq!(pi.len_packets(), 1);
        assert_eq!(pi.congestion_probability(), 1.0);
    }

    #[test]
    fn validation_names_the_field() {
        let c = PiConfig {
            a: Some(1e-5),
            ..Default::default()
        };
        assert_eq!(c.validate("q").unwrap_err().path, "q.b");
        let c = PiConfig {
            sampling_hz: 0.0,
            ..Default::default()
        };
        assert_eq!(c.validate("q").unwrap_err().path, "q.sampling_hz");
    }

    #[test]
    fn a_gain_beside_a_and_b_is_refused_not_ignored() {
        let direct = PiConfig {
            a: Some(1.822e-5),
            b: Some(1.816e-5),
            ..Default::default()
        };
        assert!(direct.validate("q").is_ok());
        let both = PiConfig { ki: 1e-4, ..direct };
        let e = both.validate("q").unwrap_err();
        assert_eq!(e.path, "q.ki");
        assert!(e.message.contains("which replace the gains"), "{e}");
    }
}
