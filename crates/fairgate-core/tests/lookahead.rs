//! The run loop's two ways of taking events (straight from the heap, or through a lookahead
//! list in front of it for deep cache hints), with far-future events in a calendar beside the
//! heap or not, give byte-identical results, also when a run is paused and resumed (the
//! lookahead returns its events to the heap at every pause).

mod results_support;

use fairgate_core::engine::secs;
use fairgate_core::results::collect;
use fairgate_core::scenario::{build, parse};
use results_support::tables_as_text;

const TCP_MIX: &str = r#"
name = "tcp-mix"
[simulation]
duration = "12s"
seed = 7
sample_interval = "250ms"
[topology]
kind = "dumbbell"
senders = 20
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "red", limit = 80 } }
access = { rate = "100Mbps", delay = "1ms" }
[[flows]]
name = "t{i}"
count = 20
src = "s{i}"
dst = "d{i}"
start = { dist = "uniform", min = "0s", max = "3s" }
source = { kind = "tcp", cc = "newreno" }
[[flows]]
name = "p{i}"
count = 4
src = "s{i}"
dst = "d{i}"
start = "2s"
stop = "9s"
source = { kind = "poisson", rate = "2Mbps", size = 700 }
"#;

/// How a run takes its events: through the lookahead or not, with the calendar or not.
#[derive(Clone, Copy)]
struct Way {
    look_ahead: bool,
    calendar: bool,
}

const PLAIN: Way = Way {
    look_ahead: false,
    calendar: false,
};
const WAYS: [Way; 3] = [
    Way {
        look_ahead: true,
        calendar: true,
    },
    Way {
        look_ahead: true,
        calendar: false,
    },
    Way {
        look_ahead: false,
        calendar: true,
    },
];

/// How a run is driven: its way of taking events, and in how many equal steps.
fn run(text: &str, way: Way, steps: u32) -> String {
    let scenario = parse(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap();
    sim.set_looks_ahead(way.look_ahead);
    sim.set_uses_calendar(way.calendar);
    let end = sim.end();
    for step in 1..=steps {
        sim.run_until(end / u64::from(steps) * u64::from(step));
    }
    sim.run();
    assert!(sim.conservation_violations().is_empty());
    let events = sim.events_processed();
    assert!(
        events > 10_000,
        "a run long enough to matter: {events} events"
    );
    let results = collect(&mut sim, &scenario.name, scenario.simulation.seed);
    format!("{events} {:?}", tables_as_text(&results))
}

fn assert_same_either_way(text: &str) {
    let plain = run(text, PLAIN, 1);
    for way in WAYS {
        let (look_ahead, calendar) = (way.look_ahead, way.calendar);
        let context = format!("looking ahead {look_ahead}, calendar {calendar}");
        assert_eq!(run(text, way, 1), plain, "{context}: a result changed");
        assert_eq!(
            run(text, way, 37),
            plain,
            "{context}: pausing changed a result"
        );
    }
    assert_eq!(run(text, PLAIN, 37), plain, "pausing a run");
}

#[test]
fn tcp_flows_on_red_give_the_same_results_either_way() {
    assert_same_either_way(TCP_MIX);
}

#[test]
fn the_showcase_gives_the_same_results_either_way() {
    assert_same_either_way(include_str!("../../../scenarios/showcase.toml"));
}

#[test]
fn open_loop_sources_give_the_same_results_either_way() {
    assert_same_either_way(include_str!("../../../scenarios/open_loop_mix.toml"));
}

/// A host with two ports beside hosts with one, two paths of different lengths to one host,
/// and a router reached by several hosts.
const MULTI_HOMED: &str = r#"
name = "multi-homed"
[simulation]
duration = "8s"
seed = 11
[[nodes]]
name = "h0"
[[nodes]]
name = "r1"
kind = "router"
[[nodes]]
name = "r2"
kind = "router"
[[nodes]]
name = "h3"
[[nodes]]
name = "h4"
[[links]]
from = "h0"
to = "r1"
rate = "20Mbps"
delay = "2ms"
[[links]]
from = "h0"
to = "r2"
rate = "20Mbps"
delay = "1ms"
[[links]]
from = "r1"
to = "h3"
rate = "5Mbps"
delay = "10ms"
queue = { kind = "fifo", limit = 30 }
[[links]]
from = "r2"
to = "h3"
rate = "5Mbps"
delay = "15ms"
[[links]]
from = "h4"
to = "r1"
rate = "20Mbps"
delay = "3ms"
[[flows]]
name = "a{i}"
count = 3
src = "h0"
dst = "h3"
source = { kind = "tcp", cc = "newreno" }
[[flows]]
name = "b{i}"
count = 3
src = "h4"
dst = "h3"
start = "0.5s"
source = { kind = "tcp", cc = "newreno" }
[[flows]]
name = "c"
src = "h3"
dst = "h4"
source = { kind = "cbr", rate = "1Mbps", size = 500 }
"#;

#[test]
fn hosts_with_one_port_and_with_two_give_the_same_results_either_way() {
    assert_same_either_way(MULTI_HOMED);
}

#[test]
fn many_short_pauses_change_nothing() {
    let plain = run(TCP_MIX, PLAIN, 1);
    let scenario = parse(TCP_MIX, &[]).unwrap();
    let mut sim = build(&scenario).unwrap();
    sim.set_looks_ahead(true);
    sim.set_uses_calendar(true);
    for ms in (0..12_000).step_by(7) {
        sim.run_until(secs(f64::from(ms) / 1000.0));
    }
    sim.run();
    let events = sim.events_processed();
    let results = collect(&mut sim, &scenario.name, scenario.simulation.seed);
    assert_eq!(format!("{events} {:?}", tables_as_text(&results)), plain);
}
