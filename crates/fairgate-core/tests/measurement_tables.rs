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
