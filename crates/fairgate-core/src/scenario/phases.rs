//! The compact form of a traffic schedule on a flow entry:
//! `phases = { counts = [10, 50, 100], length = "200s" }` steps the number of active flows of
//! the entry through `counts`, one phase of `length` each, as the SFG evaluation steps its
//! forward FTP flows [Chung06, §4.1].
//!
//! The entry expands, when the scenario is read, into groups of flows (`count`, `start`,
//! `stop`) named `{name}{g}.{i}` (`name` defaults to `phase`); Python's `Scenario.phases()`
//! writes this entry. The phase boundaries before the end of the run join
//! `[simulation] phase_edges`.
//! A rise opens a group of the difference; a fall stops the most recently started flows
//! first. Errors in an expanded group name the entry as written (`flows[k]`).

use super::schema::{FlowSpec, Scenario, StartSpec};
use crate::config::dist::{Dist, DurationDist};
use crate::config::error::ScenarioError;
use crate::config::units::Duration;
use serde::{Deserialize, Serialize};

/// `phases = { counts = [...], length = "200s" }`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// Active flows in each phase.
    pub counts: Vec<u32>,
    /// The length of every phase.
    pub length: Duration,
}

/// A group of flows active over phases `start..stop` (`None`: to the end of the schedule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseGroup {
    pub count: u32,
    pub start: usize,
    pub stop: Option<usize>,
}

/// The groups whose active total in phase `j` is `counts[j]`, ordered by start, and among
/// groups of one start those without a stop first, then the later stop first.
pub fn phase_groups(counts: &[u32]) -> Vec<PhaseGroup> {
    let mut running: Vec<(u32, usize)> = Vec::new();
    let mut done = Vec::new();
    let mut active = 0;
    for (j, &target) in counts.iter().enumerate() {
        if target > active {
            running.push((target - active, j));
        }
        let mut to_stop = active.saturating_sub(target);
        while to_stop > 0 {
            let (count, start) = running.pop().expect("active flows are running");
            let stopped = count.min(to_stop);
            done.push(PhaseGroup {
                count: stopped,
                start,
                stop: Some(j),
            });
            if count > stopped {
                running.push((count - stopped, start));
            }
            to_stop -= stopped;
        }
        active = target;
    }
    done.extend(running.into_iter().map(|(count, start)| PhaseGroup {
        count,
        start,
        stop: None,
    }));
    done.sort_by_key(|g| (g.start, std::cmp::Reverse(g.stop.unwrap_or(usize::MAX))));
    done
}

/// Replaces every flow entry with `phases` by its groups and adds the phase edges; records
/// in each flow which entry it was written as.
pub fn expand_phases(s: &mut Scenario) -> Result<(), ScenarioError> {
    if s.flows.iter().all(|f| f.phases.is_none()) {
        return Ok(());
    }
    let mut flows = Vec::with_capacity(s.flows.len());
    let mut edges = Vec::new();
    for (k, f) in std::mem::take(&mut s.flows).into_iter().enumerate() {
        let Some(spec) = f.phases.clone() else {
            flows.push(FlowSpec {
                entry: Some(k),
                ..f
            });
            continue;
        };
        check(&f, &spec, &format!("flows[{k}]"))?;
        let length = spec.length.secs();
        let at = |j: usize| j as f64 * length;
        edges.extend((1..spec.counts.len()).map(|j| Duration::from_secs(at(j))));
        let name = f.name.clone().unwrap_or_else(|| "phase".to_string());
        for (g, group) in phase_groups(&spec.counts).into_iter().enumerate() {
            flows.push(FlowSpec {
                name: Some(format!("{name}{g}.{{i}}")),
                start: StartSpec(DurationDist(Dist::constant(at(group.start)))),
                stop: group.stop.map(|j| Duration::from_secs(at(j))),
                count: Some(group.count),
                phases: None,
                entry: Some(k),
                ..f.clone()
            });
        }
    }
    s.flows = flows;
    let end = s.simulation.duration;
    let all_edges = &mut s.simulation.phase_edges;
    all_edges.extend(edges.into_iter().filter(|&e| e < end));
    all_edges.sort_unstable();
    all_edges.dedup();
    Ok(())
}

/// A schedule needs counts and a positive length, and sets the entry's count and times itself.
fn check(f: &FlowSpec, spec: &PhaseSpec, path: &str) -> Result<(), ScenarioError> {
    let bad =
        |field: &str, message: &str| Err(ScenarioError::new(format!("{path}.{field}"), message));
    if spec.counts.is_empty() {
        return bad(
            "phases.counts",
            "got an empty list, expected a count per phase",
        );
    }
    if spec.length.0 == 0 {
        return bad("phases.length", "got 0, expected a positive duration");
    }
    if f.count.is_some() {
        return bad(
            "count",
            "got a count beside `phases`, expected one or the other",
        );
    }
    if f.stop.is_some() {
        return bad(
            "stop",
            "got a stop beside `phases`, which sets the stops itself",
        );
    }
    if f.start != StartSpec::default() {
        return bad(
            "start",
            "got a start beside `phases`, which sets the starts itself",
        );
    }
    if f.name.as_deref().is_some_and(|n| n.contains("{i}")) {
        return bad(
            "name",
            "got a name with {i} beside `phases`, expected a plain prefix (groups are named {name}{g}.{i})",
        );
    }
    Ok(())
}

/// `error` with a path into an expanded flow list pointed back at the entry as written.
pub fn entry_path(s: &Scenario, mut error: ScenarioError) -> ScenarioError {
    let Some(rest) = error.path.strip_prefix("flows[") else {
        return error;
    };
    let Some((index, tail)) = rest.split_once(']') else {
        return error;
    };
    let entry = index
        .parse::<usize>()
        .ok()
        .and_then(|i| s.flows.get(i))
        .and_then(|f| f.entry);
    if let Some(k) = entry {
        error.path = format!("flows[{k}]{tail}");
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn active(groups: &[PhaseGroup], j: usize) -> u32 {
        groups
            .iter()
            .filter(|g| g.start <= j && g.stop.is_none_or(|s| j < s))
            .map(|g| g.count)
            .sum()
    }

    #[test]
    fn groups_give_each_phase_its_count() {
        let counts = [10, 50, 100, 200, 400, 400, 200, 100, 50, 10];
        let groups = phase_groups(&counts);
        for (j, &c) in counts.iter().enumerate() {
            assert_eq!(active(&groups, j), c, "phase {j}");
        }
        assert_eq!(groups.len(), 5);
        assert_eq!(
            groups[0],
            PhaseGroup {
                count: 10,
                start: 0,
                stop: None
            }
        );
        assert_eq!(
            groups[4],
            PhaseGroup {
                count: 200,
                start: 4,
                stop: Some(6)
            }
        );
    }

    #[test]
    fn a_fall_splits_the_latest_group() {
        let groups = phase_groups(&[1, 3, 2, 0]);
        assert_eq!(
            groups,
            [
                PhaseGroup {
                    count: 1,
                    start: 0,
                    stop: Some(3)
                },
                PhaseGroup {
                    count: 1,
                    start: 1,
                    stop: Some(3)
                },
                PhaseGroup {
                    count: 1,
                    start: 1,
                    stop: Some(2)
                },
            ]
        );
    }
}
