//! Conservation per connection and per class: a web or http connection's byte accounting
//! closes when it is retired (and bounds acknowledged and delivered by sent while open), a
//! corrupted connection is reported by flow and connection, runs with losses stay valid, and
//! the per-flow packet law summed over each class holds.

mod workload_support;

use fairgate_core::results::collect;
use fairgate_core::scenario::{build, parse};
use std::collections::BTreeMap;

use workload_support::{run, u64s};

/// `flows` share a server -> r -> client path whose bottleneck runs `queue`.
fn scenario(queue: &str, duration: &str, flows: &str) -> String {
    format!(
        r#"
name = "conn"
[simulation]
duration = "{duration}"
seed = 11
[[nodes]]
name = "server"
[[nodes]]
name = "r"
kind = "router"
[[nodes]]
name = "client"
[[links]]
from = "server"
to = "r"
rate = "100Mbps"
delay = "10ms"
[[links]]
from = "r"
to = "client"
rate = "2Mbps"
delay = "20ms"
queue = {queue}
{flows}
"#
    )
}

const WEB: &str = r#"
[[flows]]
name = "web"
src = "server"
dst = "client"
source = { kind = "web", sessions = 30, start_window = "5s" }
"#;

const HTTP: &str = r#"
[[flows]]
name = "http"
src = "server"
dst = "client"
source = { kind = "http", connections = 20, page_size = { dist = "uniform", min = 20000, max = 60000 } }
"#;

const BULK_AND_CBR: &str = r#"
[[flows]]
name = "ftp"
src = "server"
dst = "client"
source = { kind = "tcp", cc = "newreno" }
[[flows]]
name = "cbr"
src = "server"
dst = "client"
source = { kind = "cbr", rate = "500kbps", size = 500 }
"#;

#[test]
fn corrupted_connections_are_named_and_only_their_law_breaks() {
    let text = scenario(r#"{ kind = "test_corrupt", at = 40 }"#, "30s", WEB);
    let scenario = parse(&text, &[]).unwrap();
    let mut sim = build(&scenario).unwrap();
    sim.run();
    // The link is duplex: each direction's discipline corrupts one packet, a response's
    // on the way to the client and a request's on the way to the server.
    let violations = sim.conservation_violations();
    assert_eq!(violations.len(), 2, "{violations:?}");
    for (v, direction) in violations.iter().zip(["response", "request"]) {
        assert!(v.starts_with("flow 0, connection "), "{v}");
        assert!(v.contains(&format!(", {direction}: ")), "{v}");
        assert!(v.contains("delivered in order 10737"), "{v}");
    }
    let results = collect(&mut sim, "conn", 11);
    assert_eq!(results.summary["valid"], false);
    assert_eq!(results.summary["conservation"]["ok"], false);
}

#[test]
fn web_and_http_runs_with_losses_keep_every_connection_law() {
    for flows in [WEB, HTTP] {
        let r = run(&scenario(r#"{ kind = "fifo", limit = 8 }"#, "60s", flows));
        let dropped: u64 = u64s(&r.flows, "dropped_pkts").iter().sum();
        assert!(dropped > 10, "too few losses to matter: {dropped}");
        let retransmits: u64 = u64s(&r.transfers, "retransmits").iter().sum();
        assert!(retransmits > 0, "no connection recovered a loss");
        assert_eq!(r.summary["valid"], true);
    }
}

#[test]
fn the_flow_law_summed_over_each_class_holds() {
    let flows = format!("{WEB}{HTTP}{BULK_AND_CBR}");
    let text = scenario(r#"{ kind = "fifo", limit = 10 }"#, "40s", &flows);
    let scenario = parse(&text, &[]).unwrap();
    let mut sim = build(&scenario).unwrap();
    sim.run();
    assert!(sim.conservation_violations().is_empty());
    let inside = sim.in_network_by_flow();
    let mut by_class: BTreeMap<String, [u64; 4]> = BTreeMap::new();
    for ((info, s), held) in sim.flows().iter().zip(sim.flow_stats()).zip(inside) {
        let sums = by_class.entry(info.kind.clone()).or_default();
        sums[0] += s.offered_pkts;
        sums[1] += s.delivered_pkts;
        sums[2] += s.dropped_total();
        sums[3] += held;
    }
    assert!(by_class.len() >= 4, "{by_class:?}");
    for (class, [offered, delivered, dropped, held]) in &by_class {
        assert!(*offered > 0, "{class}: nothing offered");
        assert_eq!(*offered, delivered + dropped + held, "class {class}");
    }
    let dropped: u64 = by_class.values().map(|s| s[2]).sum();
    assert!(dropped > 0, "the class law must be tested under losses");
}
