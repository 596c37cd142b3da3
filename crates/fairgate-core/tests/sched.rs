//! Per-flow schedulers against numbers: service within one maximum packet of the bit-by-bit
//! ideal, weighted shares, DRR's per-round equality, the Telnet delay of [Keshav91] section
//! 2.2.3, protection from an ill-behaved source, conservation and determinism.

use fairgate_core::engine::time::tx_time;
use fairgate_core::net::packet::PacketId;
use fairgate_core::qdisc::testing::Harness;
use fairgate_core::qdisc::{Qdisc, QdiscEnv, QdiscSpec};
use fairgate_core::results::{collect, Column, Results};
use fairgate_core::scenario::{build, parse};
use std::collections::HashMap;

const MAX_PACKET: f64 = 1500.0;
/// Per-flow packet-size cycles (bytes): every flow mixes small and maximum-size packets.
const SIZES: [[u32; 4]; 4] = [
    [1500, 40, 700, 1500],
    [576, 576, 576, 576],
    [40, 1500, 1500, 200],
    [1000, 300, 1500, 64],
];

fn qdisc(toml_text: &str) -> Box<dyn Qdisc> {
    let spec: QdiscSpec = toml::from_str(toml_text).unwrap();
    spec.validate("q").unwrap();
    spec.build(&QdiscEnv {
        link_rate_bps: 10_000_000,
        port: "a->b".into(),
    })
}

/// Keeps every flow backlogged (3 packets queued), serves `departures` packets at 10 Mb/s and
/// returns, after each departure, the bytes each flow has received.
fn backlogged_service(q: &mut dyn Qdisc, flows: usize, departures: usize) -> Vec<Vec<f64>> {
    let mut h = Harness::new();
    let mut flow_of: HashMap<PacketId, usize> = HashMap::new();
    let mut sent = vec![0usize; flows];
    let mut queued = vec![0usize; flows];
    let mut served = vec![0.0; flows];
    let mut trace = Vec::new();
    for _ in 0..departures {
        for f in 0..flows {
            while queued[f] < 3 {
                let size = SIZES[f % 4][sent[f] % 4];
                let id = h.packet(f as u32, size);
                flow_of.insert(id, f);
                h.enqueue(q, id);
                sent[f] += 1;
                queued[f] += 1;
            }
        }
        assert!(h.dropped().is_empty());
        let p = h.dequeue(q).unwrap();
        let f = flow_of[&p];
        let size = h.packets.get(p).size;
        queued[f] -= 1;
        served[f] += size as f64;
        h.now += tx_time(size, h.link_rate_bps);
        h.packets.free(p);
        trace.push(served.clone());
    }
    trace
}

/// Largest gap between a flow's service and its weighted share of the total, over all
/// departures.
fn worst_gap(trace: &[Vec<f64>], weights: &[f64]) -> f64 {
    let total_weight: f64 = weights.iter().sum();
    trace
        .iter()
        .flat_map(|served| {
            let total: f64 = served.iter().sum();
            served
                .iter()
                .zip(weights)
                .map(move |(s, w)| (s - total * w / total_weight).abs())
        })
        .fold(0.0, f64::max)
}

/// Largest deviation from the weighted share over any interval between two departures: for
/// each flow, the spread (max - min) of its signed gap.
fn worst_interval_gap(trace: &[Vec<f64>], weights: &[f64]) -> f64 {
    let total_weight: f64 = weights.iter().sum();
    (0..weights.len())
        .map(|f| {
            let gaps = trace.iter().map(|served| {
                let total: f64 = served.iter().sum();
                served[f] - total * weights[f] / total_weight
            });
            let (lo, hi) = gaps.fold((f64::MAX, f64::MIN), |(lo, hi), g| (lo.min(g), hi.max(g)));
            hi - lo
        })
        .fold(0.0, f64::max)
}

