//! The selective DECbit switch, [Keshav91, §6.5]
//! ("DEC/DEC"): an FCFS queue that sets the congestion bit when the averaged queue length
//! exceeds 1, but only on packets of users above their fair share; capacity factor 0.9; an
//! optional panic mode. Papers: K. K. Ramakrishnan, R. Jain, "A binary feedback scheme for
//! congestion avoidance in computer networks", ACM TOCS 1990; K. K. Ramakrishnan, D.-M. Chiu,
//! R. Jain, "Congestion avoidance in computer networks with a connectionless network layer,
//! part IV: a selective binary feedback scheme for general topologies", DEC-TR-510, 1987.
//!
//! - Average queue: the time average of the queue length (the packet in service included)
//!   over the previous regeneration cycle (busy + idle period) plus the current one.
//! - Demand of a user: the bytes it offered over the same interval. Fair share: max-min
//!   water-filling of `capacity_factor x link rate x interval` over the demands.
//! - An arriving packet gets the DECbit when the average exceeds `threshold` (1) and its
//!   user's demand is at least the fair share; with `panic = true`, every packet gets it when
//!   the average exceeds `panic_threshold` (2).
//!
//! Decisions (the text gives only the constants above; the DEC reports' other details are not
//! in the sources): a cycle starts when an arrival finds the system empty; users are
//! conversations by default (`classify`); the fair share is recomputed on each arrival while
//! the average is above the threshold (O(U log U) for U users, fine for the handful of users
//! of Keshav's scenarios); panic threshold 2; drop-tail buffer of `limit` packets (50).

use crate::config::{check, ScenarioError};
use crate::engine::time::to_secs;
use crate::engine::Time;
use crate::net::packet::{flags, PacketId};
use crate::qdisc::classify::FlowKey;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::structures::flow_table::FlowTable;
use crate::qdisc::{DropReason, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// `queue = { kind = "selective_decbit", capacity_factor = 0.9, panic = true }`
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelectiveDecbitConfig {
    pub limit: u64,
    pub threshold: f64,
    pub capacity_factor: f64,
    pub panic: bool,
    pub panic_threshold: f64,
    pub classify: FlowKey,
}

impl Default for SelectiveDecbitConfig {
    fn default() -> Self {
        SelectiveDecbitConfig {
            limit: 50,
            threshold: 1.0,
            capacity_factor: 0.9,
            panic: false,
            panic_threshold: 2.0,
            classify: FlowKey::Conversation,
        }
    }
}

impl QdiscConfig for SelectiveDecbitConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.limit)?;
        check::non_negative(path, "threshold", self.threshold)?;
        check::in_range(path, "capacity_factor", self.capacity_factor, 1e-9, 1.0)?;
        check::non_negative(path, "panic_threshold", self.panic_threshold)
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(SelectiveDecbit::new(self.clone(), env.link_rate_bps))
    }
}

/// Time average of the queue length over the previous and current regeneration cycles.
#[derive(Default, Clone, Debug)]
pub struct CycleAverage {
    previous_start: Time,
    current_start: Time,
    previous_area: f64,
    current_area: f64,
    last_change: Time,
    length: usize,
}

impl CycleAverage {
    /// The queue length becomes `length` at `now`.
    pub fn update(&mut self, now: Time, length: usize) {
        self.current_area += self.length as f64 * to_secs(now - self.last_change);
        self.last_change = now;
        self.length = length;
    }

    pub fn start_cycle(&mut self, now: Time) {
        self.update(now, self.length);
        self.previous_start = self.current_start;
        self.previous_area = self.current_area;
        self.current_start = now;
        self.current_area = 0.0;
    }

    pub fn average(&self, now: Time) -> f64 {
        let span = to_secs(now - self.previous_start);
        if span <= 0.0 {
            return self.length as f64;
        }
        let pending = self.length as f64 * to_secs(now - self.last_change);
        (self.previous_area + self.current_area + pending) / span
    }

    pub fn interval(&self, now: Time) -> f64 {
        to_secs(now - self.previous_start)
    }
}

/// The max-min fair share of `capacity` among `demands` (water-filling).
pub fn max_min_share(demands: &mut [f64], capacity: f64) -> f64 {
    demands.sort_by(f64::total_cmp);
    let mut remaining = capacity;
    for (i, &d) in demands.iter().enumerate() {
        let share = remaining / (demands.len() - i) as f64;
        if d > share {
            return share;
        }
        remaining -= d;
    }
    f64::INFINITY
}

pub struct SelectiveDecbit {
    config: SelectiveDecbitConfig,
    link_rate_bps: u64,
    queue: PacketFifo,
    users: FlowTable,
    previous_demand: Vec<f64>,
    current_demand: Vec<f64>,
    average: CycleAverage,
    scratch: Vec<f64>,
}

impl SelectiveDecbit {
    pub fn new(config: SelectiveDecbitConfig, link_rate_bps: u64) -> Self {
        SelectiveDecbit {
            users: FlowTable::new(config.classify, Vec::new()),
            config,
            link_rate_bps,
            queue: PacketFifo::default(),
            previous_demand: Vec::new(),
            current_demand: Vec::new(),
            average: CycleAverage::default(),
            scratch: Vec::new(),
        }
    }

