//! Transport over lossless paths: goodput = min(C, W/RTT), slow start at its analytic times
//! (with and without delayed ACKs), Generic's W/RTT exactly, determinism and bad input.

mod transport_support;
use transport_support::*;

const RATE: u64 = 10_000_000;

fn tcp(extra: &str) -> String {
    format!("{{ kind = \"tcp\", cc = \"newreno\" {extra} }}")
}

/// RTT of one segment on the idle two-host path: data out, ACK back.
fn rtt0(rate: u64, delay: f64) -> f64 {
    tx(1040, rate) + tx(40, rate) + 2.0 * delay
}

#[test]
fn window_limited_goodput_is_w_over_rtt() {
    // W = 10 segments (rwnd 10000 B): 10 x 8000 bits / 40.864 ms = 1.9577 Mb/s < C.
    let text = two_hosts("10Mbps", "20ms", 1000, "20s", &tcp(", rwnd = 10000"));
    let mut sim = build_sim(&text, &[]);
    let goodput = goodput_between(&mut sim, 0, 5.0, 20.0);
    let expected = 10.0 * 8000.0 / rtt0(RATE, 0.020);
    assert!(
        (goodput / expected - 1.0).abs() < 0.01,
        "goodput {goodput}, W/RTT {expected}"
    );
    assert_conserved(&sim);
    assert_eq!(stats(&sim, 0).retransmits, 0);
}

#[test]
fn capacity_limited_goodput_is_c() {
    // rwnd 200 segments > BDP 49 segments; the 1000-packet buffer never overflows.
    let text = two_hosts(
        "10Mbps",
        "20ms",
        1000,
        "20s",
        &tcp(", rwnd = 200000, window_scale = 2"),
    );
    let mut sim = build_sim(&text, &[]);
    let goodput = goodput_between(&mut sim, 0, 5.0, 20.0);
    let expected = RATE as f64 * 1000.0 / 1040.0;
    assert!(
        (goodput / expected - 1.0).abs() < 0.01,
        "goodput {goodput}, payload capacity {expected}"
    );
    assert_conserved(&sim);
    assert_eq!(stats(&sim, 0).dropped_total(), 0);
}

#[test]
fn long_satellite_path_needs_window_scaling() {
    // 10 Mb/s with 250 ms each way: BDP = 10 Mb/s x 0.5 s = 625 kB. Unscaled, the window is
    // 65535 B and goodput 65535 x 8 / RTT; with window_scale = 4 and rwnd 1 MB the link fills.
    let rtt = rtt0(RATE, 0.250);
    let unscaled = two_hosts("10Mbps", "250ms", 2000, "30s", &tcp(""));
    let mut sim = build_sim(&unscaled, &[]);
    let goodput = goodput_between(&mut sim, 0, 10.0, 30.0);
    let expected = 65.0 * 8000.0 / rtt;
    assert!(
        (goodput / expected - 1.0).abs() < 0.01,
        "{goodput} vs {expected}"
    );
    let scaled = two_hosts(
        "10Mbps",
        "250ms",
        2000,
        "30s",
        &tcp(", rwnd = 1000000, window_scale = 4"),
    );
    let mut sim = build_sim(&scaled, &[]);
    let goodput = goodput_between(&mut sim, 0, 10.0, 30.0);
    let capacity = RATE as f64 * 1000.0 / 1040.0;
    assert!(
        (goodput / capacity - 1.0).abs() < 0.01,
        "{goodput} vs {capacity}"
    );
    assert_conserved(&sim);
}

/// First time the traced cwnd reaches `bytes`.
fn first_reaching(sim: &fairgate_core::Simulation, bytes: f64) -> f64 {
    trace(sim, 0, "cwnd")
        .into_iter()
        .find(|&(_, v)| v >= bytes)
        .map(|(t, _)| t)
        .expect("cwnd never reached the target")
}

#[test]
fn slow_start_doubles_every_rtt() {
    let rate = 100_000_000;
    let text = two_hosts(
        "100Mbps",
        "50ms",
        10_000,
        "1s",
        &tcp(", rwnd = 1000000, window_scale = 5"),
    );
    let sim = run(&text, &[]);
    let (rtt, tx_data) = (rtt0(rate, 0.050), tx(1040, rate));
    // cwnd reaches 2^n segments at the last ACK of round n-1: n RTT + (2^(n-1) - 1) tx.
    for n in 1..=6 {
        let expected = n as f64 * rtt + ((1u64 << (n - 1)) - 1) as f64 * tx_data;
        let t = first_reaching(&sim, (1000u64 << n) as f64);
        assert!((t - expected).abs() < 1e-9, "2^{n}: {t} vs {expected}");
    }
}

