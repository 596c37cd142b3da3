//! CHOKe: "CHOose and Keep for responsive flows, CHOose and Kill for unresponsive flows" (Pan,
//! Prabhakar, Psounis, "CHOKe: a stateless active queue management scheme for approximating
//! fair bandwidth allocation", INFOCOM 2000), and the SFG paper's extension with 2i+1 draws in
//! sub-region i of [min_th, max_th].
//!
//! Sources: [Byun07, §2.4] (the classic pseudo-code); [Chung06, §3] (five even sub-regions,
//! 1, 3, 5, 7, 9 draws, RED 50/300 with gentle).
//!
//! On each arrival (RED's average updated first): below min_th admit; else draw `d` packets
//! uniformly from the queue; every drawn packet of the arrival's flow is dropped together with
//! the arrival; with no match, RED decides (early notification with p_a, forced above max_th).
//!
//! Decisions (the long form is on `docs/models/choke.md`): `draws = "subregions"` gives
//! sub-region i 2i + 1 draws and the top region's above max_th; the sub-region follows RED's
//! average or (`region_queue = "instantaneous"`) the queue; draws are with replacement and
//! matches always drop (victims `pushout`, the arrival `early`); the comparison still happens
//! above max_th unless `compare_above_max = false` (Byun's pseudo-code); draws come from this
//! queue even when the average watches another port; flows are compared by `key`; an arrival
//! draws at most `MAX_DRAWS` (1,000) packets.

use super::red::{Red, RedConfig, RedCore};
use super::watched;
use crate::config::{check, ScenarioError};
use crate::net::packet::PacketId;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::{DropReason, Period, Qdisc, QdiscConfig, QdiscCtx, QdiscEnv};
use serde::{Deserialize, Serialize};

