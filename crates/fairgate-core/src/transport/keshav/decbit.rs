//! The DECbit source (Ramakrishnan and Jain): the window follows the fraction of congestion
//! bits set in the ACKs of the last window, adjusted once every two windows.
//!
//! Sources: [Keshav91, §6.5]; Ramakrishnan and
//! Jain, "A Binary Feedback Scheme for Congestion Avoidance in Computer Networks", ACM TOCS
//! 8(2), 1990; Jain, Ramakrishnan, Chiu, DEC-TR-506, 1987. The switch side (setting the bit)
//! belongs to the schedulers; the bit travels as the DECBIT flag and the sink echoes it.
//!
//! Rule: when at least `threshold` (50%) of the counted bits are set, W <- 0.875 W,
//! otherwise W <- W + 1, W kept in [1, max_window].
//!
//! Decisions where the text is silent:
//! - "Every two windows": after a change, ACKs of packets sent before it are ignored (they
//!   reflect the old window); the bits of the next W packets sent after it are counted, and
//!   the decision is taken when the ACK of the last of them arrives.
//! - The window starts at `initial_window` = 1 and is fractional; floor(W) packets may be
//!   outstanding. A timeout retransmits as Generic does and leaves W unchanged.

use super::generic::{pair, GenericConfig};
use super::packet_window::{WindowParams, WindowPolicy};
use crate::config::error::{check, ScenarioError};
use crate::config::units::Duration;
use crate::traffic::{AgentPair, SourceConfig, SourceEnv};
use serde::{Deserialize, Serialize};

/// `kind = "decbit"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct DecbitConfig {
    pub initial_window: f64,
    pub max_window: f64,
    /// Multiplicative decrease factor.
    pub decrease: f64,
    /// Additive increase in packets.
    pub increase: f64,
    /// Fraction of set bits at or above which the window decreases.
    pub threshold: f64,
    pub size: u32,
    pub ack_size: u32,
    pub beta: f64,
    pub gain: f64,
    pub initial_rtt: Duration,
    pub max_backoff: u32,
}

impl Default for DecbitConfig {
    /// The window law's own defaults; the timer and packet sizes are Generic's.
    fn default() -> Self {
        let generic = GenericConfig::default();
        DecbitConfig {
            initial_window: 1.0,
            max_window: 5.0,
            decrease: 0.875,
            increase: 1.0,
            threshold: 0.5,
            size: generic.size,
            ack_size: generic.ack_size,
            beta: generic.beta,
            gain: generic.gain,
            initial_rtt: generic.initial_rtt,
            max_backoff: generic.max_backoff,
        }
    }
}

impl DecbitConfig {
    fn params(&self) -> WindowParams {
        WindowParams {
            size: self.size,
            ack_size: self.ack_size,
            beta: self.beta,
            gain: self.gain,
            initial_rtt: self.initial_rtt,
            max_backoff: self.max_backoff,
            app_gap: None,
        }
    }
}

impl SourceConfig for DecbitConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::in_range(path, "max_window", self.max_window, 1.0, 1e9)?;
        check::in_range(
            path,
            "initial_window",
            self.initial_window,
            1.0,
            self.max_window,
        )?;
        check::in_range(path, "decrease", self.decrease, f64::MIN_POSITIVE, 1.0)?;
        check::non_negative(path, "increase", self.increase)?;
        check::probability(path, "threshold", self.threshold)?;
        self.params().validate(path)
    }

    fn has_reverse_flow(&self) -> bool {
        true
    }

    fn build(&self, env: &SourceEnv) -> AgentPair {
        pair(env, self.params(), DecbitWindow::new(self))
    }
}

/// The DECbit window policy.
pub struct DecbitWindow {
    window: f64,
    max_window: f64,
    decrease: f64,
    increase: f64,
    threshold: f64,
    /// First packet sent under the current window.
    epoch_start: u64,
    /// Bits counted so far in this epoch, and how many ACKs.
    set: u64,
    counted: u64,
}

impl DecbitWindow {
    pub fn new(cfg: &DecbitConfig) -> Self {
        DecbitWindow {
            window: cfg.initial_window,
            max_window: cfg.max_window,
            decrease: cfg.decrease,
            increase: cfg.increase,
            threshold: cfg.threshold,
            epoch_start: 1,
            set: 0,
            counted: 0,
        }
    }

