//! Fair Queueing of Demers, Keshav and Shenker, as seed 004 (`004_69e3e87eb3f3727b.txt`)
//! chapter 2 (the bit-by-bit round-robin model, bid numbers with promptness delta) and chapter 3
//! section 3.2 (the implementation). Paper: A. Demers, S. Keshav, S. Shenker, "Analysis and
//! simulation of a fair queueing algorithm", SIGCOMM 1989.
//!
//! Per arrival of P bits of conversation a at t: update R(t) by iterated deletion
//! ([`RoundNumber`]); F = (F^a if a is active else R(t)) + P/w;
//! bid B = P/w + MAX(F^a, R(t) - delta); F^a = F. Service is non-preemptive, smallest bid first
//! (ties in arrival order). Drop policies, selectable (`drop`):
//! - `"longest_tail"` (chapter 2): drop the last packet of the conversation using the most
//!   buffer space (bytes) until the buffer fits;
//! - `"largest_bid"` (chapter 3): drop packets in decreasing bid order until the buffer fits;
//! - `"buffer"`: let the `buffer` manager choose (LQD, RND, PFD, ... through the common hook).
//!
//! `charge_dropped = true` leaves F^a unchanged when a packet is dropped (chapter 2's "small
//! penalty"); `false` takes the dropped packet's P/w back off F^a (scenario 4's simulations).
//! Only a tail victim (the conversation's latest arrival) is uncharged: taking back a head
//! packet's charge could give the next arrival a bid below the packets still queued.
//!
//! Decisions (sources silent or conflicting, see spec 004 section 5):
//! - Default drop policy `longest_tail` without charging (A1: what the chapter 6 simulations
//!   did); default delta 0 (all simulations); default classification `conversation`.
//! - delta is one value for all conversations (chapter 3's per-conversation delta^a comes with
//!   no rule for setting it, A3); it is in bits, the unit of R; `inf` gives full history.
//! - R advances at the link rate in bits per picosecond; R is frozen while nothing is active
//!   (A2).
//! - The buffer limit is in packets (`limit`, default 50) and optionally bytes; the arrival is
//!   admitted first and victims are then dropped until both limits hold, so the arrival itself
//!   may be the victim. A packet larger than the whole byte limit is refused on arrival. A
//!   victim that is the arrival counts as `overflow`, any other as `pushout`.
//! - Weighted FQ: `weights` indexed by class id; N_ac is the sum of active weights and a packet
//!   counts as P/w bits (seed 004 section 2.2).
//! - FQbit (`mark_fraction`): the DECbit is set on an arriving packet when its conversation's
//!   queue, the arrival included, exceeds `mark_fraction` of its fair buffer share
//!   `limit / (number of backlogged conversations)` (see `fqbit.rs`).

use super::flow_table::{apply_buffer_manager, validate_weights, FlowTable, Managed};
use super::round_number::RoundNumber;
use super::tagged::TaggedQueues;
use crate::classify::FlowKey;
use crate::net::packet::{flags, PacketId};
use crate::qdisc::buffer::{BufferManager, BufferSpec, End, Victim};
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use crate::scenario::{check, ScenarioError};
use serde::{Deserialize, Serialize};

/// Which packet FQ drops when its buffer is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FqDrop {
    /// Tail of the conversation using the most buffer space (seed 004 chapter 2).
    #[default]
    LongestTail,
    /// Largest bid number first (seed 004 chapter 3).
    LargestBid,
    /// The pluggable buffer manager (`buffer`).
    Buffer,
}

pub(crate) fn default_limit() -> u64 {
    50
}

/// `queue = { kind = "fq", limit = 50, delta = 0.0, drop = "longest_tail", ... }`
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FqConfig {
    #[serde(default = "default_limit")]
    pub limit: u64,
    #[serde(default)]
    pub limit_bytes: Option<u64>,
    /// Promptness parameter in bits (0 in every seed 004 simulation).
    #[serde(default)]
    pub delta: f64,
    #[serde(default)]
    pub drop: FqDrop,
    #[serde(default)]
    pub charge_dropped: bool,
    #[serde(default = "conversation")]
    pub classify: FlowKey,
    #[serde(default)]
    pub weights: Vec<f64>,
    #[serde(default)]
    pub buffer: BufferSpec,
}

