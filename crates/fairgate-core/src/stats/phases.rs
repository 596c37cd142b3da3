//! The per-phase summary: the run cut at `[simulation] phase_edges` into phases, and for each
//! phase the counters accumulated inside it, per traffic class and per port
//! (`docs/results.md`, phase summary).
//!
//! Decisions: a phase's figures are the difference of the cumulative counters at its edges,
//! as the measurement window does (`stats/window.rs`), so they are exact, and only the previous
//! edge's snapshot is held. Phases ignore `warmup`/`end`: they are explicit spans of time.
//! Without edges the whole run is one phase. Classes are the source kinds of the data flows.

use super::series::class_indices;
use super::window::Snapshot;
use super::{FlowStats, PortStats};
use crate::engine::Time;

/// One phase's counters for one class.
#[derive(Clone, Debug, Default)]
pub struct ClassPhase {
    pub phase: u32,
    pub class: u32,
    pub offered_pkts: u64,
    pub offered_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    pub delivered_bytes: u64,
    pub goodput_bytes: u64,
}

/// One phase's counters for one port.
#[derive(Clone, Debug)]
pub struct PortPhase {
    pub phase: u32,
    pub port: u32,
    pub stats: PortStats,
    pub busy_ps: u128,
}

/// Phase edges, the snapshot at the last edge passed, and the rows of the phases closed.
#[derive(Clone, Debug, Default)]
pub struct PhaseLog {
    pub edges: Vec<Time>,
    /// Start and end of each closed phase.
    pub spans: Vec<(Time, Time)>,
    class_of: Vec<Option<u32>>,
    pub class_names: Vec<String>,
    previous: Option<Snapshot>,
    previous_time: Time,
    pub classes: Vec<ClassPhase>,
    pub ports: Vec<PortPhase>,
}

impl PhaseLog {
    /// `classes`: each flow's class name, `None` for flows not counted (ACK flows).
    pub fn new(edges: Vec<Time>, classes: &[Option<&str>]) -> Self {
        let (class_of, class_names) = class_indices(classes);
        PhaseLog {
            edges,
            class_of,
            class_names,
            ..PhaseLog::default()
        }
    }

    /// Closes the phase that ends at `now`, given the cumulative counters there.
    pub fn close(&mut self, now: Time, counters: Snapshot) {
        if now <= self.previous_time && !self.spans.is_empty() {
            return;
        }
        let phase = self.spans.len() as u32;
        let delta = match &self.previous {
            None => counters.clone(),
            Some(before) => counters.minus(before),
        };
        self.push_classes(phase, &delta.flows);
        for (port, (stats, busy_ps)) in delta.ports.into_iter().zip(delta.busy_ps).enumerate() {
            self.ports.push(PortPhase {
                phase,
                port: port as u32,
                stats,
                busy_ps,
            });
        }
        self.spans.push((self.previous_time, now));
        self.previous = Some(counters);
        self.previous_time = now;
    }

    fn push_classes(&mut self, phase: u32, flows: &[FlowStats]) {
        let mut rows: Vec<ClassPhase> = (0..self.class_names.len())
            .map(|c| ClassPhase {
                phase,
                class: c as u32,
                ..ClassPhase::default()
            })
            .collect();
        for (s, class) in flows.iter().zip(&self.class_of) {
            let Some(c) = class else { continue };
            let row = &mut rows[*c as usize];
            row.offered_pkts += s.offered_pkts;
            row.offered_bytes += s.offered_bytes;
            row.dropped_pkts += s.dropped_total();
            row.dropped_bytes += s.dropped_bytes;
            row.delivered_bytes += s.delivered_bytes;
            row.goodput_bytes += s.goodput_bytes;
        }
        self.classes.extend(rows);
    }
}
