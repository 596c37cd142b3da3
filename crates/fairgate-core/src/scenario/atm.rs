//! A scenario with an `[atm]` section [Goyal98, §4]: the cell network's run, timed by the
//! scenario's `[simulation]`. Nodes, links, flows and a topology are refused beside it, and so
//! are the `[simulation]` fields the cell network does not use (docs/models/gfr.md).

use super::schema::Scenario;
use super::validate::measurement_window;
use crate::atm::AtmConfig;
use crate::config::error::{join, ScenarioError};
use crate::engine::to_secs;

/// The cell-network run a scenario describes; errors name the field path.
pub fn atm_config(s: &Scenario) -> Result<AtmConfig, ScenarioError> {
    let spec = s
        .atm
        .as_ref()
        .ok_or_else(|| ScenarioError::new("atm", "got none, expected an [atm] section"))?;
    refuse_packet_network(s)?;
    super::validate::check_scenario_name(s)?;
    let sim = &s.simulation;
    let (warmup, _) = measurement_window(sim)?;
    let duration = sim.duration.secs();
    let sample_interval = match sim.sample_interval {
        Some(d) => d.secs(),
        None => duration / 1000.0,
    };
    let config = AtmConfig {
        seed: sim.seed,
        duration,
        warmup: to_secs(warmup),
        sample_interval,
        memory_limit_mib: sim
            .memory_limit_mib
            .unwrap_or(super::budget::DEFAULT_LIMIT_MIB),
        spec: spec.clone(),
    };
    config.validate()?;
    Ok(config)
}

/// An ATM scenario builds its own topology and measures from the warm-up to the end.
fn refuse_packet_network(s: &Scenario) -> Result<(), ScenarioError> {
    let why = "expected none in a scenario with an [atm] section (it builds its own topology)";
    let unused = [
        ("topology", s.topology.is_some()),
        ("nodes", !s.nodes.is_empty()),
        ("links", !s.links.is_empty()),
        ("flows", !s.flows.is_empty()),
    ];
    if let Some((field, _)) = unused.iter().find(|(_, present)| *present) {
        return Err(ScenarioError::new(*field, why));
    }
    let sim = &s.simulation;
    let unsupported = [
        ("end", sim.end.is_some()),
        ("trace_every_change", sim.trace_every_change),
    ];
    match unsupported.iter().find(|(_, present)| *present) {
        Some((field, _)) => Err(ScenarioError::new(
            join("simulation", field),
            "expected none: the cell network measures from the warm-up to the duration",
        )),
        None => Ok(()),
    }
}
