//! The web workload end to end: every object fetched and recorded, conservation per flow,
//! determinism, session starts spread over the window, connections retired as they close.

mod workload_support;

use fairgate_core::scenario::parse;

use workload_support::{f64s, run, u64s};

fn scenario(link: &str, sessions: u32, duration: &str, extra: &str) -> String {
    scenario_with_limit(link, 500, sessions, duration, extra)
}

fn scenario_with_limit(
    link: &str,
    limit: u32,
    sessions: u32,
    duration: &str,
    extra: &str,
) -> String {
    format!(
        r#"
name = "web"
[simulation]
duration = "{duration}"
seed = 7
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
rate = "{link}"
delay = "20ms"
queue = {{ kind = "fifo", limit = {limit} }}
[[links]]
from = "r"
to = "client"
rate = "1Gbps"
delay = "5ms"
[[flows]]
name = "web"
src = "server"
dst = "client"
source = {{ kind = "web", sessions = {sessions}, start_window = "30s" {extra} }}
"#
    )
}

#[test]
fn every_object_is_fetched_in_order_of_its_milestones() {
    let r = run(&scenario("10Mbps", 20, "120s", ""));
    let t = &r.transfers;
    assert!(t.rows() > 100, "only {} objects", t.rows());
    let (req, first, last, done) = (
        f64s(t, "request_s"),
        f64s(t, "first_byte_s"),
        f64s(t, "last_byte_s"),
        f64s(t, "completed_s"),
    );
    for i in 0..t.rows() {
        // Request, SYN exchange of each connection: at least two round trips of 50 ms.
        assert!(
            first[i] >= req[i] + 0.1,
            "row {i}: {} -> {}",
            req[i],
            first[i]
        );
        assert!(first[i] <= last[i] && last[i] <= done[i], "row {i}");
    }
    for &b in u64s(t, "bytes") {
        assert_eq!(b % 1000, 0, "object sizes are whole segments");
    }
}

#[test]
fn pages_have_the_configured_objects_and_sessions_start_over_the_window() {
    let r = run(&scenario("100Mbps", 30, "40s", ", objects = 3"));
    let t = &r.transfers;
    let (session, page, req) = (u64s(t, "session"), u64s(t, "page"), f64s(t, "request_s"));
    let first_page: Vec<f64> = (0..30u64)
        .map(|s| {
            let rows: Vec<usize> = (0..t.rows())
                .filter(|&i| session[i] == s && page[i] == 0)
                .collect();
            assert_eq!(rows.len(), 3, "session {s}");
            req[rows[0]]
        })
        .collect();
    for (s, &at) in first_page.iter().enumerate() {
        assert!((at - s as f64).abs() < 1e-9, "session {s} starts at {at}");
    }
}

#[test]
fn same_seed_same_transfers() {
    let text = scenario_with_limit("1Mbps", 20, 200, "60s", "");
    let a = run(&text);
    let b = run(&text);
    assert_eq!(a.transfers.records(), b.transfers.records());
    assert!(
        u64s(&a.transfers, "retransmits").iter().sum::<u64>() > 0,
        "a congested link should cost some objects retransmissions"
    );
}

#[test]
fn a_bad_setting_names_its_field() {
    let text = scenario("10Mbps", 0, "10s", "");
    let e = parse(&text, &[]).unwrap_err().to_string();
    assert!(e.contains("flows[0].source.sessions"), "{e}");
    let text = scenario("10Mbps", 3, "10s", ", tcp = { mss = 0 }");
    let e = parse(&text, &[]).unwrap_err().to_string();
    assert!(e.contains("tcp.mss"), "{e}");
}

/// Offered load of the web workload alone on an uncongested 100 Mb/s link, measured after the
/// 30 s start window: the SFG paper reports about 2.5 Mb/s for 300 sessions [Chung06, §4.1].
fn offered_mbps(sessions: u32, duration: f64) -> f64 {
    let text = scenario("100Mbps", sessions, &format!("{duration}s"), "");
    let r = run(&text);
    let t = &r.transfers;
    let (req, bytes) = (f64s(t, "request_s"), u64s(t, "bytes"));
    let after: u64 = (0..t.rows())
        .filter(|&i| req[i] >= 30.0)
        .map(|i| bytes[i])
        .sum();
    after as f64 * 8.0 / (duration - 30.0) / 1e6
}

#[test]
fn three_hundred_sessions_offer_a_few_megabits() {
    let mbps = offered_mbps(300, 330.0);
    eprintln!("300 sessions offer {mbps:.2} Mb/s of objects");
    assert!((1.5..5.0).contains(&mbps), "{mbps} Mb/s");
}

/// Every request is lost (a link that drops all client-to-server packets): each object's
/// request connection gives up after its retries, the row says so, and the sessions go on.
#[test]
fn aborted_objects_are_recorded_and_sessions_continue() {
    let text = scenario("10Mbps", 5, "120s", ", tcp = { max_retries = 1 }").replace(
        "delay = \"5ms\"\n[[flows]]",
        "delay = \"5ms\"\nduplex = false\n[[links]]\nfrom = \"client\"\nto = \"r\"\n\
         rate = \"1Gbps\"\nloss = 1.0\nduplex = false\n[[flows]]",
    );
    let r = run(&text);
    let t = &r.transfers;
    assert!(t.rows() > 10, "only {} objects", t.rows());
    assert!(u64s(t, "aborted").iter().all(|&a| a == 1));
    assert!(f64s(t, "last_byte_s").iter().all(|x| x.is_nan()));
}
