//! Yellow (Long, Zhao, Shen, Shi, Zhang, "The Yellow active queue management algorithm",
//! Computer Networks 47(4), 2005): a load-factor AQM with a queue-controlled virtual capacity.
//!
//! Source: [Byun07, §2], described
//! but not simulated there:
//!   c'(q) = f(q) c,  f(q) = max(ODLF, gamma alpha q_ref / ((alpha - 1) q + q_ref))  if q > q_ref
//!                          gamma beta q_ref / ((beta - 1) q + q_ref)              if q <= q_ref
//!   z = offered load / c'(q)
//!   z >= 1 + delta and now - last_update > freeze_time: p += d z,  last_update = now
//!   z < 1          and now - last_update > freeze_time: p -= d / z, last_update = now
//!
//! Decisions where the sources are silent (the text gives no values):
//! - The offered load is the arrival rate (bits/s) over each `interval` (10 ms); z and p are
//!   updated at the end of each interval with the watched queue q (packets) at that moment.
//! - Defaults: gamma 0.98, alpha 1.2, beta 1.05, ODLF 0.9, q_ref 50 packets, d 0.001,
//!   delta 0.02, freeze_time 10 ms.
//! - z = 0 (no arrivals) lowers p by d (d / z is unbounded); p is clamped to [0, 1].
//! - Arrivals are notified (marked with `ecn`, else dropped; `early`) with probability p.

use super::{check_at_least, check_open_unit, later, notify, uniform, watched};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::{to_secs, Time};
use crate::net::packet::PacketId;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct YellowConfig {
        pub gamma: f64,
        pub alpha: f64,
        pub beta: f64,
        /// Queue drain limit factor: the minimum of f(q).
        pub odlf: f64,
        pub q_ref: f64,
        pub d: f64,
        pub delta: f64,
        pub freeze_time: Duration,
        pub interval: Duration,
        pub ecn: bool,
    }
}

impl Default for YellowConfig {
    fn default() -> Self {
        YellowConfig {
            limit: Limit::packets(500),
            gamma: 0.98,
            alpha: 1.2,
            beta: 1.05,
            odlf: 0.9,
            q_ref: 50.0,
            d: 0.001,
            delta: 0.02,
            freeze_time: Duration::from_secs(0.01),
            interval: Duration::from_secs(0.01),
            ecn: false,
        }
    }
}

impl QdiscConfig for YellowConfig {
    fn periods(&self) -> Vec<Period> {
        vec![Period::one("interval", self.interval.secs())]
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        check_open_unit(path, "gamma", self.gamma)?;
        check_at_least(path, "alpha", self.alpha, 1.0)?;
        check_at_least(path, "beta", self.beta, 1.0)?;
        check::probability(path, "odlf", self.odlf)?;
        check::positive(path, "q_ref", self.q_ref)?;
        check::probability(path, "d", self.d)?;
        check::non_negative(path, "delta", self.delta)?;
        check::positive(path, "interval", self.interval.secs())
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Yellow::new(*self))
    }
}

impl YellowConfig {
    /// f(q): the fraction of the capacity offered to the load at queue q.
    pub fn f(&self, q: f64) -> f64 {
        if q > self.q_ref {
            let shaped =
                self.gamma * self.alpha * self.q_ref / ((self.alpha - 1.0) * q + self.q_ref);
            shaped.max(self.odlf)
        } else {
            self.gamma * self.beta * self.q_ref / ((self.beta - 1.0) * q + self.q_ref)
        }
    }
}

pub struct Yellow {
    cfg: YellowConfig,
    buffer: Limit,
    queue: PacketFifo,
    pub p: f64,
    pub z: f64,
    last_update: Option<Time>,
    interval_bytes: u64,
}

impl Yellow {
    pub fn new(cfg: YellowConfig) -> Self {
        Yellow {
            buffer: cfg.limit,
            queue: PacketFifo::default(),
            p: 0.0,
            z: 0.0,
            last_update: None,
            interval_bytes: 0,
            cfg,
        }
    }

