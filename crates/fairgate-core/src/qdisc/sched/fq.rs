//! Fair Queueing \[Demers89] as [Keshav91, ch. 2] models it (bit-by-bit round robin, bid
//! numbers with promptness delta) and [Keshav91, §3.2] implements it.
//!
//! Per arrival of P bits of conversation a at t: update R(t) by iterated deletion
//! ([`RoundNumber`]); F = (F^a if a is active else R(t)) + P/w; bid B = P/w + MAX(F^a,
//! R(t) - delta); F^a = F. Service is non-preemptive, smallest bid first (ties in arrival
//! order). On overflow (`drop`): `longest_tail` drops the tail of the conversation using the
//! most buffer bytes, `largest_bid` drops in decreasing bid order, `buffer` asks the buffer
//! manager. `victim` judges the buffer after admitting the arrival (default) or before it
//! ([Keshav91, §2.1] literally); `charge_dropped = false` takes a dropped tail's P/w back off
//! F^a. Weighted FQ counts a packet as P/w bits ([Keshav91, §2.2]); FQbit adds `mark_fraction`.
//!
//! Decisions (the reasons and their history are in docs/models/fq.md): defaults
//! `longest_tail`, no charging, delta 0, classification `conversation`, `after_admission`;
//! one delta for all conversations, in bits; R advances at the link rate in bits per
//! picosecond and is frozen while nothing is active; `limit` in packets (default 50) and
//! optionally bytes, a packet larger than the byte limit is refused; `buffer` only with
//! `drop = "buffer"` (drop-tail over `limit` when absent), and then no `limit` of its own
//! that differs from the manager's; the arrival as victim
//! counts as `overflow`, any other as `pushout`; buffer use is measured in bytes; ties between
//! equally long conversations go to the lowest index ([`FlowTable::longest`]).

use crate::config::ScenarioError;
use crate::net::packet::{flags, PacketId};
use crate::qdisc::buffer::{check_manager_keys, BufferManager, BufferSpec, End, Victim};
use crate::qdisc::classify::FlowKey;
use crate::qdisc::limit::limited_config;
use crate::qdisc::structures::flow_table::{
    apply_buffer_manager, validate_weights, FlowTable, Managed,
};
use crate::qdisc::structures::round_number::RoundNumber;
use crate::qdisc::structures::tagged::TaggedQueues;
use crate::qdisc::Limit;
use crate::qdisc::{Cause, DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};

/// The cause of a packet pushed out of another conversation's queue to make room (Keshav's
/// buffer stealing, `drop = "longest_tail"` or `"largest_bid"`).
const STEAL: Option<Cause> = Some("fq_steal");
use serde::{Deserialize, Serialize};

/// Which packet FQ drops when its buffer is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FqDrop {
    /// Tail of the conversation using the most buffer space ([Keshav91, ch. 2]).
    #[default]
    LongestTail,
    /// Largest bid number first ([Keshav91, ch. 3]).
    LargestBid,
    /// The pluggable buffer manager (`buffer`).
    Buffer,
}

/// When FQ chooses the packet that a full buffer loses (`victim`, with `drop = "longest_tail"`
/// or `"largest_bid"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FqVictim {
    /// Admit the arrival, then drop by the drop policy until the buffer fits; the arrival
    /// counts towards its conversation's share and ties go to the lowest conversation index.
    #[default]
    AfterAdmission,
    /// [Keshav91, §2.1] read literally: judge the buffer as it is when the packet arrives;
    /// the arrival is dropped when its own conversation is (one of) the victims, else the
    /// victim's last queued packet is pushed out and the arrival admitted.
    BeforeAdmission,
}

limited_config! {
    /// `queue = { kind = "fq", limit = 50, delta = 0.0, drop = "longest_tail", ... }`
    #[derive(Clone, Debug)]
    pub struct FqConfig {
        /// Promptness parameter in bits (0 in every \[Keshav91] simulation).
        pub delta: f64,
        pub drop: FqDrop,
        /// When the victim is chosen (see [`FqVictim`]).
        pub victim: FqVictim,
        pub charge_dropped: bool,
        pub classify: FlowKey,
        pub weights: Vec<f64>,
        /// The manager `drop = "buffer"` asks; none: drop-tail over `limit`.
        pub buffer: Option<BufferSpec>,
    }
}