    fn new_cycle(&mut self, now: Time) {
        self.average.start_cycle(now);
        std::mem::swap(&mut self.previous_demand, &mut self.current_demand);
        self.current_demand.iter_mut().for_each(|d| *d = 0.0);
    }

    fn demand(&self, user: usize) -> f64 {
        self.previous_demand[user] + self.current_demand[user]
    }

    fn above_fair_share(&mut self, user: usize, now: Time) -> bool {
        self.scratch.clear();
        let demands = self.previous_demand.iter().zip(&self.current_demand);
        self.scratch.extend(demands.map(|(p, c)| p + c));
        let capacity = self.config.capacity_factor * self.link_rate_bps as f64 / 8.0
            * self.average.interval(now);
        self.demand(user) >= max_min_share(&mut self.scratch, capacity)
    }

    fn should_mark(&mut self, user: usize, now: Time) -> bool {
        let average = self.average.average(now);
        if self.config.panic && average > self.config.panic_threshold {
            return true;
        }
        average > self.config.threshold && self.above_fair_share(user, now)
    }
}

impl Qdisc for SelectiveDecbit {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        if self.queue.is_empty() && ctx.idle_since.is_some() {
            self.new_cycle(ctx.now);
        }
        let p = ctx.packets.get(packet);
        let size = p.size;
        let user = self.users.queue_of(p) as usize;
        if self.current_demand.len() <= user {
            self.current_demand.resize(user + 1, 0.0);
            self.previous_demand.resize(user + 1, 0.0);
        }
        self.current_demand[user] += size as f64;
        if self.queue.len() as u64 >= self.config.limit {
            ctx.drop(packet, DropReason::Overflow);
            return;
        }
        if self.should_mark(user, ctx.now) {
            ctx.mark_flag(packet, flags::DECBIT, DropReason::Early);
        }
        self.queue.push(packet, size);
        self.average.update(ctx.now, self.queue.len());
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let packet = self.queue.pop(ctx)?;
        self.average.update(ctx.now, self.queue.len());
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

    fn state(&self) -> Vec<(&'static str, f64)> {
        vec![("avg_queue", self.average.average(self.average.last_change))]
    }

    fn name(&self) -> &'static str {
        "selective_decbit"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::secs;
    use crate::qdisc::testing::Harness;

    #[test]
    fn water_filling() {
        // Capacity 90 among demands 10, 50, 60: 10 is satisfied, the others get 40 each.
        assert_eq!(max_min_share(&mut [50.0, 10.0, 60.0], 90.0), 40.0);
        assert_eq!(max_min_share(&mut [10.0, 20.0], 90.0), f64::INFINITY);
    }

    #[test]
    fn cycle_average_covers_previous_and_current_cycle() {
        // Cycle 1 at 0: length 2 for 1 s, then 0 for 1 s. Cycle 2 at 2 s: length 4 for 1 s.
        // At 3 s: (2 + 4) / 3 = 2. Cycle 3 at 3 s forgets cycle 1: at 5 s, 4 / 3.
        let mut a = CycleAverage::default();
        a.start_cycle(0);
        a.update(0, 2);
        a.update(secs(1.0), 0);
        a.start_cycle(secs(2.0));
        a.update(secs(2.0), 4);
        assert!((a.average(secs(3.0)) - 2.0).abs() < 1e-12);
        a.update(secs(3.0), 0);
        a.start_cycle(secs(3.0));
        assert!((a.average(secs(5.0)) - 4.0 / 3.0).abs() < 1e-12);
    }

    /// 10 Mb/s = 1.25e6 B/s. A cycle starts at 0 with A's 1000 B; B's 1000 B arrive at
    /// 0.5 s and again at 1 s, nothing departs. Average queue at 1 s over [0, 1 s]:
    /// (1 x 0.5 + 2 x 0.5) / 1 = 1.5 > 1. Demands A 1000 B, B 2000 B.
    /// - capacity factor 0.9: capacity 1.125e6 B, everyone is below the share: no bit;
    /// - capacity factor 1e-6: capacity 1.25 B, share 0.625 B: B's packet gets the bit;
    /// - panic threshold 1.2 < 1.5: the bit whatever the share.
    #[test]
    fn marks_only_users_above_their_share_and_all_in_panic() {
        let cases = [(0.9, false, false), (1e-6, false, true), (0.9, true, true)];
        for (capacity_factor, panic, marked) in cases {
            let mut h = Harness::new();
            let config = SelectiveDecbitConfig {
                capacity_factor,
                panic,
                panic_threshold: 1.2,
                ..toml::from_str("").unwrap()
            };
            let mut q = SelectiveDecbit::new(config, h.link_rate_bps);
            h.idle_since = Some(0);
            let a0 = h.packet(0, 1000);
            h.enqueue(&mut q, a0);
            h.idle_since = None;
            h.now = secs(0.5);
            let b0 = h.packet(1, 1000);
            h.enqueue(&mut q, b0);
            h.now = secs(1.0);
            let b1 = h.packet(1, 1000);
            h.enqueue(&mut q, b1);
            assert!(!h.packets.get(a0).has(flags::DECBIT));
            assert_eq!(h.packets.get(b1).has(flags::DECBIT), marked);
        }
    }
}
