//! VRC: Virtual Rate Control (Park, Lim, Park, Choi, "Virtual rate control algorithm for active
//! queue management in TCP networks", Electronics Letters 40(12), 2004).
//!
//! Source: [Byun07, §2], described
//! but not simulated there. Every sampling interval T_s:
//!   x_r  = C + gamma (q_r - q)        target rate
//!   dx_v = dx_v + beta (x - x_r)      integrator
//!   x_v  = x_r - dx_v                 virtual target rate
//!   p    = [alpha (x - x_v)]          clipped to [0, 1]
//!
//! Decisions where the sources are silent (the text gives no values):
//! - Rates are in packets/s of `mean_packet_size` bytes (C = link rate / 8 / mean size), x is
//!   the arrival rate over the last interval, q the watched queue in packets.
//! - Defaults: T_s 10 ms, q_r 50 packets, gamma 10 /s (a queue error is worked off in 0.1 s),
//!   beta 0.1, alpha = 1 / C (p is the excess rate relative to the capacity) unless given.
//! - Arrivals are notified (marked with `ecn`, else dropped; `early`) with probability p.

use super::{later, notify, uniform, watched};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::to_secs;
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct VrcConfig {
        pub interval: Duration,
        pub q_ref: f64,
        pub gamma: f64,
        pub beta: f64,
        /// Gain in 1 / (packets/s); default 1 / C.
        pub alpha: Option<f64>,
        pub mean_packet_size: u32,
        pub ecn: bool,
    }
}

impl Default for VrcConfig {
    fn default() -> Self {
        VrcConfig {
            limit: Limit::packets(500),
            interval: Duration::from_secs(0.01),
            q_ref: 50.0,
            gamma: 10.0,
            beta: 0.1,
            alpha: None,
            mean_packet_size: 1000,
            ecn: false,
        }
    }
}

impl QdiscConfig for VrcConfig {
    fn periods(&self) -> Vec<Period> {
        vec![Period::one("interval", self.interval.secs())]
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        check::positive(path, "interval", self.interval.secs())?;
        check::non_negative(path, "q_ref", self.q_ref)?;
        check::non_negative(path, "gamma", self.gamma)?;
        check::non_negative(path, "beta", self.beta)?;
        if let Some(a) = self.alpha {
            check::positive(path, "alpha", a)?;
        }
        check::positive_int(path, "mean_packet_size", self.mean_packet_size as u64)
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Vrc::new(*self))
    }
}

pub struct Vrc {
    cfg: VrcConfig,
    buffer: Limit,
    queue: PacketFifo,
    pub p: f64,
    /// The integrator dx_v (packets/s).
    pub integral: f64,
    /// The virtual target rate x_v (packets/s).
    pub x_v: f64,
    arrivals: u64,
}

impl Vrc {
    pub fn new(cfg: VrcConfig) -> Self {
        Vrc {
            buffer: cfg.limit,
            queue: PacketFifo::default(),
            p: 0.0,
            integral: 0.0,
            x_v: 0.0,
            arrivals: 0,
            cfg,
        }
    }

    /// One sampling step: input rate `x` and capacity `c` in packets/s, queue `q` in packets.
    pub fn sample(&mut self, x: f64, c: f64, q: f64) {
        let x_r = c + self.cfg.gamma * (self.cfg.q_ref - q);
        self.integral += self.cfg.beta * (x - x_r);
        self.x_v = x_r - self.integral;
        let alpha = self.cfg.alpha.unwrap_or(1.0 / c.max(f64::MIN_POSITIVE));
        self.p = (alpha * (x - self.x_v)).clamp(0.0, 1.0);
    }
}

impl Qdisc for Vrc {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        self.arrivals += 1;
        if uniform(ctx) < self.p
            && !notify(ctx, packet, self.cfg.ecn, DropReason::Early, "vrc_early")
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
        ctx.set_timer(later(ctx.now, self.cfg.interval.0));
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        let x = self.arrivals as f64 / to_secs(self.cfg.interval.0);
        self.arrivals = 0;
        let link = ctx.monitored.map_or(ctx.link_rate_bps, |v| v.link_rate_bps);
        let c = link as f64 / 8.0 / self.cfg.mean_packet_size as f64;
        let q = watched(ctx, &self.queue).packets as f64;
        self.sample(x, c, q);
        ctx.set_timer(later(ctx.now, self.cfg.interval.0));
    }

    fn congestion_probability(&self) -> f64 {
        self.p
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![("p", self.p), ("virtual_target_rate", self.x_v)]
    }

    fn name(&self) -> &'static str {
        "vrc"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::qdisc::testing::Harness;

    #[test]
    fn integrator_and_probability_by_hand() {
        // C = 1250 pkt/s (10 Mb/s of 1000 B), q_r 50, gamma 10, beta 0.1, alpha = 1/1250.
        let mut v = Vrc::new(VrcConfig::default());
        v.sample(1500.0, 1250.0, 60.0);
        // x_r = 1250 - 100 = 1150; dx_v = 35; x_v = 1115; p = (1500 - 1115) / 1250.
        assert!((v.integral - 35.0).abs() < 1e-12);
        assert!((v.x_v - 1115.0).abs() < 1e-12);
        assert!((v.p - 385.0 / 1250.0).abs() < 1e-15);
        v.sample(1000.0, 1250.0, 40.0);
        // x_r = 1350; dx_v = 35 - 35 = 0; x_v = 1350; p = [(1000 - 1350)/1250] = 0.
        assert!(v.integral.abs() < 1e-12);
        assert_eq!(v.p, 0.0);
    }

    #[test]
    fn timer_measures_the_input_rate() {
        let mut h = Harness::new();
        let mut v = Vrc::new(VrcConfig::default());
        for _ in 0..15 {
            let id = h.packet(0, 1000); // 15 packets in 10 ms = 1500 pkt/s
            h.enqueue(&mut v, id);
        }
        h.now = secs(0.01);
        h.timer(&mut v); // q = 15: x_r = 1250 + 350 = 1600; dx_v = -10; x_v = 1610
        assert!((v.x_v - 1610.0).abs() < 1e-9);
        assert_eq!(v.p, 0.0);
    }
}