    fn decide(&mut self, next_seq: u64) {
        let fraction = self.set as f64 / self.counted as f64;
        self.window = if fraction >= self.threshold {
            (self.window * self.decrease).max(1.0)
        } else {
            (self.window + self.increase).min(self.max_window)
        };
        self.epoch_start = next_seq;
        self.set = 0;
        self.counted = 0;
    }
}

impl WindowPolicy for DecbitWindow {
    fn name(&self) -> &'static str {
        "decbit"
    }

    fn window(&self) -> f64 {
        self.window
    }

    fn on_ack(&mut self, trigger: u64, bit: bool, next_seq: u64) {
        if trigger < self.epoch_start {
            return;
        }
        self.counted += 1;
        self.set += bit as u64;
        let epoch_len = (self.window.floor() as u64).max(1);
        if self.counted >= epoch_len {
            self.decide(next_seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> DecbitConfig {
        toml::from_str("").unwrap()
    }

    #[test]
    fn increases_by_one_per_clean_epoch_and_ignores_the_old_window() {
        let mut w = DecbitWindow::new(&config());
        // Window 1: the ACK of packet 1 decides (no bit): W = 2, epoch starts at packet 2.
        w.on_ack(1, false, 2);
        assert_eq!(w.window(), 2.0);
        // Packets 2 and 3 are counted (window 2); both clean: W = 3 from packet 4.
        w.on_ack(2, false, 4);
        assert_eq!(w.window(), 2.0);
        w.on_ack(3, false, 5);
        assert_eq!(w.window(), 3.0);
        // Packet 4 was sent before the change? No: epoch starts at 5; ACK of 4 is ignored.
        w.on_ack(4, true, 6);
        assert_eq!((w.counted, w.set), (0, 0));
    }

    #[test]
    fn the_sender_follows_the_echoed_bits() {
        use crate::net::{flags, Agent, Packet, PacketKind};
        use crate::transport::keshav::packet_window::WindowSender;
        use crate::transport::testing::AgentHarness;
        let cfg = DecbitConfig {
            initial_window: 4.0,
            ..config()
        };
        let mut h = AgentHarness::new(2);
        let mut s = WindowSender::new(0, 1, 1, cfg.params(), DecbitWindow::new(&cfg));
        let sent = h.call(|ctx| s.start(ctx));
        assert_eq!(
            sent.iter().map(|p| p.seq).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
        fn ack(
            h: &mut AgentHarness,
            s: &mut WindowSender<DecbitWindow>,
            n: u64,
            bit: bool,
        ) -> Vec<Packet> {
            let p = Packet {
                kind: PacketKind::Ack,
                ack: n,
                aux: n,
                flags: if bit { flags::DECBIT } else { 0 },
                ..Default::default()
            };
            h.call(|ctx| s.on_packet(&p, ctx))
        }
        // Every bit set on the first window: W = 4 x 0.875 = 3.5 after the fourth ACK.
        for n in 1..=3 {
            assert_eq!(
                ack(&mut h, &mut s, n, true).len(),
                1,
                "window 4 slides by one"
            );
        }
        let sent = ack(&mut h, &mut s, 4, true);
        assert!(
            sent.is_empty(),
            "W = 3.5: packets 5, 6, 7 already outstanding"
        );
        assert_eq!(s.policy.window(), 3.5);
        // Packets 5..7 were sent under W = 4 and are ignored; each ACK still slides the window.
        for n in 5..=7 {
            assert_eq!(ack(&mut h, &mut s, n, true).len(), 1);
        }
        assert_eq!(s.policy.window(), 3.5);
    }

    #[test]
    fn half_the_bits_set_decreases_by_an_eighth() {
        let mut w = DecbitWindow::new(&DecbitConfig {
            initial_window: 4.0,
            ..config()
        });
        for (trigger, bit) in [(1, true), (2, false), (3, true), (4, false)] {
            w.on_ack(trigger, bit, 5);
        }
        assert_eq!(w.window(), 3.5);
        // 3.5 -> epochs of 3 packets; 1 of 3 set (33%) -> +1.
        for (trigger, bit) in [(5, true), (6, false), (7, false)] {
            w.on_ack(trigger, bit, 8);
        }
        assert_eq!(w.window(), 4.5);
        // Never above max_window 5.
        for t in 8..12 {
            w.on_ack(t, false, 12);
        }
        assert_eq!(w.window(), 5.0);
    }
}
