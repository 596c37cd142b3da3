//! Closing split connections: a plain `tcp` flow closed with a FIN is retired at both
//! gateways of a pair (the RHS sends a FIN of its own when no relayed segment carried the
//! flag), and with the two-server model a packet of a retired connection that the IP
//! subsystem serves is routed on, so that the far end point answers it.

use fairgate_core::Simulation;

mod gateway_support;
use gateway_support::{run, trace};

const SPOOFING: &str = include_str!("../../../scenarios/spoofing_gateway.toml");

fn last(sim: &Simulation, name: &str) -> f64 {
    trace(sim, name).last().map_or(f64::NAN, |s| s.1)
}

/// The spoofing pair with one file of `size` bytes over a handshake.
fn file_through_the_pair(size: u64) -> Simulation {
    let app = format!("flows[0].source.app={{kind=\"file\",size={size}}}");
    run(
        SPOOFING,
        &[
            "flows[0].source.handshake=true",
            &app,
            "simulation.duration=\"20s\"",
        ],
    )
}

#[test]
fn a_tcp_flow_closed_with_a_fin_is_retired_at_both_gateways() {
    // 1,000 B: gateway 1 has relayed the one segment before the source's FIN arrives, so its
    // RHS closes with a FIN of its own; 300,000 B: the FIN flag rides the last relayed segment.
    for size in [1_000, 300_000] {
        let sim = file_through_the_pair(size);
        assert_eq!(sim.flow_stats()[0].goodput_bytes, size);
        for gw in ["gw1", "gw2"] {
            let (opened, retired) = (
                last(&sim, &format!("{gw}.splits_opened")),
                last(&sim, &format!("{gw}.splits_retired")),
            );
            assert_eq!((opened, retired), (1.0, 1.0), "{gw}, {size} B");
            assert_eq!(last(&sim, &format!("{gw}.splits_abandoned")), 0.0);
        }
        assert!(!sim.flow_stats()[0].aborted);
    }
}

#[test]
fn without_a_handshake_a_tcp_flow_is_never_closed() {
    let sim = run(
        SPOOFING,
        &[
            "flows[0].source.app={kind=\"file\",size=1000}",
            "simulation.duration=\"20s\"",
        ],
    );
    assert_eq!(sim.flow_stats()[0].goodput_bytes, 1_000);
    for gw in ["gw1", "gw2"] {
        assert_eq!(last(&sim, &format!("{gw}.splits_retired")), 0.0, "{gw}");
    }
}

#[test]
fn the_two_server_gateway_routes_packets_of_retired_connections_on() {
    // 20% loss toward the servers: some source's FIN-ACK from gateway 1 is lost, and its FIN
    // retransmission is served by the IP subsystem after the split was retired. The TCP layer
    // holds no connection for it and routes it on: the client answers (C1 and C3 share one
    // sequence space) and the source closes instead of retransmitting until it aborts.
    let sim = run(
        SPOOFING,
        &[
            "flows[0].count=20",
            "flows[0].source.handshake=true",
            "flows[0].source.app={kind=\"file\",size=1000}",
            "links[0].reverse.loss=0.2",
            "nodes[1].gateway.two_server={rate=2000}",
            "simulation.duration=\"120s\"",
        ],
    );
    let stale = last(&sim, "gw1.tcp_stale_pkts");
    let retired = last(&sim, "gw1.splits_retired");
    eprintln!("stale {stale}; {retired} retired");
    assert!(stale > 0.0, "{stale}");
    assert_eq!(retired, 20.0);
    for (flow, stats) in sim.flow_stats().iter().enumerate().take(20) {
        assert_eq!(stats.goodput_bytes, 1_000, "flow {flow}");
        assert!(
            !stats.aborted && stats.completed_at.is_some(),
            "flow {flow}"
        );
    }
}
