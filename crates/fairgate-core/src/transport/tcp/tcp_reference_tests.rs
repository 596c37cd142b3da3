//! Hand-checked packet sequences for the TCP options of [`super::config`], in the style
//! of the ns-2 TCP test suite (one, two and three losses in a window, a lost retransmission,
//! a lost SYN, reordering by three segments, a lost ACK), per variant where they differ.
//!
//! The wire: 8 Mb/s data path (a 1000-byte segment takes 1 ms), 10 ms each way, so a segment
//! sent at t is ACKed at t + 21 ms. MSS 960 + 40 header bytes; segment n is bytes
//! [960 n, 960 (n + 1)). Options not set by a test are those of `config::classic` (one ACK
//! per segment, no option bytes, 10 ms ticks), which the sequences were checked with.

use super::config::classic;
use super::tcp_wire::Wire;

const RATE: u64 = 8_000_000;

fn wire(cc: &str, extra: &str) -> Wire {
    let config = format!(
        "cc = \"{cc}\"\nmss = 960\ninitial_window = 4\nrwnd = 960000\napp = {{ kind = \"file\", size = 19200 }}\n{extra}"
    );
    Wire::new(&classic(&config), RATE, 10.0)
}

/// Runs to 20 s and returns the sender's transmissions from `from_ms` on.
fn run_from(mut w: Wire, from_ms: f64) -> (Wire, Vec<String>) {
    w.run(20.0);
    let sent = w.sent_from(from_ms);
    (w, sent)
}

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

/// Counters (retransmits, timeouts, fast retransmits) and completion time in ms.
fn outcome(w: &Wire) -> (u64, u64, u64, f64) {
    let s = w.stats();
    let done = s.completed_at.map_or(f64::NAN, |t| t as f64 / 1e9);
    (s.retransmits, s.timeouts, s.fast_retransmits, done)
}

// Segment 6 is lost. Segments 4-11 leave at 21-24 ms; the ACKs of 7-11 (duplicates of 6)
// reach the sender at 44-48 ms, after the ACKs of 4 and 5 opened room for 12-15.

/// With Limited Transmit the first two duplicates send 16 and 17 (cwnd unchanged); the third
/// retransmits 6. ssthresh = (12 - 2 limited-transmit segments) / 2 = 5 segments.
#[test]
fn one_loss_limited_transmit_then_fast_retransmit() {
    for cc in ["reno", "newreno", "sack"] {
        let (w, sent) = run_from(wire(cc, "").lose_segment(6, 1), 44.0);
        let expected =
            "44.000 data 16\n45.000 data 17\n46.000 retx 6\n65.000 data 18\n66.000 data 19";
        assert_eq!(sent, lines(expected), "{cc}");
        assert_eq!(outcome(&w), (1, 0, 1, 87.0), "{cc}");
        assert_eq!(w.sender.state().ssthresh, 5 * 960, "{cc}");
    }
    // Tahoe: the same limited transmits, then one segment after the retransmission.
    let (w, sent) = run_from(wire("tahoe", "").lose_segment(6, 1), 44.0);
    let expected = "44.000 data 16\n45.000 data 17\n46.000 retx 6\n69.000 data 18\n69.000 data 19";
    assert_eq!(sent, lines(expected));
    assert_eq!(outcome(&w), (1, 0, 1, 91.0));
}

/// Without Limited Transmit nothing leaves on the first two duplicates; NewReno's inflated
/// window sends 16-19 one per duplicate from 63 ms and the full ACK comes at 67 ms.
#[test]
fn one_loss_without_limited_transmit() {
    let w = wire("newreno", "limited_transmit = false").lose_segment(6, 1);
    let (w, sent) = run_from(w, 44.0);
    let expected = "46.000 retx 6\n63.000 data 16\n64.000 data 17\n65.000 data 18\n66.000 data 19";
    assert_eq!(sent, lines(expected));
    assert_eq!(outcome(&w), (1, 0, 1, 87.0));
    assert_eq!(w.sender.state().ssthresh, 5 * 960);
}

