//! The per-class throughput series (`docs/results.md`, time series): the data flows' delivered
//! and goodput bytes summed per source kind in the core at every sample.

use super::{Column, Table};
use crate::sim::Simulation;

pub fn class_series_table(sim: &mut Simulation) -> Table {
    let s = sim.take_class_series();
    let mut t = Table::default();
    t.push("time_s", Column::F64(s.time));
    t.push(
        "class",
        Column::Cat {
            codes: s.class,
            categories: s.names,
        },
    );
    t.push("delivered_bytes", Column::U64(s.delivered_bytes));
    t.push("goodput_bytes", Column::U64(s.goodput_bytes));
    t.push("throughput_bps", Column::F64(s.throughput_bps));
    t.push("goodput_bps", Column::F64(s.goodput_bps));
    t
}
