//! The measurement tables a run reports beside its summaries: the drop and mark events table
//! (every event or the first N, agreeing with the port counters), and the rate series.

use fairgate_core::results::{collect, Column, Results, Table};
use fairgate_core::scenario::{build, parse};

fn run(text: &str, overrides: &[&str]) -> Results {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap();
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

fn u64s(t: &Table, name: &str) -> Vec<u64> {
    match t.column(name).unwrap() {
        Column::U64(v) => v.clone(),
        _ => panic!("{name} is not u64"),
    }
}

fn f64s(t: &Table, name: &str) -> Vec<f64> {
    match t.column(name).unwrap() {
        Column::F64(v) => v.clone(),
        _ => panic!("{name} is not f64"),
    }
}

/// The category names of a categorical column, row by row (None for a missing code).
fn names(t: &Table, name: &str) -> Vec<Option<String>> {
    match t.column(name).unwrap() {
        Column::Cat { codes, categories } => codes
            .iter()
            .map(|&c| categories.get(c as usize).cloned())
            .collect(),
        _ => panic!("{name} is not categorical"),
    }
}

/// Poisson overload (1.2) into a 10 Mb/s link with a 20-packet drop-tail buffer.
const OVERLOAD: &str = r#"
name = "overload"
[simulation]
duration = "5s"
seed = 7
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "5ms"
duplex = false
queue = { kind = "fifo", limit = 20 }
[[flows]]
name = "p"
count = 3
src = "a"
dst = "b"
source = { kind = "poisson", rate = "4Mbps", size = 1000 }
"#;

#[test]
fn every_drop_has_a_row_that_agrees_with_the_port_counters() {
    let r = run(OVERLOAD, &["simulation.record_drops=\"all\""]);
    let drops = u64s(&r.ports, "drops_pkts")[0];
    assert!(drops > 500, "only {drops} drops");
    assert_eq!(r.drops.rows() as u64, drops);
    let times = f64s(&r.drops, "time_s");
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    let one = |v: Vec<Option<String>>| v.into_iter().all(|x| x.as_deref().is_some());
    assert!(one(names(&r.drops, "port")));
    assert!(names(&r.drops, "reason")
        .iter()
        .all(|x| x.as_deref() == Some("overflow")));
    assert!(names(&r.drops, "action")
        .iter()
        .all(|x| x.as_deref() == Some("drop")));
    assert!(names(&r.drops, "class")
        .iter()
        .all(|x| x.as_deref() == Some("poisson")));
    assert!(u64s(&r.drops, "size").iter().all(|&s| s == 1000));
    let per_flow = u64s(&r.flows, "dropped_pkts");
    for (f, flow) in ["p0", "p1", "p2"].iter().enumerate() {
        let rows = names(&r.drops, "flow")
            .iter()
            .filter(|x| x.as_deref() == Some(flow))
            .count() as u64;
        assert_eq!(rows, per_flow[f], "flow {flow}");
    }
    assert_eq!(r.summary["drop_events"]["not_recorded"], 0);
}

#[test]
fn a_bounded_log_is_the_prefix_of_the_full_one_and_counts_the_rest() {
    let all = run(OVERLOAD, &["simulation.record_drops=\"all\""]);
    let first = run(OVERLOAD, &["simulation.record_drops=100"]);
    assert_eq!(first.drops.rows(), 100);
    assert_eq!(
        f64s(&first.drops, "time_s"),
        f64s(&all.drops, "time_s")[..100]
    );
    assert_eq!(u64s(&first.drops, "seq"), u64s(&all.drops, "seq")[..100]);
    let not_recorded = first.summary["drop_events"]["not_recorded"]
        .as_u64()
        .unwrap();
    assert_eq!(not_recorded + 100, all.drops.rows() as u64);
    let off = run(OVERLOAD, &[]);
    assert_eq!(off.drops.rows(), 0);
    assert_eq!(off.summary["drop_events"]["not_recorded"], 0);
}

#[test]
fn ecn_marks_have_rows_with_their_reason() {
    let text = r#"
name = "marks"
[simulation]
duration = "10s"
record_drops = "all"
[topology]
kind = "dumbbell"
senders = 4
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "step_mark", k = 20, limit = 1000 } }
access = { rate = "100Mbps", delay = "1ms", queue = { kind = "fifo", limit = 1000 } }
[[flows]]
name = "f{i}"
count = 4
src = "s{i}"
dst = "d{i}"
source = { kind = "tcp", cc = "newreno", ecn = true, rwnd = 400000, window_scale = 3 }
"#;
    let r = run(text, &[]);
    let marks: u64 = u64s(&r.ports, "marks").iter().sum();
    assert!(marks > 0);
    let actions = names(&r.drops, "action");
    let marked = actions.iter().filter(|a| a.as_deref() == Some("mark"));
    assert_eq!(marked.count() as u64, marks);
    let ports = names(&r.drops, "port");
    assert!(ports.iter().all(|p| p.as_deref() == Some("left->right")));
}