impl Default for FqConfig {
    fn default() -> Self {
        FqConfig {
            limit: Limit::packets(50),
            delta: 0.0,
            drop: FqDrop::default(),
            victim: FqVictim::default(),
            charge_dropped: false,
            classify: FlowKey::Conversation,
            weights: Vec::new(),
            buffer: None,
        }
    }
}

impl FqConfig {
    pub(crate) fn check(&self, path: &str) -> Result<(), ScenarioError> {
        self.limit.validate(path)?;
        if self.delta.is_nan() || self.delta < 0.0 {
            return Err(ScenarioError::new(
                format!("{path}.delta"),
                format!("got {}, expected a number >= 0 (bits) or inf", self.delta),
            ));
        }
        if self.drop == FqDrop::Buffer && self.victim == FqVictim::BeforeAdmission {
            return Err(ScenarioError::new(
                format!("{path}.victim"),
                "got \"before_admission\" with drop = \"buffer\": the buffer manager chooses \
                 its victims after admission; use drop = \"longest_tail\" or \"largest_bid\", \
                 or victim = \"after_admission\"",
            ));
        }
        validate_weights(path, &self.weights)?;
        check_manager_keys(
            path,
            self.drop == FqDrop::Buffer,
            self.buffer.as_ref(),
            self.limit,
        )?;
        self.manager().validate(&format!("{path}.buffer"))
    }

    /// The buffer manager `drop = "buffer"` asks: `buffer`, else drop-tail over `limit`.
    pub fn manager(&self) -> BufferSpec {
        BufferSpec::given_or_drop_tail(self.buffer.as_ref(), self.limit)
    }

    /// The buffer that holds the queue: the manager's with `drop = "buffer"`, else `limit`.
    fn held_limit(&self) -> Limit {
        match self.drop {
            FqDrop::Buffer => self.manager().limit(),
            _ => self.limit,
        }
    }