#[test]
fn slow_start_with_delayed_acks_and_byte_counting_doubles_every_rtt() {
    let rate = 100_000_000;
    let text = two_hosts(
        "100Mbps",
        "50ms",
        10_000,
        "1s",
        &tcp(
            ", rwnd = 1000000, window_scale = 5, delayed_ack = true, initial_window = 2, abc_limit = 2",
        ),
    );
    let sim = run(&text, &[]);
    let (rtt, tx_data) = (rtt0(rate, 0.050), tx(1040, rate));
    // Every ACK covers two segments and opens four: cwnd reaches 2^(k+1) segments at
    // k RTT + (2^k + k - 2) tx.
    for k in 1..=6u32 {
        let expected = k as f64 * rtt + ((1u64 << k) + k as u64 - 2) as f64 * tx_data;
        let t = first_reaching(&sim, (1000u64 << (k + 1)) as f64);
        assert!(
            (t - expected).abs() < 1e-9,
            "2^{}: {t} vs {expected}",
            k + 1
        );
    }
    // One ACK per two segments.
    let s = stats(&sim, 0);
    let acks = stats(&sim, 1).offered_pkts;
    assert!(
        acks * 2 <= s.offered_pkts + 1,
        "{acks} ACKs for {} segments",
        s.offered_pkts
    );
}

#[test]
fn delayed_ack_timer_acks_a_lone_segment() {
    // One 1000-byte file: the single segment is acknowledged after the 200 ms timer.
    let text = two_hosts(
        "10Mbps",
        "10ms",
        100,
        "2s",
        &tcp(", delayed_ack = true, app = { kind = \"file\", size = 1000 }"),
    );
    let sim = run(&text, &[]);
    let done = stats(&sim, 0).completed_at.expect("completed") as f64 / 1e12;
    let expected = tx(1040, RATE) + 0.010 + 0.2 + tx(40, RATE) + 0.010;
    assert!((done - expected).abs() < 1e-9, "{done} vs {expected}");
}

#[test]
fn generic_window_gives_w_over_rtt_exactly() {
    // W = 2 packets of 1000 B at 1 Mb/s, 10 ms: RTT = 8 + 10 + 0.32 + 10 = 28.32 ms.
    let text = two_hosts(
        "1Mbps",
        "10ms",
        100,
        "30s",
        "{ kind = \"generic\", window = 2 }",
    );
    let mut sim = build_sim(&text, &[]);
    let rtt = 0.008 + 0.010 + 0.00032 + 0.010;
    let periods = 500.0;
    let goodput = goodput_between(&mut sim, 0, 5.0, 5.0 + periods * rtt);
    let expected = 2.0 * 8000.0 / rtt;
    assert!(
        (goodput - expected).abs() < 1e-6 * expected,
        "{goodput} vs {expected}"
    );
    sim.run();
    assert_conserved(&sim);
    let s = stats(&sim, 0);
    assert_eq!((s.retransmits, s.timeouts), (0, 0));
    assert!((s.rtt_min - rtt).abs() < 1e-9);
}

#[test]
fn finite_transfer_with_handshake_completes_and_closes() {
    // 10 segments, IW 1, no loss: SYN RTT, then rounds of 1, 2, 4, 3 segments.
    let text = two_hosts(
        "10Mbps",
        "10ms",
        100,
        "5s",
        &tcp(", handshake = true, app = { kind = \"file\", size = 10000 }"),
    );
    let sim = run(&text, &[]);
    let s = stats(&sim, 0);
    assert_eq!(s.goodput_bytes, 10_000);
    // 10 data segments + SYN + FIN; 10 ACKs + SYN-ACK + FIN-ACK.
    assert_eq!(s.offered_pkts, 12);
    assert_eq!(stats(&sim, 1).offered_pkts, 12);
    let syn_rtt = 2.0 * (tx(40, RATE) + 0.010);
    let seg_rtt = rtt0(RATE, 0.010);
    let done = s.completed_at.expect("completed") as f64 / 1e12;
    // Rounds start one RTT apart; the last round's 3 segments leave by two ACKs one segment
    // time apart, so its last ACK trails the round's start by RTT + 2 tx.
    let expected = syn_rtt + 4.0 * seg_rtt + 2.0 * tx(1040, RATE);
    assert!((done - expected).abs() < 1e-9, "{done} vs {expected}");
}

#[test]
fn runs_are_deterministic_for_a_seed() {
    // Random loss and random start times: the same seed gives identical runs, another seed
    // a different one.
    let text = two_hosts(
        "10Mbps",
        "20ms",
        20,
        "10s",
        "{ kind = \"tcp\", cc = \"sack\", rwnd = 200000, window_scale = 2 }",
    )
    .replace(
        "[[flows]]",
        "[[flows]]\ncount = 3\nstart = { dist = \"uniform\", min = 0, max = 1 }",
    )
    .replace("name = \"f\"", "name = \"f{i}\"")
    .replace(
        "queue = { kind = \"fifo\", limit = 20 }",
        "queue = { kind = \"fifo\", limit = 20 }\nloss = 0.005",
    );
    let fingerprint = |seed: &str| {
        let sim = run(&text, &[&format!("simulation.seed={seed}")]);
        let flows: Vec<_> = (0..3)
            .map(|f| {
                let s = stats(&sim, f);
                (
                    s.goodput_bytes,
                    s.retransmits,
                    s.timeouts,
                    s.fast_retransmits,
                    s.rtt_sum.to_bits(),
                )
            })
            .collect();
        let traces: Vec<u64> = sim.traces().value.iter().map(|v| v.to_bits()).collect();
        (flows, sim.events_processed(), traces)
    };
    let a = fingerprint("7");
    assert_eq!(a, fingerprint("7"));
    assert_ne!(a.0, fingerprint("8").0);
    assert!(
        a.0.iter().all(|f| f.3 > 0),
        "every flow recovered from losses: {:?}",
        a.0
    );
}

