//! Traffic without flow control: CBR, Poisson, on/off, the line-rate "malicious" source and
//! Telnet-like sources.
//!
//! Sources: [Keshav91, §6.2] (Telnet: 40-byte packets with exponential gaps of mean 5 s;
//! Poisson sources; the ill-behaved source that sends at the outgoing line rate; the on/off
//! background source of scenario 3), \[Byun07] and \[Chung06] (UDP CBR flows), \[Goyal98] (none).
//!
//! Decisions:
//! - The first packet leaves at the start time; later gaps follow the model.
//! - Poisson `rate` is the mean bit rate: the mean gap is mean size x 8 / rate. `mean_gap`
//!   may be given instead.
//! - On/off sources start in the on state; during "on" they send CBR at `rate`.
//! - The malicious source defaults to the rate of its host's first-hop link.
//! - `packets` caps the number of packets a source sends.
//! - At most one send event is pending per source ([`LazyTimer`]): an on period shorter than
//!   the gap to the next packet would otherwise leave a stale event behind at each toggle.
//! - An on/off cycle (mean on + mean off) must last at least as long as a mean-size packet at
//!   1 Tbps, as a gap must: every on period starts with a packet.

use super::sink::Sink;
use super::{AgentPair, SourceConfig, SourceEnv};
use crate::config::dist::{Dist, DurationDist, SizeDist};
use crate::config::error::{join, ScenarioError};
use crate::config::units::{Duration, Rate, MAX_RATE_BPS};
use crate::engine::{secs, tx_time, Time};
use crate::net::{Agent, AgentCtx, Packet, PacketKind};
use crate::transport::timer::LazyTimer;
use serde::{Deserialize, Serialize};

/// 1000-byte packets, the size of every open-loop source but Telnet's.
fn default_size() -> SizeDist {
    SizeDist::constant(1000)
}

/// `kind = "cbr"`: constant bit rate.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbrConfig {
    pub rate: Rate,
    #[serde(default = "default_size")]
    pub size: SizeDist,
    #[serde(default)]
    pub packets: Option<u64>,
}

/// `kind = "poisson"`: exponential gaps, given as a mean bit rate or a mean gap.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PoissonConfig {
    pub rate: Option<Rate>,
    pub mean_gap: Option<Duration>,
    pub size: SizeDist,
    pub packets: Option<u64>,
}

/// `kind = "onoff"`: CBR at `rate` during on periods, silent during off periods.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OnOffConfig {
    pub rate: Rate,
    pub on: DurationDist,
    pub off: DurationDist,
    #[serde(default = "default_size")]
    pub size: SizeDist,
    #[serde(default)]
    pub packets: Option<u64>,
}

/// `kind = "malicious"`: sends back to back at line rate, ignoring all feedback.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MaliciousConfig {
    pub rate: Option<Rate>,
    pub size: SizeDist,
    pub packets: Option<u64>,
}

/// `kind = "telnet"`: small packets with exponential gaps (open loop).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelnetConfig {
    pub size: SizeDist,
    pub gap: DurationDist,
    pub packets: Option<u64>,
}

impl Default for PoissonConfig {
    fn default() -> Self {
        PoissonConfig {
            rate: None,
            mean_gap: None,
            size: default_size(),
            packets: None,
        }
    }
}

impl Default for MaliciousConfig {
    fn default() -> Self {
        MaliciousConfig {
            rate: None,
            size: default_size(),
            packets: None,
        }
    }
}

impl Default for TelnetConfig {
    fn default() -> Self {
        TelnetConfig {
            size: SizeDist::constant(40),
            gap: DurationDist(Dist::Exponential { mean: 5.0 }),
            packets: None,
        }
    }
}

/// How an open-loop source spaces its packets.
#[derive(Clone, Copy, Debug)]
enum Gaps {
    /// Gap = size x 8 / rate, so the bit rate is exact whatever the sizes.
    Rate(u64),
    /// Gaps drawn from a distribution (seconds).
    Random(Dist),
    /// CBR at `rate` during on periods.
    OnOff { rate: u64, on: Dist, off: Dist },
}

const SEND: u64 = 0;
const TOGGLE: u64 = 1;

/// One agent for every open-loop kind.
pub struct OpenLoopSource {
    kind: &'static str,
    flow: u32,
    dst: u32,
    dst_agent: u32,
    size: SizeDist,
    gaps: Gaps,
    remaining: Option<u64>,
    sent: u64,
    running: bool,
    on: bool,
    /// When the next packet is due (none while off or stopped).
    send_timer: LazyTimer,
    /// Toggle generations, so a toggle pending at a stop is ignored.
    generation: u64,
}

impl OpenLoopSource {
    fn new(
        kind: &'static str,
        env: &SourceEnv,
        size: SizeDist,
        gaps: Gaps,
        packets: Option<u64>,
    ) -> Self {
        OpenLoopSource {
            kind,
            flow: env.flow,
            dst: env.dst_node,
            dst_agent: env.receiver_agent,
            size,
            gaps,
            remaining: packets,
            sent: 0,
            running: false,
            on: true,
            send_timer: LazyTimer::default(),
            generation: 0,
        }
    }

