//! The measurement window `[simulation] warmup` / `end` against numbers computed by hand:
//! a 5 Mb/s CBR flow of 1000-byte packets on a 10 Mb/s link, sending from 0 s to 4 s of a
//! 10 s run.

use fairgate_core::results::{collect, Column, Results};
use fairgate_core::scenario::{build, parse};

const CBR: &str = r#"
name = "window"
[simulation]
duration = "10s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
queue = { kind = "fifo", limit = 1000 }
[[flows]]
name = "cbr"
src = "a"
dst = "b"
stop = "4s"
source = { kind = "cbr", rate = "5Mbps", size = 1000 }
"#;

fn run(overrides: &[&str]) -> Results {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(CBR, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap();
    sim.run();
    assert!(sim.conservation_violations().is_empty());
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

fn number(r: &Results, flows: bool, column: &str) -> f64 {
    let t = if flows { &r.flows } else { &r.ports };
    match t.column(column).unwrap() {
        Column::F64(v) => v[0],
        Column::U64(v) => v[0] as f64,
        _ => panic!("{column} is not numeric"),
    }
}

#[test]
fn whole_run_utilisation_is_busy_time_over_duration() {
    // 4 s at half the link's rate over 10 s: 0.2.
    let r = run(&[]);
    let util = number(&r, false, "utilisation");
    assert!((util - 0.2).abs() < 1e-3, "utilisation {util}");
    assert_eq!(r.summary["window"]["start_s"], 0.0);
}

#[test]
fn warmup_and_end_bound_every_summary() {
    // Window 2 s .. 6 s: the flow sends during 2 s .. 4 s, half the window at half the rate.
    let r = run(&["simulation.warmup=\"2s\"", "simulation.end=\"6s\""]);
    let util = number(&r, false, "utilisation");
    assert!((util - 0.25).abs() < 1e-3, "utilisation {util}");
    // 2 s at 5 Mb/s = 1250 packets of 1000 bytes.
    let departed = number(&r, false, "departures_pkts");
    assert!((departed - 1250.0).abs() <= 1.0, "departures {departed}");
    let offered = number(&r, true, "offered_pkts");
    assert!((offered - 1250.0).abs() <= 1.0, "offered {offered}");
    // Deliveries count when they arrive (10.8 ms after sending starts): the packets sent at
    // k x 1.6 ms for k = 1244..1249 arrive after 2 s, so 1256 are delivered in the window, over
    // the flow's 2 s of activity inside it: 1256 x 8000 b / 2 s = 5.024 Mb/s.
    let tput = number(&r, true, "throughput_bps");
    assert!((tput - 5.024e6).abs() < 1.0, "throughput {tput}");
    // No packet ever waits: the queue's mean and standard deviation are 0.
    assert_eq!(number(&r, false, "mean_queue_pkts"), 0.0);
    assert_eq!(number(&r, false, "std_queue_pkts"), 0.0);
    assert_eq!(r.summary["window"]["end_s"], 6.0);
}

#[test]
fn window_outside_the_traffic_counts_nothing() {
    let r = run(&["simulation.warmup=\"5s\""]);
    assert_eq!(number(&r, false, "utilisation"), 0.0);
    assert_eq!(number(&r, true, "delivered_pkts"), 0.0);
}

#[test]
fn bad_windows_name_their_field() {
    let cases = [
        (&["simulation.warmup=\"10s\""][..], "simulation.warmup"),
        (&["simulation.end=\"11s\""][..], "simulation.end"),
        (
            &["simulation.warmup=\"3s\"", "simulation.end=\"3s\""][..],
            "simulation.warmup",
        ),
    ];
    for (overrides, path) in cases {
        let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        let e = parse(CBR, &overrides).expect_err("a bad window is refused");
        assert_eq!(e.path, path, "{e}");
    }
}
