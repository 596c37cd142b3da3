//! Split-connection gateways against numbers: the satellite link filled at T1 with a growing
//! send buffer, the T3 throughput bounded by the far receive buffer over the satellite round
//! trip, the delayed SYN-ACK, byte conservation per connection under losses, bounded send
//! buffers, UDP passing through, and bad input.

use fairgate_core::engine::to_secs;
use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;

mod gateway_support;
use gateway_support::trace;

const SPOOFING: &str = include_str!("../../../scenarios/spoofing_gateway.toml");
const SAT_RTT_S: f64 = 0.5;

fn sim(overrides: &[&str]) -> Simulation {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(SPOOFING, &overrides).unwrap_or_else(|e| panic!("{e}"));
    build(&scenario).unwrap_or_else(|e| panic!("{e}"))
}

fn conserved(sim: &Simulation) {
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
}

fn port_bytes(sim: &Simulation, name: &str) -> u64 {
    let port = sim.ports().iter().find(|p| p.name == name).unwrap();
    port.stats.departures_bytes
}

/// Bits per second leaving port `name` between `from` and `to` seconds.
fn rate_between(sim: &mut Simulation, name: &str, from: f64, to: f64) -> f64 {
    sim.run_until(fairgate_core::engine::secs(from));
    let before = port_bytes(sim, name);
    sim.run_until(fairgate_core::engine::secs(to));
    (port_bytes(sim, name) - before) as f64 * 8.0 / (to - from)
}

fn value_at(samples: &[(f64, f64)], time: f64) -> f64 {
    samples
        .iter()
        .rev()
        .find(|(t, _)| *t <= time + 1e-9)
        .map_or(f64::NAN, |s| s.1)
}

#[test]
fn t1_satellite_link_is_full_and_the_send_buffer_grows_without_bound() {
    let mut s = sim(&[]);
    let rate = rate_between(&mut s, "gw1->gw2", 20.0, 60.0);
    let t1 = 1_544_000.0;
    assert!(
        rate > 0.99 * t1,
        "satellite link carries {rate} b/s of {t1}"
    );
    conserved(&s);
    let buffer = trace(&s, "gw1.send_buffer");
    let (b20, b40, b60) = (
        value_at(&buffer, 20.0),
        value_at(&buffer, 40.0),
        value_at(&buffer, 60.0),
    );
    // The server fills gateway 1 at ~10 Mb/s while only 1.544 Mb/s leaves.
    assert!(b20 < b40 && b40 < b60, "send buffer {b20} {b40} {b60}");
    let growth = (b60 - b40) * 8.0 / 20.0;
    assert!(growth > 7e6, "send buffer grows at {growth} b/s");
    let cwnd = trace(&s, "gw1.rhs_cwnd");
    assert!(value_at(&cwnd, 60.0) > 100_000.0, "RHS cwnd {cwnd:?}");
}

fn t3_throughput(rwnd: u64) -> (f64, f64) {
    let rwnd_o = format!("nodes[2].gateway.lhs.rwnd={rwnd}");
    let mut s = sim(&["links[1].rate=\"44.736Mbps\"", &rwnd_o]);
    let wire = rate_between(&mut s, "gw1->gw2", 30.0, 60.0);
    conserved(&s);
    let payload = wire * 1000.0 / 1040.0;
    (payload, rwnd as f64 * 8.0 / SAT_RTT_S)
}

#[test]
fn t3_throughput_is_bounded_by_the_far_receive_buffer_over_the_satellite_rtt() {
    for rwnd in [200_000, 400_000] {
        let (measured, bound) = t3_throughput(rwnd);
        eprintln!(
            "T3, far receive buffer {rwnd} B: measured {:.3} Mb/s, analytic bound {:.3} Mb/s",
            measured / 1e6,
            bound / 1e6
        );
        assert!(
            measured <= bound * 1.001,
            "{measured} above the bound {bound}"
        );
        assert!(
            measured > 0.9 * bound,
            "{measured} far below the bound {bound}"
        );
    }
}

