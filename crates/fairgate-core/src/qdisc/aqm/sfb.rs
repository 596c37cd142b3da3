//! SFB: Stochastic Fair Blue (Feng, Kandlur, Saha, Shin, "Stochastic Fair Blue: a queue
//! management algorithm for enforcing fairness", INFOCOM 2001).
//!
//! Source: [Chung06, §4]: L = 3
//! levels, N = 20 bins, BLUE per bin with increment 0.005, decrement 0.001, freeze 100 ms,
//! unresponsive-flow threshold 0.98 on the minimum probability, penalty box time 15 ms, hash
//! functions switched every 20 s.
//!
//! Per arrival, hashed into one bin per level: a bin holding more than `bin_size` packets
//! raises its p (BLUE, frozen), an empty bin lowers it; the packet is notified with the minimum
//! p of its bins. A minimum at or above `penalty_threshold` marks the flow unresponsive: its
//! packets go through the penalty box instead.
//!
//! Decisions where the sources are silent:
//! - Penalty box: a single rate limiter shared by every penalised packet admits one packet per
//!   `penalty_time` (15 ms; about 0.53 Mb/s at 1000 bytes) and drops the rest (`filter`);
//!   admitted penalised packets are queued without further notification.
//! - `bin_size` defaults to ceil(limit / bins) packets.
//! - Moving hash with double buffering: two bin sets, one deciding, one warming up (both
//!   updated by every packet); every `rehash_interval` the warm set takes over and the other
//!   restarts empty with a fresh salt. A set only counts packets queued after it started.
//! - Bins are updated at arrival (both directions of BLUE), as in the SFB paper's pseudo-code.
//! - `congestion_probability()` is the mean p over the deciding set's bins.

use super::blue::BlueProbability;
use super::{later, notify, uniform};
use crate::config::units::Duration;
use crate::config::{check, ScenarioError};
use crate::engine::Time;
use crate::net::packet::PacketId;
use crate::qdisc::classify::{mix, FlowKey};
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::limit::limited_config;
use crate::qdisc::Limit;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use std::collections::VecDeque;

/// Most levels a configuration may ask for.
pub const MAX_LEVELS: usize = 8;

limited_config! {
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct SfbConfig {
        pub levels: u32,
        pub bins: u32,
        /// Packets a bin may hold before its p rises (default ceil(limit / bins)).
        pub bin_size: Option<u64>,
        pub increment: f64,
        pub decrement: f64,
        pub freeze_time: Duration,
        pub penalty_threshold: f64,
        pub penalty_time: Duration,
        pub rehash_interval: Duration,
        pub key: FlowKey,
        pub ecn: bool,
    }
}

impl Default for SfbConfig {
    fn default() -> Self {
        SfbConfig {
            limit: Limit::packets(500),
            levels: 3,
            bins: 20,
            bin_size: None,
            increment: 0.005,
            decrement: 0.001,
            freeze_time: Duration::from_secs(0.1),
            penalty_threshold: 0.98,
            penalty_time: Duration::from_secs(0.015),
            rehash_interval: Duration::from_secs(20.0),
            key: FlowKey::Flow,
            ecn: false,
        }
    }
}

impl SfbConfig {
    fn buffer(&self) -> Limit {
        self.limit
    }

    fn bin_size(&self) -> u64 {
        self.bin_size
            .unwrap_or_else(|| self.limit.packets.div_ceil(self.bins.max(1) as u64))
    }
}

impl QdiscConfig for SfbConfig {
    fn periods(&self) -> Vec<Period> {
        vec![Period::one("rehash_interval", self.rehash_interval.secs())]
    }
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.buffer().validate(path)?;
        check::in_range(path, "levels", self.levels as f64, 1.0, MAX_LEVELS as f64)?;
        check::in_range(path, "bins", self.bins as f64, 1.0, 65536.0)?;
        if let Some(b) = self.bin_size {
            check::positive_int(path, "bin_size", b)?;
        }
        check::probability(path, "increment", self.increment)?;
        check::probability(path, "decrement", self.decrement)?;
        check::probability(path, "penalty_threshold", self.penalty_threshold)?;
        check::positive(path, "rehash_interval", self.rehash_interval.secs())
    }
    fn build(&self, _env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Sfb::new(*self))
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Bin {
    packets: u64,
    blue: BlueProbability,
}