    fn toggle_token(&self) -> u64 {
        self.generation << 1 | TOGGLE
    }

    fn send_one(&mut self, ctx: &mut AgentCtx) -> Option<u32> {
        if self.remaining == Some(0) {
            return None;
        }
        if let Some(r) = self.remaining.as_mut() {
            *r -= 1;
        }
        let size = self.size.sample_bytes(ctx.rng);
        ctx.send(Packet {
            flow: self.flow,
            dst: self.dst,
            dst_agent: self.dst_agent,
            proto: 17,
            kind: PacketKind::Data,
            size,
            seq: self.sent,
            ..Default::default()
        });
        self.sent += 1;
        Some(size)
    }

    fn gap(&self, size: u32, ctx: &mut AgentCtx) -> Time {
        match self.gaps {
            Gaps::Rate(rate) | Gaps::OnOff { rate, .. } => tx_time(size, rate),
            Gaps::Random(d) => secs(d.sample(ctx.rng)),
        }
    }

    fn send_and_schedule(&mut self, ctx: &mut AgentCtx) {
        if !(self.running && self.on) {
            return;
        }
        if let Some(size) = self.send_one(ctx) {
            let gap = self.gap(size, ctx);
            self.send_timer.arm(ctx.now.saturating_add(gap), SEND, ctx);
        }
    }

    fn toggle(&mut self, ctx: &mut AgentCtx) {
        let Gaps::OnOff { on, off, .. } = self.gaps else {
            return;
        };
        self.on = !self.on;
        if !self.on {
            self.send_timer.cancel();
        }
        let period = if self.on { on } else { off };
        let length = secs(period.sample(ctx.rng));
        ctx.set_timer(ctx.now.saturating_add(length), self.toggle_token());
        self.send_and_schedule(ctx);
    }
}

impl Agent for OpenLoopSource {
    fn start(&mut self, ctx: &mut AgentCtx) {
        self.running = true;
        if let Gaps::OnOff { on, .. } = self.gaps {
            let length = secs(on.sample(ctx.rng));
            ctx.set_timer(ctx.now.saturating_add(length), self.toggle_token());
        }
        self.send_and_schedule(ctx);
    }

    fn stop(&mut self, _ctx: &mut AgentCtx) {
        self.running = false;
        self.send_timer.cancel();
        self.generation += 1;
    }

    fn on_packet(&mut self, _packet: &Packet, _ctx: &mut AgentCtx) {}

    fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        if token == SEND {
            if self.send_timer.fire(SEND, ctx) {
                self.send_and_schedule(ctx);
            }
        } else if token >> 1 == self.generation {
            self.toggle(ctx);
        }
    }

    fn samples_nothing(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        self.kind
    }
}

fn pair(sender: OpenLoopSource) -> AgentPair {
    AgentPair {
        sender: Box::new(sender),
        receiver: Box::new(Sink),
    }
}

impl SourceConfig for CbrConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.size.validate(&join(path, "size"))
    }
    fn build(&self, env: &SourceEnv) -> AgentPair {
        pair(OpenLoopSource::new(
            "cbr",
            env,
            self.size,
            Gaps::Rate(self.rate.bps()),
            self.packets,
        ))
    }
}

/// A mean gap or period below the clock's 1 ps resolution would round every draw to 0 ps and
/// keep the source sending at one instant.
const MIN_MEAN_GAP_S: f64 = 1e-12;

/// The shortest mean time between packets of `mean_bytes`: 1 ps, and a mean rate of at most
/// 1 Tbps, the same bound as every rate.
pub fn shortest_mean_gap_s(mean_bytes: f64) -> f64 {
    (mean_bytes * 8.0 / MAX_RATE_BPS).max(MIN_MEAN_GAP_S)
}

/// A mean gap must last at least [`shortest_mean_gap_s`].
pub fn check_mean_gap(path: &str, gap_s: f64, mean_bytes: f64) -> Result<(), ScenarioError> {
    let shortest = shortest_mean_gap_s(mean_bytes);
    if gap_s < shortest {
        return Err(ScenarioError::new(
            path,
            format!(
                "got a mean of {gap_s} s, expected a mean gap of at least {shortest} s \
                 (1 ps, and a mean rate of at most 1 Tbps for {mean_bytes}-byte packets)"
            ),
        ));
    }
    Ok(())
}

impl PoissonConfig {
    fn mean_gap_secs(&self) -> f64 {
        match (self.mean_gap, self.rate) {
            (Some(gap), _) => gap.secs(),
            (None, Some(rate)) => self.size.0.mean() * 8.0 / rate.bps() as f64,
            (None, None) => 0.0,
        }
    }
}

