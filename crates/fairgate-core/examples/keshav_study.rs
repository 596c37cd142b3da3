//! Prints Keshav's data-structure study (figures 3.5-3.7) on the open-loop stand-in
//! workload as a Markdown table: `cargo run -p fairgate-core --example keshav_study`.

use fairgate_core::studies::keshav_buffers::study::{onoff_workload, sweep};
use fairgate_core::studies::never_interrupted;

/// An axis of the (N, B) plane: name, window W, offered load, points (N, B).
type Axis = (&'static str, u32, f64, &'static [(u32, u32)]);

fn main() {
    let axes: [Axis; 3] = [
        ("A underload", 4, 0.5, &[(2, 64), (4, 64), (8, 64)]),
        ("B overload", 8, 1.2, &[(8, 16), (16, 16), (32, 16)]),
        (
            "C crossing",
            8,
            0.9,
            &[(2, 32), (4, 32), (8, 32), (16, 32), (32, 32)],
        ),
    ];
    println!("| axis | N | B | W·N | drops | LINK mean/max | TREE mean/max | HEAP mean/max | PERC mean/max |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (axis, window, load, points) in axes {
        let rows = match sweep(
            points,
            |n, b| onoff_workload(n, b, window, load, 20.0),
            &mut never_interrupted,
        ) {
            Ok(rows) => rows,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        };
        for chunk in rows.chunks(4) {
            let cells: Vec<String> = chunk
                .iter()
                .map(|r| format!("{:.2} / {}", r.mean_ops_per_insert, r.max_ops_per_insert))
                .collect();
            let r = &chunk[0];
            println!(
                "| {axis} | {} | {} | {} | {} | {} |",
                r.conversations,
                r.buffers,
                r.conversations * window,
                r.drops,
                cells.join(" | ")
            );
        }
    }
}
