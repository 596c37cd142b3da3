//! TCP and Generic under injected and random loss: fast retransmit, multiple losses per
//! window (Reno vs NewReno vs SACK), lost retransmissions and backoff, SYN loss, and goodput
//! against the Mathis et al. formula.

mod transport_support;
use transport_support::*;

/// A 200-segment file over 10 Mb/s, 50 ms each way; rwnd caps the window at 30 segments, so
/// cwnd stops growing at 30 and losses happen in a window of exactly 30.
fn file_with_losses(cc: &str, seqs: &[u64], times: u32) -> String {
    let source = format!(
        "{{ kind = \"tcp\", cc = \"{cc}\", rwnd = 30000, app = {{ kind = \"file\", size = 200000 }} }}"
    );
    let seqs: Vec<String> = seqs.iter().map(|s| s.to_string()).collect();
    two_hosts("10Mbps", "50ms", 1000, "20s", &source).replace(
        "queue = { kind = \"fifo\", limit = 1000 }",
        &format!(
            "queue = {{ kind = \"fifo\", limit = 1000 }}\nloss = {{ kind = \"seqs\", flow = \"f\", seqs = [{}], times = {times} }}",
            seqs.join(", ")
        ),
    )
}

const RTT: f64 = 0.1 + 0.000832 + 0.000032;

fn completion(sim: &fairgate_core::Simulation) -> f64 {
    stats(sim, 0).completed_at.expect("transfer completed") as f64 / 1e12
}

/// Durations of the recovery episodes (recovery traced 1 then 0).
fn recoveries(sim: &fairgate_core::Simulation) -> Vec<f64> {
    let points = trace(sim, 0, "recovery");
    points
        .windows(2)
        .filter(|w| w[0].1 == 1.0 && w[1].1 == 0.0)
        .map(|w| w[1].0 - w[0].0)
        .collect()
}

#[test]
fn one_loss_is_repaired_by_fast_retransmit_without_timeout() {
    for cc in ["reno", "newreno", "sack"] {
        let sim = run(&file_with_losses(cc, &[100_000], 1), &[]);
        let s = stats(&sim, 0);
        assert_eq!(s.goodput_bytes, 200_000, "{cc}");
        assert_eq!(
            (s.fast_retransmits, s.timeouts, s.retransmits),
            (1, 0, 1),
            "{cc}"
        );
        // Recovery: from the third duplicate to the ACK of the retransmission, one RTT.
        let r = recoveries(&sim);
        assert_eq!(r.len(), 1, "{cc}");
        assert!((r[0] / RTT - 1.0).abs() < 0.1, "{cc}: recovery {} s", r[0]);
    }
}

#[test]
fn tahoe_collapses_to_one_segment_on_three_duplicates() {
    let sim = run(&file_with_losses("tahoe", &[100_000], 1), &[]);
    let s = stats(&sim, 0);
    assert_eq!((s.fast_retransmits, s.timeouts), (1, 0));
    assert_eq!(s.goodput_bytes, 200_000);
    // cwnd falls to one segment once, then slow start resumes: 2, 3, 4 segments.
    // (Samples at the sample interval repeat values; consecutive repeats are merged.)
    let mut cwnd: Vec<f64> = trace(&sim, 0, "cwnd").iter().map(|&(_, v)| v).collect();
    cwnd.dedup();
    let collapses: Vec<usize> = (1..cwnd.len()).filter(|&i| cwnd[i] < cwnd[i - 1]).collect();
    assert_eq!(collapses.len(), 1, "{cwnd:?}");
    let at = collapses[0];
    assert!(cwnd[at - 1] > 30_000.0);
    assert_eq!(&cwnd[at..at + 4], &[1000.0, 2000.0, 3000.0, 4000.0]);
}

#[test]
fn three_losses_in_one_window() {
    let losses = [100_000, 102_000, 104_000];
    let reno = run(&file_with_losses("reno", &losses, 1), &[]);
    let newreno = run(&file_with_losses("newreno", &losses, 1), &[]);
    let sack = run(&file_with_losses("sack", &losses, 1), &[]);
    for sim in [&reno, &newreno, &sack] {
        assert_eq!(stats(sim, 0).goodput_bytes, 200_000);
    }
    // Reno leaves recovery on the first partial ACK: it times out or halves again.
    let r = stats(&reno, 0);
    assert!(r.timeouts >= 1 || r.fast_retransmits >= 2, "reno {r:?}");
    // NewReno: one fast retransmit, one retransmission per RTT, out after about 3 RTTs.
    let n = stats(&newreno, 0);
    assert_eq!((n.timeouts, n.fast_retransmits, n.retransmits), (0, 1, 3));
    let nr = recoveries(&newreno);
    assert_eq!(nr.len(), 1);
    assert!(
        (nr[0] / RTT - 3.0).abs() < 0.3,
        "newreno recovery {} s",
        nr[0]
    );
    // SACK: all three holes retransmitted in the first RTT of recovery.
    let s = stats(&sack, 0);
    assert_eq!((s.timeouts, s.fast_retransmits, s.retransmits), (0, 1, 3));
    let sr = recoveries(&sack);
    assert_eq!(sr.len(), 1);
    assert!((sr[0] / RTT - 1.0).abs() < 0.2, "sack recovery {} s", sr[0]);
    assert!(completion(&sack) < completion(&newreno));
    assert!(completion(&newreno) < completion(&reno));
}