#[test]
fn a_bad_record_drops_value_names_the_field() {
    let e = parse(OVERLOAD, &["simulation.record_drops=\"some\"".into()]).unwrap_err();
    assert_eq!(e.path, "simulation.record_drops");
    assert!(e.message.contains("\"all\" or a number of events"), "{e}");
    let e = parse(OVERLOAD, &["simulation.record_drops=-3".into()]).unwrap_err();
    assert_eq!(e.path, "simulation.record_drops");
}

/// Rows of `column` for one category value of `key`, in time order.
fn rows_of(t: &Table, key: &str, value: &str, column: &str) -> Vec<f64> {
    let keys = names(t, key);
    let values = f64s(t, column);
    keys.iter()
        .zip(values)
        .filter(|(k, _)| k.as_deref() == Some(value))
        .map(|(_, v)| v)
        .collect()
}

#[test]
fn port_rates_integrate_to_the_port_counters_and_show_the_overload() {
    let r = run(OVERLOAD, &["simulation.sample_interval=\"0.5s\""]);
    let arrival = rows_of(&r.queue_series, "port", "a->b", "arrival_bps");
    let departure = rows_of(&r.queue_series, "port", "a->b", "departure_bps");
    assert_eq!(arrival.len(), 11);
    assert!(arrival[0].is_nan() && departure[0].is_nan());
    let bytes = |bps: &[f64]| bps[1..].iter().sum::<f64>() * 0.5 / 8.0;
    let arrived = u64s(&r.ports, "arrivals_bytes")[0] as f64;
    let departed = u64s(&r.ports, "departures_bytes")[0] as f64;
    // The first packet of each of the three sources arrives at time 0, before the first
    // sample, so it falls in no interval.
    assert_eq!(bytes(&arrival), arrived - 3000.0);
    // The link starts one at 0 too, and (at full rate) one at the instant of the last sample,
    // which may come after the sample.
    let missing = departed - bytes(&departure);
    assert!(missing == 1000.0 || missing == 2000.0, "{missing}");
    // Offered 12 Mb/s into 10 Mb/s: the input runs near 12, the output at the link's rate.
    let mean = |v: &[f64]| v[2..].iter().sum::<f64>() / (v.len() - 2) as f64;
    assert!(
        (mean(&arrival) / 12e6 - 1.0).abs() < 0.05,
        "{}",
        mean(&arrival)
    );
    assert!(departure[2..]
        .iter()
        .all(|&d| (d / 10e6 - 1.0).abs() < 0.01));
}

#[test]
fn class_series_sum_the_data_flows_of_each_kind() {
    let text = r#"
name = "classes"
[simulation]
duration = "4s"
sample_interval = "0.25s"
[topology]
kind = "dumbbell"
senders = 3
bottleneck = { rate = "10Mbps", delay = "10ms", queue = { kind = "fifo", limit = 100 } }
access = { rate = "100Mbps", delay = "1ms", queue = { kind = "fifo", limit = 1000 } }
[[flows]]
name = "bulk{i}"
count = 2
src = "s{i}"
dst = "d{i}"
source = { kind = "tcp", cc = "newreno" }
[[flows]]
name = "cbr"
src = "s2"
dst = "d2"
source = { kind = "cbr", rate = "2Mbps", size = 1000 }
"#;
    let r = run(text, &[]);
    let kinds = names(&r.class_series, "class");
    assert!(kinds
        .iter()
        .all(|k| matches!(k.as_deref(), Some("tcp" | "cbr"))));
    let roles = strs(&r.flows, "role");
    let kinds = strs(&r.flows, "kind");
    // Nothing is delivered before the first sample, so the rates integrate to the counters.
    for (kind, column, total) in [
        ("cbr", "throughput_bps", "delivered_bytes"),
        ("tcp", "throughput_bps", "delivered_bytes"),
        ("tcp", "goodput_bps", "goodput_bytes"),
    ] {
        let rates = rows_of(&r.class_series, "class", kind, column);
        assert_eq!(rates.len(), 17);
        let integral = rates[1..].iter().sum::<f64>() * 0.25 / 8.0;
        let per_flow = u64s(&r.flows, total);
        let expected: u64 = (0..roles.len())
            .filter(|&i| roles[i] == "data" && kinds[i] == kind)
            .map(|i| per_flow[i])
            .sum();
        assert!(expected > 500_000, "{kind}");
        assert!(
            (integral - expected as f64).abs() < 1e-6 * expected as f64,
            "{kind} {column}"
        );
    }
}