/// Two losses (6 and 8): Reno leaves recovery on the partial ACK of 8 and times out (RTO
/// 1 s from the last new ACK at 69 ms); NewReno retransmits 8 on that partial ACK; SACK
/// retransmits 8 as soon as the pipe allows (IsLost(8) from the SACKs of 9-11).
#[test]
fn two_losses_per_variant() {
    let cases = [
        (
            "reno",
            "46.000 retx 6\n66.000 data 18\n67.000 data 19\n1069.000 retx 8",
            (2, 1, 1, 1090.0),
        ),
        (
            "newreno",
            "46.000 retx 6\n66.000 data 18\n67.000 data 19\n69.000 retx 8",
            (2, 0, 1, 90.0),
        ),
        (
            "sack",
            "46.000 retx 6\n65.000 retx 8\n66.000 data 18\n67.000 data 19",
            (2, 0, 1, 88.0),
        ),
    ];
    for (cc, expected, counters) in cases {
        let (w, sent) = run_from(wire(cc, "").lose_segment(6, 1).lose_segment(8, 1), 46.0);
        assert_eq!(sent, lines(expected), "{cc}");
        assert_eq!(outcome(&w), counters, "{cc}");
    }
}

/// Three losses (6, 8, 10): Reno times out and goes back N (10 and 11 again); NewReno needs
/// one RTT per hole; SACK repairs all three in the first RTT of recovery.
#[test]
fn three_losses_per_variant() {
    let cases = [
        ("reno", "46.000 retx 6\n67.000 data 18\n68.000 data 19\n1069.000 retx 8\n1090.000 retx 10\n1090.000 retx 11", (4, 1, 1, 1111.0)),
        ("newreno", "46.000 retx 6\n67.000 data 18\n68.000 data 19\n69.000 retx 8\n90.000 retx 10", (3, 0, 1, 111.0)),
        ("sack", "46.000 retx 6\n65.000 retx 8\n66.000 retx 10\n67.000 data 18\n68.000 data 19", (3, 0, 1, 89.0)),
    ];
    for (cc, expected, counters) in cases {
        let w = wire(cc, "")
            .lose_segment(6, 1)
            .lose_segment(8, 1)
            .lose_segment(10, 1);
        let (w, sent) = run_from(w, 46.0);
        assert_eq!(sent, lines(expected), "{cc}");
        assert_eq!(outcome(&w), counters, "{cc}");
    }
}

/// The fast retransmission of 6 is lost too: every variant waits for the timer, armed by the
/// last new ACK (43 ms) and not restarted by the retransmission (RFC 6298 §5.1); the timeout
/// sets ssthresh from the FlightSize [RFC 5681, §3.1], which SACK estimates by the pipe.
#[test]
fn lost_retransmission_times_out() {
    for cc in ["reno", "newreno", "sack"] {
        let (w, sent) = run_from(wire(cc, "").lose_segment(6, 2), 46.0);
        let expected = "46.000 retx 6 lost\n65.000 data 18\n66.000 data 19\n1043.000 retx 6";
        assert_eq!(sent, lines(expected), "{cc}");
        assert_eq!(outcome(&w), (2, 1, 1, 1064.0), "{cc}");
        // Without SACK: half of everything not cumulatively acknowledged (6..20: 14
        // segments), the limited transmits and the new data sent in recovery included.
        // SACK: the pipe at the expiry is the lost retransmission of 6 alone (7..19 are
        // SACKed), so ssthresh is the 2-segment floor, as ns-3's BytesInFlight gives.
        let ssthresh = if cc == "sack" { 2 } else { 7 };
        assert_eq!(w.sender.state().ssthresh, ssthresh * 960, "{cc}");
    }
}

/// A lost SYN is sent again after `syn_rto` (3 s by default, as ns-3; 1 s per RFC 6298).
#[test]
fn lost_syn_waits_for_the_syn_rto() {
    for (extra, at) in [("", 3000.0), ("syn_rto = \"1s\"", 1000.0)] {
        let w = wire("newreno", &format!("handshake = true\n{extra}")).lose_syn(0);
        let (w, sent) = run_from(w, 0.0);
        assert_eq!(sent[..2], lines(&format!("0.000 syn lost\n{at:.3} syn")));
        assert_eq!(w.stats().timeouts, 1);
        // Karn: the retransmitted SYN gives no RTT sample; the data segments give 3.
        assert_eq!(w.stats().rtt_count, 3);
    }
}

