//! The memory a scenario implies, estimated at validation before anything is allocated, so a
//! single value (a 1 ns sample interval over a long run, a billion flows) is refused with its
//! field named instead of aborting the process when the allocation fails.
//!
//! Decisions: the estimate counts what grows with the scenario's numbers: each flow's state
//! (sender, receiver, ACK flow, counters, hosts and access links of a topology builder; about
//! 7 KiB per TCP flow measured by the scale benchmark, rounded up to 8 KiB) and each series
//! row (one per port and per flow at each sample, 80 bytes with the copy into results). The
//! A bounded drop and mark log (`record_drops = N`) counts 96 bytes per event (the row and its
//! columns in the results); `"all"` cannot be estimated before the run and counts nothing. The
//! default limit is 4 GiB; `simulation.memory_limit_mib` raises (or lowers) it on purpose.

use super::error::ScenarioError;
use super::schema::Scenario;
use super::topology::TopologySpec;
use crate::stats::events::EventLimit;

/// The default of `simulation.memory_limit_mib`.
pub const DEFAULT_LIMIT_MIB: u64 = 4096;
const BYTES_PER_FLOW: f64 = 8192.0;
const BYTES_PER_NODE: f64 = 256.0;
const BYTES_PER_PORT: f64 = 1024.0;
const BYTES_PER_SERIES_ROW: f64 = 80.0;
const BYTES_PER_DROP_EVENT: f64 = 96.0;
const MIB: f64 = 1024.0 * 1024.0;

/// Refuses a scenario whose estimated memory exceeds its limit, naming the largest cause.
pub fn check_memory(s: &Scenario) -> Result<(), ScenarioError> {
    let limit_mib = s.simulation.memory_limit_mib.unwrap_or(DEFAULT_LIMIT_MIB);
    let (topo_nodes, topo_links) = topology_size(s.topology.as_ref());
    let nodes = topo_nodes + s.nodes.len() as f64;
    let ports = 2.0 * (topo_links + s.links.len() as f64);
    let flows: f64 = s.flows.iter().map(|f| f.count.unwrap_or(1) as f64).sum();
    let state = flows * BYTES_PER_FLOW + nodes * BYTES_PER_NODE + ports * BYTES_PER_PORT;
    let interval = s
        .simulation
        .sample_interval
        .map_or(s.simulation.duration.secs() / 1000.0, |d| d.secs());
    let samples = (s.simulation.duration.secs() / interval.max(1e-12)).floor() + 1.0;
    let series_count = ports + 2.0 * flows + 1.0;
    let series = samples * series_count * BYTES_PER_SERIES_ROW;
    let events = match s.simulation.record_drops {
        Some(EventLimit::First(n)) => n as f64 * BYTES_PER_DROP_EVENT,
        _ => 0.0,
    };
    let total_mib = (state + series + events) / MIB;
    if total_mib <= limit_mib as f64 {
        return Ok(());
    }
    if events > series && events > state {
        return Err(ScenarioError::new(
            "simulation.record_drops",
            format!(
                "got {:.0} events, which need about {total_mib:.0} MiB, more than the \
                 memory limit of {limit_mib} MiB; expected a smaller count, or raise \
                 simulation.memory_limit_mib on purpose",
                events / BYTES_PER_DROP_EVENT
            ),
        ));
    }
    // Unless the state alone is too large, sampling less often is the change that fits.
    let (path, cause) = if state / MIB <= limit_mib as f64 {
        (
            "simulation.sample_interval".to_string(),
            format!("{samples:.3e} samples x {series_count:.0} series",),
        )
    } else {
        largest_population(s, flows, nodes)
    };
    Err(ScenarioError::new(
        path,
        format!(
            "{cause} need about {total_mib:.0} MiB, more than the memory limit of {limit_mib} \
             MiB; expected a smaller value, or raise simulation.memory_limit_mib on purpose"
        ),
    ))
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
    fn a_tiny_sample_interval_over_a_long_run_is_refused() {
        let text = format!("{BASE}sample_interval = \"1ns\"\n[[nodes]]\nname = \"a\"\n");
        let e = parse(&text, &[]).unwrap_err();
        assert_eq!(e.path, "simulation.sample_interval");
        assert!(e.message.contains("memory limit of 4096 MiB"), "{e}");
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
}