fn conversation() -> FlowKey {
    FlowKey::Conversation
}

impl Default for FqConfig {
    fn default() -> Self {
        FqConfig {
            limit: default_limit(),
            limit_bytes: None,
            delta: 0.0,
            drop: FqDrop::default(),
            charge_dropped: false,
            classify: conversation(),
            weights: Vec::new(),
            buffer: BufferSpec::default(),
        }
    }
}

impl FqConfig {
    pub(crate) fn check(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.limit)?;
        if let Some(b) = self.limit_bytes {
            check::positive_int(path, "limit_bytes", b)?;
        }
        if self.delta.is_nan() || self.delta < 0.0 {
            return Err(ScenarioError::new(
                format!("{path}.delta"),
                format!("got {}, expected a number >= 0 (bits) or inf", self.delta),
            ));
        }
        validate_weights(path, &self.weights)?;
        self.buffer.validate(&format!("{path}.buffer"))
    }

    pub fn build_fq(&self, env: &QdiscEnv, mark_fraction: Option<f64>) -> Fq {
        Fq {
            config: self.clone(),
            queues: TaggedQueues::new(
                FlowTable::new(self.classify, self.weights.clone()),
                self.drop == FqDrop::LargestBid,
            ),
            round: RoundNumber::new(env.link_rate_bps as f64 * 1e-12),
            manager: self.buffer.build(),
            mark_fraction,
            now: 0.0,
            name: if mark_fraction.is_some() {
                "fqbit"
            } else {
                "fq"
            },
        }
    }
}

impl QdiscConfig for FqConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.check(path)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(self.build_fq(env, None))
    }
}

pub struct Fq {
    config: FqConfig,
    queues: TaggedQueues,
    round: RoundNumber,
    manager: Box<dyn BufferManager>,
    mark_fraction: Option<f64>,
    now: f64,
    name: &'static str,
}