/// Segment 6 arrives 3.5 ms late, behind 7, 8 and 9: three duplicates. NewReno retransmits 6
/// spuriously and then treats every partial ACK as a loss (RFC 6582 has no undo); SACK
/// retransmits 6 only, since the SACKs show nothing else missing.
#[test]
fn reordering_by_three_segments() {
    let (w, sent) = run_from(wire("newreno", "").delay_segment(6, 3.5), 45.0);
    assert_eq!(
        sent[..6],
        lines("45.000 data 16\n46.000 data 17\n47.000 retx 6\n47.500 retx 10\n48.000 retx 11\n49.000 retx 12")
    );
    assert_eq!((w.stats().retransmits, w.stats().fast_retransmits), (11, 2));
    let (w, sent) = run_from(wire("sack", "").delay_segment(6, 3.5), 45.0);
    let expected = "45.000 data 16\n46.000 data 17\n47.000 retx 6\n64.000 data 18\n65.000 data 19";
    assert_eq!(sent, lines(expected));
    assert_eq!(outcome(&w), (1, 0, 1, 86.0));
}

/// ACK-path loss: losing the ACKs of 1 and 2 costs nothing (the ACK of 3 covers them; with
/// byte counting limited to 1 MSS, cwnd grows by one segment, so 6-9 leave in a burst).
/// Losing all four ACKs of the first window costs one timeout and one retransmission of 0.
#[test]
fn ack_path_loss() {
    let (w, sent) = run_from(wire("newreno", "").lose_ack(1).lose_ack(2), 21.0);
    assert_eq!(
        sent[..6],
        lines("21.000 data 4\n21.000 data 5\n24.000 data 6\n24.000 data 7\n24.000 data 8\n24.000 data 9")
    );
    assert_eq!(outcome(&w), (0, 0, 0, 72.0));
    let w = wire("newreno", "")
        .lose_ack(0)
        .lose_ack(1)
        .lose_ack(2)
        .lose_ack(3);
    let (w, sent) = run_from(w, 1.0);
    assert_eq!(
        sent[..3],
        lines("1000.000 retx 0\n1021.000 data 4\n1021.000 data 5")
    );
    assert_eq!(outcome(&w), (1, 1, 0, 1130.0));
}

/// Delayed ACKs: one ACK per two segments, at once for out-of-order data (35-37 ms) and for
/// the segment that fills the hole (60 ms), and 200 ms after a lone last segment (302 ms).
#[test]
fn delayed_acks_follow_rfc_5681() {
    let mut w = wire("sack", "delayed_ack = true").lose_segment(6, 1);
    w.run(20.0);
    let acks = w.lines("ack");
    let expected = "12.000 ack 2\n14.000 ack 4\n34.000 ack 6\n35.000 ack 6 [7-8]\n36.000 ack 6 [7-9]\n37.000 ack 6 [7-10]";
    assert_eq!(acks[..6], lines(expected));
    assert!(acks.contains(&"60.000 ack 15".to_string()), "{acks:?}");
    assert_eq!(acks.last().unwrap(), "302.000 ack 20");
}

/// Timestamps: 12 option bytes on every segment (1012 B take 1.012 ms) and an RTT sample
/// from every ACK of new data (9 here against 3 timed segments without the option).
#[test]
fn timestamps_sample_every_ack() {
    let mut w = wire("sack", "timestamps = true").lose_segment(6, 1);
    w.run(20.0);
    assert_eq!(w.lines("ack")[..2], lines("11.012 ack 1\n12.024 ack 2"));
    assert_eq!(w.stats().rtt_count, 9);
    assert!((w.stats().rtt_min - 0.021012).abs() < 1e-12);
}

/// After `max_retries` timer retransmissions of one segment the next expiry aborts the
/// connection: nothing more is sent and the flow is counted as aborted.
#[test]
fn abort_after_max_retries() {
    let (w, sent) = run_from(
        wire("newreno", "max_retries = 2").lose_segment(6, 10),
        1000.0,
    );
    assert_eq!(sent, lines("1043.000 retx 6 lost\n3043.000 retx 6 lost"));
    assert!(w.stats().aborted);
    assert_eq!(w.stats().timeouts, 2);
    assert_eq!(w.sender.conn(), super::sender::Conn::Closed);
}

/// Tail loss (15 and 19, the last segment): no new data, no hole below HighSACK, so only the
/// rescue retransmission (NextSeg rule 4, an option) resends 19 without waiting for the timer.
#[test]
fn rescue_retransmission_saves_a_tail_timeout() {
    let tail = |extra: &str| wire("sack", extra).lose_segment(15, 1).lose_segment(19, 1);
    let (w, sent) = run_from(tail("rescue_retransmit = true"), 46.0);
    assert_eq!(sent, lines("68.000 retx 15\n89.000 retx 19"));
    assert_eq!(outcome(&w), (2, 0, 1, 110.0));
    let (w, sent) = run_from(tail(""), 46.0);
    assert_eq!(sent, lines("68.000 retx 15\n1089.000 retx 19"));
    assert_eq!(outcome(&w), (2, 1, 1, 1110.0));
}

