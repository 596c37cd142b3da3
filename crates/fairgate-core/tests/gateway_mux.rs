//! Several end-to-end connections multiplexed onto one satellite-leg connection
//! (`scenarios/satellite_mux.toml`): every connection gets its bytes once, in order, through
//! the far gateway's demultiplexing; the byte accounting holds per connection at both
//! gateways and across them; a lossy leg repairs every connection; a connection closing
//! frees its place while the others continue; runs are deterministic; bad input is refused.

use fairgate_core::engine::{secs, to_secs};
use fairgate_core::scenario::{build, parse};
use fairgate_core::Simulation;

mod gateway_support;
use gateway_support::trace_all;

const MUX: &str = include_str!("../../../scenarios/satellite_mux.toml");
const FILE: u64 = 1_500_000;
const SHORT: u64 = 30_000;

fn sim(overrides: &[&str]) -> Simulation {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(MUX, &overrides).unwrap_or_else(|e| panic!("{e}"));
    build(&scenario).unwrap_or_else(|e| panic!("{e}"))
}

fn conserved(sim: &Simulation) {
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
}

/// Samples of trace `name` filed under `flow`: (time, value).
fn series(sim: &Simulation, name: &str, flow: u32) -> Vec<(f64, f64)> {
    let all = trace_all(sim, name).into_iter();
    all.filter(|s| s.1 == flow).map(|s| (s.0, s.2)).collect()
}

fn last(samples: &[(f64, f64)]) -> f64 {
    samples.last().map_or(f64::NAN, |s| s.1)
}

fn sizes() -> [u64; 4] {
    [FILE, FILE, FILE, SHORT]
}

#[test]
fn four_connections_on_one_leg_each_get_every_byte_once() {
    let mut s = sim(&[]);
    s.run();
    conserved(&s);
    for (flow, size) in sizes().into_iter().enumerate() {
        assert_eq!(s.flow_stats()[flow].goodput_bytes, size, "flow {flow}");
        let relayed1 = last(&series(&s, "gw1.relayed_bytes", flow as u32));
        let relayed2 = last(&series(&s, "gw2.relayed_bytes", flow as u32));
        assert_eq!(
            (relayed1, relayed2),
            (size as f64, size as f64),
            "flow {flow}"
        );
    }
    // One leg, under the first flow, carried all four connections.
    let connections = series(&s, "gw1.leg0.connections", 0);
    let most = connections.iter().map(|c| c.1).fold(0.0, f64::max);
    assert_eq!(most, 4.0);
    assert!(trace_all(&s, "gw1.leg1.connections").is_empty());
    // No connection has a satellite-leg sender of its own: the leg's cwnd is the only one.
    assert!(last(&series(&s, "gw1.leg0.cwnd", 0)) > 0.0);
    assert_eq!(last(&series(&s, "gw1.rhs_cwnd", 1)), 0.0);
    // The satellite link carried the payload plus one 8 B header per record.
    let records = last(&series(&s, "gw1.leg0.records", 0));
    let payload: u64 = sizes().iter().sum();
    assert!(
        records > 4.0 * 2.0 && records < payload as f64 / 500.0,
        "{records}"
    );
}

#[test]
fn bytes_delivered_over_the_leg_reach_the_far_gateway_per_connection() {
    let mut s = sim(&[]);
    s.run_until(secs(20.0));
    conserved(&s);
    for flow in 0..4u32 {
        let relayed1 = series(&s, "gw1.relayed_bytes", flow);
        let held1 = series(&s, "gw1.pep_buffer", flow);
        let relayed2 = series(&s, "gw2.relayed_bytes", flow);
        let held2 = series(&s, "gw2.pep_buffer", flow);
        assert!(relayed1.len() > 10, "flow {flow}: {relayed1:?}");
        for (((&(t, r1), &(_, h1)), &(_, r2)), &(_, h2)) in
            relayed1.iter().zip(&held1).zip(&relayed2).zip(&held2)
        {
            // What the leg acknowledged for this connection has reached gateway 2 (the ACK
            // may still be on its way back), and gateway 2 holds what it has not delivered.
            let delivered_by_leg = r1 - h1;
            assert!(
                r2 >= delivered_by_leg,
                "flow {flow} at {t} s: {r2} < {delivered_by_leg}"
            );
            assert!(h2 <= r2, "flow {flow} at {t} s");
        }
    }
}

