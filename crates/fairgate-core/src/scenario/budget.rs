//! The memory a scenario implies, estimated at validation before anything is allocated, so a
//! single value (a 1 ns sample interval over a long run, a billion flows) is refused with its
//! field named instead of aborting the process when the allocation fails.
//!
//! Decisions: the estimate counts what grows with the scenario's numbers: each flow's state
//! (sender, receiver, ACK flow, counters, hosts and access links of a topology builder; about
//! 7 KiB per TCP flow measured by the scale benchmark, rounded up to 8 KiB) and each series
//! row (one per port and per flow at each sample, 80 bytes with the copy into results), and
//! the packets the network can hold at once (`in_flight`: full queues and links, or the TCP
//! windows when those allow fewer; each packet is its arena record plus about 32 bytes of
//! queue slot and event), and what a source keeps per unit of its own numbers (an HTTP
//! source's connections, a web source's sessions: `SourceConfig::population`). A bounded drop
//! and mark log (`record_drops = N`) counts 96 bytes per event (the row and its columns in the
//! results); `"all"` cannot be estimated before the run and counts nothing here: the engine
//! checks it, and `trace_every_change`, against the room left ([`log_room`]). The default
//! limit is 4 GiB; `simulation.memory_limit_mib` raises (or lowers) it on purpose.

use super::error::ScenarioError;
use super::schema::Scenario;
use super::topology::TopologySpec;
use crate::stats::events::EventLimit;
use crate::stats::log_room::{LogRoom, BYTES_PER_DROP_EVENT};

pub use crate::config::memory_limit::{MemoryLimit, DEFAULT_LIMIT_MIB};
const BYTES_PER_FLOW: f64 = 8192.0;
const BYTES_PER_NODE: f64 = 256.0;
const BYTES_PER_PORT: f64 = 1024.0;
const BYTES_PER_SERIES_ROW: f64 = 80.0;
const MIB: f64 = 1024.0 * 1024.0;
const BYTES_PER_HELD_PACKET: f64 = std::mem::size_of::<crate::net::packet::Packet>() as f64 + 32.0;

/// The estimate's parts, in bytes, and the numbers behind them.
struct Estimate {
    flows: f64,
    nodes: f64,
    sources: Vec<SourceState>,
    state: f64,
    samples: f64,
    series_count: f64,
    series: f64,
    events: f64,
    holders: Vec<super::in_flight::Holder>,
    capacity: f64,
    held: f64,
    packets: f64,
}

impl Estimate {
    fn of(s: &Scenario) -> Estimate {
        let (topo_nodes, topo_links) = topology_size(s.topology.as_ref());
        let nodes = topo_nodes + s.nodes.len() as f64;
        let ports = 2.0 * (topo_links + s.links.len() as f64);
        let flows: f64 = s.flows.iter().map(|f| f.count.unwrap_or(1) as f64).sum();
        let sources = source_state(s);
        let state = flows * BYTES_PER_FLOW
            + nodes * BYTES_PER_NODE
            + ports * BYTES_PER_PORT
            + sources.iter().map(|source| source.bytes).sum::<f64>();
        let interval = s
            .simulation
            .sample_interval
            .map_or(s.simulation.duration.secs() / 1000.0, |d| d.secs());
        let samples = (s.simulation.duration.secs() / interval.max(1e-12)).floor() + 1.0;
        let series_count = ports + 2.0 * flows + 1.0;
        let events = match s.simulation.record_drops {
            Some(EventLimit::First(n)) => n as f64 * BYTES_PER_DROP_EVENT,
            _ => 0.0,
        };
        let holders = super::in_flight::holders(s);
        let capacity: f64 = holders.iter().map(|h| h.packets).sum();
        let held = super::in_flight::window_bound(s).map_or(capacity, |w| w.min(capacity));
        Estimate {
            flows,
            nodes,
            sources,
            state,
            samples,
            series_count,
            series: samples * series_count * BYTES_PER_SERIES_ROW,
            events,
            holders,
            capacity,
            held,
            packets: held * BYTES_PER_HELD_PACKET,
        }
    }

    fn total(&self) -> f64 {
        self.state + self.series + self.packets + self.events
    }
}

