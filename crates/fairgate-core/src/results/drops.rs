//! The drop and mark events table (`docs/results.md`, drops): one row per event the run's
//! `record_drops` kept, in time order.

use super::{f64s, u64s, Column, Table};
use crate::engine::to_secs;
use crate::sim::Simulation;
use crate::stats::events::EventAction;
use crate::stats::series::class_indices;
use crate::stats::DropReason;
use serde_json::{json, Value};

/// Code of a missing port (a packet without a route): read as NA in Python.
const NO_PORT: u32 = u32::MAX;

/// The table, and the summary's `drop_events` entry (rows kept, events left out).
pub fn drop_table(sim: &mut Simulation) -> (Table, Value) {
    let log = sim.take_drop_log();
    let rows = &log.rows;
    let all_kinds: Vec<Option<&str>> = sim.flows().iter().map(|f| Some(f.kind.as_str())).collect();
    let (kind_code, kinds) = class_indices(&all_kinds);
    let mut t = Table::default();
    t.push("time_s", f64s(rows.iter().map(|e| to_secs(e.time))));
    let port_codes = rows.iter().map(|e| e.port.unwrap_or(NO_PORT)).collect();
    let port_names = sim.ports().iter().map(|p| p.name.clone()).collect();
    t.push("port", category(port_codes, port_names));
    let flow_names = sim.flows().iter().map(|f| f.name.clone()).collect();
    t.push(
        "flow",
        category(rows.iter().map(|e| e.flow).collect(), flow_names),
    );
    let class_codes = rows
        .iter()
        .map(|e| kind_code[e.flow as usize].unwrap_or(0))
        .collect();
    t.push("class", category(class_codes, kinds));
    let actions = [EventAction::Drop, EventAction::Mark];
    let action_names = actions.iter().map(|a| a.as_str().to_string()).collect();
    let action_codes = rows.iter().map(|e| (e.action == EventAction::Mark) as u32);
    t.push("action", category(action_codes.collect(), action_names));
    let reasons = DropReason::ALL
        .iter()
        .map(|r| r.as_str().to_string())
        .collect();
    let reason_codes = rows.iter().map(|e| e.reason as u32).collect();
    t.push("reason", category(reason_codes, reasons));
    t.push("size", u64s(rows.iter().map(|e| e.size as u64)));
    t.push("seq", u64s(rows.iter().map(|e| e.seq)));
    let summary = json!({ "recorded": rows.len(), "not_recorded": log.not_recorded });
    (t, summary)
}

fn category(codes: Vec<u32>, categories: Vec<String>) -> Column {
    Column::Cat { codes, categories }
}
