//! Single-queue active queue management: one algorithm per file.
//!
//! Every AQM here can watch one queue and act at another (Byun's gateway averages its
//! transmit queue and drops at its receive queue): when the scenario sets `monitor` on the
//! link, [`watched`] returns the monitored port's view, else the discipline's own queue. The
//! queue-length AQMs (RED, PI, CHOKe, BLUE, RED-PD, SRED, FRED, Early Random Drop, Yellow, VRC,
//! REDFC) measure the watched queue; the virtual-queue ones (AVQ, AVQRED, PFAVQRED, VQ-RED)
//! take the watched link's capacity. SFB (per-bin occupancy of its own packets) and Random
//! Drop (overflow of its own buffer) act on their own queue only. Every AQM that may notify by
//! marking takes `ecn = true`: ECN-capable packets are then marked instead of dropped, others
//! are still dropped ([`notify`]).

pub mod avq;
pub mod avqred;
pub mod blue;
pub mod choke;
pub mod early_random_drop;
pub mod fred;
pub mod pfavqred;
pub mod pi;
pub mod random_drop;
pub mod red;
pub mod red_pd;
pub mod redfc;
pub mod sfb;
pub mod sred;
pub mod step_mark;
pub mod vq_red;
pub mod vrc;
pub mod yellow;

use super::fifo::PacketFifo;
use super::{Cause, DropReason, QdiscCtx};
use crate::config::ScenarioError;
use crate::engine::Time;
use crate::net::packet::PacketId;

/// The queue an AQM bases its decisions on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Watched {
    pub packets: usize,
    pub bytes: u64,
    /// When the watched link went idle, if it is idle now.
    pub idle_since: Option<Time>,
}

/// The monitored port's queue when the scenario sets one, else the discipline's own.
pub fn watched(ctx: &QdiscCtx, own: &PacketFifo) -> Watched {
    match ctx.monitored {
        Some(view) => Watched {
            packets: view.len_packets,
            bytes: view.len_bytes,
            idle_since: view.idle_since,
        },
        None => Watched {
            packets: own.len(),
            bytes: own.bytes(),
            idle_since: ctx.idle_since,
        },
    }
}

/// Notifies congestion on `packet` for the discipline's own `cause`: marks it when `ecn` is on
/// and it is ECN-capable, else drops it. Returns true when the packet survives (was marked)
/// and must be queued.
pub fn notify(
    ctx: &mut QdiscCtx,
    packet: PacketId,
    ecn: bool,
    reason: DropReason,
    cause: Cause,
) -> bool {
    if ecn && ctx.mark_ce_because(packet, reason, cause) {
        return true;
    }
    ctx.drop_because(packet, reason, cause);
    false
}

/// A fast deterministic hasher for per-flow tables keyed by 64-bit flow ids.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowHasher(u64);

impl std::hash::Hasher for FlowHasher {
    fn finish(&self) -> u64 {
        crate::qdisc::classify::mix(self.0, 0x9e37)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64) ^ (self.0 >> 56);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// A map from flow ids, hashed with [`FlowHasher`].
pub type FlowMap<V> = std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<FlowHasher>>;

/// `value` must be in (0, 1] (a weight or a target utilisation).
pub fn check_open_unit(path: &str, field: &str, value: f64) -> Result<(), ScenarioError> {
    if value.is_finite() && value > 0.0 && value <= 1.0 {
        return Ok(());
    }
    Err(ScenarioError::new(
        format!("{path}.{field}"),
        format!("got {value}, expected a number in (0, 1]"),
    ))
}

/// `value` must be a finite number of at least `low`.
pub fn check_at_least(path: &str, field: &str, value: f64, low: f64) -> Result<(), ScenarioError> {
    if value.is_finite() && value >= low {
        return Ok(());
    }
    Err(ScenarioError::new(
        format!("{path}.{field}"),
        format!("got {value}, expected a number >= {low}"),
    ))
}

/// The time `period` after `now`: at least one picosecond later (a period that rounds to 0 ps
/// must not fire forever at the same instant), saturating at the end of time.
pub fn later(now: Time, period: Time) -> Time {
    now.saturating_add(period.max(1))
}

/// A uniform draw in [0, 1) from the port's stream.
pub fn uniform(ctx: &mut QdiscCtx) -> f64 {
    use rand::Rng as _;
    ctx.rng.random::<f64>()
}
