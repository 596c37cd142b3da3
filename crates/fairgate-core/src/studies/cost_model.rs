//! Vaidyanathan's per-packet cost model of fair-queueing overhead ([Vaidyanathan99, §2.3-2.6],
//! tab. 2.1): from a measured number of active flows N(t), the operations
//! per arriving packet of WFQ, start-time FQ, DRR and stochastic FQ, split into flow
//! classification, tag computation, flow state and scheduler service.
//!
//! | discipline    | classification | tagging | flow state | service     |
//! |---------------|----------------|---------|------------|-------------|
//! | WFQ           | c_cls          | N       | N          | log2(2N)    |
//! | start-time FQ | c_cls          | 1       | N          | log2(2N)    |
//! | DRR           | c_cls          | 0       | N          | 0           |
//! | stochastic FQ | 1              | 0       | N          | 0           |
//!
//! Every term has weight 1 and no constant (section 2.6.4); buffer management is excluded (it
//! scales with drops). Classification: section 2.6.4's linear search over colliding flows,
//! c_cls = eff + (1 - eff) n_coll, with the run's hash efficiency and mean number of colliding
//! flows; or table 2.1's binary search within a bucket, log2(2 n_i).
//!
//! Decisions: with N = 0 the tagging, flow-state and service terms are 0 (log2(2N) is
//! undefined); `active_flows` counts a flow active from its first packet until `timeout` after
//! its last ([Vaidyanathan99, §2.1]'s flow timeout; a timeout of 0 counts flows with a packet
//! queued).

use super::keshav_buffers::study::{record_port, PortEvent, RunLength};
use super::trace_gateway::MAX_SAMPLES;
use super::StudyError;
use crate::config::ScenarioError;
use crate::engine::time::{secs, to_secs};
use crate::engine::Time;
use crate::qdisc::classify::FlowKey;
use crate::scenario::Scenario;
use std::collections::HashMap;

/// How flow classification is charged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Classification {
    /// Linear search over colliding flows: eff + (1 - eff) x mean_colliding.
    LinearSearch {
        efficiency: f64,
        mean_colliding: f64,
    },
    /// Binary search within a bucket of `colliding` flows: log2(2 x colliding).
    BinarySearch { colliding: f64 },
}

impl Classification {
    /// The hash efficiency must be a fraction, and a search covers at least the arrival's own
    /// flow.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let at_least_one = |field: &str, value: f64| {
            if value.is_finite() && value >= 1.0 {
                Ok(())
            } else {
                Err(ScenarioError::new(
                    field,
                    format!("got {value}, expected a finite number >= 1"),
                ))
            }
        };
        match *self {
            Classification::LinearSearch {
                efficiency,
                mean_colliding,
            } => {
                if !(0.0..=1.0).contains(&efficiency) {
                    return Err(ScenarioError::new(
                        "study.efficiency",
                        format!("got {efficiency}, expected a fraction in [0, 1]"),
                    ));
                }
                at_least_one("study.mean_colliding", mean_colliding)
            }
            Classification::BinarySearch { colliding } => {
                at_least_one("study.colliding", colliding)
            }
        }
    }

    pub fn cost(&self) -> f64 {
        match *self {
            Classification::LinearSearch {
                efficiency,
                mean_colliding,
            } => efficiency + (1.0 - efficiency) * mean_colliding,
            Classification::BinarySearch { colliding } => (2.0 * colliding).log2(),
        }
    }
}

/// The disciplines of table 2.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discipline {
    Wfq,
    StartTimeFq,
    Drr,
    StochasticFq,
}

impl Discipline {
    pub const ALL: [Discipline; 4] = [
        Discipline::Wfq,
        Discipline::StartTimeFq,
        Discipline::Drr,
        Discipline::StochasticFq,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Discipline::Wfq => "wfq",
            Discipline::StartTimeFq => "stfq",
            Discipline::Drr => "drr",
            Discipline::StochasticFq => "stochastic_fq",
        }
    }
}

/// Operations per arriving packet, by component.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketCost {
    pub classification: f64,
    pub tagging: f64,
    pub flow_state: f64,
    pub service: f64,
}

impl PacketCost {
    pub fn total(&self) -> f64 {
        self.classification + self.tagging + self.flow_state + self.service
    }
}