/// Refuses a scenario whose estimated memory exceeds its limit, naming the largest cause.
pub fn check_memory(s: &Scenario) -> Result<(), ScenarioError> {
    check_memory_within(s, MemoryLimit::of(s.simulation.memory_limit_mib))
}

/// [`check_memory`] against `limit`.
pub fn check_memory_within(s: &Scenario, limit: MemoryLimit) -> Result<(), ScenarioError> {
    let limit_mib = limit.mib;
    let (within, raise) = (limit.words(), limit.raise());
    let e = Estimate::of(s);
    let total_mib = e.total() / MIB;
    if total_mib <= limit_mib as f64 {
        return Ok(());
    }
    if e.events > e.series && e.events > e.state && e.events > e.packets {
        return Err(ScenarioError::new(
            "simulation.record_drops",
            format!(
                "got {:.0} events, which need about {total_mib:.0} MiB, more than \
                 {within}; expected a smaller count, {raise}",
                e.events / BYTES_PER_DROP_EVENT
            ),
        ));
    }
    let smaller = "expected a smaller value".to_string();
    let (path, cause, expected) = if e.packets >= e.state.max(e.series) && e.held == e.capacity {
        let biggest = e
            .holders
            .iter()
            .max_by(|a, b| a.packets.total_cmp(&b.packets))
            .expect("packets need a holder");
        let cause = format!(
            "full queues and links holding {} packets ({} here)",
            count(e.held),
            count(biggest.packets)
        );
        (biggest.path.clone(), cause, smaller)
    } else if e.packets >= e.state.max(e.series) {
        // The windows are what hold the packets: fewer flows (or smaller windows) fit.
        let (path, cause) = largest_population(s, e.flows, e.nodes);
        (path, cause, smaller)
    } else if e.state / MIB <= limit_mib as f64 {
        // Unless the state alone is too large, sampling less often is the change that fits.
        (
            "simulation.sample_interval".to_string(),
            format!(
                "{} samples x {} series",
                count(e.samples),
                count(e.series_count)
            ),
            longer_interval(s, &e, limit_mib),
        )
    } else {
        let (path, cause) = largest_source(&e.sources, e.state)
            .unwrap_or_else(|| largest_population(s, e.flows, e.nodes));
        (path, cause, smaller)
    };
    Err(ScenarioError::new(
        path,
        format!("{cause} need about {total_mib:.0} MiB, more than {within}; {expected}, {raise}"),
    ))
}

/// What a too-short sample interval should become: the shortest interval whose series fit
/// beside everything else the scenario holds, when any does.
fn longer_interval(s: &Scenario, e: &Estimate, limit_mib: u64) -> String {
    let room = limit_mib as f64 * MIB - e.state - e.packets - e.events;
    let samples = (room / (e.series_count * BYTES_PER_SERIES_ROW)).floor() - 1.0;
    if samples < 1.0 {
        return "expected a longer interval".to_string();
    }
    let shortest = s.simulation.duration.secs() / samples;
    format!(
        "expected a longer interval (at least {})",
        seconds_up(shortest)
    )
}

/// A count as a whole number up to ten million (`1001`), in scientific notation above
/// (`1.000e12`), where the last digits say nothing.
fn count(n: f64) -> String {
    if n < 1e7 {
        format!("{n:.0}")
    } else {
        format!("{n:.3e}")
    }
}

/// `secs` rounded up to three significant digits, as a duration string.
fn seconds_up(secs: f64) -> String {
    let digits = 2 - secs.log10().floor() as i32;
    let rounded = if digits >= 0 {
        let scale = 10f64.powi(digits);
        (secs * scale).ceil() / scale
    } else {
        let step = 10f64.powi(-digits);
        (secs / step).ceil() * step
    };
    format!("\"{rounded}s\"")
}

/// The bytes of `simulation.memory_limit_mib` the scenario's estimate leaves free.
pub fn free_bytes(s: &Scenario) -> f64 {
    let limit = MemoryLimit::of(s.simulation.memory_limit_mib);
    (limit.mib as f64 * MIB - Estimate::of(s).total()).max(0.0)
}

