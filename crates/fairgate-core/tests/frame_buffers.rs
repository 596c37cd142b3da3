//! End-to-end runs of the [Goyal98] frame disciplines on packets (one-cell frames): conservation,
//! determinism, and DFBA's MCR-weighted sharing of an overloaded FIFO.

use fairgate_core::results::{collect, Column, Results};
use fairgate_core::scenario::{build, parse};

const TWO_CBR: &str = r#"
name = "frame-buffers"
[simulation]
duration = "20s"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "1ms"
queue = { kind = "dfba", limit = 200, mcrs = ["2Mbps", "6Mbps"] }
[[flows]]
name = "low_mcr"
src = "a"
dst = "b"
source = { kind = "cbr", rate = "8Mbps", size = 1000 }
[[flows]]
name = "high_mcr"
src = "a"
dst = "b"
source = { kind = "cbr", rate = "8Mbps", size = 1000 }
"#;

fn run(overrides: &[&str]) -> Results {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(TWO_CBR, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap();
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

fn rates_mbps(r: &Results) -> Vec<f64> {
    match r.flows.column("delivered_bytes").unwrap() {
        Column::U64(v) => v.iter().map(|&b| b as f64 * 8.0 / 20.0 / 1e6).collect(),
        _ => panic!("delivered_bytes is not u64"),
    }
}

#[test]
fn dfba_shares_an_overloaded_link_by_mcr() {
    // 16 Mb/s offered to 10 Mb/s. W = 1/4 and 3/4: the low-MCR VC is above its fair share
    // most of the time and loses frames with DFBA's probability; the high-MCR VC keeps more.
    let rates = rates_mbps(&run(&[]));
    let total: f64 = rates.iter().sum();
    assert!((9.9..=10.01).contains(&total), "{rates:?}");
    assert!(rates[1] > rates[0] + 1.0, "{rates:?}");
    assert!(rates[0] >= 2.0, "the low-MCR VC keeps its MCR: {rates:?}");
}

#[test]
fn every_frame_discipline_conserves_packets_and_is_deterministic() {
    for kind in ["dfba", "epd", "ppd", "selective_drop", "fba"] {
        let queue = format!("links[0].queue = {{ kind = \"{kind}\", limit = 100 }}");
        let a = rates_mbps(&run(&[&queue]));
        let b = rates_mbps(&run(&[&queue]));
        assert_eq!(a, b, "{kind}");
        let total: f64 = a.iter().sum();
        assert!((9.9..=10.01).contains(&total), "{kind}: {a:?}");
    }
}