/// Table 2.1 at `active` flows.
pub fn packet_cost(
    discipline: Discipline,
    active: f64,
    classification: Classification,
) -> PacketCost {
    let n = active.max(0.0);
    let sorted = if n > 0.0 { (2.0 * n).log2() } else { 0.0 };
    let c = classification.cost();
    let (classification, tagging, service) = match discipline {
        Discipline::Wfq => (c, n, sorted),
        Discipline::StartTimeFq => (c, if n > 0.0 { 1.0 } else { 0.0 }, sorted),
        Discipline::Drr => (c, 0.0, 0.0),
        Discipline::StochasticFq => (1.0, 0.0, 0.0),
    };
    PacketCost {
        classification,
        tagging,
        flow_state: n,
        service,
    }
}

/// One sample of the cost series.
#[derive(Clone, Debug, PartialEq)]
pub struct CostSample {
    pub time_s: f64,
    pub active: f64,
    pub discipline: &'static str,
    pub cost: PacketCost,
}

/// The cost of every discipline at every sample of an active-flow series `(time s, N)`.
pub fn cost_series(active: &[(f64, f64)], classification: Classification) -> Vec<CostSample> {
    active
        .iter()
        .flat_map(|&(time_s, n)| {
            Discipline::ALL.into_iter().map(move |d| CostSample {
                time_s,
                active: n,
                discipline: d.name(),
                cost: packet_cost(d, n, classification),
            })
        })
        .collect()
}

/// Active flows at every multiple of `interval` from the arrivals at a port: a flow (by
/// `key`) is active from its first packet until `timeout` after its last.
pub fn active_flows(
    events: &[PortEvent],
    key: FlowKey,
    timeout: Time,
    interval: Time,
) -> Vec<(f64, f64)> {
    let mut last_seen: HashMap<u64, Time> = HashMap::new();
    let mut samples = Vec::new();
    let mut next_sample = interval;
    let count = |last_seen: &HashMap<u64, Time>, at: Time| {
        last_seen
            .values()
            .filter(|&&t| t.saturating_add(timeout) >= at)
            .count() as f64
    };
    for event in events {
        let PortEvent::Arrival { time, packet } = event else {
            continue;
        };
        while interval > 0 && next_sample <= *time {
            samples.push((to_secs(next_sample), count(&last_seen, next_sample)));
            last_seen.retain(|_, &mut t| t.saturating_add(timeout) >= next_sample);
            next_sample += interval;
        }
        last_seen.insert(key.id(packet), *time);
    }
    samples
}

/// Refuses an interval that would take more than [`MAX_SAMPLES`] samples over the run (the
/// trace study's limit).
fn check_sample_count(run: Time, interval: Time) -> Result<(), ScenarioError> {
    if run / interval <= MAX_SAMPLES {
        return Ok(());
    }
    Err(ScenarioError::new(
        "study.interval",
        format!(
            "got {} s, expected at least {} s (at most {MAX_SAMPLES} samples over the run's {} s)",
            to_secs(interval),
            to_secs(run.div_ceil(MAX_SAMPLES)),
            to_secs(run)
        ),
    ))
}

/// A flow classification by its scenario name (`"flow"`, `"five_tuple"`, ...).
pub fn flow_key(name: &str) -> Result<FlowKey, ScenarioError> {
    use serde::Deserialize;
    FlowKey::deserialize(toml::Value::String(name.to_string())).map_err(|_| {
        ScenarioError::new(
            "study.key",
            format!(
                "got {name:?}, expected a flow classification such as \"flow\" or \"five_tuple\""
            ),
        )
    })
}