impl Fq {
    pub(crate) fn renamed(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    /// R(t) at `t` picoseconds (not before the last event).
    pub fn round_number(&mut self, t: u64) -> f64 {
        self.now = t as f64;
        self.round.advance(self.now)
    }

    /// The bid number of a queued packet.
    pub fn bid_of(&self, packet: PacketId) -> f64 {
        self.queues.tag_of(packet).key.tag
    }

    /// The queue (conversation) index of a packet's class.
    pub fn queue_index(&mut self, packet: &crate::net::Packet) -> u32 {
        self.queues.table.queue_of(packet)
    }

    /// F^a of the conversation of queue `q`.
    pub fn finish_of(&self, q: u32) -> f64 {
        self.round.finish_of(q)
    }

    fn over_limit(&self) -> bool {
        let table = &self.queues.table;
        use crate::qdisc::buffer::FlowQueues;
        table.total_packets() as u64 > self.config.limit
            || self
                .config
                .limit_bytes
                .is_some_and(|b| table.total_bytes() > b)
    }

    fn victim_queue(&mut self) -> Option<u32> {
        match self.config.drop {
            FqDrop::LargestBid => self.queues.largest_tail(),
            _ => self.queues.table.longest(true),
        }
    }

    fn drop_packet(&mut self, q: u32, end: End, reason: DropReason, ctx: &mut QdiscCtx) {
        let Some(packet) = self.queues.take(q, end, ctx) else {
            return;
        };
        if !self.config.charge_dropped && end == End::Tail {
            let bits = self.queues.tag_of(packet).aux;
            self.round.uncharge(q, bits, self.now);
        }
        ctx.drop(packet, reason);
    }

    fn enforce_limit(&mut self, arrival: PacketId, ctx: &mut QdiscCtx) {
        while self.over_limit() {
            let Some(q) = self.victim_queue() else {
                return;
            };
            let reason = if self.queues.table.queue(q).back() == Some(arrival) {
                DropReason::Overflow
            } else {
                DropReason::PushOut
            };
            self.drop_packet(q, End::Tail, reason, ctx);
        }
    }

    fn maybe_mark(&mut self, q: u32, packet: PacketId, ctx: &mut QdiscCtx) {
        let Some(fraction) = self.mark_fraction else {
            return;
        };
        use crate::qdisc::buffer::FlowQueues;
        let table = &self.queues.table;
        let fair_share = self.config.limit as f64 / table.backlogged().len().max(1) as f64;
        if table.queue(q).len() as f64 > fraction * fair_share {
            ctx.mark_flag(packet, flags::DECBIT, DropReason::Early);
        }
    }
}

impl Managed for Fq {
    fn parts(&mut self) -> (&mut dyn BufferManager, &FlowTable) {
        (self.manager.as_mut(), &self.queues.table)
    }
    fn discard(&mut self, victim: Victim, ctx: &mut QdiscCtx) {
        self.drop_packet(victim.queue, victim.end, victim.reason, ctx);
    }
}

impl Qdisc for Fq {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        self.now = ctx.now as f64;
        let p = ctx.packets.get(packet);
        let size = p.size;
        if self.config.limit_bytes.is_some_and(|b| size as u64 > b) {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        let q = self.queues.table.queue_of(p);
        let weight = self.queues.table.weight_of(q);
        let bits = size as f64 * 8.0;
        let arrival = self.round.arrive(q, bits, weight, self.now);
        let bid = bits / weight
            + arrival
                .previous_finish
                .max(arrival.round - self.config.delta);
        self.queues.push(q, packet, size, bid, bits);
        match self.config.drop {
            FqDrop::Buffer => apply_buffer_manager(self, q, ctx),
            _ => self.enforce_limit(packet, ctx),
        }
        if self.queues.table.queue(q).back() == Some(packet) {
            self.maybe_mark(q, packet, ctx);
        }
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let (q, packet) = self.queues.pop_min(ctx)?;
        if self.config.drop == FqDrop::Buffer {
            super::flow_table::notify(self, q);
        }
        Some(packet)
    }

    fn peek(&self) -> Option<PacketId> {
        self.queues.peek_min()
    }

    fn len_packets(&self) -> usize {
        use crate::qdisc::buffer::FlowQueues;
        self.queues.table.total_packets()
    }

    fn len_bytes(&self) -> u64 {
        use crate::qdisc::buffer::FlowQueues;
        self.queues.table.total_bytes()
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("round", self.round.checkpoint()),
            ("active", self.round.active_count() as f64),
        ]
    }

    fn name(&self) -> &'static str {
        self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;

    const US: u64 = 1_000_000;

    fn fq(config: FqConfig, h: &Harness) -> Fq {
        let env = QdiscEnv {
            link_rate_bps: h.link_rate_bps,
            port: "x".into(),
        };
        config.build_fq(&env, None)
    }

    fn packet(h: &mut Harness, conv: u32, bytes: u32) -> PacketId {
        h.packet(conv, bytes)
    }

    /// At 10 Mb/s R runs at 1e-5 bits/ps per active weight. A: one 800-bit packet at 0 (F=800);
    /// B: three at 0 (F = 800, 1600, 2400). R = 800 at 160 us (slope 1/2), A goes inactive,
    /// then R(200 us) = 800 + 40e6 * 1e-5 = 1200. A's next 800-bit packet: F = 2000 and the
    /// bid is 800 + max(800, 1200 - delta).
    #[test]
    fn bid_numbers_follow_the_promptness_parameter() {
        for (delta, bid) in [(0.0, 2000.0), (300.0, 1700.0), (f64::INFINITY, 1600.0)] {
            let mut h = Harness::new();
            let mut q = fq(
                FqConfig {
                    delta,
                    ..FqConfig::default()
                },
                &h,
            );
            let a = packet(&mut h, 0, 100);
            h.enqueue(&mut q, a);
            for _ in 0..3 {
                let b = packet(&mut h, 1, 100);
                h.enqueue(&mut q, b);
            }
            h.now = 200 * US;
            let late = packet(&mut h, 0, 100);
            h.enqueue(&mut q, late);
            assert_eq!(q.bid_of(late), bid, "delta {delta}");
            assert_eq!(q.finish_of(0), 2000.0);
            assert!((q.round_number(200 * US) - 1200.0).abs() < 1e-9);
        }
    }