/// Completion time of a one-segment file, and when gateway 1 answered the SYN.
fn small_file_completion(extra: &[&str]) -> f64 {
    let mut o = vec!["flows[0].source.app={kind=\"file\",size=1000}"];
    o.extend_from_slice(extra);
    let mut s = sim(&o);
    s.run_until(fairgate_core::engine::secs(10.0));
    conserved(&s);
    to_secs(s.flow_stats()[0].completed_at.expect("the file completes"))
}

#[test]
fn delayed_syn_ack_costs_one_satellite_round_trip_and_only_with_a_handshake() {
    let hs = "flows[0].source.handshake=true";
    let rhs_hs = |who: &str, mode: &str| format!("nodes[{who}].gateway.syn_ack=\"{mode}\"");
    let at_once =
        small_file_completion(&[hs, &rhs_hs("1", "immediate"), &rhs_hs("2", "immediate")]);
    let delayed = small_file_completion(&[
        hs,
        &rhs_hs("1", "after_far_side"),
        &rhs_hs("2", "immediate"),
    ]);
    let extra = delayed - at_once;
    // One satellite round trip plus the serialisation of a SYN and a SYN-ACK (40 B each).
    let serialisation = 2.0 * 40.0 * 8.0 / 1_544_000.0;
    assert!(
        (extra - SAT_RTT_S - serialisation).abs() < 1e-3,
        "extra set-up delay {extra} s"
    );
    let no_hs_a = small_file_completion(&[&rhs_hs("1", "immediate")]);
    let no_hs_b = small_file_completion(&[&rhs_hs("1", "after_far_side")]);
    assert_eq!(
        no_hs_a, no_hs_b,
        "without a handshake the option changes nothing"
    );
}

/// Bytes the client has taken in order (the end-to-end goodput).
fn client_goodput(sim: &Simulation) -> u64 {
    sim.flow_stats()[0].goodput_bytes
}

#[test]
fn no_acknowledged_byte_is_lost_under_receive_queue_drops_and_satellite_losses() {
    let size = 400_000u64;
    let file = format!("flows[0].source.app={{kind=\"file\",size={size}}}");
    let mut s = sim(&[
        &file,
        // A short queue toward gateway 1 (drops before the PEP) and a lossy satellite leg.
        "links[0].queue={kind=\"fifo\",limit=5}",
        "flows[0].source.initial_window=20",
        "links[1].loss=0.01",
        "links[1].rate=\"10Mbps\"",
    ]);
    s.run();
    conserved(&s);
    let stats = &s.flow_stats()[0];
    assert!(
        stats.dropped_total() > 0,
        "the receive queue dropped nothing"
    );
    assert_eq!(client_goodput(&s), size, "the client got every byte once");
    let retx = trace(&s, "gw1.leg_retransmits");
    assert!(
        value_at(&retx, 60.0) > 0.0,
        "no satellite-leg retransmission"
    );
    assert!(stats.retransmits > 0, "no terrestrial retransmission");
    // The server's transfer completed when gateway 1 had acknowledged it, before the
    // client had it all.
    let (done, last) = (
        to_secs(stats.completed_at.unwrap()),
        to_secs(stats.last_delivery),
    );
    assert!(
        done < last,
        "server done at {done} s, last delivery at {last} s"
    );
    let relayed = trace(&s, "gw1.relayed_bytes");
    assert_eq!(value_at(&relayed, 60.0), size as f64);
}

#[test]
fn a_bounded_send_buffer_holds_and_the_window_never_exceeds_its_free_space() {
    let limit = 100_000.0;
    let mut s = sim(&["nodes[1].gateway.send_buffer=100000"]);
    let rate = rate_between(&mut s, "gw1->gw2", 20.0, 60.0);
    conserved(&s);
    assert!(
        rate > 0.99 * 1_544_000.0,
        "satellite link carries {rate} b/s"
    );
    let unsent = trace(&s, "gw1.send_buffer");
    let window = trace(&s, "gw1.advertised_window");
    assert!(unsent.len() > 100);
    for ((t, b), (_, w)) in unsent.iter().zip(&window) {
        assert!(*b <= limit, "send buffer {b} B above its limit at {t} s");
        assert!(
            *w <= (limit - b).min(65_535.0),
            "window {w} with {b} B held at {t} s"
        );
    }
    assert!(
        value_at(&unsent, 60.0) > 0.5 * limit,
        "the buffer never filled"
    );
}

