//! The bit-by-bit round number R(t) of Demers, Keshav and Shenker's fair queueing, computed by
//! iterated deletion with checkpoints ([Keshav91, §
//! 3.2 and figure 3.1; A. Demers, S. Keshav, S. Shenker, "Analysis and simulation of a fair
//! queueing algorithm", SIGCOMM 1989).
//!
//! dR/dt = L / N_ac(t): between checkpoints N_ac can only fall, so `R_chk + (t - t_chk) L / N`
//! is a lower bound on R(t); any conversation whose finish number F^a lies below it went
//! inactive in between, at the time R reached F^a. Deleting it speeds R up, so the deletion
//! iterates. With weights (weighted FQ), N_ac is the sum of the active conversations' weights
//! and a packet of P bits advances its conversation's finish number by P / weight.
//!
//! Decisions (the text is silent):
//! - With no active conversation R stays constant (the server is idle in the bit-by-bit model).
//! - A conversation is active while R(t) < F^a; at R(t) = F^a it is inactive (the deletion test
//!   `F <= R_chk + dt L / N` of figure 3.1).
//! - Finish numbers F^a are kept for every conversation ever seen, active or not, so the bid
//!   number's `MAX(F^a, R - delta)` can remember an inactive conversation's history.
//! - Removing charge for a dropped packet lowers F^a by the packet's length but never below the
//!   current R (which would make R run backwards).

use super::heap::{Key, LazyHeap, MinEntry};

#[derive(Clone, Debug)]
pub struct RoundNumber {
    /// Line speed in bits per time unit.
    line_rate: f64,
    t_chk: f64,
    r_chk: f64,
    /// Sum of the active conversations' weights (N_ac).
    active_weight: f64,
    active_count: usize,
    /// Finish numbers of active conversations, lazily: each active conversation has one anchor
    /// entry whose key is a lower bound of its (F^a, seq), brought up to date only when it is
    /// the smallest and R could reach it (while the smallest lower bound is above R's bound no
    /// deletion is possible, whatever the true F^a); entries left behind by a lowered F^a or a
    /// deactivation are skipped.
    finishes: LazyHeap,
    conversations: Vec<Conversation>,
    seq: u64,
}

/// One conversation's state, in one record so that an arrival reads one cache line.
#[derive(Clone, Copy, Debug)]
struct Conversation {
    /// F^a, kept after the conversation goes inactive.
    finish: f64,
    weight: f64,
    /// The seq of the latest F^a, or `INACTIVE`.
    current: u64,
    /// The seq of the conversation's anchor entry: the one entry whose key is kept at or
    /// below (F^a, current seq). Any other entry of the conversation is stale.
    anchor: u64,
}

const UNSEEN: Conversation = Conversation {
    finish: 0.0,
    weight: 1.0,
    current: INACTIVE,
    anchor: INACTIVE,
};

const INACTIVE: u64 = 0;

/// What an arrival leaves behind: the conversation's previous F^a, R at the arrival, and the
/// packet's new finish number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    pub previous_finish: f64,
    pub round: f64,
    pub finish: f64,
}

impl RoundNumber {
    pub fn new(line_rate: f64) -> Self {
        RoundNumber {
            line_rate,
            t_chk: 0.0,
            r_chk: 0.0,
            active_weight: 0.0,
            active_count: 0,
            finishes: LazyHeap::default(),
            conversations: Vec::new(),
            seq: 0,
        }
    }

    /// R(t); `t` must not decrease between calls.
    pub fn advance(&mut self, t: f64) -> f64 {
        while let Some(&MinEntry { key, item: conv }) = self.finishes.peek() {
            let Conversation {
                current, anchor, ..
            } = self.conversations[conv as usize];
            if current == INACTIVE || key.seq != anchor {
                self.finishes.pop();
                continue;
            }
            let slope = self.line_rate / self.active_weight;
            let bound = self.r_chk + (t - self.t_chk) * slope;
            if key.tag > bound {
                self.r_chk = bound;
                self.t_chk = t;
                return self.r_chk;
            }
            if key.seq != current {
                self.refresh_top(conv, current);
                continue;
            }
            self.t_chk += (key.tag - self.r_chk) / slope;
            self.r_chk = key.tag;
            self.finishes.pop();
            self.deactivate(conv);
        }
        self.active_weight = 0.0;
        self.t_chk = t;
        self.r_chk
    }

    /// Brings the top entry, an outdated key of active `conv`, up to its current F^a.
    fn refresh_top(&mut self, conv: u32, current: u64) {
        let state = &mut self.conversations[conv as usize];
        let key = Key {
            tag: state.finish,
            seq: current,
        };
        state.anchor = current;
        self.finishes.replace_top(MinEntry { key, item: conv });
    }

    /// R at the last checkpoint.
    pub fn checkpoint(&self) -> f64 {
        self.r_chk
    }