/// The room a scenario's unsized logs have, if it keeps any.
pub fn log_room(s: &Scenario) -> Option<LogRoom> {
    let traces_every_change = s.simulation.trace_every_change;
    let drops_all = matches!(s.simulation.record_drops, Some(EventLimit::All));
    let transfers = s
        .flows
        .iter()
        .position(|f| f.source.records_transfers())
        .map(|i| format!("flows[{i}].source.record_transfers"));
    if !(traces_every_change || drops_all || transfers.is_some()) {
        return None;
    }
    Some(LogRoom {
        bytes: free_bytes(s),
        limit: MemoryLimit::of(s.simulation.memory_limit_mib),
        traces_every_change,
        drops_all,
        transfers,
    })
}

/// What one flow entry's source keeps for its own numbers (all of the entry's `count` flows).
struct SourceState {
    path: String,
    field: &'static str,
    count: f64,
    bytes: f64,
}

fn source_state(s: &Scenario) -> Vec<SourceState> {
    s.flows
        .iter()
        .enumerate()
        .flat_map(|(i, flow)| {
            let flows = flow.count.unwrap_or(1) as f64;
            flow.source
                .population()
                .into_iter()
                .map(move |p| SourceState {
                    path: format!("flows[{i}].source.{}", p.field),
                    field: p.field,
                    count: p.count,
                    bytes: p.count * p.bytes_each * flows,
                })
        })
        .collect()
}

/// The source whose own state is most of `state`, if one is.
fn largest_source(sources: &[SourceState], state: f64) -> Option<(String, String)> {
    let biggest = sources.iter().max_by(|a, b| a.bytes.total_cmp(&b.bytes))?;
    (biggest.bytes * 2.0 >= state).then(|| {
        (
            biggest.path.clone(),
            format!("got {:.0} {} here, which", biggest.count, biggest.field),
        )
    })
}

/// Nodes and (duplex) links a topology builder adds.
fn topology_size(topology: Option<&TopologySpec>) -> (f64, f64) {
    match topology {
        Some(TopologySpec::Dumbbell(d)) => {
            let n = d.senders as f64;
            (2.0 + 2.0 * n, 1.0 + 2.0 * n)
        }
        Some(TopologySpec::Chain(c)) => {
            let k = c.hops as f64;
            (3.0 + 3.0 * k, 3.0 * k + 2.0)
        }
        Some(TopologySpec::Graph(_)) | None => (0.0, 0.0),
    }
}

