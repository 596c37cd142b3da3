//! End-to-end: SFG in front of drop-tail caps 2 Mb/s CBR flows near C/N on a 10 Mb/s link.

use fairgate_core::results::{collect, Column, Results};
use fairgate_core::scenario::{build, parse};

const SIX_CBR: &str = r#"
name = "sfg-cbr"
[simulation]
duration = "40s"
seed = 7
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
queue = { kind = "sfg", levels = 3, bins = 20, epoch = "2s", cnr_weight = 0.5, inner = { kind = "fifo", limit = 100 } }
"#;

fn scenario(flows: usize) -> String {
    let mut text = SIX_CBR.to_string();
    for i in 0..flows {
        text += &format!(
            "[[flows]]\nname = \"cbr{i}\"\nsrc = \"a\"\ndst = \"b\"\nsource = {{ kind = \"cbr\", rate = \"2Mbps\", size = 1000 }}\n"
        );
    }
    text
}

fn run(text: &str) -> Results {
    let scenario = parse(text, &[]).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap();
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

fn column(r: &Results, table: &str, name: &str) -> Vec<f64> {
    let t = if table == "flows" { &r.flows } else { &r.ports };
    match t.column(name).unwrap() {
        Column::F64(v) => v.clone(),
        Column::U64(v) => v.iter().map(|&x| x as f64).collect(),
        _ => panic!("{name} is not numeric"),
    }
}

#[test]
fn sfg_caps_each_cbr_flow_near_c_over_n() {
    // Six 2 Mb/s flows overload 10 Mb/s. In the first 2-s epoch SFG only measures and the
    // drop-tail queue overflows (p_e about 1/6), so avgCNR = 0.5 * p_e > 0.02 switches SFG on
    // at t = 2 s. From then on each flow alone in a bin gets p = 1 - 0.5/2 = 0.75, i.e. C/N =
    // 0.5 Mb/s. Over 40 s a flow delivers about (2 s * 10/6 Mb/s + 38 s * 0.5 Mb/s) / 40 s
    // = 0.558 Mb/s; a flow sharing all its bins in some epoch gets less there.
    let r = run(&scenario(6));
    let delivered = column(&r, "flows", "delivered_bytes");
    assert_eq!(delivered.len(), 6);
    for bytes in &delivered {
        let mbps = bytes * 8.0 / 40.0 / 1e6;
        assert!((0.45..0.65).contains(&mbps), "flow rate {mbps} Mb/s");
    }
    let filter_drops = column(&r, "ports", "drops_pkts");
    assert!(filter_drops.iter().sum::<f64>() > 0.0);
    // After SFG switched on the link carries about 6 * 0.5 = 3 Mb/s.
    let total: f64 = delivered.iter().sum::<f64>() * 8.0 / 40.0 / 1e6;
    assert!((3.0..3.6).contains(&total), "total {total} Mb/s");
}

#[test]
fn sfg_stays_off_without_congestion() {
    // Four 2 Mb/s flows on 10 Mb/s: no queue overflow, p_n = 0, SFG never switches on, so
    // every flow keeps 2 Mb/s although each bin's cap is 0.5 Mb/s.
    let r = run(&scenario(4));
    for bytes in column(&r, "flows", "delivered_bytes") {
        let mbps = bytes * 8.0 / 40.0 / 1e6;
        assert!((mbps - 2.0).abs() < 0.01, "flow rate {mbps} Mb/s");
    }
    assert_eq!(column(&r, "flows", "dropped_pkts").iter().sum::<f64>(), 0.0);
}

#[test]
fn sfg_runs_are_deterministic() {
    let a = run(&scenario(6));
    let b = run(&scenario(6));
    assert_eq!(
        column(&a, "flows", "delivered_bytes"),
        column(&b, "flows", "delivered_bytes")
    );
}

#[test]
fn sfg_bad_inner_names_the_nested_field() {
    let text = scenario(1);
    let overrides = vec!["links[0].queue.inner.limit=0".to_string()];
    let e = match parse(&text, &overrides) {
        Ok(s) => build(&s).err().expect("rejected"),
        Err(e) => e,
    };
    assert!(e.path.starts_with("links[0].queue.inner.limit"), "{e}");
}