    /// End of a measurement interval: load `load_bps` on capacity `c_bps` at queue `q`.
    pub fn update(&mut self, load_bps: f64, c_bps: f64, q: f64, now: Time) {
        self.z = load_bps / (self.cfg.f(q) * c_bps);
        let free = self
            .last_update
            .is_none_or(|last| now.saturating_sub(last) > self.cfg.freeze_time.0);
        if !free {
            return;
        }
        if self.z >= 1.0 + self.cfg.delta {
            self.p += self.cfg.d * self.z;
        } else if self.z < 1.0 {
            self.p -= if self.z > 0.0 {
                self.cfg.d / self.z
            } else {
                self.cfg.d
            };
        } else {
            return;
        }
        self.p = self.p.clamp(0.0, 1.0);
        self.last_update = Some(now);
    }
}

impl Qdisc for Yellow {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        self.interval_bytes += size as u64;
        if uniform(ctx) < self.p
            && !notify(ctx, packet, self.cfg.ecn, DropReason::Early, "yellow_early")
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
        let load = self.interval_bytes as f64 * 8.0 / to_secs(self.cfg.interval.0);
        self.interval_bytes = 0;
        let capacity = ctx.monitored.map_or(ctx.link_rate_bps, |v| v.link_rate_bps) as f64;
        let q = watched(ctx, &self.queue).packets as f64;
        self.update(load, capacity, q, ctx.now);
        ctx.set_timer(later(ctx.now, self.cfg.interval.0));
    }

    fn congestion_probability(&self) -> f64 {
        self.p
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![("p", self.p), ("z", self.z)]
    }

    fn name(&self) -> &'static str {
        "yellow"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::qdisc::testing::Harness;

    #[test]
    fn virtual_capacity_factor_by_hand() {
        let c = YellowConfig::default();
        assert!((c.f(0.0) - 0.98 * 1.05).abs() < 1e-12);
        assert!((c.f(50.0) - 0.98).abs() < 1e-12);
        // q = 100: 0.98 * 1.2 * 50 / (0.2 * 100 + 50) = 58.8 / 70 = 0.84 -> ODLF 0.9.
        assert_eq!(c.f(100.0), 0.9);
        // q = 60: 58.8 / 62 = 0.948387...
        assert!((c.f(60.0) - 58.8 / 62.0).abs() < 1e-12);
    }

    #[test]
    fn load_factor_raises_and_lowers_p_with_freeze() {
        let mut y = Yellow::new(YellowConfig::default());
        // Load 12 Mb/s on 10 Mb/s at q = 50: z = 12 / 9.8 = 1.2245; p = 0.001 z.
        y.update(12e6, 10e6, 50.0, secs(0.01));
        let z = 12.0 / 9.8;
        assert!((y.z - z).abs() < 1e-12);
        assert!((y.p - 0.001 * z).abs() < 1e-15);
        y.update(12e6, 10e6, 50.0, secs(0.015)); // frozen
        assert!((y.p - 0.001 * z).abs() < 1e-15);
        y.update(9.8e6, 10e6, 50.0, secs(0.03)); // z = 1: inside the dead band
        assert!((y.p - 0.001 * z).abs() < 1e-15);
        y.update(4.9e6, 10e6, 50.0, secs(0.05)); // z = 0.5: p -= 0.001 / 0.5 -> clamps at 0
        assert_eq!(y.p, 0.0);
    }

    #[test]
    fn timer_measures_the_offered_load() {
        let mut h = Harness::new();
        let mut y = Yellow::new(YellowConfig::default());
        for _ in 0..15 {
            let id = h.packet(0, 1000); // 15 kB in 10 ms = 12 Mb/s
            h.enqueue(&mut y, id);
        }
        h.now = secs(0.01);
        h.timer(&mut y); // q = 15 <= 50: f = 0.98 * 1.05 * 50 / (0.05 * 15 + 50)
        let f = 0.98 * 1.05 * 50.0 / (0.05 * 15.0 + 50.0);
        assert!((y.z - 12e6 / (f * 10e6)).abs() < 1e-9);
        assert!(y.p > 0.0);
    }
}