/// The field whose number dominates the state: the largest flow `count` or the senders.
fn largest_population(s: &Scenario, flows: f64, nodes: f64) -> (String, String) {
    let biggest = s
        .flows
        .iter()
        .enumerate()
        .max_by_key(|(_, f)| f.count.unwrap_or(1));
    match (biggest, &s.topology) {
        (Some((i, f)), _) if flows >= nodes / 2.0 => (
            format!("flows[{i}].count"),
            format!(
                "got {} flows here ({flows:.0} in all), which",
                f.count.unwrap_or(1)
            ),
        ),
        (_, Some(TopologySpec::Dumbbell(d))) => (
            "topology.senders".into(),
            format!("got {} senders, which", d.senders),
        ),
        (_, Some(TopologySpec::Chain(c))) => (
            "topology.hops".into(),
            format!("got {} hops, which", c.hops),
        ),
        _ => ("nodes".into(), format!("{nodes:.0} nodes")),
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::parse;

    const BASE: &str = "[simulation]\nduration = \"1000s\"\n";

    #[test]
    fn a_drop_log_larger_than_the_memory_limit_is_refused() {
        let text = format!("{BASE}record_drops = 100000000000\n[[nodes]]\nname = \"a\"\n");
        let e = parse(&text, &[]).unwrap_err();
        assert_eq!(e.path, "simulation.record_drops");
        assert!(parse(&text.replace("100000000000", "\"all\""), &[]).is_ok());
    }

    #[test]
    fn a_smaller_address_space_limit_is_the_limit_and_is_named() {
        use super::{check_memory_within, MemoryLimit};
        use crate::config::memory_limit::{Cap, Room};
        let text = format!("{BASE}sample_interval = \"1ms\"\n[[nodes]]\nname = \"a\"\n");
        let s = parse(&text, &[]).unwrap(); // 1e6 samples of one series: about 76 MiB
        let mappable = |mib| Room {
            mib,
            cap: Cap::AddressSpace,
        };
        let ulimit = MemoryLimit::within(None, Some(mappable(100)));
        assert_eq!((ulimit.mib, ulimit.by_process()), (50, true));
        let e = check_memory_within(&s, ulimit).unwrap_err();
        assert_eq!(e.path, "simulation.sample_interval");
        let words = "more than 50 MiB, half the 100 MiB this process may still map (ulimit -v";
        assert!(e.message.contains(words), "{e}");
        assert!(e.message.ends_with("or run with a larger ulimit -v"), "{e}");
        let roomy = MemoryLimit::within(None, Some(mappable(10_000)));
        assert!(check_memory_within(&s, roomy).is_ok());
        let asked = MemoryLimit::within(Some(10), Some(mappable(100)));
        assert_eq!((asked.mib, asked.by_process()), (10, false));
        let e = check_memory_within(&s, asked).unwrap_err();
        assert!(e.message.contains("memory limit of 10 MiB"), "{e}");
        assert!(
            e.message
                .ends_with("or raise simulation.memory_limit_mib on purpose"),
            "{e}"
        );
    }

    #[test]
    fn a_smaller_memory_cgroup_or_host_limit_is_the_limit_and_is_named() {
        use super::{check_memory_within, MemoryLimit};
        use crate::config::memory_limit::{Cap, Room};
        let text = format!("{BASE}sample_interval = \"1ms\"\n[[nodes]]\nname = \"a\"\n");
        let s = parse(&text, &[]).unwrap();
        let group = Room {
            mib: 100,
            cap: Cap::Group("/sys/fs/cgroup/job".into()),
        };
        let e = check_memory_within(&s, MemoryLimit::within(None, Some(group))).unwrap_err();
        assert_eq!(e.path, "simulation.sample_interval");
        let words = "more than 50 MiB, half the 100 MiB this process may still hold under its \
                     memory cgroup's limit (/sys/fs/cgroup/job: the results are copied once";
        assert!(e.message.contains(words), "{e}");
        let raise = "or run with a larger memory limit (the container's or the job's)";
        assert!(e.message.ends_with(raise), "{e}");
        let host = Room {
            mib: 100,
            cap: Cap::Host {
                what: "its host's limit of 120 MiB".into(),
                raise: "or a host with more".into(),
            },
        };
        let e = check_memory_within(&s, MemoryLimit::within(None, Some(host))).unwrap_err();
        let words = "more than 50 MiB, half the 100 MiB this process may still hold under its \
                     host's limit of 120 MiB (half: the results are copied once";
        assert!(e.message.contains(words), "{e}");
        assert!(e.message.ends_with("or a host with more"), "{e}");
    }

    #[test]
    fn counts_are_whole_numbers_until_their_last_digits_say_nothing() {
        assert_eq!(super::count(1001.0), "1001");
        assert_eq!(super::count(600003.0), "600003");
        assert_eq!(super::count(1e12), "1.000e12");
    }

    #[test]
    fn a_tiny_sample_interval_over_a_long_run_is_refused() {
        let text = format!("{BASE}sample_interval = \"1ns\"\n[[nodes]]\nname = \"a\"\n");
        let e = parse(&text, &[]).unwrap_err();
        assert_eq!(e.path, "simulation.sample_interval");
        assert!(e.message.contains("memory limit of 4096 MiB"), "{e}");
        assert!(e.message.starts_with("1.000e12 samples x 1 series"), "{e}");
        let suggested = e
            .message
            .split("at least \"")
            .nth(1)
            .expect("a suggested interval");
        let suggested = &suggested[..suggested.find('"').unwrap()];
        assert!(parse(&text.replace("1ns", suggested), &[]).is_ok(), "{e}");
        let raised = text.replace("duration", "memory_limit_mib = 100000000\nduration");
        assert!(parse(&raised, &[]).is_ok());
    }

    #[test]
    fn a_billion_senders_are_refused_before_anything_is_built() {
        let text = format!(
            "{BASE}[topology]\nkind = \"dumbbell\"\nsenders = 1000000000\n\
             bottleneck = {{ rate = \"10Mbps\" }}\naccess = {{ rate = \"100Mbps\" }}\n"
        );
        let e = parse(&text, &[]).unwrap_err();
        assert_eq!(e.path, "topology.senders");
    }

    /// Two hosts and an open-loop flow between them (windows do not bound it).
    const TWO_NODES: &str = "[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n\
        [[flows]]\nsrc = \"a\"\ndst = \"b\"\nsource = { kind = \"cbr\", rate = \"1Mbps\" }\n";

    #[test]
    fn a_source_state_of_a_billion_is_refused_naming_the_field() {
        for (kind, field) in [
            ("http", "connections"),
            ("web", "sessions"),
            ("web", "objects"),
            ("generic", "window"),
            ("packet_pair", "n_b"),
        ] {
            let text = format!(
                "{BASE}[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n\
                 [[links]]\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\n\
                 [[flows]]\nsrc = \"a\"\ndst = \"b\"\n\
                 source = {{ kind = \"{kind}\", {field} = 1000000000 }}\n"
            );
            let e = parse(&text, &[]).unwrap_err();
            assert_eq!(e.path, format!("flows[0].source.{field}"));
            assert!(
                e.message.contains(&format!("got 1000000000 {field}")),
                "{e}"
            );
            assert!(parse(&text.replace("1000000000", "10000"), &[]).is_ok());
        }
    }

    #[test]
    fn a_huge_transmit_ring_is_refused_naming_the_device_queue() {
        let text = format!(
            "{BASE}{TWO_NODES}[[links]]\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\n\
             device_queue = 1000000000000\n"
        );
        let e = parse(&text, &[]).unwrap_err();
        assert_eq!(e.path, "links[0].device_queue");
        assert!(parse(&text.replace("1000000000000", "1000"), &[]).is_ok());
    }

    #[test]
    fn a_huge_queue_limit_is_refused_naming_the_limit() {
        let text = format!(
            "{BASE}{TWO_NODES}[[links]]\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\n\
             queue = {{ kind = \"fifo\", limit = 100000000 }}\n"
        );
        let e = parse(&text, &[]).unwrap_err();
        assert_eq!(e.path, "links[0].queue.limit");
        assert!(e.message.contains("2.000e8 packets"), "{e}");
        assert!(parse(&text.replace("100000000", "1000000"), &[]).is_ok());
    }

    #[test]
    fn a_fast_long_link_is_refused_naming_its_delay() {
        let text = format!(
            "{BASE}{TWO_NODES}[[links]]\nfrom = \"a\"\nto = \"b\"\nrate = \"1Tbps\"\n\
             delay = \"10s\"\n"
        );
        let e = parse(&text, &[]).unwrap_err();
        assert_eq!(e.path, "links[0].delay");
        assert!(parse(&text.replace("10s", "10ms"), &[]).is_ok());
    }

    #[test]
    fn tcp_windows_bound_held_packets_and_an_open_loop_source_does_not() {
        let tcp = format!(
            "{BASE}[topology]\nkind = \"dumbbell\"\nsenders = 5000\n\
             bottleneck = {{ rate = \"10Mbps\" }}\n\
             access = {{ rate = \"100Mbps\", queue = {{ kind = \"fifo\", limit = 5000 }} }}\n\
             [[flows]]\nname = \"t{{i}}\"\ncount = 5000\nsrc = \"s{{i}}\"\ndst = \"d{{i}}\"\n\
             source = {{ kind = \"tcp\" }}\n"
        );
        assert!(parse(&tcp, &[]).is_ok());
        let cbr = format!(
            "{tcp}[[flows]]\nsrc = \"s0\"\ndst = \"d1\"\n\
             source = {{ kind = \"cbr\", rate = \"1Mbps\" }}\n"
        );
        let e = parse(&cbr, &[]).unwrap_err();
        assert_eq!(e.path, "topology.access.queue.limit");
    }
}