/// One set of L x N bins with its hash salt.
struct BinSet {
    salt: u64,
    /// Epoch from which this set counts queued packets.
    born: u32,
    bins: Vec<Bin>,
}

impl BinSet {
    fn new(salt: u64, born: u32, levels: usize, bins: usize) -> Self {
        BinSet {
            salt,
            born,
            bins: vec![Bin::default(); levels * bins],
        }
    }

    fn reset(&mut self, salt: u64, born: u32) {
        self.salt = salt;
        self.born = born;
        self.bins.fill(Bin::default());
    }
}

/// The bins a queued packet was counted in.
#[derive(Clone, Copy)]
struct Footprint {
    epoch: u32,
    bins: [[u32; MAX_LEVELS]; 2],
}

pub struct Sfb {
    cfg: SfbConfig,
    levels: usize,
    bin_size: u64,
    buffer: Limit,
    queue: PacketFifo,
    footprints: VecDeque<Footprint>,
    sets: [BinSet; 2],
    /// Index of the deciding set.
    active: usize,
    epoch: u32,
    next_penalty_admit: Time,
    /// Minimum p of the last arrival's bins in the deciding set.
    pub last_p_min: f64,
    pub penalised: u64,
}

impl Sfb {
    pub fn new(cfg: SfbConfig) -> Self {
        let levels = cfg.levels.clamp(1, MAX_LEVELS as u32) as usize;
        let bins = cfg.bins.max(1) as usize;
        Sfb {
            levels,
            bin_size: cfg.bin_size(),
            buffer: cfg.buffer(),
            queue: PacketFifo::default(),
            footprints: VecDeque::new(),
            sets: [
                BinSet::new(salt_of(0), 0, levels, bins),
                BinSet::new(salt_of(1), 0, levels, bins),
            ],
            active: 0,
            epoch: 0,
            next_penalty_admit: 0,
            last_p_min: 0.0,
            penalised: 0,
            cfg,
        }
    }

    /// The bin (index into the set) of `id` at `level` under `salt`.
    pub fn bin_index(&self, id: u64, salt: u64, level: usize) -> usize {
        let n = self.cfg.bins as u64;
        level * n as usize + (mix(id, salt ^ ((level as u64 + 1) * 0x51f1)) % n) as usize
    }

    fn footprint(&self, id: u64) -> Footprint {
        let mut bins = [[0u32; MAX_LEVELS]; 2];
        for (s, set) in self.sets.iter().enumerate() {
            for (level, slot) in bins[s].iter_mut().enumerate().take(self.levels) {
                *slot = self.bin_index(id, set.salt, level) as u32;
            }
        }
        Footprint {
            epoch: self.epoch,
            bins,
        }
    }

    /// BLUE updates of the arrival's bins in both sets; returns the deciding set's minimum p.
    fn update_bins(&mut self, fp: &Footprint, now: Time) -> f64 {
        let (inc, dec, freeze) = (
            self.cfg.increment,
            self.cfg.decrement,
            self.cfg.freeze_time.0,
        );
        let mut p_min = 1.0f64;
        for (s, set) in self.sets.iter_mut().enumerate() {
            for &index in &fp.bins[s][..self.levels] {
                let bin = &mut set.bins[index as usize];
                if bin.packets == 0 {
                    bin.blue.decrease(dec, now, freeze);
                } else if bin.packets > self.bin_size {
                    bin.blue.increase(inc, now, freeze);
                }
                if s == self.active {
                    p_min = p_min.min(bin.blue.p);
                }
            }
        }
        p_min
    }