    pub fn build_fq(&self, env: &QdiscEnv, mark_fraction: Option<f64>) -> Fq {
        Fq {
            config: self.clone(),
            queues: TaggedQueues::new(
                FlowTable::new(self.classify, self.weights.clone()),
                self.drop == FqDrop::LargestBid,
            ),
            round: RoundNumber::new(env.link_rate_bps as f64 * 1e-12),
            manager: self.manager().build(),
            held_limit: self.held_limit(),
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
    /// FQbit's fair share and the largest packet admitted: [`FqConfig::held_limit`].
    held_limit: Limit,
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

    /// Whether the buffer, with `packets` more packets of `bytes` more bytes, exceeds a limit.
    fn exceeds_limit(&self, packets: u64, bytes: u64) -> bool {
        let table = &self.queues.table;
        use crate::qdisc::buffer::FlowQueues;
        table.total_packets() as u64 + packets > self.config.limit.packets
            || self
                .config
                .limit
                .bytes
                .is_some_and(|b| table.total_bytes() + bytes > b)
    }

    fn victim_queue(&mut self) -> Option<u32> {
        match self.config.drop {
            FqDrop::LargestBid => self.queues.largest_tail(),
            _ => self.queues.table.longest(true),
        }
    }

    /// Drops the packet at `end` of queue `q` for `why`: the reason, and the cause if named.
    fn drop_packet(
        &mut self,
        q: u32,
        end: End,
        why: (DropReason, Option<Cause>),
        ctx: &mut QdiscCtx,
    ) {
        let Some(packet) = self.queues.take(q, end, ctx) else {
            return;
        };
        if !self.config.charge_dropped && end == End::Tail {
            let bits = self.queues.tag_of(packet).aux;
            self.round.uncharge(q, bits, self.now);
        }
        ctx.drop_with(packet, why.0, why.1);
    }

    /// `victim = "before_admission"`: pushes out queued tails until an arrival of `size` bytes
    /// to queue `q` with bid `bid` fits. Returns false, dropping nothing more, as soon as the
    /// arrival itself is the victim.
    fn make_room(&mut self, q: u32, size: u32, bid: f64, ctx: &mut QdiscCtx) -> bool {
        while self.exceeds_limit(1, size as u64) {
            match self.victim_before_admission(q, bid) {
                Some(victim) => {
                    self.drop_packet(victim, End::Tail, (DropReason::PushOut, STEAL), ctx)
                }
                None => return false,
            }
        }
        true
    }

    /// The queue whose tail makes room for an arrival to queue `q` with bid `bid`, judged on
    /// the buffer without the arrival; `None` when the arrival is the victim: its conversation
    /// uses at least as many bytes as the longest (`longest_tail`), or its bid is at least the
    /// largest queued bid (`largest_bid`).
    fn victim_before_admission(&mut self, q: u32, bid: f64) -> Option<u32> {
        let victim = self.victim_queue()?;
        let table = &self.queues.table;
        let arrival_loses = match self.config.drop {
            FqDrop::LargestBid => {
                let tail = table.queue(victim).back()?;
                bid >= self.queues.tag_of(tail).key.tag
            }
            _ => table.queue(q).bytes() >= table.queue(victim).bytes(),
        };
        (!arrival_loses).then_some(victim)
    }

    /// Drops an arrival that was never queued, taking its charge back unless charged.
    fn refuse(&mut self, q: u32, packet: PacketId, bits: f64, ctx: &mut QdiscCtx) {
        if !self.config.charge_dropped {
            self.round.uncharge(q, bits, self.now);
        }
        ctx.drop(packet, DropReason::Overflow);
    }

    fn enforce_limit(&mut self, arrival: PacketId, ctx: &mut QdiscCtx) {
        while self.exceeds_limit(0, 0) {
            let Some(q) = self.victim_queue() else {
                return;
            };
            let why = if self.queues.table.queue(q).back() == Some(arrival) {
                (DropReason::Overflow, None)
            } else {
                (DropReason::PushOut, STEAL)
            };
            self.drop_packet(q, End::Tail, why, ctx);
        }
    }

    fn maybe_mark(&mut self, q: u32, packet: PacketId, ctx: &mut QdiscCtx) {
        let Some(fraction) = self.mark_fraction else {
            return;
        };
        use crate::qdisc::buffer::FlowQueues;
        let table = &self.queues.table;
        let fair_share = self.held_limit.packets as f64 / table.backlogged().len().max(1) as f64;
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
        let why = (victim.reason, victim.cause);
        self.drop_packet(victim.queue, victim.end, why, ctx);
    }
}

impl Qdisc for Fq {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        self.now = ctx.now as f64;
        let p = ctx.packets.get(packet);
        let size = p.size;
        if self.held_limit.bytes.is_some_and(|b| size as u64 > b) {
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
        if self.config.victim == FqVictim::BeforeAdmission && !self.make_room(q, size, bid, ctx) {
            self.refuse(q, packet, bits, ctx);
            return;
        }
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
            crate::qdisc::structures::flow_table::notify(self, q);
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
                    limit: Limit {
                        bytes: Some(1200),
                        ..FqConfig::default().limit
                    },
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

    fn victim_config(victim: FqVictim, drop: FqDrop, limit: u64, bytes: Option<u64>) -> FqConfig {
        FqConfig {
            limit: Limit {
                packets: limit,
                bytes,
            },
            drop,
            victim,
            ..FqConfig::default()
        }
    }

    /// Queues conversation 0's packets of `first` bytes, then conversation 1's of `second`
    /// bytes, then one arrival of `late` bytes to conversation 0; returns every drop.
    fn overflow_case(
        config: FqConfig,
        first: &[u32],
        second: &[u32],
        late: u32,
    ) -> (Vec<PacketId>, PacketId, Vec<(PacketId, DropReason)>) {
        let mut h = Harness::new();
        let mut q = fq(config, &h);
        let mut queued = Vec::new();
        for (conv, sizes) in [(0, first), (1, second)] {
            for &bytes in sizes {
                let id = packet(&mut h, conv, bytes);
                h.enqueue(&mut q, id);
                queued.push(id);
            }
        }
        let arrival = packet(&mut h, 0, late);
        h.enqueue(&mut q, arrival);
        (queued, arrival, h.dropped())
    }

    /// Limit 3 packets: conversation 0 (index 0) queues one packet, conversation 1 two; one
    /// more packet of conversation 0 arrives. After admission the two tie at 2 packets and
    /// the lower index, 0, loses its tail: the arrival. Before admission conversation 1 (2
    /// packets against 1) uses the most buffer space and loses its last queued packet.
    #[test]
    fn admission_rules_pick_different_victims_on_a_tie() {
        let cases = [
            (FqVictim::AfterAdmission, None, DropReason::Overflow),
            (FqVictim::BeforeAdmission, Some(2), DropReason::PushOut),
        ];
        for (victim, queued_victim, reason) in cases {
            let config = victim_config(victim, FqDrop::LongestTail, 3, None);
            let (queued, arrival, dropped) = overflow_case(config, &[100], &[100, 100], 100);
            let expected = queued_victim.map_or(arrival, |i| queued[i]);
            assert_eq!(dropped, vec![(expected, reason)], "{victim:?}");
        }
    }

    /// Byte limit 2300: conversation 0 queues 1000 B, conversation 1 1200 B, and a 500 B
    /// packet of conversation 0 arrives. After admission conversation 0 holds 1500 B, the
    /// most, and the arrival goes. Before admission conversation 1 (1200 B against 1000 B)
    /// loses its 1200 B packet and the arrival is queued.
    #[test]
    fn admission_rules_under_a_byte_limit() {
        for (victim, bytes_left) in [
            (FqVictim::AfterAdmission, 2200),
            (FqVictim::BeforeAdmission, 1500),
        ] {
            let mut h = Harness::new();
            let mut q = fq(
                victim_config(victim, FqDrop::LongestTail, 50, Some(2300)),
                &h,
            );
            for (conv, bytes) in [(0, 1000), (1, 1200), (0, 500)] {
                let id = packet(&mut h, conv, bytes);
                h.enqueue(&mut q, id);
            }
            assert_eq!(h.dropped().len(), 1, "{victim:?}");
            assert_eq!(q.len_bytes(), bytes_left, "{victim:?}");
        }
    }

    /// Before admission, the arrival's conversation tied with the longest loses the arrival
    /// (limit 4: conversations 0 and 1 queue two packets each; 0's third is refused), and so
    /// does the longest itself; the arrival's charge is taken back (F^a as before it).
    #[test]
    fn before_admission_a_tied_or_longest_arrival_is_refused() {
        for (first, second) in [(2, 2), (3, 1)] {
            let config = victim_config(FqVictim::BeforeAdmission, FqDrop::LongestTail, 4, None);
            let mut h = Harness::new();
            let mut q = fq(config, &h);
            for (conv, n) in [(0, first), (1, second)] {
                for _ in 0..n {
                    let id = packet(&mut h, conv, 100);
                    h.enqueue(&mut q, id);
                }
            }
            let finish = q.finish_of(0);
            let arrival = packet(&mut h, 0, 100);
            h.enqueue(&mut q, arrival);
            assert_eq!(h.dropped(), vec![(arrival, DropReason::Overflow)]);
            assert_eq!(q.finish_of(0), finish);
            assert_eq!(q.len_packets(), 4);
        }
    }

    /// With `largest_bid` the rules coincide. The tie example above: bids 800 (conversation
    /// 0), 800 and 1600 (conversation 1); the arrival's bid, 1600, ties with conversation 1's
    /// tail and the arrival goes under both. With a 200 B arrival (bid 2400) likewise; with
    /// conversation 1's tail at 500 B (bid 4800) that tail is pushed out under both.
    #[test]
    fn largest_bid_victims_do_not_depend_on_the_rule() {
        for (second, late, queued_victim) in
            [(100, 100, None), (100, 200, None), (500, 100, Some(2))]
        {
            for victim in [FqVictim::AfterAdmission, FqVictim::BeforeAdmission] {
                let config = victim_config(victim, FqDrop::LargestBid, 3, None);
                let (queued, arrival, dropped) =
                    overflow_case(config, &[100], &[100, second], late);
                let expected = queued_victim.map_or(arrival, |i| queued[i]);
                assert_eq!(dropped.len(), 1, "{victim:?}");
                assert_eq!(dropped[0].0, expected, "{victim:?} {second} {late}");
            }
        }
    }

    /// Every packet offered is dequeued, dropped or still queued, exactly once, under both
    /// rules, both drop policies and a byte limit, with FQbit marking on: 4000 arrivals of
    /// five conversations (40-1000 B) against a link that drains one packet per two arrivals.
    #[test]
    fn conservation_under_every_victim_rule() {
        for victim in [FqVictim::AfterAdmission, FqVictim::BeforeAdmission] {
            for drop in [FqDrop::LongestTail, FqDrop::LargestBid] {
                for bytes in [None, Some(6000)] {
                    let mut h = Harness::new();
                    let env = QdiscEnv {
                        link_rate_bps: h.link_rate_bps,
                        port: "x".into(),
                    };
                    let config = victim_config(victim, drop, 12, bytes);
                    let mut q = config.build_fq(&env, Some(1.0 / 3.0));
                    let (offered, served) = drive(&mut h, &mut q);
                    assert!(h.dropped().len() > 100, "{victim:?} {drop:?} {bytes:?}");
                    let mut seen: Vec<_> = served
                        .iter()
                        .copied()
                        .chain(h.dropped().into_iter().map(|(id, _)| id))
                        .chain(std::iter::from_fn(|| h.dequeue(&mut q)))
                        .collect();
                    seen.sort_unstable();
                    assert_eq!(seen, offered, "{victim:?} {drop:?} {bytes:?}");
                }
            }
        }
    }

    /// Offers 4000 packets (sizes and conversations from the harness's generator), dequeuing
    /// one after every second; returns the packets offered (sorted) and those served.
    fn drive(h: &mut Harness, q: &mut Fq) -> (Vec<PacketId>, Vec<PacketId>) {
        use rand::Rng;
        let (mut offered, mut served) = (Vec::new(), Vec::new());
        for i in 0..4000u64 {
            h.now = i * 50 * US;
            let conv = h.rng.random_range(0..5u32);
            let bytes = [40, 500, 1000][h.rng.random_range(0..3usize)];
            let id = packet(h, conv, bytes);
            h.enqueue(q, id);
            offered.push(id);
            if i % 2 == 1 {
                served.extend(h.dequeue(q));
            }
        }
        offered.sort_unstable();
        (offered, served)
    }

    #[test]
    fn buffer_manager_chooses_when_asked() {
        let mut h = Harness::new();
        let mut q = fq(
            FqConfig {
                drop: FqDrop::Buffer,
                buffer: Some(toml::from_str("kind = \"droptail\"\nlimit = 2").unwrap()),
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
    fn a_buffer_beside_another_drop_rule_or_limit_is_refused_not_ignored() {
        let config = |text: &str| toml::from_str::<FqConfig>(text).unwrap();
        let unused = config("buffer = { kind = \"lqd\", limit = 20 }");
        let e = unused.validate("q").unwrap_err();
        assert_eq!(e.path, "q.buffer");
        assert!(
            e.message.contains("expected `drop = \"buffer\"` beside it"),
            "{e}"
        );
        let two = config("drop = \"buffer\"\nlimit = 10\nbuffer = { kind = \"lqd\", limit = 20 }");
        let e = two.validate("q").unwrap_err();
        assert_eq!(e.path, "q.limit");
        assert!(e
            .message
            .contains("got limit = 10 beside a `buffer` table with limit = 20"));
        let same = "drop = \"buffer\"\nlimit = 20\nbuffer = { kind = \"lqd\", limit = 20 }";
        assert!(config(same).validate("q").is_ok());
        let lqd = config("drop = \"buffer\"\nbuffer = { kind = \"lqd\", limit = 20 }");
        assert_eq!(lqd.held_limit(), Limit::packets(20));
    }

    #[test]
    fn drop_buffer_without_a_buffer_is_drop_tail_over_the_own_limit() {
        let config: FqConfig = toml::from_str("drop = \"buffer\"\nlimit = 2").unwrap();
        assert!(
            matches!(config.manager(), BufferSpec::DropTail(d) if d.limit == Limit::packets(2))
        );
        let mut h = Harness::new();
        let mut q = fq(config, &h);
        let ids: Vec<_> = (0..3).map(|i| packet(&mut h, i, 100)).collect();
        for &id in &ids {
            h.enqueue(&mut q, id);
        }
        assert_eq!(h.dropped(), vec![(ids[2], DropReason::Overflow)]);
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

    #[test]
    fn bad_victim_names_the_field_and_the_values() {
        let e = toml::from_str::<FqConfig>("victim = \"first\"").unwrap_err();
        let message = e.to_string();
        assert!(message.contains("victim"), "{message}");
        assert!(
            message.contains("`after_admission`, `before_admission`")
                || message.contains("`after_admission` or `before_admission`"),
            "{message}"
        );
        let config = FqConfig {
            drop: FqDrop::Buffer,
            victim: FqVictim::BeforeAdmission,
            ..FqConfig::default()
        };
        let e = config.validate("links[0].queue").unwrap_err();
        assert_eq!(e.path, "links[0].queue.victim");
    }
}
