//! Split-connection gateways against numbers: the satellite link filled at T1 with a growing
//! send buffer, the T3 throughput bounded by the far receive buffer over the satellite round
//! trip, the delayed SYN-ACK, byte conservation per connection under losses, bounded send
//! buffers, UDP passing through, and bad input.

use fairgate_core::engine::to_secs;
use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;

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

/// The samples of trace `name` (time, value) of flow 0.
fn trace(sim: &Simulation, name: &str) -> Vec<(f64, f64)> {
    let t = sim.traces();
    let Some(var) = t.names.iter().position(|n| n == name) else {
        return Vec::new();
    };
    (0..t.time.len())
        .filter(|&i| t.var[i] as usize == var && t.owner[i] == 0)
        .map(|i| (t.time[i], t.value[i]))
        .collect()
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
    assert!(rate > 0.99 * t1, "satellite link carries {rate} b/s of {t1}");
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
        assert!(measured <= bound * 1.001, "{measured} above the bound {bound}");
        assert!(measured > 0.9 * bound, "{measured} far below the bound {bound}");
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
    let at_once = small_file_completion(&[hs, &rhs_hs("1", "immediate"), &rhs_hs("2", "immediate")]);
    let delayed = small_file_completion(&[hs, &rhs_hs("1", "after_far_side"), &rhs_hs("2", "immediate")]);
    let extra = delayed - at_once;
    // One satellite round trip plus the serialisation of a SYN and a SYN-ACK (40 B each).
    let serialisation = 2.0 * 40.0 * 8.0 / 1_544_000.0;
    assert!(
        (extra - SAT_RTT_S - serialisation).abs() < 1e-3,
        "extra set-up delay {extra} s"
    );
    let no_hs_a = small_file_completion(&[&rhs_hs("1", "immediate")]);
    let no_hs_b = small_file_completion(&[&rhs_hs("1", "after_far_side")]);
    assert_eq!(no_hs_a, no_hs_b, "without a handshake the option changes nothing");
}
