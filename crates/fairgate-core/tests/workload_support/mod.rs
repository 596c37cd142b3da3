//! What the workload tests share: running a scenario with conservation checked, and reading
//! columns and traced variables of the results.

#![allow(dead_code)]

use fairgate_core::results::{collect, Column, Results, Table};
use fairgate_core::scenario::{build, parse};

/// Runs TOML text to its end; panics on an invalid scenario or a conservation violation.
pub fn run(text: &str) -> Results {
    let scenario = parse(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

pub fn f64s<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    match t.column(name) {
        Some(Column::F64(v)) => v,
        _ => panic!("{name} is not a float column"),
    }
}

pub fn u64s<'a>(t: &'a Table, name: &str) -> &'a [u64] {
    match t.column(name) {
        Some(Column::U64(v)) => v,
        _ => panic!("{name} is not an integer column"),
    }
}

/// (time, value) of the traced variable `var`.
pub fn trace(r: &Results, var: &str) -> Vec<(f64, f64)> {
    let t = &r.traces;
    let (time, value) = (f64s(t, "time_s"), f64s(t, "value"));
    let Some(Column::Cat { codes, categories }) = t.column("var") else {
        panic!("no var column");
    };
    let code = categories.iter().position(|c| c == var).expect("traced") as u32;
    (0..t.rows())
        .filter(|&i| codes[i] == code)
        .map(|i| (time[i], value[i]))
        .collect()
}