/// The study on one port of a scenario: run it, count the active flows at the port every
/// `interval`, and cost every discipline of table 2.1 at each sample. `interrupted` is asked
/// about every 0.2 s of wall-clock time while the scenario runs.
pub fn port_cost_series(
    scenario: &Scenario,
    port: &str,
    key: FlowKey,
    timeout: Time,
    interval: Time,
    classification: Classification,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<Vec<CostSample>, StudyError> {
    if interval == 0 {
        return Err(
            ScenarioError::new("study.interval", "got 0, expected a positive duration").into(),
        );
    }
    check_sample_count(secs(scenario.simulation.duration.secs()), interval)?;
    classification.validate()?;
    let events = record_port(scenario, port, &RunLength::SCENARIO, interrupted)?;
    let active = active_flows(&events, key, timeout, interval);
    Ok(cost_series(&active, classification))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Packet;

    #[test]
    fn table_2_1_by_hand() {
        // N = 8, eff = 0.99, 3 colliding flows: c = 0.99 + 0.01 x 3 = 1.02; log2(16) = 4.
        let c = Classification::LinearSearch {
            efficiency: 0.99,
            mean_colliding: 3.0,
        };
        let total = |d| packet_cost(d, 8.0, c).total();
        assert!((total(Discipline::Wfq) - 21.02).abs() < 1e-12);
        assert!((total(Discipline::StartTimeFq) - 14.02).abs() < 1e-12);
        assert!((total(Discipline::Drr) - 9.02).abs() < 1e-12);
        assert!((total(Discipline::StochasticFq) - 9.0).abs() < 1e-12);
        let b = Classification::BinarySearch { colliding: 4.0 };
        assert_eq!(packet_cost(Discipline::Drr, 8.0, b).classification, 3.0);
        assert_eq!(packet_cost(Discipline::Wfq, 0.0, c).total(), 1.02);
        assert_eq!(cost_series(&[(0.1, 8.0), (0.2, 2.0)], c).len(), 8);
    }

    #[test]
    fn active_flows_with_a_timeout() {
        // Flow 1 at 0 and 0.25 s, flow 2 at 0.1 s; timeout 0.2 s, samples every 0.1 s.
        // At 0.1 s: flows 1 (0 + 0.2 >= 0.1); flow 2 arrives exactly at the sample and is
        // counted after it. 0.2 s: 1 and 2. 0.3 s: 1 (seen at 0.25) and 2 (0.1 + 0.2 >= 0.3).
        let s = |x: f64| crate::engine::time::secs(x);
        let arrival = |t: f64, flow: u32| PortEvent::Arrival {
            time: s(t),
            packet: Packet {
                flow,
                ..Default::default()
            },
        };
        let events = [
            arrival(0.0, 1),
            arrival(0.1, 2),
            arrival(0.25, 1),
            arrival(0.45, 2),
        ];
        let n = active_flows(&events, FlowKey::Flow, s(0.2), s(0.1));
        let counts: Vec<f64> = n.iter().map(|x| x.1).collect();
        assert_eq!(counts, vec![1.0, 2.0, 2.0, 1.0]);
        let forever = active_flows(&events, FlowKey::Flow, Time::MAX, s(0.1));
        let counts: Vec<f64> = forever.iter().map(|x| x.1).collect();
        assert_eq!(
            counts,
            vec![1.0, 2.0, 2.0, 2.0],
            "a timeout past the end keeps every flow"
        );
    }

    #[test]
    fn intervals_of_too_many_samples_and_unbounded_searches_are_refused() {
        let text = "[simulation]\nduration = \"10s\"\n[[nodes]]\nname = \"a\"\n\
                    [[nodes]]\nname = \"b\"\n[[links]]\nfrom = \"a\"\nto = \"b\"\nrate = 1000000\n";
        let scenario = crate::scenario::parse(text, &[]).unwrap();
        let series = |interval: Time, classification| {
            port_cost_series(
                &scenario,
                "a->b",
                FlowKey::Flow,
                0,
                interval,
                classification,
                &mut crate::studies::never_interrupted,
            )
        };
        let linear = Classification::LinearSearch {
            efficiency: 1.0,
            mean_colliding: 1.0,
        };
        let err = series(1, linear).unwrap_err().to_string();
        assert_eq!(
            err,
            "`study.interval`: got 0.000000000001 s, expected at least 0.0001 s \
             (at most 100000 samples over the run's 10 s)"
        );
        assert!(series(crate::engine::time::secs(1e-4), linear).is_ok());
        for colliding in [f64::INFINITY, f64::NAN, 0.5] {
            let unbounded = Classification::LinearSearch {
                efficiency: 0.5,
                mean_colliding: colliding,
            };
            let Err(StudyError::Input(err)) = series(crate::engine::time::secs(0.1), unbounded)
            else {
                panic!("{colliding} was not refused as an input");
            };
            assert_eq!(err.path, "study.mean_colliding", "{colliding}");
        }
    }
}