fn strs(t: &Table, name: &str) -> Vec<String> {
    match t.column(name).unwrap() {
        Column::Str(v) => v.clone(),
        _ => panic!("{name} is not a string column"),
    }
}

/// A 4 Mb/s CBR flow all along, and an 8 Mb/s one from 2 s on, into a 10 Mb/s link.
const TWO_PHASES: &str = r#"
name = "two-phases"
[simulation]
duration = "4s"
phase_edges = ["2s"]
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "5ms"
duplex = false
queue = { kind = "fifo", limit = 20 }
[[flows]]
name = "base"
src = "a"
dst = "b"
source = { kind = "cbr", rate = "4Mbps", size = 1000 }
[[flows]]
name = "burst"
src = "a"
dst = "b"
start = "2s"
source = { kind = "cbr", rate = "8Mbps", size = 1000 }
"#;

#[test]
fn each_phase_reports_its_own_loss_utilisation_and_throughput() {
    let r = run(TWO_PHASES, &[]);
    let c = &r.phase_classes;
    assert_eq!(u64s(c, "phase"), [0, 1]);
    assert_eq!(f64s(c, "start_s"), [0.0, 2.0]);
    assert_eq!(f64s(c, "end_s"), [2.0, 4.0]);
    let drop_rate = f64s(c, "drop_rate");
    assert_eq!(drop_rate[0], 0.0);
    // Offered 12 Mb/s into 10: a sixth of the packets go.
    assert!((drop_rate[1] - 1.0 / 6.0).abs() < 0.01, "{drop_rate:?}");
    assert_eq!(f64s(c, "byte_loss_rate")[1], drop_rate[1]);
    let throughput = f64s(c, "throughput_bps");
    assert!((throughput[0] / 4e6 - 1.0).abs() < 0.01, "{throughput:?}");
    assert!((throughput[1] / 10e6 - 1.0).abs() < 0.01, "{throughput:?}");
    let p = &r.phase_ports;
    let utilisation = f64s(p, "utilisation");
    assert!((utilisation[0] - 0.4).abs() < 0.005, "{utilisation:?}");
    assert!(utilisation[1] > 0.99);
    let queue = f64s(p, "mean_queue_pkts");
    assert!(queue[0] < 1.0 && queue[1] > 15.0, "{queue:?}");
    // The phases add up to the whole run.
    let offered: u64 = u64s(c, "offered_pkts").iter().sum();
    assert_eq!(offered, u64s(&r.flows, "offered_pkts").iter().sum::<u64>());
    let dropped: u64 = u64s(p, "drops_pkts").iter().sum();
    assert_eq!(dropped, u64s(&r.ports, "drops_pkts")[0]);
}

#[test]
fn without_edges_the_whole_run_is_one_phase_and_bad_edges_are_named() {
    let r = run(TWO_PHASES, &["simulation.phase_edges=[]"]);
    assert_eq!(u64s(&r.phase_classes, "phase"), [0]);
    assert_eq!(f64s(&r.phase_classes, "end_s"), [4.0]);
    for (edges, index) in [("[\"1s\", \"1s\"]", 1), ("[\"5s\"]", 0)] {
        let e = parse(TWO_PHASES, &[format!("simulation.phase_edges={edges}")]).unwrap_err();
        assert_eq!(e.path, format!("simulation.phase_edges[{index}]"));
    }
}

/// One CBR flow at twice the link rate into a 10-packet drop-tail buffer: once the buffer is
/// full, every other arriving packet is dropped.
#[test]
fn drops_on_arrival_carry_the_index_of_the_dropped_arrival() {
    let double_rate = [
        "simulation.duration=\"1s\"",
        "simulation.record_drops=\"all\"",
        "links[0].queue={ kind = \"fifo\", limit = 10 }",
        "flows[0].count=1",
        "flows[0].source={ kind = \"cbr\", rate = \"20Mbps\", size = 1000 }",
    ];
    let r = run(OVERLOAD, &double_rate);
    let index = u64s(&r.drops, "arrival_index");
    let arrivals = u64s(&r.ports, "arrivals_pkts")[0];
    assert!(index.len() > 1000, "only {} drops", index.len());
    assert!(index[0] > 10, "first drop at arrival {}", index[0]);
    assert!(*index.last().unwrap() <= arrivals);
    let steps: Vec<u64> = index.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(steps.iter().all(|&s| s == 2), "{:?}", &steps[..10]);
}
