//! The bit-by-bit round number R(t) of Demers, Keshav and Shenker's fair queueing, computed by
//! iterated deletion with checkpoints (seed 004, `004_69e3e87eb3f3727b.txt`, chapter 3 section
//! 3.2 and figure 3.1; A. Demers, S. Keshav, S. Shenker, "Analysis and simulation of a fair
//! queueing algorithm", SIGCOMM 1989).
//!
//! dR/dt = L / N_ac(t): between checkpoints N_ac can only fall, so `R_chk + (t - t_chk) L / N`
//! is a lower bound on R(t); any conversation whose finish number F^a lies below it went
//! inactive in between, at the time R reached F^a. Deleting it speeds R up, so the deletion
//! iterates. With weights (weighted FQ), N_ac is the sum of the active conversations' weights
//! and a packet of P bits advances its conversation's finish number by P / weight.
//!
//! Decisions (the seed is silent):
//! - With no active conversation R stays constant (the server is idle in the bit-by-bit model).
//! - A conversation is active while R(t) < F^a; at R(t) = F^a it is inactive (the deletion test
//!   `F <= R_chk + dt L / N` of figure 3.1).
//! - Finish numbers F^a are kept for every conversation ever seen, active or not, so the bid
//!   number's `MAX(F^a, R - delta)` can remember an inactive conversation's history.
//! - Removing charge for a dropped packet lowers F^a by the packet's length but never below the
//!   current R (which would make R run backwards).

use super::heap::{Key, MinEntry, QuadHeap};

#[derive(Clone, Debug)]
pub struct RoundNumber {
    /// Line speed in bits per time unit.
    line_rate: f64,
    t_chk: f64,
    r_chk: f64,
    /// Sum of the active conversations' weights (N_ac).
    active_weight: f64,
    active_count: usize,
    /// Finish numbers of active conversations, lazily: an entry is current only if its seq
    /// is the conversation's `current` one.
    finishes: QuadHeap,
    current: Vec<u64>,
    finish: Vec<f64>,
    weight: Vec<f64>,
    seq: u64,
}

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
            finishes: QuadHeap::default(),
            current: Vec::new(),
            finish: Vec::new(),
            weight: Vec::new(),
            seq: 0,
        }
    }

    /// R(t); `t` must not decrease between calls.
    pub fn advance(&mut self, t: f64) -> f64 {
        while let Some(&MinEntry { key, item: conv }) = self.finishes.peek() {
            if self.current[conv as usize] != key.seq {
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
            self.t_chk += (key.tag - self.r_chk) / slope;
            self.r_chk = key.tag;
            self.finishes.pop();
            self.deactivate(conv);
        }
        self.active_weight = 0.0;
        self.t_chk = t;
        self.r_chk
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
        self.current
            .get(conv as usize)
            .is_some_and(|&seq| seq != INACTIVE)
    }

    fn deactivate(&mut self, conv: u32) {
        self.current[conv as usize] = INACTIVE;
        self.active_count -= 1;
        self.active_weight -= self.weight[conv as usize];
    }

    /// F^a of a conversation (0 if never seen).
    pub fn finish_of(&self, conv: u32) -> f64 {
        self.finish.get(conv as usize).copied().unwrap_or(0.0)
    }

    /// Registers an arrival of `bits` for `conv` (weight `weight`) at time `t`.
    pub fn arrive(&mut self, conv: u32, bits: f64, weight: f64, t: f64) -> Arrival {
        let round = self.advance(t);
        self.ensure(conv, weight);
        let previous_finish = self.finish[conv as usize];
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
        let Some(&finish) = self.finish.get(conv as usize) else {
            return;
        };
        let lowered = (finish - bits / self.weight[conv as usize]).max(round);
        self.finish[conv as usize] = lowered;
        if !self.is_active(conv) {
            return;
        }
        if lowered <= round {
            self.deactivate(conv);
        } else {
            self.set_finish(conv, lowered);
        }
    }

    fn ensure(&mut self, conv: u32, weight: f64) {
        if self.finish.len() <= conv as usize {
            self.finish.resize(conv as usize + 1, 0.0);
            self.weight.resize(conv as usize + 1, 1.0);
            self.current.resize(conv as usize + 1, INACTIVE);
        }
        self.weight[conv as usize] = weight;
    }

    fn set_finish(&mut self, conv: u32, finish: f64) {
        self.finish[conv as usize] = finish;
        self.seq += 1;
        self.current[conv as usize] = self.seq;
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

    /// Seed 004 section 3.2's worked example, with L = 1.
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
}