#[test]
fn a_flush_period_limits_the_lhs_window() {
    // 64 KB per 100 ms flush: the server is held to ~5.2 Mb/s of payload at most.
    let mut s = sim(&[
        "nodes[1].gateway.flush_period=\"100ms\"",
        "links[1].rate=\"44.736Mbps\"",
    ]);
    let rate = rate_between(&mut s, "server->gw1", 10.0, 30.0);
    conserved(&s);
    let cap = 65_535.0 * 8.0 / 0.1 * 1040.0 / 1000.0;
    assert!(rate <= cap * 1.01, "server sends {rate} b/s, cap {cap}");
    assert!(rate > 0.5 * cap, "server sends {rate} b/s, cap {cap}");
}

#[test]
fn udp_crosses_a_gateway_untouched() {
    let mut s = sim(&[
        "flows[0].source={kind=\"cbr\",rate=\"1Mbps\",size=1000}",
        "links[1].rate=\"10Mbps\"",
    ]);
    s.run();
    conserved(&s);
    let stats = &s.flow_stats()[0];
    assert!(stats.delivered_pkts > 7000);
    // Each packet is delivered once, at the client: none was taken over by a gateway.
    let in_network = s.in_network_by_flow()[0];
    assert_eq!(stats.offered_pkts, stats.delivered_pkts + in_network);
    assert!(trace(&s, "gw1.pep_buffer").is_empty());
}

#[test]
fn gateway_options_on_another_node_kind_are_refused_with_their_path() {
    let o = vec!["nodes[0].gateway={send_buffer=1000}".to_string()];
    let err = parse(SPOOFING, &o)
        .and_then(|s| build(&s).map(|_| ()))
        .unwrap_err();
    assert_eq!(err.path, "nodes[0].gateway");
    let o = vec!["nodes[1].gateway.rhs.initial_window=0".to_string()];
    let err = parse(SPOOFING, &o)
        .and_then(|s| build(&s).map(|_| ()))
        .unwrap_err();
    assert_eq!(err.path, "nodes[1].gateway.rhs.initial_window");
    let o = vec!["nodes[1].gateway.send_buffer=0".to_string()];
    let err = parse(SPOOFING, &o)
        .and_then(|s| build(&s).map(|_| ()))
        .unwrap_err();
    assert_eq!(err.path, "nodes[1].gateway.send_buffer");
}

#[test]
fn same_seed_same_bytes() {
    let run = || {
        let mut s = sim(&["links[1].loss=0.01", "simulation.duration=\"20s\""]);
        s.run();
        (trace(&s, "gw1.pep_buffer"), s.flow_stats()[0].goodput_bytes)
    };
    assert_eq!(run(), run());
}

#[test]
fn per_packet_satellite_delay_never_reorders_a_connection() {
    let delay =
        "links[1].delay={dist=\"uniform\",min=\"150ms\",max=\"200ms\",per=\"packet_in_order\"}";
    let mut s = sim(&[delay, "links[1].rate=\"10Mbps\""]);
    s.run_until(fairgate_core::engine::secs(20.0));
    conserved(&s);
    // No reordering on the satellite leg: gateway 1 never retransmits and gateway 2 holds no
    // out-of-order data, although delays are drawn per packet.
    assert_eq!(value_at(&trace(&s, "gw1.leg_retransmits"), 20.0), 0.0);
    let relayed = value_at(&trace(&s, "gw2.relayed_bytes"), 20.0);
    assert!(relayed > 1e6, "gateway 2 relayed {relayed} B");
    let reordering = "links[1].delay={dist=\"uniform\",min=\"150ms\",max=\"200ms\",per=\"packet\"}";
    let mut s = sim(&[reordering, "links[1].rate=\"10Mbps\""]);
    s.run_until(fairgate_core::engine::secs(20.0));
    conserved(&s);
    assert!(
        value_at(&trace(&s, "gw1.leg_retransmits"), 20.0) > 0.0,
        "per-packet draws reorder"
    );
}