#[test]
fn bad_transport_parameters_name_the_field() {
    let text = two_hosts("10Mbps", "10ms", 100, "1s", &tcp(""));
    let cases = [
        ("flows[0].source.cc=\"vegas\"", "flows[0].source"),
        ("flows[0].source.mss=0", "flows[0].source.mss"),
        ("flows[0].source.rwnd=1000000", "flows[0].source.rwnd"),
        (
            "flows[0].source.window_scale=15",
            "flows[0].source.window_scale",
        ),
        (
            "flows[0].source.min_rto=\"100s\"",
            "flows[0].source.max_rto",
        ),
        (
            "flows[0].source.app={kind=\"file\",size=0}",
            "flows[0].source.app.size",
        ),
        ("flows[0].source.kind=\"decbit\"", "flows[0].source"),
        (
            "flows[0].source.app={kind=\"requests\",count=0,size=1000}",
            "flows[0].source.app.count",
        ),
        (
            "links[0].loss={kind=\"seqs\",flow=\"nope\",seqs=[1]}",
            "links[0].loss.flow",
        ),
        (
            "links[0].loss={kind=\"seqs\",flow=\"f\",seqs=[1],times=0}",
            "links[0].loss.times",
        ),
        (
            "links[0].queue={kind=\"step_mark\",k=50,limit=50}",
            "links[0].queue.limit",
        ),
    ];
    for (o, path) in cases {
        let overrides = vec![o.to_string()];
        let e = match fairgate_core::scenario::parse(&text, &overrides) {
            Ok(s) => match fairgate_core::scenario::build(&s) {
                Ok(_) => panic!("{o} was accepted"),
                Err(e) => e,
            },
            Err(e) => e,
        };
        assert!(e.path.starts_with(path), "{o}: {e}");
    }
    let generic = two_hosts("10Mbps", "10ms", 100, "1s", "{ kind = \"generic\" }");
    let decbit = two_hosts("10Mbps", "10ms", 100, "1s", "{ kind = \"decbit\" }");
    let cases = [
        (
            &generic,
            "flows[0].source.window=0",
            "flows[0].source.window",
        ),
        (&generic, "flows[0].source.beta=-1", "flows[0].source.beta"),
        (&generic, "flows[0].source.gain=1.5", "flows[0].source.gain"),
        (
            &decbit,
            "flows[0].source.decrease=0",
            "flows[0].source.decrease",
        ),
        (
            &decbit,
            "flows[0].source.initial_window=9",
            "flows[0].source.initial_window",
        ),
    ];
    for (text, o, path) in cases {
        let scenario = fairgate_core::scenario::parse(text, &[o.to_string()]);
        let e = match scenario {
            Ok(s) => fairgate_core::scenario::build(&s)
                .err()
                .unwrap_or_else(|| panic!("{o} accepted")),
            Err(e) => e,
        };
        assert!(e.path.starts_with(path), "{o}: {e}");
    }
}

#[test]
fn transport_configs_round_trip_through_toml() {
    // Python builders hand the core TOML text; each transport kind loads from its own
    // serialisation, and its config serialises back to an equal source.
    let sources = [
        "{ kind = \"tcp\", cc = \"sack\", ecn = true, rate_cap = \"5Mbps\", handshake = true, delayed_ack = true, app = { kind = \"requests\", count = 3, size = { dist = \"exponential\", mean = 5000 }, gap = { dist = \"exponential\", mean = 0.2 } } }",
        "{ kind = \"generic\", window = 3, beta = 3.0 }",
        "{ kind = \"decbit\", max_window = 8 }",
    ];
    for source in sources {
        let text = two_hosts("10Mbps", "10ms", 100, "5s", source);
        let scenario = fairgate_core::scenario::parse(&text, &[]).unwrap();
        let again = toml::to_string(&scenario).unwrap();
        let from_json =
            fairgate_core::scenario::parse(&again, &[]).unwrap_or_else(|e| panic!("{e}"));
        let spec = &scenario.flows[0].source;
        let reloaded: fairgate_core::traffic::SourceSpec = toml::Value::try_from(spec)
            .unwrap()
            .try_into()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(format!("{reloaded:?}"), format!("{spec:?}"), "{source}");
        let mut a = fairgate_core::scenario::build(&scenario).unwrap();
        let mut b = fairgate_core::scenario::build(&from_json).unwrap();
        a.run();
        b.run();
        assert_conserved(&a);
        let key = |s: &fairgate_core::Simulation| {
            let f = &s.flow_stats()[0];
            (
                f.goodput_bytes,
                f.offered_pkts,
                f.completed_at,
                s.events_processed(),
            )
        };
        assert_eq!(key(&a), key(&b), "{source}");
        assert!(a.flow_stats()[0].goodput_bytes > 0, "{source}");
    }
}
