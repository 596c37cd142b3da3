//! The drop and mark events table (`docs/results.md`, drops): one row per event the run's
//! `record_drops` kept, in time order; and each port's counts by the causes its discipline
//! named (`docs/results.md`, causes).

use super::{f64s, u64s, Column, Table};
use crate::engine::to_secs;
use crate::sim::Simulation;
use crate::stats::causes::CauseCount;
use crate::stats::events::{DropEvent, EventAction};
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
    t.push("cause", cause_column(rows));
    t.push("arrival_index", u64s(rows.iter().map(|e| e.arrival_index)));
    let summary = json!({ "recorded": rows.len(), "not_recorded": log.not_recorded });
    (t, summary)
}

/// The discipline's cause of each event, or its reason's name when it named none; the
/// categories are the reasons, then the named causes in the order they first occur.
fn cause_column(rows: &[DropEvent]) -> Column {
    let mut names: Vec<String> = DropReason::ALL
        .iter()
        .map(|r| r.as_str().to_string())
        .collect();
    let mut code_of = |cause: &str| match names.iter().position(|n| n == cause) {
        Some(code) => code as u32,
        None => {
            names.push(cause.to_string());
            (names.len() - 1) as u32
        }
    };
    let codes = rows
        .iter()
        .map(|e| e.cause.map_or(e.reason as u32, &mut code_of))
        .collect();
    category(codes, names)
}

/// The drops and marks by the causes each port's discipline named, over the whole run: one
/// `{port, cause, reason, drops, marks}` per port and cause that occurred, in port order, then
/// in the order the port's causes first occurred.
pub fn port_causes(sim: &Simulation) -> Value {
    let entry = |port: &str, c: &CauseCount| json!({ "port": port, "cause": c.cause, "reason": c.reason.as_str(), "drops": c.drops, "marks": c.marks });
    let ports = sim.ports().iter();
    ports
        .flat_map(|p| p.causes.all().iter().map(|c| entry(&p.name, c)))
        .collect()
}

fn category(codes: Vec<u32>, categories: Vec<String>) -> Column {
    Column::Cat { codes, categories }
}