/// Five losses whose retransmissions are lost too (6, 8, 10, 12, 14): the timer fires at
/// 1043 ms. Keeping the scoreboard (the default, as ns-3) resends only the holes; clearing it
/// (RFC 2018 §8) resends 9 as well, as the ACK of 8 reports only the three latest blocks.
/// ssthresh is half the pipe at the expiry (the five lost retransmissions, 2.5 segments):
/// cwnd passes it on the ACK of 8, so 18 waits for the ACK of 14 at 1127 ms.
#[test]
fn scoreboard_across_a_timeout() {
    let holes = |extra: &str| {
        [6, 8, 10, 12, 14]
            .into_iter()
            .fold(wire("sack", extra), |w, s| w.lose_segment(s, 2))
    };
    let after = "1043.000 retx 6\n1064.000 retx 8\n1085.000 retx 10\n1085.000 retx 12\n1106.000 retx 14\n1127.000 data 18\n1127.000 data 19";
    let (_, sent) = run_from(holes(""), 1000.0);
    assert_eq!(sent, lines(after));
    let (_, sent) = run_from(holes("keep_sack_on_rto = false"), 1000.0);
    let cleared = after.replace("1064.000 retx 8", "1064.000 retx 8\n1064.000 retx 9");
    assert_eq!(sent, lines(&cleared));
}

/// RFC 6298 §5.7: the SYN is lost once (retransmitted at 3 s), the data segment sent with the
/// handshake's third step is lost too, so its timer shows the data RTO after a lost SYN:
/// ns-3 carries the last SYN timeout over (6 s), RFC 6298 re-initialises to 3 s, and the
/// `backoff` rule keeps the initial 1 s doubled by the SYN's expiry (2 s).
#[test]
fn data_rto_after_a_lost_syn() {
    for (rule, rto_ms) in [("ns3", 6000.0), ("rfc6298", 3000.0), ("backoff", 2000.0)] {
        let config = format!(
            "cc = \"newreno\"\nmss = 960\nhandshake = true\nlost_syn_rto = \"{rule}\"\napp = {{ kind = \"file\", size = 960 }}"
        );
        let w = Wire::new(&classic(&config), RATE, 10.0)
            .lose_syn(0)
            .lose_segment(0, 1);
        let (w, sent) = run_from(w, 0.0);
        let first = "3000.000 syn\n3020.040 data 0 lost";
        let expected = format!("0.000 syn lost\n{first}\n{:.3} retx 0", 3020.040 + rto_ms);
        assert_eq!(sent[..4], lines(&expected), "{rule}");
        assert_eq!(w.stats().timeouts, 2, "{rule}");
    }
}

/// fairgate's defaults (ns-3's): timestamps and delayed ACKs together. Segments of 1012 B
/// take 1.012 ms; the receiver ACKs every second one (ACK 2 when segment 1 arrives at
/// 12.024 ms); with one segment per ACK in slow start the window grows 1.5 times per round
/// trip (3 segments sent per ACK of 2); every ACK gives an RTT sample (10), the first
/// 22.024 ms: ACK 2 echoes segment 0, sent at 0. Segment 19 completes the last pair, so no
/// 200 ms timer: done at 77.084 + 10 ms.
#[test]
fn ns3_defaults_delay_acks_and_carry_timestamps() {
    let config = "cc = \"sack\"\nmss = 960\ninitial_window = 4\nrwnd = 960000\napp = { kind = \"file\", size = 19200 }";
    let mut w = Wire::new(config, RATE, 10.0);
    w.run(20.0);
    let acks = w.lines("ack");
    let expected = "12.024 ack 2\n14.048 ack 4\n34.048 ack 6\n36.072 ack 8\n38.096 ack 10";
    assert_eq!(acks[..5], lines(expected));
    assert_eq!(acks.last().unwrap(), "77.084 ack 20");
    let expected = "22.024 data 4\n22.024 data 5\n22.024 data 6\n24.048 data 7\n24.048 data 8";
    assert_eq!(w.sent_from(20.0)[..5], lines(expected));
    assert_eq!(w.stats().rtt_count, 10);
    assert!((w.stats().rtt_min - 0.022024).abs() < 1e-12);
    assert_eq!(outcome(&w), (0, 0, 0, 87.084));
}