#[test]
fn lost_retransmissions_time_out_with_exponential_backoff() {
    // The segment at 100000 is lost three times: fast retransmit, then two timeouts.
    let sim = run(&file_with_losses("newreno", &[100_000], 3), &[]);
    let s = stats(&sim, 0);
    assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 2, 3));
    assert_eq!(s.goodput_bytes, 200_000);
    // RTO = 1 s (the minimum), doubled after each expiry: 2 s then 4 s; the second expiry
    // comes 2 s after the first.
    let rto = trace(&sim, 0, "timeout_rto");
    assert_eq!(rto.len(), 2);
    assert_eq!((rto[0].1, rto[1].1), (2.0, 4.0));
    assert!((rto[1].0 - rto[0].0 - 2.0).abs() < 1e-9);
}

#[test]
fn lost_syn_is_retransmitted_after_the_syn_rto() {
    for (syn_rto, expected) in [("", 3.0), (", syn_rto = \"1s\"", 1.0)] {
        lost_syn_case(syn_rto, expected);
    }
}

fn lost_syn_case(syn_rto: &str, retransmitted_at: f64) {
    let source = format!(
        "{{ kind = \"tcp\", handshake = true{syn_rto}, app = {{ kind = \"file\", size = 1000 }} }}"
    );
    let text = two_hosts("10Mbps", "10ms", 100, "5s", &source)
    .replace(
        "queue = { kind = \"fifo\", limit = 100 }",
        "queue = { kind = \"fifo\", limit = 100 }\nloss = { kind = \"pattern\", flow = \"f\", packets = [0] }",
    );
    let sim = run(&text, &[]);
    let s = stats(&sim, 0);
    assert_eq!(s.timeouts, 1);
    // The SYN (seq 0) is lost once; the retransmitted SYN leaves after `syn_rto` (3 s by
    // default, as ns-3's ConnTimeout).
    let syn_rtt = 2.0 * (tx(40, 10_000_000) + 0.010);
    let data_rtt = tx(1040, 10_000_000) + tx(40, 10_000_000) + 0.020;
    let done = s.completed_at.expect("completed") as f64 / 1e12;
    assert!(
        (done - (retransmitted_at + syn_rtt + data_rtt)).abs() < 1e-9,
        "{done}"
    );
    // Karn: the retransmitted SYN yields no RTT sample; the data segment yields one.
    assert_eq!(s.rtt_count, 1);
}

#[test]
fn generic_retransmits_only_the_timed_out_packet_and_backs_off() {
    // Window 5, 1000-B packets at 1 Mb/s; packet 20 lost twice.
    let text = two_hosts("1Mbps", "10ms", 100, "30s", "{ kind = \"generic\", window = 5 }")
        .replace(
            "queue = { kind = \"fifo\", limit = 100 }",
            "queue = { kind = \"fifo\", limit = 100 }\nloss = { kind = \"seqs\", flow = \"f\", seqs = [20], times = 2 }",
        );
    let sim = run(&text, &[]);
    let s = stats(&sim, 0);
    assert_eq!((s.timeouts, s.retransmits, s.dropped_total()), (2, 2, 2));
    // RTT = 8 + 10 + 0.32 + 10 ms with the window filling the 1 Mb/s link: 5 packets back to
    // back give 8 ms gaps. The first timeout is 2 x srtt after packet 20 left, the second
    // twice that after the retransmission; goodput is still every packet sent in order.
    let sent = stats(&sim, 0).offered_pkts - 2;
    let delivered_in_order = stats(&sim, 0).goodput_bytes / 1000;
    assert!(
        sent - delivered_in_order <= 5,
        "{sent} sent, {delivered_in_order} in order"
    );
}

/// Goodput of a bulk flow with Bernoulli loss `p` on the data path.
fn mathis_run(cc: &str, p: f64, duration: &str) -> (f64, f64) {
    let source = format!("{{ kind = \"tcp\", cc = \"{cc}\", rwnd = 400000, window_scale = 3 }}");
    let text = two_hosts("100Mbps", "50ms", 10_000, duration, &source).replace(
        "queue = { kind = \"fifo\", limit = 10000 }",
        &format!("queue = {{ kind = \"fifo\", limit = 10000 }}\nloss = {p}"),
    );
    let mut sim = build_sim(&text, &[]);
    let end: f64 = duration.trim_end_matches('s').parse().unwrap();
    let goodput = goodput_between(&mut sim, 0, 10.0, end);
    assert_conserved(&sim);
    let rtt = 0.1 + tx(1040, 100_000_000) + tx(40, 100_000_000);
    let mathis = 8000.0 / rtt * (3.0 / (2.0 * p)).sqrt();
    (goodput, mathis)
}

#[test]
fn reno_and_newreno_follow_the_mathis_formula() {
    for cc in ["reno", "newreno"] {
        for (p, duration) in [(0.01, "210s"), (0.001, "410s")] {
            let (goodput, mathis) = mathis_run(cc, p, duration);
            eprintln!(
                "{cc} p={p}: goodput {goodput:.0} b/s, Mathis {mathis:.0} b/s, ratio {:.3}",
                goodput / mathis
            );
            assert!(
                (goodput / mathis - 1.0).abs() < 0.2,
                "{cc} p={p}: {goodput} vs {mathis}"
            );
        }
    }
}