    /// Number of active conversations.
    pub fn active_count(&self) -> usize {
        self.active_count
    }

    pub fn is_active(&self, conv: u32) -> bool {
        self.conversations
            .get(conv as usize)
            .is_some_and(|state| state.current != INACTIVE)
    }

    fn deactivate(&mut self, conv: u32) {
        let state = &mut self.conversations[conv as usize];
        state.current = INACTIVE;
        self.active_count -= 1;
        self.active_weight -= state.weight;
    }

    /// F^a of a conversation (0 if never seen).
    pub fn finish_of(&self, conv: u32) -> f64 {
        self.conversations
            .get(conv as usize)
            .map_or(0.0, |state| state.finish)
    }

    /// Registers an arrival of `bits` for `conv` (weight `weight`) at time `t`.
    pub fn arrive(&mut self, conv: u32, bits: f64, weight: f64, t: f64) -> Arrival {
        let round = self.advance(t);
        self.ensure(conv, weight);
        let previous_finish = self.conversations[conv as usize].finish;
        let start = if self.is_active(conv) {
            previous_finish
        } else {
            self.active_weight += weight;
            self.active_count += 1;
            round
        };
        let finish = start + bits / weight;
        self.set_finish(conv, finish);
        Arrival {
            previous_finish,
            round,
            finish,
        }
    }

    /// Takes back the charge of a dropped packet of `bits` from `conv` at time `t`.
    pub fn uncharge(&mut self, conv: u32, bits: f64, t: f64) {
        let round = self.advance(t);
        let Some(&state) = self.conversations.get(conv as usize) else {
            return;
        };
        let lowered = (state.finish - bits / state.weight).max(round);
        if state.current == INACTIVE {
            self.conversations[conv as usize].finish = lowered;
        } else if lowered <= round {
            self.conversations[conv as usize].finish = lowered;
            self.deactivate(conv);
        } else {
            self.set_finish(conv, lowered);
        }
    }

    fn ensure(&mut self, conv: u32, weight: f64) {
        if self.conversations.len() <= conv as usize {
            self.conversations.resize(conv as usize + 1, UNSEEN);
        }
        self.conversations[conv as usize].weight = weight;
    }