/// The most packets one arrival may draw: every draw is a random number and a comparison on
/// each arrival, and 10^9 of them made a 2 s run take hours.
pub const MAX_DRAWS: f64 = 1000.0;

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Draws {
    #[default]
    Classic,
    Subregions,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RegionQueue {
    #[default]
    Average,
    Instantaneous,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ChokeConfig {
    /// The RED queue CHOKe works with (thresholds, buffer, ECN for RED's notifications).
    pub red: RedConfig,
    pub draws: Draws,
    /// Draws per arrival in classic mode.
    pub candidates: u32,
    /// Number of even sub-regions of [min_th, max_th] in sub-region mode.
    pub subregions: u32,
    pub region_queue: RegionQueue,
    pub compare_above_max: bool,
    pub key: FlowKey,
}

impl Default for ChokeConfig {
    fn default() -> Self {
        ChokeConfig {
            red: RedConfig::default(),
            draws: Draws::Classic,
            candidates: 1,
            subregions: 5,
            region_queue: RegionQueue::Average,
            compare_above_max: true,
            key: FlowKey::Flow,
        }
    }
}

impl QdiscConfig for ChokeConfig {
    fn periods(&self) -> Vec<Period> {
        crate::qdisc::nested_periods(self.red.periods(), "red")
    }

    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        self.red.check(&format!("{path}.red"))?;
        check::in_range(
            path,
            "candidates",
            f64::from(self.candidates),
            1.0,
            MAX_DRAWS,
        )?;
        // The top sub-region draws 2 n - 1 packets.
        let most_subregions = (MAX_DRAWS + 1.0) / 2.0;
        check::in_range(
            path,
            "subregions",
            f64::from(self.subregions),
            1.0,
            most_subregions,
        )
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc> {
        Box::new(Choke::new(*self, env.link_rate_bps))
    }
}

pub struct Choke {
    cfg: ChokeConfig,
    /// The RED queue behind the draws: CHOKe's matches come first, then RED's own decision.
    red: Red,
    victims: Vec<usize>,
}

impl Choke {
    pub fn new(cfg: ChokeConfig, link_rate_bps: u64) -> Self {
        Choke {
            red: Red::new(cfg.red, link_rate_bps),
            victims: Vec::new(),
            cfg,
        }
    }

    pub fn red(&self) -> &RedCore {
        self.red.core()
    }

    /// Draws for an arrival that sees region measure `q` (q >= min_th).
    pub fn draws_for(&self, q: f64) -> u32 {
        match self.cfg.draws {
            Draws::Classic => self.cfg.candidates,
            Draws::Subregions => {
                let (min, max) = (self.cfg.red.min_th, self.cfg.red.max_th);
                let n = self.cfg.subregions;
                let region = ((q - min) / (max - min) * n as f64).floor().max(0.0) as u32;
                2 * region.min(n - 1) + 1
            }
        }
    }

    fn region_measure(&self, instantaneous: f64) -> f64 {
        match self.cfg.region_queue {
            RegionQueue::Average => self.red.core.avg,
            RegionQueue::Instantaneous => instantaneous,
        }
    }

    /// Draws `draws` queued packets; keeps the distinct positions of the arrival's flow.
    fn find_matches(&mut self, packet: PacketId, draws: u32, ctx: &mut QdiscCtx) {
        use rand::Rng as _;
        self.victims.clear();
        let queue = &self.red.queue;
        if queue.is_empty() {
            return;
        }
        let flow = self.cfg.key.id(ctx.packets.get(packet));
        for _ in 0..draws {
            let index = ctx.rng.random_range(0..queue.len());
            let Some(drawn) = queue.get(index) else {
                continue;
            };
            if self.cfg.key.id(ctx.packets.get(drawn)) == flow && !self.victims.contains(&index) {
                self.victims.push(index);
            }
        }
    }

    fn drop_matches(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        self.victims.sort_unstable_by(|a, b| b.cmp(a));
        for &index in &self.victims {
            if let Some(victim) = self.red.queue.remove(index, ctx) {
                ctx.drop_because(victim, DropReason::PushOut, "choke_match");
            }
        }
        ctx.drop_because(packet, DropReason::Early, "choke_match");
    }

    fn compares(&self) -> bool {
        let avg = self.red.core.avg;
        avg >= self.cfg.red.min_th && (self.cfg.compare_above_max || avg < self.cfg.red.max_th)
    }
}

impl Qdisc for Choke {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let seen = watched(ctx, &self.red.queue);
        self.red.core.update_average(&seen, ctx.now);
        if self.compares() {
            let draws = self.draws_for(self.region_measure(self.red.core.length_of(&seen)));
            self.find_matches(packet, draws, ctx);
            if !self.victims.is_empty() {
                self.drop_matches(packet, ctx);
                return;
            }
        }
        self.red.admit(packet, ctx);
    }

    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.red.dequeue(ctx)
    }

    fn peek(&self) -> Option<PacketId> {
        self.red.peek()
    }

    fn len_packets(&self) -> usize {
        self.red.len_packets()
    }

    fn len_bytes(&self) -> u64 {
        self.red.len_bytes()
    }

    fn init(&mut self, ctx: &mut QdiscCtx) {
        self.red.init(ctx);
    }

    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.red.on_timer(ctx);
    }

    fn congestion_probability(&self) -> f64 {
        self.red.congestion_probability()
    }

    fn state(&self) -> Vec<(&'static str, f64)> {
        self.red.state()
    }

    fn name(&self) -> &'static str {
        "choke"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::Limit;

    fn instant_red(min_th: f64, max_th: f64) -> RedConfig {
        RedConfig {
            limit: Limit::packets(100),
            min_th,
            max_th,
            max_p: 0.0,
            w_q: 1.0,
            ..RedConfig::floyd93()
        }
    }

    fn fill(h: &mut Harness, q: &mut Choke, flows: &[u32]) -> Vec<PacketId> {
        flows
            .iter()
            .map(|&f| {
                let id = h.packet(f, 500);
                h.enqueue(q, id);
                id
            })
            .collect()
    }

    #[test]
    fn draws_per_arrival_are_bounded_at_a_thousand() {
        let with = |candidates, subregions| ChokeConfig {
            candidates,
            subregions,
            ..ChokeConfig::default()
        };
        assert!(with(1000, 500).validate("q").is_ok());
        assert_eq!(
            with(1001, 5).validate("q").unwrap_err().path,
            "q.candidates"
        );
        assert_eq!(with(1, 501).validate("q").unwrap_err().path, "q.subregions");
    }

    #[test]
    fn seed_003_sub_regions_get_2i_plus_1_draws() {
        let q = Choke::new(
            ChokeConfig {
                red: RedConfig {
                    min_th: 50.0,
                    max_th: 300.0,
                    gentle: true,
                    ..RedConfig::floyd93()
                },
                draws: Draws::Subregions,
                ..Default::default()
            },
            10_000_000,
        );
        let draws: Vec<u32> = [50.0, 99.9, 100.0, 170.0, 220.0, 299.0, 450.0]
            .iter()
            .map(|&avg| q.draws_for(avg))
            .collect();
        assert_eq!(draws, vec![1, 1, 3, 5, 7, 9, 9]);
        let classic = Choke::new(ChokeConfig::default(), 10_000_000);
        assert_eq!(classic.draws_for(200.0), 1);
    }

    #[test]
    fn a_match_drops_both_packets() {
        let mut h = Harness::new();
        let mut q = Choke::new(
            ChokeConfig {
                red: instant_red(2.0, 10.0),
                ..Default::default()
            },
            10_000_000,
        );
        // Below min_th (avg = 0, 1): admitted without comparison.
        let queued = fill(&mut h, &mut q, &[7, 7]);
        assert!(h.dropped().is_empty());
        // avg = 2: one draw among two packets of flow 7 always matches.
        let arrival = h.packet(7, 500);
        h.enqueue(&mut q, arrival);
        let dropped = h.dropped();
        assert_eq!(dropped.len(), 2);
        assert!(queued.contains(&dropped[0].0));
        assert_eq!(dropped[0].1, DropReason::PushOut);
        assert_eq!(dropped[1], (arrival, DropReason::Early));
        assert_eq!(q.len_packets(), 1);
        let causes: Vec<_> = h.dropped_because().iter().map(|d| d.2).collect();
        assert_eq!(causes, [Some("choke_match"); 2]);
    }

    #[test]
    fn no_match_falls_back_to_red() {
        let mut h = Harness::new();
        let mut q = Choke::new(
            ChokeConfig {
                red: instant_red(2.0, 4.0),
                draws: Draws::Subregions,
                ..Default::default()
            },
            10_000_000,
        );
        fill(&mut h, &mut q, &[1, 2, 3]); // avg 0, 1, 2: max_p = 0, nothing dropped
        assert!(h.dropped().is_empty());
        assert_eq!(q.red().count, 0);
        let other = h.packet(9, 500);
        h.enqueue(&mut q, other); // avg 3: region 2 of 5 -> 5 draws, no flow 9 queued
        assert!(h.dropped().is_empty());
        assert_eq!(q.red().count, 1);
        let forced = h.packet(10, 500);
        h.enqueue(&mut q, forced); // avg 4 = max_th: 9 draws, no flow 10 queued, RED forces
        assert_eq!(h.dropped(), vec![(forced, DropReason::Forced)]);
        assert_eq!(q.red().count, 0);
    }

    #[test]
    fn every_drawn_match_is_dropped_once() {
        let mut h = Harness::new();
        let mut q = Choke::new(
            ChokeConfig {
                red: instant_red(1.0, 2.0),
                draws: Draws::Classic,
                candidates: 9,
                ..Default::default()
            },
            10_000_000,
        );
        fill(&mut h, &mut q, &[5]); // avg 0: admitted
        let arrival = h.packet(5, 500);
        h.enqueue(&mut q, arrival); // nine draws of the single queued packet: dropped once
        assert_eq!(h.dropped().len(), 2);
        assert_eq!(q.len_packets(), 0);
    }

    #[test]
    fn seed_001_variant_skips_the_comparison_above_max() {
        let mut h = Harness::new();
        let mut q = Choke::new(
            ChokeConfig {
                red: instant_red(1.0, 2.0),
                compare_above_max: false,
                ..Default::default()
            },
            10_000_000,
        );
        let queued = fill(&mut h, &mut q, &[5, 6]); // avg 0, then 1 with one draw of flow 5
        assert!(h.dropped().is_empty());
        let arrival = h.packet(5, 500);
        h.enqueue(&mut q, arrival); // avg 2 = max_th: forced, no comparison
        assert_eq!(h.dropped(), vec![(arrival, DropReason::Forced)]);
        assert_eq!(q.peek(), Some(queued[0]));
    }
}
