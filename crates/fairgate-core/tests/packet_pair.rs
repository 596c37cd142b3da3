//! Packet-Pair end to end on a deterministic chain (seed 004 Ch4, Lemma 5; Ch5 §5.7).

mod transport_support;

use fairgate_core::engine::secs;
use fairgate_core::Simulation;
use transport_support::{assert_conserved, build_sim, port, stats, trace};

/// s --fast (100 pkt/s, 0 delay)--> r --slow (10 pkt/s, `delay`)--> d, FIFO queues of `limit`.
fn chain(source: &str, delay: &str, limit: u64, duration: &str) -> String {
    format!(
        r#"
name = "packet-pair"
[simulation]
duration = "{duration}"
trace_every_change = true
sample_interval = "1s"
[[nodes]]
name = "s"
[[nodes]]
name = "r"
kind = "router"
[[nodes]]
name = "d"
[[links]]
from = "s"
to = "r"
rate = "800kbps"
delay = "0s"
queue = {{ kind = "fifo", limit = {limit} }}
[[links]]
from = "r"
to = "d"
rate = "80kbps"
delay = "{delay}"
queue = {{ kind = "fifo", limit = {limit} }}
[[flows]]
name = "pp"
src = "s"
dst = "d"
source = {source}
"#
    )
}

/// Mean number of packets waiting at `name` between `from` and `to` seconds.
fn mean_queue(sim: &mut Simulation, name: &str, from: f64, to: f64) -> f64 {
    let i = port(sim, name);
    sim.run_until(secs(from));
    let start = sim.ports()[i].stats.queue_pkt_ps;
    sim.run_until(secs(to));
    let end = sim.ports()[i].stats.queue_pkt_ps;
    (end - start) as f64 / secs(to - from) as f64
}

#[test]
fn packet_pair_probes_return_exactly_the_bottleneck_service_time() {
    // Lemma 5: the two packets of a pair leave the 10 pkt/s FIFO bottleneck s_b = 0.1 s apart,
    // and the 40-byte ACKs (4 ms at 80 kb/s) keep that spacing back to the source.
    let text = chain("{ kind = \"packet_pair\", n_b = 2 }", "100ms", 100, "60s");
    let mut sim = build_sim(&text, &[]);
    let queue = mean_queue(&mut sim, "r->d", 10.0, 50.0);
    sim.run();
    assert_conserved(&sim);
    let probes = trace(&sim, 0, "probe");
    assert!(probes.len() > 100, "{} probes", probes.len());
    for (t, gap) in &probes {
        assert!((gap - 0.1).abs() < 1e-12, "probe {gap} at {t}");
    }
    // Start-up: R_e = 0.01 + 0.1 + 0.1 + 0.004 + 0.1 + 0.0004 s, V_e = R_e / s_e = 3.144.
    let v = trace(&sim, 0, "v_e");
    let first = v.iter().find(|(_, x)| x.is_finite()).unwrap();
    assert!((first.1 - 3.144).abs() < 1e-9, "{v:?}");
    // No later pair moved V by half a packet: no skips, no bursts.
    assert!(v.iter().skip(1).all(|(_, x)| *x == first.1), "{v:?}");
    // The first regular pair follows the n_b primed packets, and each later pair joins a queue
    // the bottleneck drains at exactly the pair rate: n_b waiting, plus the pair half the time.
    assert!((2.0..3.0).contains(&queue), "mean queue {queue}");
    let s = stats(&sim, 0);
    assert_eq!((s.retransmits, s.timeouts), (0, 0));
    assert_eq!(sim.ports()[port(&sim, "r->d")].stats.drops_pkts.iter().sum::<u64>(), 0);
    let delivered = s.goodput_bytes as f64 / 1000.0;
    assert!((delivered - 600.0).abs() <= 6.0, "{delivered} packets in 60 s");
}
