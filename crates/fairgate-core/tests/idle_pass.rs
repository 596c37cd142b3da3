//! An arrival at an idle link skips a discipline that lets it pass (an empty drop-tail or
//! drop-from-front FIFO) and keeps every result: each scenario runs with its disciplines
//! wrapped so they let arrivals pass as they would, and wrapped so none passes, and every
//! table must be identical. A byte limit below the packet size, a device queue and a
//! monitored port each take the full path.

mod results_support;

use fairgate_core::net::packet::PacketId;
use fairgate_core::qdisc::{Qdisc, QdiscCtx};
use fairgate_core::results::collect;
use fairgate_core::scenario::{build, parse};
use results_support::tables_as_text;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A discipline forwarding every call to the one it wraps; it lets arrivals pass as that one
/// does with `passes`, never without, and counts the arrivals it is given.
struct Wrapped {
    inner: Box<dyn Qdisc>,
    passes: bool,
    enqueued: Arc<AtomicU64>,
}

impl Qdisc for Wrapped {
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        self.enqueued.fetch_add(1, Ordering::Relaxed);
        self.inner.enqueue(packet, ctx)
    }
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        self.inner.dequeue(ctx)
    }
    fn peek(&self) -> Option<PacketId> {
        self.inner.peek()
    }
    fn len_packets(&self) -> usize {
        self.inner.len_packets()
    }
    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
    }
    fn init(&mut self, ctx: &mut QdiscCtx) {
        self.inner.init(ctx)
    }
    fn on_timer(&mut self, ctx: &mut QdiscCtx) {
        self.inner.on_timer(ctx)
    }
    fn congestion_probability(&self) -> f64 {
        self.inner.congestion_probability()
    }
    fn state(&self) -> Vec<(&'static str, f64)> {
        self.inner.state()
    }
    fn passes_to_idle_link(&self) -> u32 {
        if self.passes {
            self.inner.passes_to_idle_link()
        } else {
            0
        }
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
}

/// Every table of a run as text, and the arrivals its disciplines were given.
fn run(text: &str, passes: bool) -> (String, u64) {
    let overrides = ["simulation.record_drops=\"all\"".to_string()];
    let scenario = parse(text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap();
    let enqueued = Arc::new(AtomicU64::new(0));
    let names: Vec<String> = sim.ports().iter().map(|p| p.name.clone()).collect();
    for name in &names {
        let enqueued = Arc::clone(&enqueued);
        sim.wrap_qdisc(name, |inner| {
            Box::new(Wrapped {
                inner,
                passes,
                enqueued,
            })
        });
    }
    sim.run();
    assert!(sim.conservation_violations().is_empty());
    let events = sim.events_processed();
    let results = collect(&mut sim, &scenario.name, scenario.simulation.seed);
    let text = format!("{events} {:?}", tables_as_text(&results));
    (text, enqueued.load(Ordering::Relaxed))
}

/// The results with and without passing are the same; returns the arrivals the
/// disciplines were given each way.
fn assert_same_either_way(text: &str) -> (u64, u64) {
    let (passing, given_passing) = run(text, true);
    let (full, given_all) = run(text, false);
    assert_eq!(passing, full, "letting arrivals pass changed a result");
    (given_passing, given_all)
}

const TCP_OVER_FIFOS: &str = r#"
name = "tcp-over-fifos"
[simulation]
duration = "10s"
seed = 5
sample_interval = "100ms"
[topology]
kind = "dumbbell"
senders = 12
bottleneck = { rate = "8Mbps", delay = "20ms", queue = { kind = "fifo", limit = 40 } }
access = { rate = "100Mbps", delay = "1ms", queue = { kind = "fifo", limit = 20 } }
[[flows]]
name = "t{i}"
count = 12
src = "s{i}"
dst = "d{i}"
start = { dist = "uniform", min = "0s", max = "2s" }
source = { kind = "tcp", cc = "newreno" }
[[flows]]
name = "p{i}"
count = 3
src = "s{i}"
dst = "d{i}"
start = "1s"
stop = "8s"
source = { kind = "poisson", rate = "3Mbps", size = 700 }
"#;

#[test]
fn tcp_and_poisson_over_fifos_give_the_same_results_and_mostly_pass() {
    let (given_passing, given_all) = assert_same_either_way(TCP_OVER_FIFOS);
    assert!(
        given_passing * 2 < given_all,
        "most arrivals meet an idle access link: {given_passing} of {given_all} given"
    );
}

#[test]
fn drop_from_front_fifos_give_the_same_results() {
    let text = TCP_OVER_FIFOS.replace("kind = \"fifo\"", "kind = \"drop_from_front\"");
    let (given_passing, given_all) = assert_same_either_way(&text);
    assert!(given_passing < given_all);
}

#[test]
fn a_byte_limit_below_the_packet_drops_it_at_an_empty_queue_either_way() {
    let text = TCP_OVER_FIFOS.replace("limit = 20 }", "limit = 20, limit_bytes = 800 }");
    let (passing, _) = run(&text, true);
    assert!(
        passing.contains("overflow"),
        "the 1,040-byte segments overflow, the 700-byte packets and the ACKs pass"
    );
    let (given_passing, given_all) = assert_same_either_way(&text);
    assert!(given_passing < given_all);
}

#[test]
fn a_device_queue_takes_the_full_path_with_the_same_results() {
    let text = TCP_OVER_FIFOS.replace(
        "access = { rate = \"100Mbps\"",
        "access = { device_queue = 3, rate = \"100Mbps\"",
    );
    assert_same_either_way(&text);
}

#[test]
fn the_showcase_and_a_monitored_port_give_the_same_results() {
    assert_same_either_way(include_str!("../../../scenarios/showcase.toml"));
    assert_same_either_way(include_str!("../../../scenarios/satellite_pep.toml"));
}