    fn count(&mut self, fp: &Footprint, delta: i64) {
        for (s, set) in self.sets.iter_mut().enumerate() {
            if set.born > fp.epoch {
                continue;
            }
            for &index in &fp.bins[s][..self.levels] {
                let bin = &mut set.bins[index as usize];
                bin.packets = bin.packets.saturating_add_signed(delta);
            }
        }
    }

    /// The penalty box: one penalised packet per `penalty_time`.
    fn penalty_admits(&mut self, now: Time) -> bool {
        self.penalised += 1;
        if now < self.next_penalty_admit {
            return false;
        }
        self.next_penalty_admit = now.saturating_add(self.cfg.penalty_time.0);
        true
    }

    /// Switches to the warm set and restarts the other with a fresh salt.
    pub fn rehash(&mut self) {
        self.epoch += 1;
        let retired = self.active;
        self.active = 1 - self.active;
        let salt = salt_of(self.epoch as u64 + 1);
        self.sets[retired].reset(salt, self.epoch);
    }

    /// p of `id`'s bin at `level` in the deciding set.
    pub fn bin_p(&self, id: u64, level: usize) -> f64 {
        let set = &self.sets[self.active];
        set.bins[self.bin_index(id, set.salt, level)].blue.p
    }

    /// Packets counted at `level` of the deciding (`warm = false`) or warming set.
    pub fn counted(&self, warm: bool, level: usize) -> u64 {
        let set = &self.sets[if warm { 1 - self.active } else { self.active }];
        let n = self.cfg.bins as usize;
        set.bins[level * n..(level + 1) * n]
            .iter()
            .map(|b| b.packets)
            .sum()
    }