#[test]
fn a_lossy_leg_repairs_every_connection() {
    // One window for all four connections: smaller files than the lossless runs'.
    let file = "flows[0].source.app={kind=\"file\",size=300000}";
    let mut s = sim(&["links[1].loss=0.01", "links[1].rate=\"10Mbps\"", file]);
    s.run();
    conserved(&s);
    for (flow, size) in [300_000, 300_000, 300_000, SHORT].into_iter().enumerate() {
        assert_eq!(s.flow_stats()[flow].goodput_bytes, size, "flow {flow}");
    }
    let leg_retransmits = last(&series(&s, "gw1.leg0.retransmits", 0));
    assert!(leg_retransmits > 0.0, "no retransmission on the leg");
    // The connections' own leg counters stay at zero: the leg's repairs are the leg's.
    assert_eq!(last(&series(&s, "gw1.leg_retransmits", 2)), 0.0);
}

#[test]
fn a_closing_connection_leaves_the_leg_while_the_others_continue() {
    let mut s = sim(&[]);
    s.run_until(secs(40.0));
    conserved(&s);
    let short = &s.flow_stats()[3];
    assert_eq!(short.goodput_bytes, SHORT);
    let short_done = to_secs(short.last_delivery);
    let connections = series(&s, "gw1.leg0.connections", 0);
    // Retired at both gateways once closed and delivered: its PEP limit reads NaN (no open
    // connection), its counters stay.
    let (t_left, _) = *connections
        .iter()
        .find(|&&(t, c)| t > 2.0 && c == 3.0)
        .expect("the short connection left the leg");
    assert!(t_left < 15.0, "left at {t_left} s");
    for gw in ["gw1", "gw2"] {
        let limit = series(&s, &format!("{gw}.pep_limit"), 3);
        assert!(limit.last().unwrap().1.is_nan(), "{gw}: {limit:?}");
        assert_eq!(
            last(&series(&s, &format!("{gw}.relayed_bytes"), 3)),
            SHORT as f64
        );
    }
    // The long transfers kept going after it.
    let relayed = series(&s, "gw2.relayed_bytes", 0);
    let after: Vec<_> = relayed.iter().filter(|r| r.0 > short_done).collect();
    assert!(after.first().unwrap().1 < after.last().unwrap().1);
}

#[test]
fn a_connection_opening_on_an_open_leg_waits_for_no_satellite_round_trip() {
    let run = |multiplex: bool| {
        // A small first file opens the leg; the short file opens at 2 s.
        let o = [
            "simulation.duration=\"10s\"",
            "flows[0].count=1",
            "flows[0].source.app={kind=\"file\",size=10000}",
        ];
        let mut s = if multiplex { sim(&o) } else { unsplit(&o) };
        s.run();
        conserved(&s);
        to_secs(
            s.flow_stats()[1]
                .completed_at
                .expect("the short file completes"),
        )
    };
    let (muxed, own) = (run(true), run(false));
    // Its own RHS does a handshake over the satellite (about 0.5 s); the open leg does not.
    assert!(own - muxed > 0.45, "own RHS {own} s, multiplexed {muxed} s");
}