    #[test]
    fn serves_smallest_bid_first_non_preemptively() {
        // A: 1000 B (8000 bits, bid 8000); B: 100 B packets (bids 800, 1600). Service order
        // B, B, A, whatever the arrival order.
        let mut h = Harness::new();
        let mut q = fq(FqConfig::default(), &h);
        let a = packet(&mut h, 0, 1000);
        let b1 = packet(&mut h, 1, 100);
        let b2 = packet(&mut h, 1, 100);
        for id in [a, b1, b2] {
            h.enqueue(&mut q, id);
        }
        assert_eq!(q.peek(), Some(b1));
        let order: Vec<_> = std::iter::from_fn(|| h.dequeue(&mut q)).collect();
        assert_eq!(order, vec![b1, b2, a]);
    }

    /// A: two 500 B packets at 0 (F = 4000, 8000). Only A is active, so R(600 us) = 6000;
    /// B's 300 B packet then gets F = bid = 8400. With a 1200-byte buffer one must go:
    /// chapter 2 drops the tail of A (1000 B queued), chapter 3 the largest bid (B's).
    /// Without charging, A's F^a falls from 8000 to max(8000 - 4000, R = 6000) = 6000.
    #[test]
    fn drop_policies_and_charging() {
        let cases = [
            (FqDrop::LongestTail, false, 0, DropReason::PushOut, 6000.0),
            (FqDrop::LongestTail, true, 0, DropReason::PushOut, 8000.0),
            (FqDrop::LargestBid, false, 1, DropReason::Overflow, 8000.0),
        ];
        for (drop, charge_dropped, victim_conv, reason, finish_a) in cases {
            let mut h = Harness::new();
            let mut q = fq(
                FqConfig {
                    limit_bytes: Some(1200),
                    drop,
                    charge_dropped,
                    ..FqConfig::default()
                },
                &h,
            );
            let a1 = packet(&mut h, 0, 500);
            let a2 = packet(&mut h, 0, 500);
            h.enqueue(&mut q, a1);
            h.enqueue(&mut q, a2);
            h.now = 600 * US;
            let b = packet(&mut h, 1, 300);
            h.enqueue(&mut q, b);
            assert!((q.bid_of(b) - 8400.0).abs() < 1e-6);
            let expected = if victim_conv == 0 { a2 } else { b };
            assert_eq!(h.dropped(), vec![(expected, reason)], "{drop:?}");
            let finish = q.finish_of(0);
            assert!(
                (finish - finish_a).abs() < 1e-6,
                "{drop:?} {charge_dropped}: {finish}"
            );
            assert_eq!(q.len_bytes(), if victim_conv == 0 { 800 } else { 1000 });
        }
    }

    #[test]
    fn buffer_manager_chooses_when_asked() {
        let mut h = Harness::new();
        let mut q = fq(
            FqConfig {
                drop: FqDrop::Buffer,
                buffer: toml::from_str("kind = \"droptail\"\nlimit = 2").unwrap(),
                ..FqConfig::default()
            },
            &h,
        );
        let ids: Vec<_> = (0..3).map(|i| packet(&mut h, i, 100)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id);
        }
        assert_eq!(h.dropped(), vec![(ids[2], DropReason::Overflow)]);
        assert_eq!(q.len_packets(), 2);
    }

    #[test]
    fn bad_delta_names_the_field() {
        let config = FqConfig {
            delta: -1.0,
            ..FqConfig::default()
        };
        let e = config.validate("links[0].queue").unwrap_err();
        assert_eq!(e.path, "links[0].queue.delta");
        let config = FqConfig {
            weights: vec![1.0, 0.0],
            ..FqConfig::default()
        };
        let e = config.validate("q").unwrap_err();
        assert_eq!(e.path, "q.weights[1]");
    }
}
