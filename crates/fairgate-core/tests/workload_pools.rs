//! Client and server pools inside one web or HTTP flow: picks spread uniformly over the
//! pools, hosts shown in the transfers table, conservation, determinism, bad pools named by
//! field, and a flow whose pools are its own hosts runs byte for byte as one without pools.

mod workload_support;

use fairgate_core::results::{Column, Results, Table};
use fairgate_core::scenario::parse;
use std::collections::HashMap;

use workload_support::run;

/// A dumbbell of 8 host pairs (s0..s7 serve, d0..d7 fetch) with `source` on flow s0 -> d0.
fn scenario(source: &str, duration: &str) -> String {
    format!(
        r#"
name = "pools"
[simulation]
duration = "{duration}"
seed = 11
[topology]
kind = "dumbbell"
senders = 8
bottleneck = {{ rate = "20Mbps", delay = "10ms", queue = {{ kind = "fifo", limit = 200 }} }}
access = {{ rate = "100Mbps", delay = "1ms" }}
[[flows]]
name = "web"
src = "s0"
dst = "d0"
source = {source}
"#
    )
}

fn web(pools: &str) -> String {
    format!(
        r#"{{ kind = "web", sessions = 64, start_window = "5s", think = {{ dist = "exponential", mean = "1s" }}, tcp = {{ cc = "reno", timestamps = false, delayed_ack = false }} {pools} }}"#
    )
}

fn strings<'a>(t: &'a Table, name: &str) -> Vec<&'a str> {
    match t.column(name) {
        Some(Column::Str(v)) => v.iter().map(String::as_str).collect(),
        Some(Column::Cat { codes, categories }) => codes
            .iter()
            .map(|&c| categories[c as usize].as_str())
            .collect(),
        _ => panic!("{name} is not a text column"),
    }
}

fn counts<'a>(names: &[&'a str]) -> HashMap<&'a str, usize> {
    let mut out = HashMap::new();
    for n in names {
        *out.entry(*n).or_default() += 1;
    }
    out
}

fn everything(r: &Results) -> String {
    format!(
        "{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
        r.summary, r.flows, r.ports, r.queue_series, r.flow_series, r.traces, r.transfers
    )
}

#[test]
fn web_objects_come_from_every_server_to_every_client() {
    let pools =
        r#", servers = { hosts = "s{i}", count = 8 }, clients = { hosts = "d{i}", count = 8 }"#;
    let r = run(&scenario(&web(pools), "40s"));
    let servers = strings(&r.transfers, "server");
    let clients = strings(&r.transfers, "client");
    let (by_server, by_client) = (counts(&servers), counts(&clients));
    assert_eq!(by_server.len(), 8, "{by_server:?}");
    assert_eq!(by_client.len(), 8, "{by_client:?}");
    // Pages pick servers uniformly: each of 8 servers carries 1/8 of the objects, within
    // four standard deviations of the binomial count over pages (2 objects a page).
    let pages = servers.len() as f64 / 2.0;
    let (mean, sd) = (pages / 8.0, (pages * (1.0 / 8.0) * (7.0 / 8.0)).sqrt());
    for (host, n) in &by_server {
        let per_page = *n as f64 / 2.0;
        assert!(
            (per_page - mean).abs() < 4.0 * sd,
            "{host}: {per_page} pages, expected {mean}"
        );
    }
}

#[test]
fn a_session_keeps_its_client_and_a_page_its_server() {
    let pools = r#", servers = ["s1", "s2", "s3"], clients = ["d4", "d5", "d0"]"#;
    let r = run(&scenario(&web(pools), "30s"));
    let t = &r.transfers;
    let (servers, clients) = (strings(t, "server"), strings(t, "client"));
    let session = match t.column("session") {
        Some(Column::U64(v)) => v.clone(),
        _ => panic!("no session column"),
    };
    let page = match t.column("page") {
        Some(Column::U64(v)) => v.clone(),
        _ => panic!("no page column"),
    };
    let mut client_of = HashMap::new();
    let mut server_of = HashMap::new();
    for i in 0..t.rows() {
        assert!(["s1", "s2", "s3"].contains(&servers[i]), "{}", servers[i]);
        assert!(["d4", "d5", "d0"].contains(&clients[i]), "{}", clients[i]);
        let c = *client_of.entry(session[i]).or_insert(clients[i]);
        assert_eq!(c, clients[i], "session {} changed client", session[i]);
        let s = *server_of.entry((session[i], page[i])).or_insert(servers[i]);
        assert_eq!(
            s, servers[i],
            "a page of session {} used two servers",
            session[i]
        );
    }
    assert!(t.rows() > 100, "only {} objects", t.rows());
}

#[test]
fn http_slots_spread_over_clients_and_connections_over_servers() {
    let source = r#"{ kind = "http", connections = 40, page_size = { dist = "uniform", min = 20000, max = 40000 }, think = "1s", ramp_batch = 40, servers = { hosts = "s{i}", count = 4 }, clients = ["d1", "d2", "d3", "d4", "d5"], tcp = { cc = "reno", timestamps = false, delayed_ack = false } }"#;
    let r = run(&scenario(source, "30s"));
    let by_server = counts(&strings(&r.transfers, "server"));
    let by_client = counts(&strings(&r.transfers, "client"));
    assert_eq!(by_server.len(), 4, "{by_server:?}");
    assert_eq!(by_client.len(), 5, "{by_client:?}");
    assert!(
        !by_client.contains_key("d0"),
        "d0 is not in the pool: {by_client:?}"
    );
}

#[test]
fn pools_are_deterministic() {
    let pools =
        r#", servers = { hosts = "s{i}", count = 8 }, clients = { hosts = "d{i}", count = 8 }"#;
    let text = scenario(&web(pools), "20s");
    assert_eq!(everything(&run(&text)), everything(&run(&text)));
}

#[test]
fn pools_of_the_flows_own_hosts_change_nothing() {
    let plain = run(&scenario(&web(""), "20s"));
    let own = run(&scenario(
        &web(r#", servers = ["s0"], clients = ["d0"]"#),
        "20s",
    ));
    assert_eq!(everything(&plain), everything(&own));
}

#[test]
fn a_bad_pool_names_its_field() {
    let cases = [
        (
            r#", servers = ["s0", "nowhere"]"#,
            "flows[0].source.servers[1]",
        ),
        (
            r#", clients = ["d0", "left"]"#,
            "flows[0].source.clients[1]",
        ),
        (r#", clients = []"#, "flows[0].source.clients"),
        (
            r#", clients = { hosts = "d{i}", count = 9 }"#,
            "flows[0].source.clients[8]",
        ),
        (r#", clients = { hosts = "d{i}" }"#, "clients"),
        (
            r#", clients = { hosts = "d{i}", count = 4000000000 }"#,
            "flows[0].source.clients.count",
        ),
    ];
    for (pools, field) in cases {
        let e = parse(&scenario(&web(pools), "10s"), &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains(field), "{pools}: {e}");
    }
}