#[test]
fn fq_and_wfq_stay_within_one_maximum_packet_of_bit_by_bit() {
    for kind in [
        "kind = \"fq\"\nclassify = \"flow\"\nlimit = 100",
        "kind = \"wfq\"\nlimit = 100",
    ] {
        let mut q = qdisc(kind);
        let trace = backlogged_service(q.as_mut(), 4, 4000);
        let gap = worst_gap(&trace, &[1.0; 4]);
        let interval_gap = worst_interval_gap(&trace, &[1.0; 4]);
        // From the start of the backlog each flow is within one maximum packet of the
        // bit-by-bit server (Greenberg-Madras); over an arbitrary interval the two end errors
        // can add up (measured: 1107 B and 1927 B for FQ), so the bound there is two packets.
        assert!(gap <= MAX_PACKET, "{kind}: {gap}");
        assert!(interval_gap <= 2.0 * MAX_PACKET, "{kind}: {interval_gap}");
    }
}

#[test]
fn weighted_shares_are_proportional_within_one_percent() {
    let kinds = [
        "kind = \"fq\"\nclassify = \"flow\"\nlimit = 100\nweights = [1.0, 2.0, 3.0]",
        "kind = \"wfq\"\nlimit = 100\nweights = [1.0, 2.0, 3.0]",
        "kind = \"scfq\"\nweights = [1.0, 2.0, 3.0]\nbuffer = { kind = \"droptail\", limit = 100 }",
        "kind = \"stfq\"\nweights = [1.0, 2.0, 3.0]\nbuffer = { kind = \"droptail\", limit = 100 }",
        "kind = \"drr\"\nweights = [1.0, 2.0, 3.0]\nbuffer = { kind = \"droptail\", limit = 100 }",
    ];
    for kind in kinds {
        let mut q = qdisc(kind);
        let trace = backlogged_service(q.as_mut(), 3, 6000);
        let served = trace.last().unwrap();
        let total: f64 = served.iter().sum();
        for (f, w) in [1.0, 2.0, 3.0].iter().enumerate() {
            let share = served[f] / total;
            let ideal = w / 6.0;
            assert!(
                (share / ideal - 1.0).abs() < 0.01,
                "{kind}: flow {f} share {share}"
            );
        }
        if kind.contains("fq\"\nclassify") || kind.contains("wfq") {
            let gap = worst_gap(&trace, &[1.0, 2.0, 3.0]);
            assert!(gap <= MAX_PACKET, "{kind}: {gap}");
        }
    }
}

/// DRR with a 1500-byte quantum: at every departure, any two backlogged flows have received
/// service within one quantum plus one maximum packet of each other (one round's worth).
#[test]
fn drr_shares_are_equal_within_one_quantum_per_round() {
    let mut q =
        qdisc("kind = \"drr\"\nquantum = 1500\nbuffer = { kind = \"droptail\", limit = 100 }");
    let trace = backlogged_service(q.as_mut(), 4, 4000);
    for served in &trace {
        let max = served.iter().cloned().fold(f64::MIN, f64::max);
        let min = served.iter().cloned().fold(f64::MAX, f64::min);
        assert!(max - min <= 1500.0 + MAX_PACKET, "{served:?}");
    }
    let last = trace.last().unwrap();
    let total: f64 = last.iter().sum();
    for s in last {
        assert!((s / total - 0.25).abs() < 0.01);
    }
}

#[test]
fn every_round_robin_scheduler_shares_equally_when_backlogged() {
    for kind in [
        "kind = \"scfq\"\nbuffer = { kind = \"droptail\", limit = 100 }",
        "kind = \"stfq\"\nbuffer = { kind = \"droptail\", limit = 100 }",
    ] {
        let mut q = qdisc(kind);
        let trace = backlogged_service(q.as_mut(), 4, 4000);
        let gap = worst_gap(&trace, &[1.0; 4]);
        // SCFQ and start-time FQ are within a few maximum packets of the fluid share.
        assert!(gap <= 3.0 * MAX_PACKET, "{kind}: {gap}");
    }
}

