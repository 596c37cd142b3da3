//! Many transports sharing a bottleneck: ECN with a step-marking queue, N Reno flows over
//! drop-tail, DECbit over a lossless path, request/response transfers and the rate cap.

mod transport_support;
use transport_support::*;

/// N flows s{i} -> d{i} over a 10 Mb/s, 20 ms bottleneck; 100 Mb/s, 1 ms access links.
fn dumbbell(n: u32, queue: &str, source: &str, duration: &str) -> String {
    let source = classic(source);
    format!(
        r#"
name = "shared"
[simulation]
duration = "{duration}"
trace_every_change = true
[topology]
kind = "dumbbell"
senders = {n}
bottleneck = {{ rate = "10Mbps", delay = "20ms", queue = {queue} }}
access = {{ rate = "100Mbps", delay = "1ms", queue = {{ kind = "fifo", limit = 1000 }} }}
[[flows]]
name = "f{{i}}"
count = {n}
src = "s{{i}}"
dst = "d{{i}}"
source = {source}
"#
    )
}

const BULK: &str = "{ kind = \"tcp\", cc = \"newreno\", rwnd = 400000, window_scale = 3 }";

fn utilisation(sim: &fairgate_core::Simulation, port_name: &str) -> f64 {
    let p = &sim.ports()[port(sim, port_name)];
    p.stats.departures_bytes as f64 * 8.0 / (p.link.rate_bps as f64 * sim.now() as f64 / 1e12)
}

#[test]
fn long_lived_reno_flows_fill_a_drop_tail_bottleneck() {
    // BDP = 10 Mb/s x 44 ms = 55 kB = 53 packets; a buffer of 50 packets.
    let text = dumbbell(4, "{ kind = \"fifo\", limit = 50 }", BULK, "30s")
        .replace("cc = \"newreno\"", "cc = \"reno\"");
    let sim = run(&text, &[]);
    let util = utilisation(&sim, "left->right");
    assert!(util > 0.95, "utilisation {util}");
    let goodput: u64 = (0..4).map(|f| stats(&sim, f).goodput_bytes).sum();
    let capacity_payload = 10e6 / 8.0 * 30.0 * 1000.0 / 1040.0;
    assert!(
        (goodput as f64) < capacity_payload,
        "{goodput} > {capacity_payload}"
    );
    assert!(goodput as f64 > 0.9 * capacity_payload);
    for f in 0..4 {
        assert!(
            stats(&sim, f).fast_retransmits > 0,
            "flow {f} saw congestion"
        );
    }
}

#[test]
fn ecn_flows_are_marked_not_dropped_and_halve_once_per_rtt() {
    let source =
        "{ kind = \"tcp\", cc = \"newreno\", ecn = true, rwnd = 400000, window_scale = 3 }";
    let text = dumbbell(
        4,
        "{ kind = \"step_mark\", k = 20, limit = 1000 }",
        source,
        "20s",
    );
    let sim = run(&text, &[]);
    let bottleneck = &sim.ports()[port(&sim, "left->right")];
    assert!(bottleneck.stats.marks.iter().sum::<u64>() > 0);
    // Base RTT: 2 x (1 + 20 + 1) ms of propagation.
    let base_rtt = 0.044;
    for f in 0..4u32 {
        let s = stats(&sim, f as usize);
        assert_eq!(s.dropped_total(), 0, "flow {f}");
        assert_eq!((s.retransmits, s.timeouts), (0, 0), "flow {f}");
        assert!(s.ecn_reactions > 0, "flow {f}");
        let mut cwnd = trace(&sim, f, "cwnd");
        cwnd.dedup_by(|b, a| b.1 == a.1);
        let cut_points: Vec<_> = cwnd.windows(2).filter(|w| w[1].1 < w[0].1).collect();
        for w in &cut_points {
            // cwnd = ssthresh = max(cwnd / 2, 2 MSS), in whole bytes.
            let halved = ((w[0].1 as u64 / 2).max(2000)) as f64;
            assert_eq!(
                w[1].1, halved,
                "flow {f}: cut from {} to {}",
                w[0].1, w[1].1
            );
        }
        let cuts: Vec<f64> = cut_points.iter().map(|w| w[1].0).collect();
        assert_eq!(cuts.len() as u64, s.ecn_reactions, "flow {f}");
        for pair in cuts.windows(2) {
            assert!(pair[1] - pair[0] >= base_rtt, "flow {f}: cuts at {pair:?}");
        }
    }
    let util = utilisation(&sim, "left->right");
    assert!(util > 0.9, "utilisation {util}");
}

#[test]
fn decbit_window_grows_to_its_maximum_without_bits() {
    // No switch sets the bit: +1 every two windows up to max_window 5, then W/RTT.
    let text = two_hosts("1Mbps", "10ms", 100, "30s", "{ kind = \"decbit\" }");
    let mut sim = build_sim(&text, &[]);
    let goodput = goodput_between(&mut sim, 0, 10.0, 30.0);
    sim.run();
    assert_conserved(&sim);
    let windows: Vec<f64> = trace(&sim, 0, "window").iter().map(|&(_, v)| v).collect();
    let mut distinct = windows.clone();
    distinct.dedup();
    assert_eq!(distinct, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    // Window 5 of 1000-B packets keeps the 1 Mb/s link busy (5 x 8 ms > RTT 28.32 ms).
    assert!((goodput / 1e6 - 1.0).abs() < 0.001, "{goodput}");
}

#[test]
fn request_response_transfers_complete_in_sequence() {
    // Five 10-segment transfers, 0.5 s apart after each completion, on one connection.
    let source =
        "{ kind = \"tcp\", app = { kind = \"requests\", count = 5, size = 10000, gap = 0.5 } }";
    let text = two_hosts("10Mbps", "10ms", 100, "10s", source);
    let sim = run(&text, &[]);
    let s = stats(&sim, 0);
    assert_eq!(s.goodput_bytes, 50_000);
    let done = s.completed_at.expect("all transfers done") as f64 / 1e12;
    // The first transfer goes in slow start from 1 segment: rounds of 1, 2, 4, 3 segments,
    // 4 RTT + 2 segment times. It leaves cwnd at 11 segments (no restart after idle), so each
    // later transfer goes in one burst: RTT + 9 segment times, after its 0.5 s gap.
    let (seg, rtt) = (
        tx(1040, 10_000_000),
        tx(1040, 10_000_000) + tx(40, 10_000_000) + 0.020,
    );
    let expected = 4.0 * rtt + 2.0 * seg + 4.0 * (0.5 + rtt + 9.0 * seg);
    assert!((done - expected).abs() < 1e-9, "{done} vs {expected}");
    // One timed segment at a time: segments 1, 2, 4 and 8 of the first transfer, then one
    // per later transfer.
    assert_eq!(s.rtt_count, 4 + 4);
}

#[test]
fn rate_cap_limits_the_sending_rate() {
    // A 2 Mb/s cap on a 10 Mb/s path with a large window: goodput = 2 Mb/s x 1000 / 1040.
    let source = "{ kind = \"tcp\", rate_cap = \"2Mbps\", rwnd = 400000, window_scale = 3 }";
    let text = two_hosts("10Mbps", "10ms", 100, "20s", source);
    let mut sim = build_sim(&text, &[]);
    let goodput = goodput_between(&mut sim, 0, 5.0, 20.0);
    let expected = 2e6 * 1000.0 / 1040.0;
    assert!(
        (goodput / expected - 1.0).abs() < 0.01,
        "{goodput} vs {expected}"
    );
    sim.run();
    assert_conserved(&sim);
    assert_eq!(stats(&sim, 0).dropped_total(), 0);
}
