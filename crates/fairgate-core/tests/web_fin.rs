//! The FIN of web and HTTP connections rides the last data segment of each direction as a
//! flag (`fin = "piggybacked"`, the default): the end points ignore it, so a run without a
//! gateway is the same, table for table, as one without a FIN (`fin = "none"`).

mod workload_support;

use fairgate_core::results::Results;
use workload_support::{run, u64s};

fn scenario(source: &str, fin: &str) -> String {
    format!(
        r#"
name = "fin"
[simulation]
duration = "60s"
sample_interval = "1s"
seed = 3
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
rate = "2Mbps"
delay = "20ms"
queue = {{ kind = "red", min_th = 5, max_th = 15, limit = 30 }}
[[links]]
from = "r"
to = "client"
rate = "100Mbps"
delay = "5ms"
[[flows]]
name = "w"
src = "server"
dst = "client"
source = {{ {source}, fin = "{fin}" }}
"#
    )
}

/// Every table of the results, printed.
fn tables(r: &Results) -> Vec<String> {
    let all = [
        &r.flows,
        &r.ports,
        &r.queue_series,
        &r.flow_series,
        &r.traces,
        &r.transfers,
        &r.drops,
    ];
    all.iter().map(|t| format!("{t:?}")).collect()
}

fn same_with_and_without_fin(source: &str) {
    let with = run(&scenario(source, "piggybacked"));
    let without = run(&scenario(source, "none"));
    assert!(
        with.transfers.rows() > 20,
        "{} objects",
        with.transfers.rows()
    );
    let retransmits: u64 = u64s(&with.transfers, "retransmits").iter().sum();
    assert!(retransmits > 0, "the link should cost some retransmissions");
    assert_eq!(tables(&with), tables(&without));
    assert_eq!(with.summary, without.summary);
}

#[test]
fn a_web_run_without_a_gateway_is_the_same_with_and_without_a_fin() {
    same_with_and_without_fin(r#"kind = "web", sessions = 20, start_window = "10s""#);
}

#[test]
fn an_http_run_without_a_gateway_is_the_same_with_and_without_a_fin() {
    same_with_and_without_fin(
        r#"kind = "http", connections = 10, ramp_batch = 10, think = "1s", page_size = { dist = "uniform", min = 20000, max = 60000 }"#,
    );
}
