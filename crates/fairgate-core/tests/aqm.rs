//! End-to-end behaviour of the single-queue AQMs under open-loop load: conservation in every
//! run, the operating point each algorithm should settle at, penalisation of an unresponsive
//! flow, determinism.

use fairgate_core::results::{collect, Column, Results, Table};
use fairgate_core::scenario::{build, parse};

fn run(text: &str, overrides: &[&str]) -> Results {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

fn row_of(t: &Table, key: &str, name: &str) -> usize {
    match t.column(key).unwrap() {
        Column::Cat { codes, categories } => {
            let code = categories.iter().position(|c| c == name).unwrap();
            codes.iter().position(|&c| c as usize == code).unwrap()
        }
        Column::Str(v) => v.iter().position(|s| s == name).unwrap(),
        _ => panic!("{key} is not a name column"),
    }
}

fn num(t: &Table, column: &str, row: usize) -> f64 {
    match t.column(column).unwrap() {
        Column::F64(v) => v[row],
        Column::U64(v) => v[row] as f64,
        _ => panic!("{column} is not numeric"),
    }
}

fn port(r: &Results, name: &str, column: &str) -> f64 {
    num(&r.ports, column, row_of(&r.ports, "port", name))
}

/// Ten Poisson sources of 1.2 Mb/s each into a 10 Mb/s link: offered load 1.2.
const POISSON_OVERLOAD: &str = r#"
name = "aqm-poisson"
[simulation]
duration = "20s"
seed = 3
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
duplex = false
queue = { kind = "red", limit = 200, min_th = 20, max_th = 60, max_p = 0.5, w_q = 0.01 }
[[flows]]
name = "p"
count = 10
src = "a"
dst = "b"
source = { kind = "poisson", rate = "1.2Mbps", size = 1000 }
"#;

#[test]
fn red_holds_the_average_between_its_thresholds_under_poisson_overload() {
    let r = run(POISSON_OVERLOAD, &[]);
    let mean_queue = port(&r, "a->b", "mean_queue_pkts");
    assert!(
        (20.0..60.0).contains(&mean_queue),
        "mean queue {mean_queue}"
    );
    // Open loop at load 1.2: the link carries its capacity, so 1 - 1/1.2 of the arrivals go.
    let arrivals = port(&r, "a->b", "arrivals_pkts");
    let drops = port(&r, "a->b", "drops_pkts");
    let loss = drops / arrivals;
    assert!((loss - 1.0 / 6.0).abs() < 0.01, "loss {loss}");
    assert!(port(&r, "a->b", "utilisation") > 0.99);
}

#[test]
fn pi_holds_the_queue_near_its_reference_under_poisson_overload() {
    let r = run(
        POISSON_OVERLOAD,
        &[
            "links[0].queue={kind=\"pi\", limit=300, q_ref=50, a=0.0002, b=0.00019, sampling_hz=160}",
        ],
    );
    let mean_queue = port(&r, "a->b", "mean_queue_pkts");
    let loss = port(&r, "a->b", "drops_pkts") / port(&r, "a->b", "arrivals_pkts");
    let util = port(&r, "a->b", "utilisation");
    assert!(
        (45.0..60.0).contains(&mean_queue),
        "mean queue {mean_queue}"
    );
    // The link stays busy: the controller does not overshoot into an empty queue.
    assert!(util > 0.98, "utilisation {util}");
    assert!(loss > 1.0 / 6.0 - 0.005, "loss {loss}");
}

fn flow(r: &Results, name: &str, column: &str) -> f64 {
    num(&r.flows, column, row_of(&r.flows, "flow", name))
}

/// An 8 Mb/s CBR flow beside eight Poisson flows of 1 Mb/s on a 10 Mb/s link: max-min fair
/// shares are 1 Mb/s per Poisson flow and 2 Mb/s for the CBR flow.
const CBR_AMONG_POISSON: &str = r#"
name = "aqm-unresponsive"
[simulation]
duration = "20s"
seed = 5
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
duplex = false
queue = { kind = "sfb" }
[[flows]]
name = "cbr"
src = "a"
dst = "b"
source = { kind = "cbr", rate = "8Mbps", size = 1000 }
[[flows]]
name = "p"
count = 8
src = "a"
dst = "b"
source = { kind = "poisson", rate = "1Mbps", size = 1000 }
"#;

fn poisson_loss(r: &Results) -> f64 {
    let (mut dropped, mut offered) = (0.0, 0.0);
    for i in 0..8 {
        let name = format!("p{i}");
        dropped += flow(r, &name, "dropped_pkts");
        offered += flow(r, &name, "offered_pkts");
    }
    dropped / offered
}

#[test]
fn sfb_penalises_an_unresponsive_cbr_flow() {
    // Faster BLUE steps than the SFG paper's (0.005 per 100 ms needs 20 s to reach 1).
    let r = run(
        CBR_AMONG_POISSON,
        &["links[0].queue={kind=\"sfb\", increment=0.02, decrement=0.002, freeze_time=\"20ms\"}"],
    );
    let cbr = flow(&r, "cbr", "throughput_bps");
    let loss = poisson_loss(&r);
    // Max-min fair: 2 Mb/s (measured 2.25); drop-tail gives it 8 * 10/16 = 5 Mb/s.
    assert!(cbr < 2.6e6, "cbr throughput {cbr}");
    // Poisson flows lose 7 % (drop-tail: 6/16 = 37.5 %).
    assert!(loss < 0.12, "poisson loss {loss}");
    let fifo = run(
        CBR_AMONG_POISSON,
        &["links[0].queue={kind=\"fifo\", limit=500}"],
    );
    assert!(flow(&fifo, "cbr", "throughput_bps") > 4.8e6);
    assert!(poisson_loss(&fifo) > 0.3);
}

#[test]
fn red_pd_restricts_an_unresponsive_cbr_flow() {
    // Poisson flows of 0.5 Mb/s (4 Mb/s in all) beside the 8 Mb/s CBR flow: load 1.2.
    let light = "flows[1].source.rate=\"0.5Mbps\"";
    let duration = "simulation.duration=\"40s\"";
    let r = run(
        CBR_AMONG_POISSON,
        &["links[0].queue={kind=\"red_pd\"}", light, duration],
    );
    // Measured: CBR loses 33 %, the Poisson flows 3.5 %.
    let cbr_loss = flow(&r, "cbr", "loss_rate");
    assert!(cbr_loss > 0.25, "cbr loss {cbr_loss}");
    let loss = poisson_loss(&r);
    assert!(loss < 0.06, "poisson loss {loss}");
    // The same RED without the pre-filter drops every flow alike (1/6 each).
    let red =
        "links[0].queue={kind=\"red\", limit=500, min_th=50, max_th=300, max_p=0.15, gentle=true}";
    let plain = run(CBR_AMONG_POISSON, &[red, light, duration]);
    assert!((poisson_loss(&plain) - 1.0 / 6.0).abs() < 0.01);
    assert!((flow(&plain, "cbr", "loss_rate") - 1.0 / 6.0).abs() < 0.01);
}

#[test]
fn avq_admits_gamma_times_the_capacity_and_keeps_the_real_queue_short() {
    let r = run(
        POISSON_OVERLOAD,
        &["links[0].queue={kind=\"avq\", gamma=0.9, alpha=0, virtual_buffer=50000}"],
    );
    let util = port(&r, "a->b", "utilisation");
    assert!((util - 0.9).abs() < 0.01, "utilisation {util}");
    let mean_queue = port(&r, "a->b", "mean_queue_pkts");
    assert!(mean_queue < 10.0, "mean queue {mean_queue}");
}

#[test]
fn avqred_serves_its_virtual_capacity() {
    let r = run(
        POISSON_OVERLOAD,
        &["links[0].queue={kind=\"avqred\", min_th=20, max_th=60, avg_packet_size=1000, min_capacity=\"9Mbps\", max_capacity=\"9Mbps\"}"],
    );
    let util = port(&r, "a->b", "utilisation");
    assert!((util - 0.9).abs() < 0.01, "utilisation {util}");
    let mean_queue = port(&r, "a->b", "mean_queue_pkts");
    assert!(mean_queue < 10.0, "mean queue {mean_queue}");
}

#[test]
fn pfavqred_shifts_drops_onto_the_flow_above_its_fair_rate() {
    let avqred = "min_th=20, max_th=60, avg_packet_size=1000";
    let pf = format!("links[0].queue={{kind=\"pfavqred\", avqred={{{avqred}}}}}");
    let r = run(CBR_AMONG_POISSON, &[&pf]);
    let (cbr, others) = (flow(&r, "cbr", "loss_rate"), poisson_loss(&r));
    // Measured: CBR loses 66 % (2.7 Mb/s of its 8; max-min share 2), Poisson flows 8.6 %.
    assert!(cbr > 0.6, "cbr loss {cbr}");
    assert!(others < 0.12, "poisson loss {others}");
    assert!(port(&r, "a->b", "utilisation") > 0.99);
    let plain = format!("links[0].queue={{kind=\"avqred\", {avqred}}}");
    let r = run(CBR_AMONG_POISSON, &[&plain]);
    let (cbr0, others0) = (flow(&r, "cbr", "loss_rate"), poisson_loss(&r));
    // Without the weight every flow loses 6/16 alike.
    assert!((cbr0 - 0.375).abs() < 0.02, "cbr loss {cbr0}");
    assert!((others0 - 0.375).abs() < 0.02, "poisson loss {others0}");
}

#[test]
fn redfc_delays_instead_of_dropping_and_conserves_packets() {
    // Load 0.9: RED would drop early; REDFC holds those packets and sends them later.
    let r = run(
        POISSON_OVERLOAD,
        &[
            "flows[0].source.rate=\"0.9Mbps\"",
            "links[0].queue={kind=\"redfc\", red={limit=200, min_th=5, max_th=15, max_p=0.1, w_q=0.02}}",
        ],
    );
    assert_eq!(port(&r, "a->b", "drops_pkts"), 0.0);
    let util = port(&r, "a->b", "utilisation");
    assert!((util - 0.9).abs() < 0.02, "utilisation {util}");
    let red = run(
        POISSON_OVERLOAD,
        &[
            "flows[0].source.rate=\"0.9Mbps\"",
            "links[0].queue={kind=\"red\", limit=200, min_th=5, max_th=15, max_p=0.1, w_q=0.02}",
        ],
    );
    assert!(port(&red, "a->b", "drops_pkts") > 0.0);
}

/// Every discipline of this module, built from a scenario, runs the same seed to the same
/// results twice and conserves packets.
#[test]
fn every_aqm_is_deterministic_and_conserves_packets() {
    let kinds = [
        "red",
        "pi",
        "choke",
        "blue",
        "sfb",
        "red_pd",
        "avq",
        "avqred",
        "pfavqred",
        "sred",
        "fred",
        "random_drop",
        "early_random_drop",
        "yellow",
        "vrc",
        "vq_red",
        "redfc",
    ];
    for kind in kinds {
        let queue = format!("links[0].queue={{kind=\"{kind}\"}}");
        let overrides = [queue.as_str(), "simulation.duration=\"3s\""];
        let a = run(CBR_AMONG_POISSON, &overrides);
        let b = run(CBR_AMONG_POISSON, &overrides);
        for column in ["drops_pkts", "departures_pkts", "mean_queue_pkts"] {
            assert_eq!(
                port(&a, "a->b", column),
                port(&b, "a->b", column),
                "{kind} {column}"
            );
        }
        assert!(port(&a, "a->b", "departures_pkts") > 0.0, "{kind}");
    }
}

/// Byun's gateway: the AQM drops at the receive side (a->b) while watching the congested
/// transmit queue (b->c).
const MONITORED: &str = r#"
name = "aqm-monitor"
[simulation]
duration = "20s"
seed = 9
[[nodes]]
name = "a"
[[nodes]]
name = "b"
kind = "router"
[[nodes]]
name = "c"
[[links]]
from = "a"
to = "b"
rate = "100Mbps"
delay = "1ms"
duplex = false
monitor = "b->c"
queue = { kind = "red", limit = 200, min_th = 20, max_th = 60, max_p = 0.5, w_q = 0.01 }
[[links]]
from = "b"
to = "c"
rate = "10Mbps"
delay = "10ms"
duplex = false
queue = { kind = "fifo", limit = 1000 }
[[flows]]
name = "p"
count = 10
src = "a"
dst = "c"
source = { kind = "poisson", rate = "1.2Mbps", size = 1000 }
"#;

#[test]
fn red_watching_the_transmit_queue_drops_before_it() {
    let r = run(MONITORED, &[]);
    assert_eq!(port(&r, "b->c", "drops_pkts"), 0.0);
    let loss = port(&r, "a->b", "drops_pkts") / port(&r, "a->b", "arrivals_pkts");
    assert!((loss - 1.0 / 6.0).abs() < 0.01, "loss {loss}");
    let watched_queue = port(&r, "b->c", "mean_queue_pkts");
    assert!(
        (20.0..60.0).contains(&watched_queue),
        "transmit queue {watched_queue}"
    );
    assert!(port(&r, "a->b", "mean_queue_pkts") < 1.0);
}

#[test]
fn choke_penalises_the_flow_that_fills_the_queue() {
    let red = "red={limit=500, min_th=50, max_th=300, max_p=0.15, gentle=true}";
    let choke = format!("links[0].queue={{kind=\"choke\", draws=\"subregions\", {red}}}");
    let r = run(CBR_AMONG_POISSON, &[&choke]);
    let (cbr, others) = (flow(&r, "cbr", "loss_rate"), poisson_loss(&r));
    // Measured: the CBR flow loses 60 %, the Poisson flows 14.4 % (RED alone: 37.5 % each).
    assert!(cbr > 0.55, "cbr loss {cbr}");
    assert!(others < 0.2, "poisson loss {others}");
    assert!(port(&r, "a->b", "utilisation") > 0.99);
}

#[test]
fn bad_aqm_parameters_name_the_field() {
    let cases = [
        (
            "{kind=\"red\", min_th=20, max_th=10}",
            "links[0].queue.max_th",
        ),
        ("{kind=\"red\", w_q=2}", "links[0].queue.w_q"),
        ("{kind=\"red\", mode=\"bits\"}", "links[0].queue.mode"),
        ("{kind=\"pi\", a=0.1}", "links[0].queue.b"),
        (
            "{kind=\"choke\", red={max_p=1.5}}",
            "links[0].queue.red.max_p",
        ),
        (
            "{kind=\"choke\", subregions=0}",
            "links[0].queue.subregions",
        ),
        ("{kind=\"sfb\", levels=0}", "links[0].queue.levels"),
        (
            "{kind=\"sfb\", freeze_time=\"-1s\"}",
            "links[0].queue.freeze_time",
        ),
        (
            "{kind=\"red_pd\", identify_lists=6}",
            "links[0].queue.identify_lists",
        ),
        ("{kind=\"avq\", gamma=0}", "links[0].queue.gamma"),
        (
            "{kind=\"avqred\", min_capacity=\"20Mbps\", max_capacity=\"10Mbps\"}",
            "links[0].queue.max_capacity",
        ),
        (
            "{kind=\"pfavqred\", avqred={alpha=2}}",
            "links[0].queue.avqred.alpha",
        ),
        ("{kind=\"sred\", lookups=0}", "links[0].queue.lookups"),
        ("{kind=\"sred\", variant=\"new\"}", "links[0].queue.variant"),
        ("{kind=\"yellow\", alpha=0.5}", "links[0].queue.alpha"),
        ("{kind=\"vq_red\", unknown=1}", "links[0].queue"),
        (
            "{kind=\"red_pd\", red={adaptive=true}}",
            "links[0].queue.red.adaptive",
        ),
    ];
    for (queue, path) in cases {
        let overrides = vec![format!("links[0].queue={queue}")];
        let e = match parse(POISSON_OVERLOAD, &overrides) {
            Ok(s) => match build(&s) {
                Ok(_) => panic!("{queue} was accepted"),
                Err(e) => e,
            },
            Err(e) => e,
        };
        assert!(e.path.starts_with(path), "{queue}: {e}");
    }
}

#[test]
fn a_device_queue_holds_its_packets_apart_from_the_discipline() {
    let plain = run(POISSON_OVERLOAD, &[]);
    let ring = run(POISSON_OVERLOAD, &["links[0].device_queue=5"]);
    assert_eq!(port(&plain, "a->b", "max_device_pkts"), 0.0);
    assert_eq!(port(&ring, "a->b", "max_device_pkts"), 5.0);
    // Under overload the ring stays full; RED's average still sits between its thresholds of
    // its own queue, which no longer includes the ring's five packets.
    let device = port(&ring, "a->b", "mean_device_pkts");
    assert!(device > 4.9, "mean device queue {device}");
    let red = port(&ring, "a->b", "mean_queue_pkts");
    assert!((20.0..60.0).contains(&red), "mean queue {red}");
    let system = port(&ring, "a->b", "mean_system_pkts");
    assert!((system - red - device - 1.0).abs() < 0.01, "{system}");
    assert!(port(&ring, "a->b", "utilisation") > 0.99);
}

#[test]
fn a_device_queue_of_zero_keeps_results_byte_identical() {
    let plain = run(POISSON_OVERLOAD, &[]);
    let zero = run(POISSON_OVERLOAD, &["links[0].device_queue=0"]);
    for column in [
        "drops_pkts",
        "departures_pkts",
        "mean_queue_pkts",
        "max_queue_pkts",
    ] {
        assert_eq!(port(&plain, "a->b", column), port(&zero, "a->b", column));
    }
}

#[test]
fn an_idle_link_takes_packets_past_an_empty_device_queue() {
    // Light load: one 1000-byte packet per 2 ms on 10 Mb/s (0.8 ms each): every packet finds
    // the link idle and goes straight to it, so the ring stays empty and RED never acts.
    let r = run(
        POISSON_OVERLOAD,
        &[
            "simulation.duration=\"2s\"",
            "links[0].device_queue=1",
            "flows[0].count=1",
            "flows[0].source={kind=\"cbr\", rate=\"4Mbps\", size=1000}",
        ],
    );
    assert_eq!(port(&r, "a->b", "drops_pkts"), 0.0);
    assert_eq!(port(&r, "a->b", "max_device_pkts"), 0.0);
    assert_eq!(port(&r, "a->b", "departures_pkts"), 1001.0); // t = 0, 2 ms, ..., 2 s
}