    fn admit(&mut self, packet: PacketId, size: u32, fp: Footprint, ctx: &mut QdiscCtx) {
        if self.buffer.overflows(&self.queue, size) {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        self.count(&fp, 1);
        self.footprints.push_back(fp);
        self.queue.push(packet, size);
    }
}

fn salt_of(generation: u64) -> u64 {
    mix(generation, 0x5fb0_5fb0)
}

impl Qdisc for Sfb {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let size = ctx.size(packet);
        let id = self.cfg.key.id(ctx.packets.get(packet));
        let fp = self.footprint(id);
        let p_min = self.update_bins(&fp, ctx.now);
        self.last_p_min = p_min;
        if p_min >= self.cfg.penalty_threshold {
            if self.penalty_admits(ctx.now) {
                self.admit(packet, size, fp, ctx);
            } else {
                ctx.drop_because(packet, DropReason::Filter, "sfb_penalty");
            }
            return;
        }
        if uniform(ctx) < p_min
            && !notify(ctx, packet, self.cfg.ecn, DropReason::Early, "sfb_early")
        {
            return;
        }
        self.admit(packet, size, fp, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let packet = self.queue.pop(ctx)?;
        if let Some(fp) = self.footprints.pop_front() {
            self.count(&fp, -1);
        }
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

    fn init(&mut self, ctx: &mut QdiscCtx) {
        ctx.set_timer(later(ctx.now, self.cfg.rehash_interval.0));
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.rehash();
        ctx.set_timer(later(ctx.now, self.cfg.rehash_interval.0));
    }

    fn congestion_probability(&self) -> f64 {
        let bins = &self.sets[self.active].bins;
        bins.iter().map(|b| b.blue.p).sum::<f64>() / bins.len() as f64
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        let bins = &self.sets[self.active].bins;
        let p_max = bins.iter().map(|b| b.blue.p).fold(0.0, f64::max);
        vec![
            ("p_mean", self.congestion_probability()),
            ("p_max", p_max),
            ("penalised", self.penalised as f64),
        ]
    }

    fn name(&self) -> &'static str {
        "sfb"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::secs;
    use crate::net::packet::{flags, Packet};
    use crate::qdisc::testing::Harness;

    fn small() -> SfbConfig {
        SfbConfig {
            limit: Limit::packets(100),
            levels: 2,
            bins: 4,
            bin_size: Some(1),
            increment: 0.5,
            decrement: 0.25,
            freeze_time: Duration::from_secs(0.01),
            ecn: true,
            ..Default::default()
        }
    }

    fn ect(h: &mut Harness, flow: u32) -> PacketId {
        h.packet_from(Packet {
            flow,
            size: 1000,
            flags: flags::ECT,
            ..Default::default()
        })
    }

    fn arrive(h: &mut Harness, q: &mut Sfb, at: f64) -> PacketId {
        h.now = secs(at);
        let id = ect(h, 1);
        h.enqueue(q, id);
        id
    }

    #[test]
    fn bins_follow_blue_and_an_unresponsive_flow_enters_the_penalty_box() {
        let mut h = Harness::new();
        let mut q = Sfb::new(small());
        arrive(&mut h, &mut q, 0.0); // bins empty: decrease (stays 0); counted 1
        arrive(&mut h, &mut q, 0.02); // 1 packet, not above bin size 1
        assert_eq!(q.bin_p(1, 0), 0.0);
        arrive(&mut h, &mut q, 0.04); // 2 > 1: p = 0.5 at both levels
        assert_eq!((q.bin_p(1, 0), q.bin_p(1, 1)), (0.5, 0.5));
        assert_eq!(q.len_packets(), 3); // ECT: a notification marks, the packet stays
        arrive(&mut h, &mut q, 0.06); // 3 > 1: p = 1 -> penalty box admits (next at 75 ms)
        assert_eq!(q.last_p_min, 1.0);
        assert_eq!(q.len_packets(), 4);
        let dropped = arrive(&mut h, &mut q, 0.065); // frozen p = 1; box closed until 75 ms
        assert_eq!(h.dropped(), vec![(dropped, DropReason::Filter)]);
        arrive(&mut h, &mut q, 0.08); // box admits again
        assert_eq!(q.len_packets(), 5);
        assert_eq!(q.penalised, 3);
        while h.dequeue(&mut q).is_some() {}
        assert_eq!(q.counted(false, 0), 0);
        arrive(&mut h, &mut q, 0.1); // bins empty: p = 1 - 0.25
        assert_eq!((q.bin_p(1, 0), q.bin_p(1, 1)), (0.75, 0.75));
        assert_eq!(q.congestion_probability(), 2.0 * 0.75 / 8.0);
    }

    #[test]
    fn moving_hash_keeps_both_sets_consistent() {
        let mut h = Harness::new();
        let mut q = Sfb::new(SfbConfig {
            increment: 0.0,
            ..small()
        });
        for i in 0..3 {
            let id = ect(&mut h, i);
            h.enqueue(&mut q, id);
        }
        assert_eq!((q.counted(false, 0), q.counted(true, 0)), (3, 3));
        h.timer(&mut q); // the warm set decides; the other restarts empty
        assert_eq!((q.counted(false, 1), q.counted(true, 1)), (3, 0));
        for i in 3..5 {
            let id = ect(&mut h, i);
            h.enqueue(&mut q, id);
        }
        assert_eq!((q.counted(false, 0), q.counted(true, 0)), (5, 2));
        while h.dequeue(&mut q).is_some() {}
        assert_eq!((q.counted(false, 0), q.counted(true, 0)), (0, 0));
        assert_eq!((q.counted(false, 1), q.counted(true, 1)), (0, 0));
    }

    #[test]
    fn wide_configurations_index_every_bin() {
        let q = Sfb::new(SfbConfig {
            levels: 8,
            bins: 65_536,
            ..Default::default()
        });
        let fp = q.footprint(12345);
        for (level, &index) in fp.bins[0].iter().enumerate() {
            assert!((level * 65_536..(level + 1) * 65_536).contains(&(index as usize)));
        }
    }

    #[test]
    fn default_bin_size_and_validation() {
        assert_eq!(SfbConfig::default().bin_size(), 25);
        let bad = SfbConfig {
            levels: 9,
            ..Default::default()
        };
        assert_eq!(bad.validate("q").unwrap_err().path, "q.levels");
    }
}
