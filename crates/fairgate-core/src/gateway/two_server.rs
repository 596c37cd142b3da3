//! The two-server gateway [Vaidyanathan99, §4.3, Fig. 4.3]: every packet a gateway takes in
//! from its external interfaces (the sources' segments, the far side's ACKs and any UDP)
//! first waits in an IP queueing subsystem, any discipline (the source: per-flow queues,
//! start-time FQ with PFD), served by a rate-matching server at `rate` packets per second;
//! only a served segment reaches the TCP layer, so the LHS acknowledges it only then. The
//! RHS output goes to the gateway's output port (the FIFO subsystem).
//!
//! Decisions (long form on `docs/models/two_server.md`):
//! - Service takes 1/rate per packet whatever its size; the server works while packets wait.
//! - A packet the discipline drops is lost before the TCP layer (the source retransmits it).
//! - Packets other than TCP leave the server toward their destination unchanged (source,
//!   creation time) through the gateway's output ports, and so does a TCP packet of a
//!   connection the TCP layer has retired (counted as stale): C1 and C3 share one sequence
//!   space [Vaidyanathan99, §4.2], so the far end point answers it.
//! - The discipline sees a nominal link rate of rate × 1500 B (for disciplines that use one);
//!   a discipline's own timers are not run here (FIFO, the per-flow schedulers and the buffer
//!   managers need none).

use crate::config::error::{check, join, ScenarioError};
use crate::engine::{secs, Rng, Time};
use crate::net::packet::PacketArena;
use crate::net::Packet;
use crate::qdisc::{Effects, Qdisc, QdiscCtx, QdiscEnv, QdiscSpec};
use serde::{Deserialize, Serialize};

/// `two_server = { rate = 540, queue = { kind = "stfq", ... } }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TwoServerSpec {
    /// Service rate μ of the IP subsystem, packets per second.
    pub rate: f64,
    #[serde(default)]
    pub queue: QdiscSpec,
}

impl TwoServerSpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive(path, "rate", self.rate)?;
        self.queue.validate(&join(path, "queue"))
    }
}

/// The IP subsystem of one gateway: its discipline, the packets it holds and its server.
pub struct RateServer {
    qdisc: Box<dyn Qdisc>,
    packets: PacketArena,
    effects: Effects,
    nominal_rate_bps: u64,
    service: Time,
    busy: bool,
    pub served_packets: u64,
    pub served_bytes: u64,
    pub dropped_packets: u64,
    /// TCP packets served for a connection the TCP layer had retired, routed on as they are.
    pub stale_packets: u64,
}

impl RateServer {
    pub fn new(spec: &TwoServerSpec, name: &str) -> Self {
        let nominal_rate_bps = (spec.rate * 1500.0 * 8.0).round().max(1.0) as u64;
        let env = QdiscEnv {
            link_rate_bps: nominal_rate_bps,
            port: format!("{name} IP subsystem"),
        };
        RateServer {
            qdisc: spec.queue.build(&env),
            packets: PacketArena::default(),
            effects: Effects::default(),
            nominal_rate_bps,
            service: secs(1.0 / spec.rate).max(1),
            busy: false,
            served_packets: 0,
            served_bytes: 0,
            dropped_packets: 0,
            stale_packets: 0,
        }
    }

    /// Bytes waiting in the IP subsystem.
    pub fn len_bytes(&self) -> u64 {
        self.qdisc.len_bytes()
    }

    /// Queues `p`; returns the time the server must be woken, if it was idle.
    pub fn enqueue(&mut self, mut p: Packet, now: Time, rng: &mut Rng) -> Option<Time> {
        p.enqueued = now;
        let id = self.packets.alloc(p);
        self.with_qdisc(now, rng, |q, ctx| q.enqueue(id, ctx));
        if self.busy || self.qdisc.len_packets() == 0 {
            return None;
        }
        self.busy = true;
        Some(now.saturating_add(self.service))
    }

    /// The server finishes one service: the packet served and when to wake again, if more wait.
    pub fn serve(&mut self, now: Time, rng: &mut Rng) -> (Option<Packet>, Option<Time>) {
        let served = self
            .with_qdisc(now, rng, |q, ctx| q.dequeue(ctx))
            .map(|id| {
                let p = *self.packets.get(id);
                self.packets.free(id);
                p
            });
        if let Some(p) = &served {
            self.served_packets += 1;
            self.served_bytes += p.size as u64;
        }
        self.busy = self.qdisc.len_packets() > 0;
        (
            served,
            self.busy.then_some(now.saturating_add(self.service)),
        )
    }

    fn with_qdisc<R>(
        &mut self,
        now: Time,
        rng: &mut Rng,
        f: impl FnOnce(&mut dyn Qdisc, &mut QdiscCtx) -> R,
    ) -> R {
        let mut ctx = QdiscCtx {
            now,
            packets: &mut self.packets,
            rng,
            link_rate_bps: self.nominal_rate_bps,
            monitored: None,
            idle_since: None,
            effects: &mut self.effects,
        };
        let result = f(self.qdisc.as_mut(), &mut ctx);
        for (id, _) in self.effects.drops.drain(..) {
            self.packets.free(id);
            self.dropped_packets += 1;
        }
        self.effects.clear();
        result
    }
}