impl SourceConfig for PoissonConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.size.validate(&join(path, "size"))?;
        match (self.rate, self.mean_gap) {
            (Some(_), Some(_)) => Err(ScenarioError::new(
                join(path, "mean_gap"),
                "got both `rate` and `mean_gap`, expected exactly one of them",
            )),
            (None, None) => Err(ScenarioError::new(
                join(path, "rate"),
                "missing: expected a mean `rate` (e.g. \"1Mbps\") or a `mean_gap` (e.g. \"10ms\")",
            )),
            (None, Some(gap)) => {
                check_mean_gap(&join(path, "mean_gap"), gap.secs(), self.size.0.mean())
            }
            _ => Ok(()),
        }
    }
    fn build(&self, env: &SourceEnv) -> AgentPair {
        let gaps = Gaps::Random(Dist::Exponential {
            mean: self.mean_gap_secs(),
        });
        pair(OpenLoopSource::new(
            "poisson",
            env,
            self.size,
            gaps,
            self.packets,
        ))
    }
}

impl SourceConfig for OnOffConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.size.validate(&join(path, "size"))?;
        self.on.0.validate(&join(path, "on"))?;
        self.off.0.validate(&join(path, "off"))?;
        let (on, off) = (self.on.0.mean(), self.off.0.mean());
        if on < MIN_MEAN_GAP_S {
            return Err(ScenarioError::new(
                join(path, "on"),
                format!("got a mean of {on} s, expected a mean on period of at least 1 ps"),
            ));
        }
        let mean_bytes = self.size.0.mean();
        let shortest = shortest_mean_gap_s(mean_bytes);
        if on + off < shortest {
            return Err(ScenarioError::new(
                join(path, "off"),
                format!(
                    "got a mean on period of {on} s and off period of {off} s, expected a cycle \
                     (on + off) of at least {shortest} s: each on period starts with a packet, \
                     so the cycle bounds the packet rate (at most 1 Tbps for {mean_bytes}-byte \
                     packets)"
                ),
            ));
        }
        Ok(())
    }
    fn build(&self, env: &SourceEnv) -> AgentPair {
        let gaps = Gaps::OnOff {
            rate: self.rate.bps(),
            on: self.on.0,
            off: self.off.0,
        };
        pair(OpenLoopSource::new(
            "onoff",
            env,
            self.size,
            gaps,
            self.packets,
        ))
    }
}

impl SourceConfig for MaliciousConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.size.validate(&join(path, "size"))
    }
    fn build(&self, env: &SourceEnv) -> AgentPair {
        let rate = self.rate.map_or(env.first_hop_rate_bps, |r| r.bps());
        pair(OpenLoopSource::new(
            "malicious",
            env,
            self.size,
            Gaps::Rate(rate),
            self.packets,
        ))
    }
}

impl SourceConfig for TelnetConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.size.validate(&join(path, "size"))?;
        self.gap.0.validate(&join(path, "gap"))?;
        check_mean_gap(&join(path, "gap"), self.gap.0.mean(), self.size.0.mean())
    }
    fn build(&self, env: &SourceEnv) -> AgentPair {
        pair(OpenLoopSource::new(
            "telnet",
            env,
            self.size,
            Gaps::Random(self.gap.0),
            self.packets,
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{build, parse, parse_for_build};

    /// An on/off flow from `a` to `b` over a 1 Gb/s link, for 0.1 s.
    fn on_off(rate: &str, on: &str, off: &str) -> String {
        format!(
            "[simulation]\nduration = \"100ms\"\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n\
             [[links]]\nfrom = \"a\"\nto = \"b\"\nrate = \"1Gbps\"\n\
             [[flows]]\nsrc = \"a\"\ndst = \"b\"\n\
             source = {{ kind = \"onoff\", rate = \"{rate}\", on = \"{on}\", off = \"{off}\" }}\n"
        )
    }

    #[test]
    fn on_periods_shorter_than_the_gap_leave_one_send_event_pending() {
        // 1000-byte packets at 1 kb/s are 8 s apart; the source toggles every 10 us and sends a
        // packet at the start of each on period: at 0, 20 us, ... and 100 ms, the run's end.
        let mut sim =
            build(&parse_for_build(&on_off("1kbps", "10us", "10us"), &[]).unwrap()).unwrap();
        sim.run_until(sim.end() / 2);
        assert!(
            sim.events_pending() < 10,
            "{} events pending",
            sim.events_pending()
        );
        sim.run();
        assert_eq!(sim.flow_stats()[0].offered_pkts, 5_001);
    }

    #[test]
    fn a_cycle_shorter_than_a_packet_at_1_tbps_is_refused() {
        let e = parse(&on_off("10Mbps", "1ps", "1ps"), &[]).unwrap_err();
        assert_eq!(e.path, "flows[0].source.off");
        assert!(e.message.contains("cycle (on + off) of at least"), "{e}");
        assert!(parse(&on_off("10Mbps", "1ps", "8ns"), &[]).is_ok());
    }
}
