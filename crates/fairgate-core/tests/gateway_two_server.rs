//! The two-server gateway [Vaidyanathan99, §4.3] on the T3 spoofing set-up (far receive
//! buffer 200 KB): the satellite throughput never exceeds μ × the mean served packet size, a
//! slow server starves the RHS, a fast one moves the buffering back to the TCP layer.

use fairgate_core::engine::secs;
use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;

mod gateway_support;
use gateway_support::trace;

const SPOOFING: &str = include_str!("../../../scenarios/spoofing_gateway.toml");

struct Measured {
    sim: Simulation,
    /// Satellite link, wire bits per second from 10 s to 60 s.
    sat_rate: f64,
    served_pkts: f64,
    served_bytes: f64,
}

fn run(mu: Option<f64>) -> Measured {
    let mut o = vec!["links[1].rate=\"44.736Mbps\"".to_string()];
    if let Some(mu) = mu {
        o.push(format!("nodes[1].gateway.two_server={{rate={mu}}}"));
    }
    let scenario = parse(SPOOFING, &o).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run_until(secs(10.0));
    let sat = |s: &Simulation| {
        let port = s.ports().iter().find(|p| p.name == "gw1->gw2").unwrap();
        port.stats.departures_bytes
    };
    let (before, served_before) = (sat(&sim), served(&sim));
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    let (after, served_after) = (sat(&sim), served(&sim));
    Measured {
        sat_rate: (after - before) as f64 * 8.0 / 50.0,
        served_pkts: served_after.0 - served_before.0,
        served_bytes: served_after.1 - served_before.1,
        sim,
    }
}

fn last(sim: &Simulation, name: &str) -> f64 {
    trace(sim, name).last().map_or(0.0, |s| s.1)
}

fn served(sim: &Simulation) -> (f64, f64) {
    (
        last(sim, "gw1.ip_served_pkts"),
        last(sim, "gw1.ip_served_bytes"),
    )
}

fn mean_after(sim: &Simulation, name: &str, from: f64) -> f64 {
    let v: Vec<f64> = trace(sim, name)
        .into_iter()
        .filter(|s| s.0 >= from)
        .map(|s| s.1)
        .collect();
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn a_slow_server_caps_throughput_at_mu_times_the_served_size_and_starves_the_rhs() {
    let mu = 300.0;
    let m = run(Some(mu));
    let mean_size_bits = m.served_bytes * 8.0 / m.served_pkts;
    let cap = mu * mean_size_bits;
    eprintln!(
        "mu {mu}: satellite {:.3} Mb/s, cap mu x mean served size {:.3} Mb/s ({:.0} bits/packet)",
        m.sat_rate / 1e6,
        cap / 1e6,
        mean_size_bits
    );
    assert!(m.sat_rate <= cap * 1.01, "{} above {cap}", m.sat_rate);
    assert!(
        m.served_pkts / 50.0 <= mu * 1.0001,
        "the server served above its rate"
    );
    let send_buffer = mean_after(&m.sim, "gw1.send_buffer", 10.0);
    assert!(
        send_buffer < 5_000.0,
        "RHS send buffer {send_buffer} B: not starved"
    );
    let ip = mean_after(&m.sim, "gw1.ip_buffer", 10.0);
    eprintln!("mu {mu}: mean RHS send buffer {send_buffer:.0} B, mean IP buffer {ip:.0} B");
    assert!(ip > 0.0, "nothing waits at IP");
}

#[test]
fn a_fast_server_moves_the_buffering_back_to_the_tcp_layer() {
    let vanilla = run(None);
    let fast = run(Some(20_000.0));
    eprintln!(
        "vanilla {:.3} Mb/s, mu 20000 {:.3} Mb/s",
        vanilla.sat_rate / 1e6,
        fast.sat_rate / 1e6
    );
    assert!((fast.sat_rate - vanilla.sat_rate).abs() < 0.02 * vanilla.sat_rate);
    let tcp = mean_after(&fast.sim, "gw1.send_buffer", 10.0);
    let ip = mean_after(&fast.sim, "gw1.ip_buffer", 10.0);
    assert!(tcp > 1e6 && ip < 10_000.0, "TCP {tcp} B, IP {ip} B");
    let slow = run(Some(300.0));
    let total = |m: &Measured| {
        mean_after(&m.sim, "gw1.send_buffer", 10.0) + mean_after(&m.sim, "gw1.ip_buffer", 10.0)
    };
    assert!(
        total(&slow) * 10.0 < total(&fast),
        "total buffering did not fall tenfold"
    );
}