fn run(text: &str, overrides: &[&str]) -> Results {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let scenario = parse(text, &overrides).unwrap_or_else(|e| panic!("{e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("{e}"));
    sim.run();
    let violations = sim.conservation_violations();
    assert!(violations.is_empty(), "{violations:?}");
    collect(&mut sim, &scenario.name, scenario.simulation.seed)
}

fn flow_value(r: &Results, column: &str, row: usize) -> f64 {
    match r.flows.column(column).unwrap() {
        Column::F64(v) => v[row],
        Column::U64(v) => v[row] as f64,
        _ => panic!("{column} is not numeric"),
    }
}

/// Four FTP-like sources (1000-byte packets, each offering 5 Mb/s) and one Telnet source
/// (40-byte packets, exponential gaps of 20 ms) share a 10 Mb/s line with no propagation delay.
const TELNET: &str = r#"
name = "telnet-among-ftps"
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
delay = "0s"
duplex = false
queue = { kind = "fq", classify = "flow", limit = 50 }
[[flows]]
name = "telnet"
src = "a"
dst = "b"
source = { kind = "telnet", size = 40, gap = { dist = "exponential", mean = "20ms" } }
[[flows]]
name = "ftp{i}"
count = 4
src = "a"
dst = "b"
start = "0.0005s"
source = { kind = "cbr", rate = "5Mbps", size = 1000 }
"#;

/// [Keshav91, §2.2.3], non-preemptive FQ with delta = 0: N = 4, P_F = 8000 bits, P_T =
/// 320 bits, so P_T = P_F (k + eps) / N with k = 0, eps = 0.16, and P_T < (P_F/2)(1 + 1/N):
/// P_F/2 <= A(P) <= (P_F/2)(1 + (k^2 + k(2 eps - 1))/N) = P_F/2. The Telnet packet waits on
/// average half an FTP packet, 4000 bit times = 400 us, then takes its own 32 us. Under FCFS
/// it waits behind a full 50-packet buffer: about 49.5 x 800 us = 39.6 ms.
#[test]
fn telnet_delay_under_fq_matches_a_of_p_and_is_far_below_fcfs() {
    let fq = run(TELNET, &[]);
    let wait = flow_value(&fq, "mean_delay_s", 0) - 32e-6;
    assert!((wait / 400e-6 - 1.0).abs() < 0.08, "FQ telnet wait {wait}");
    let fcfs = run(TELNET, &["links[0].queue={kind=\"fcfs\", limit=50}"]);
    let fcfs_delay = flow_value(&fcfs, "mean_delay_s", 0);
    assert!(fcfs_delay > 0.035, "FCFS telnet delay {fcfs_delay}");
    assert!(fcfs_delay > 50.0 * (wait + 32e-6));
}

/// An ill-behaved source at twice the line rate against a source at 4 Mb/s (below its 5 Mb/s
/// fair share) on a 10 Mb/s line.
const ILL_BEHAVED: &str = r#"
name = "ill-behaved"
[simulation]
duration = "20s"
seed = 3
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "b"
rate = "10Mbps"
delay = "1ms"
duplex = false
queue = { kind = "fq", classify = "flow", limit = 25 }
[[flows]]
name = "good"
src = "a"
dst = "b"
source = { kind = "poisson", rate = "4Mbps", size = 1000 }
[[flows]]
name = "bad"
src = "a"
dst = "b"
source = { kind = "cbr", rate = "20Mbps", size = 1000 }
"#;

#[test]
fn fq_protects_a_well_behaved_flow_from_a_line_rate_source() {
    for charge in ["false", "true"] {
        let o = format!("links[0].queue.charge_dropped={charge}");
        let r = run(ILL_BEHAVED, &[&o]);
        let good_loss = flow_value(&r, "loss_rate", 0);
        let good_delay = flow_value(&r, "mean_delay_s", 0);
        let bad = flow_value(&r, "throughput_bps", 1);
        let good = flow_value(&r, "throughput_bps", 0);
        // Only Poisson bursts longer than the bad flow's queue lose anything.
        assert!(good_loss < 0.002, "charge {charge}: {good_loss}");
        assert!((good / 4e6 - 1.0).abs() < 0.02, "charge {charge}: {good}");
        // Its own Poisson queue at 80% of its 5 Mb/s share; FCFS gives ~13 ms (below).
        assert!(good_delay < 8e-3, "charge {charge}: {good_delay}");
        // The ill-behaved source gets the rest of the line (about 6 Mb/s), never more.
        assert!((bad / 6e6 - 1.0).abs() < 0.03, "charge {charge}: {bad}");
    }
    let fcfs = run(ILL_BEHAVED, &["links[0].queue={kind=\"fcfs\", limit=25}"]);
    assert!(flow_value(&fcfs, "loss_rate", 0) > 0.5);
    let d = flow_value(&fcfs, "mean_delay_s", 0);
    assert!(d > 0.01, "{d}");
}

#[test]
fn every_scheduler_conserves_packets_and_is_deterministic() {
    let kinds = [
        "{kind=\"fq\", limit=30}",
        "{kind=\"fq\", limit=30, drop=\"largest_bid\", charge_dropped=true}",
        "{kind=\"fqbit\", limit=30}",
        "{kind=\"wfq\", limit=30, weights=[1.0, 2.0]}",
        "{kind=\"scfq\"}",
        "{kind=\"stfq\"}",
        "{kind=\"drr\", quantum=500}",
        "{kind=\"wrr\", weights=[2.0]}",
        "{kind=\"nagle\", classify=\"flow\", limit=20}",
        "{kind=\"stochastic_fq\", buckets=16, limit=30, perturb=\"1s\"}",
        "{kind=\"selective_decbit\", panic=true}",
        "{kind=\"fcfs\"}",
    ];
    for kind in kinds {
        let o = format!("links[0].queue={kind}");
        let a = run(TELNET, &[&o, "simulation.duration=\"3s\""]);
        let b = run(TELNET, &[&o, "simulation.duration=\"3s\""]);
        for row in 0..5 {
            let delivered = flow_value(&a, "delivered_pkts", row);
            assert!(delivered > 0.0, "{kind}: flow {row}");
            assert_eq!(delivered, flow_value(&b, "delivered_pkts", row), "{kind}");
            assert_eq!(
                flow_value(&a, "mean_delay_s", row),
                flow_value(&b, "mean_delay_s", row),
                "{kind}"
            );
        }
    }
}

#[test]
fn bad_scheduler_parameters_name_the_field() {
    let cases = [
        ("{kind=\"fq\", delta=-1.0}", "links[0].queue.delta"),
        (
            "{kind=\"wfq\", weights=[1.0, -2.0]}",
            "links[0].queue.weights[1]",
        ),
        ("{kind=\"drr\", quantum=0}", "links[0].queue.quantum"),
        (
            "{kind=\"stochastic_fq\", buckets=0}",
            "links[0].queue.buckets",
        ),
        ("{kind=\"fqbit\", fraction=0.0}", "links[0].queue.fraction"),
        (
            "{kind=\"scfq\", buffer={kind=\"droptail\", limit=0}}",
            "links[0].queue.buffer.limit",
        ),
        ("{kind=\"drr\", quantun=5}", "links[0].queue"),
    ];
    for (queue, path) in cases {
        let o = vec![format!("links[0].queue={queue}")];
        let e = match parse(TELNET, &o) {
            Ok(s) => match build(&s) {
                Ok(_) => panic!("{queue} was accepted"),
                Err(e) => e,
            },
            Err(e) => e,
        };
        assert!(e.path.starts_with(path), "{queue}: {e}");
    }
}