/// The scenario without multiplexing (each connection its own RHS).
fn unsplit(overrides: &[&str]) -> Simulation {
    let text = MUX.replace(", multiplex = { peer = \"gw2\", legs = 1 }", "");
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(&text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    build(&scenario).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn many_connections_on_a_few_legs() {
    let mut s = sim(&[
        "flows[0].count=24",
        "flows[0].source.app={kind=\"file\",size=60000}",
        "nodes[1].gateway.multiplex.legs=5",
        "links[1].rate=\"10Mbps\"",
        "simulation.duration=\"20s\"",
    ]);
    s.run();
    conserved(&s);
    for flow in 0..24 {
        assert_eq!(s.flow_stats()[flow].goodput_bytes, 60_000, "flow {flow}");
    }
    // Connection k rides leg k mod 5: legs 0-4 exist, each led by its first connection's flow.
    for leg in 0..5u32 {
        let records = series(&s, &format!("gw1.leg{leg}.records"), leg);
        assert!(last(&records) > 0.0, "leg {leg}");
    }
    assert!(trace_all(&s, "gw1.leg5.records").is_empty());
}

#[test]
fn a_bounded_send_buffer_holds_for_each_connection_on_the_leg() {
    let limit = 100_000.0;
    let mut s = sim(&[
        "nodes[1].gateway.send_buffer=100000",
        "simulation.duration=\"20s\"",
    ]);
    s.run();
    conserved(&s);
    for flow in 0..3u32 {
        let unsent = series(&s, "gw1.send_buffer", flow);
        let window = series(&s, "gw1.advertised_window", flow);
        assert!(
            unsent.iter().any(|u| u.1 > 0.5 * limit),
            "flow {flow}: never filled"
        );
        for ((t, b), (_, w)) in unsent.iter().zip(&window) {
            assert!(*b <= limit, "flow {flow}: {b} B unsent at {t} s");
            assert!(
                *w <= (limit - b).min(65_535.0),
                "flow {flow}: window {w} at {t} s"
            );
        }
    }
}

#[test]
fn an_http_population_rides_one_leg() {
    let http = "flows[0].source={kind=\"http\",connections=6,ramp_batch=6,think=\"1s\",\
                page_size={dist=\"uniform\",min=20000,max=60000}}";
    let mut s = sim(&[
        "flows[0].count=1",
        http,
        "links[1].rate=\"10Mbps\"",
        "simulation.duration=\"30s\"",
    ]);
    s.run();
    conserved(&s);
    // Every slot fetched several pages, each on a connection of its own (`conn`), all on the
    // one leg and each demultiplexed to its own connection at gateway 2; the FIN on each
    // page's last segment retires the connection at both gateways, so the leg carries at
    // most one per slot.
    let pages = s.flow_stats()[0].goodput_bytes;
    assert!(pages > 6 * 3 * 20_000, "{pages} B");
    let connections = series(&s, "gw1.leg0.connections", 0);
    let most = connections.iter().map(|c| c.1).fold(0.0, f64::max);
    assert!((1.0..=6.0).contains(&most), "{most}");
    let at_end = |name: &str| last(&series(&s, name, 0));
    for gw in ["gw1", "gw2"] {
        let opened = at_end(&format!("{gw}.splits_opened"));
        let retired = at_end(&format!("{gw}.splits_retired"));
        assert!(
            opened > 6.0 * 3.0 && retired >= opened - 6.0,
            "{gw}: {opened} {retired}"
        );
    }
    let (relayed1, held1) = (at_end("gw1.relayed_bytes"), at_end("gw1.pep_buffer"));
    let relayed2 = at_end("gw2.relayed_bytes");
    assert!(
        relayed2 >= relayed1 - held1 && relayed2 <= relayed1,
        "{relayed1} {held1} {relayed2}"
    );
    assert!(relayed2 >= pages as f64, "{relayed2} < {pages}");
}

#[test]
fn same_seed_same_bytes() {
    let run = || {
        let mut s = sim(&["links[1].loss=0.01", "simulation.duration=\"15s\""]);
        s.run();
        let traces = trace_all(&s, "gw2.relayed_bytes");
        let goodput: Vec<u64> = s.flow_stats().iter().map(|f| f.goodput_bytes).collect();
        (traces, goodput)
    };
    assert_eq!(run(), run());
}

#[test]
fn a_peer_that_is_not_a_gateway_or_no_legs_is_refused_with_its_path() {
    let err_path = |o: &str| {
        let o = vec![o.to_string()];
        parse(MUX, &o)
            .and_then(|s| build(&s).map(|_| ()))
            .unwrap_err()
            .path
    };
    assert_eq!(
        err_path("nodes[1].gateway.multiplex.peer=\"client\""),
        "nodes[1].gateway.multiplex.peer"
    );
    assert_eq!(
        err_path("nodes[1].gateway.multiplex.peer=\"gw1\""),
        "nodes[1].gateway.multiplex.peer"
    );
    assert_eq!(
        err_path("nodes[1].gateway.multiplex.legs=0"),
        "nodes[1].gateway.multiplex.legs"
    );
    assert_eq!(
        err_path("nodes[1].gateway.multiplex={legs=2}"),
        "nodes[1].gateway.multiplex"
    );
}
