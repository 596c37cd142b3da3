//! End-to-end checks of the engine against numbers: serialisation and propagation delay to the
//! picosecond, CBR utilisation and drop rate, conservation, determinism, bad input and the
//! measurement window.

use fairgate_core::results::{collect, Column, Results};
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

fn f64_at(r: &Results, table: &str, column: &str, row: usize) -> f64 {
    let t = match table {
        "flows" => &r.flows,
        _ => &r.ports,
    };
    match t.column(column).unwrap() {
        Column::F64(v) => v[row],
        Column::U64(v) => v[row] as f64,
        _ => panic!("{column} is not numeric"),
    }
}

const TWO_HOSTS: &str = r#"
name = "two-hosts"
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
source = { kind = "cbr", rate = "5Mbps", size = 1000 }
"#;

#[test]
fn single_packet_delay_is_exact_to_the_picosecond() {
    let r = run(
        TWO_HOSTS,
        &["flows[0].source.packets=1", "links[0].delay=\"1234567ps\""],
    );
    // 1000 B at 10 Mb/s = 800 us, plus 1,234,567 ps of propagation.
    let delay_ps = (f64_at(&r, "flows", "max_delay_s", 0) * 1e12).round() as u64;
    assert_eq!(delay_ps, 800_000_000 + 1_234_567);
}

#[test]
fn cbr_below_capacity_uses_r_over_c_without_drops() {
    let r = run(TWO_HOSTS, &[]);
    let util = f64_at(&r, "ports", "utilisation", 0);
    assert!((util - 0.5).abs() < 0.0005, "utilisation {util}");
    assert_eq!(f64_at(&r, "flows", "dropped_pkts", 0), 0.0);
}

#[test]
fn cbr_above_capacity_drops_one_minus_c_over_r() {
    let r = run(
        TWO_HOSTS,
        &[
            "flows[0].source.rate=\"20Mbps\"",
            "simulation.duration=\"30s\"",
            "links[0].queue.limit=50",
        ],
    );
    let loss = f64_at(&r, "flows", "loss_rate", 0);
    assert!((loss - 0.5).abs() < 0.005, "loss rate {loss}");
}

#[test]
fn bad_input_names_the_field() {
    let cases = [
        (
            &["flows[0].source.rate=\"-5Mbps\""][..],
            "flows[0].source.rate",
        ),
        (&["flows[0].dst=\"zz\""], "flows[0].dst"),
        (&["links[0].rat=5"], "links[0]"),
        (&["flows[0].start=\"20s\""], "flows[0].start"),
        (&["flows[0].stop=\"0s\""], "flows[0].stop"),
        (&["links[0].rate=0"], "links[0].rate"),
        (&["links[0].queue.kind=\"nope\""], "links[0].queue.kind"),
        (&["links[0].queue.limit=0"], "links[0].queue.limit"),
        (
            &[
                "links[0].duplex=false",
                "flows[0].src=\"b\"",
                "flows[0].dst=\"a\"",
            ],
            "flows[0].dst",
        ),
    ];
    for (o, path) in cases {
        let overrides: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        let e = match parse(TWO_HOSTS, &overrides) {
            Ok(s) => match build(&s) {
                Ok(_) => panic!("{o:?} was accepted"),
                Err(e) => e,
            },
            Err(e) => e,
        };
        assert!(e.path.starts_with(path), "{o:?}: {e}");
    }
}

#[test]
fn a_parsed_scenario_round_trips_through_toml() {
    let text = format!(
        "{TWO_HOSTS}\n[[links]]\nfrom = \"b\"\nto = \"c\"\nrate = 1000\nduplex = false\n\
         delay = {{ dist = \"uniform\", min = \"1ms\", max = \"2ms\", per = \"flow\" }}\n\
         [[nodes]]\nname = \"c\"\n"
    );
    let first = parse(&text, &[]).unwrap();
    let again = toml::to_string(&first).unwrap();
    let second = parse(&again, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        serde_json::to_string(&first).unwrap(),
        serde_json::to_string(&second).unwrap()
    );
}

// The measurement window `[simulation] warmup` / `end`: the 5 Mb/s CBR flow of TWO_HOSTS,
// sending from 0 s to 4 s of the 10 s run.
const STOP_AT_4S: &str = "flows[0].stop=\"4s\"";

#[test]
fn whole_run_utilisation_is_busy_time_over_duration() {
    // 4 s at half the link's rate over 10 s: 0.2.
    let r = run(TWO_HOSTS, &[STOP_AT_4S]);
    let util = f64_at(&r, "ports", "utilisation", 0);
    assert!((util - 0.2).abs() < 1e-3, "utilisation {util}");
    assert_eq!(r.summary["window"]["start_s"], 0.0);
}

#[test]
fn warmup_and_end_bound_every_summary() {
    // Window 2 s .. 6 s: the flow sends during 2 s .. 4 s, half the window at half the rate.
    let r = run(
        TWO_HOSTS,
        &[
            STOP_AT_4S,
            "simulation.warmup=\"2s\"",
            "simulation.end=\"6s\"",
        ],
    );
    let util = f64_at(&r, "ports", "utilisation", 0);
    assert!((util - 0.25).abs() < 1e-3, "utilisation {util}");
    // 2 s at 5 Mb/s = 1250 packets of 1000 bytes.
    let departed = f64_at(&r, "ports", "departures_pkts", 0);
    assert!((departed - 1250.0).abs() <= 1.0, "departures {departed}");
    let offered = f64_at(&r, "flows", "offered_pkts", 0);
    assert!((offered - 1250.0).abs() <= 1.0, "offered {offered}");
    // Deliveries count when they arrive (10.8 ms after sending starts): the packets sent at
    // k x 1.6 ms for k = 1244..1249 arrive after 2 s, so 1256 are delivered in the window, over
    // the flow's 2 s of activity inside it: 1256 x 8000 b / 2 s = 5.024 Mb/s.
    let tput = f64_at(&r, "flows", "throughput_bps", 0);
    assert!((tput - 5.024e6).abs() < 1.0, "throughput {tput}");
    // No packet ever waits: the queue's mean and standard deviation are 0.
    assert_eq!(f64_at(&r, "ports", "mean_queue_pkts", 0), 0.0);
    assert_eq!(f64_at(&r, "ports", "std_queue_pkts", 0), 0.0);
    assert_eq!(r.summary["window"]["end_s"], 6.0);
}

#[test]
fn window_outside_the_traffic_counts_nothing() {
    let r = run(TWO_HOSTS, &[STOP_AT_4S, "simulation.warmup=\"5s\""]);
    assert_eq!(f64_at(&r, "ports", "utilisation", 0), 0.0);
    assert_eq!(f64_at(&r, "flows", "delivered_pkts", 0), 0.0);
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
        let e = parse(TWO_HOSTS, &overrides).expect_err("a bad window is refused");
        assert_eq!(e.path, path, "{e}");
    }
}