    /// Records a new F^a. An active conversation whose F^a only grew keeps its heap entry (a
    /// lower bound, refreshed when R could reach it); a new activation or a lowered F^a pushes
    /// one.
    fn set_finish(&mut self, conv: u32, finish: f64) {
        self.seq += 1;
        let state = &mut self.conversations[conv as usize];
        let grew = state.current != INACTIVE && finish >= state.finish;
        state.finish = finish;
        state.current = self.seq;
        if grew {
            return;
        }
        state.anchor = self.seq;
        self.finishes.push(MinEntry {
            key: Key {
                tag: finish,
                seq: self.seq,
            },
            item: conv,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [Keshav91, §3.2]'s worked example, with L = 1.
    #[test]
    fn worked_example_of_seed_004() {
        let (a, b) = (0, 1);
        let mut r = RoundNumber::new(1.0);
        assert_eq!(r.arrive(a, 100.0, 1.0, 0.0).finish, 100.0);
        assert_eq!(r.advance(50.0), 50.0);
        assert_eq!(r.arrive(b, 100.0, 1.0, 50.0).finish, 150.0);
        assert_eq!(r.advance(100.0), 75.0);
        assert!(r.is_active(a));
        assert_eq!(r.advance(149.0), 99.5);
        assert!(r.is_active(a));
        assert_eq!(r.advance(150.0), 100.0);
        assert!(!r.is_active(a));
        assert_eq!(r.active_count(), 1);
        assert_eq!(r.advance(200.0), 150.0);
        assert_eq!(r.active_count(), 0);
        assert_eq!(r.advance(300.0), 150.0);
    }

    #[test]
    fn iterated_deletion_in_one_step() {
        // Three conversations of 30, 60, 90 bits at t = 0: R reaches 30 at t = 90 (slope 1/3),
        // 60 at t = 150 (slope 1/2), 90 at t = 180 (slope 1). Jumping straight to t = 170
        // must delete two conversations and give R = 60 + 20 = 80.
        let mut r = RoundNumber::new(1.0);
        for (conv, bits) in [(0, 30.0), (1, 60.0), (2, 90.0)] {
            r.arrive(conv, bits, 1.0, 0.0);
        }
        assert_eq!(r.advance(170.0), 80.0);
        assert_eq!(r.active_count(), 1);
    }

    #[test]
    fn weights_scale_finish_numbers_and_slope() {
        // Weight 3 and weight 1, 300 bits each at t = 0: F = 100 and 300; slope 1/4 until
        // R = 100 at t = 400, then slope 1: R(500) = 200.
        let mut r = RoundNumber::new(1.0);
        assert_eq!(r.arrive(0, 300.0, 3.0, 0.0).finish, 100.0);
        assert_eq!(r.arrive(1, 300.0, 1.0, 0.0).finish, 300.0);
        assert_eq!(r.advance(400.0), 100.0);
        assert_eq!(r.advance(500.0), 200.0);
    }

    #[test]
    fn uncharging_lowers_the_finish_number_but_not_below_r() {
        let mut r = RoundNumber::new(1.0);
        r.arrive(0, 100.0, 1.0, 0.0);
        r.arrive(0, 100.0, 1.0, 0.0);
        r.uncharge(0, 100.0, 10.0);
        assert_eq!(r.finish_of(0), 100.0);
        r.uncharge(0, 100.0, 20.0);
        assert_eq!(r.finish_of(0), 20.0);
        assert!(!r.is_active(0));
    }

    /// The same algorithm with a linear scan for the smallest active (F^a, seq) instead of a
    /// heap: the heap's lazy entries must not change R or the order of deletions.
    struct ScanRound {
        line_rate: f64,
        t_chk: f64,
        r_chk: f64,
        active_weight: f64,
        finish: Vec<f64>,
        weight: Vec<f64>,
        current: Vec<u64>,
        seq: u64,
    }

    impl ScanRound {
        fn new(convs: usize) -> Self {
            ScanRound {
                line_rate: 1.0,
                t_chk: 0.0,
                r_chk: 0.0,
                active_weight: 0.0,
                finish: vec![0.0; convs],
                weight: vec![1.0; convs],
                current: vec![INACTIVE; convs],
                seq: 0,
            }
        }

        fn smallest_active(&self) -> Option<usize> {
            (0..self.finish.len())
                .filter(|&c| self.current[c] != INACTIVE)
                .min_by(|&a, &b| {
                    Key {
                        tag: self.finish[a],
                        seq: self.current[a],
                    }
                    .order(&Key {
                        tag: self.finish[b],
                        seq: self.current[b],
                    })
                })
        }

        fn advance(&mut self, t: f64) -> f64 {
            while let Some(conv) = self.smallest_active() {
                let slope = self.line_rate / self.active_weight;
                let bound = self.r_chk + (t - self.t_chk) * slope;
                if self.finish[conv] > bound {
                    self.r_chk = bound;
                    self.t_chk = t;
                    return self.r_chk;
                }
                self.t_chk += (self.finish[conv] - self.r_chk) / slope;
                self.r_chk = self.finish[conv];
                self.current[conv] = INACTIVE;
                self.active_weight -= self.weight[conv];
            }
            self.active_weight = 0.0;
            self.t_chk = t;
            self.r_chk
        }

        fn set(&mut self, conv: usize, finish: f64) {
            self.finish[conv] = finish;
            self.seq += 1;
            self.current[conv] = self.seq;
        }

        fn arrive(&mut self, conv: usize, bits: f64, weight: f64, t: f64) -> f64 {
            let round = self.advance(t);
            self.weight[conv] = weight;
            let start = if self.current[conv] != INACTIVE {
                self.finish[conv]
            } else {
                self.active_weight += weight;
                round
            };
            self.set(conv, start + bits / weight);
            self.finish[conv]
        }

        fn uncharge(&mut self, conv: usize, bits: f64, t: f64) {
            let round = self.advance(t);
            let lowered = (self.finish[conv] - bits / self.weight[conv]).max(round);
            if self.current[conv] == INACTIVE {
                self.finish[conv] = lowered;
            } else if lowered <= round {
                self.finish[conv] = lowered;
                self.current[conv] = INACTIVE;
                self.active_weight -= self.weight[conv];
            } else {
                self.set(conv, lowered);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn lazy_heap_matches_a_linear_scan(
            ops in proptest::collection::vec((0u8..4, 0usize..6, 1u32..400, 0u32..300), 1..300)
        ) {
            let mut heap = RoundNumber::new(1.0);
            let mut scan = ScanRound::new(6);
            let mut t = 0.0;
            let mut seen = [false; 6];
            for (op, conv, bits, dt) in ops {
                t += dt as f64;
                let weight = 1.0 + (conv % 3) as f64;
                match op {
                    0 | 1 => {
                        seen[conv] = true;
                        let got = heap.arrive(conv as u32, bits as f64, weight, t).finish;
                        proptest::prop_assert_eq!(got, scan.arrive(conv, bits as f64, weight, t));
                    }
                    2 if seen[conv] => {
                        heap.uncharge(conv as u32, bits as f64, t);
                        scan.uncharge(conv, bits as f64, t);
                    }
                    _ => {}
                }
                proptest::prop_assert_eq!(heap.advance(t), scan.advance(t));
                for c in 0..6 {
                    proptest::prop_assert_eq!(heap.is_active(c as u32), scan.current[c] != INACTIVE);
                    proptest::prop_assert_eq!(heap.finish_of(c as u32), scan.finish[c]);
                }
            }
        }
    }
}
