use super::*;
use crate::transport::testing::AgentHarness;

/// A test sender with the options the hand-checked sequences below assume.
fn sender(config: &str) -> TcpSender {
    test_sender(&super::super::config::classic(config))
}

fn ack(ack: u64, rwnd: u64, ece: bool) -> Packet {
    Packet {
        kind: PacketKind::Ack,
        ack,
        aux: rwnd,
        flags: if ece { flags::ECE } else { 0 },
        ..Default::default()
    }
}

fn seqs(sent: &[Packet]) -> Vec<u64> {
    sent.iter().map(|p| p.seq).collect()
}

#[test]
fn ece_halves_once_per_window_and_sets_cwr() {
    let mut h = AgentHarness::new(2);
    let mut s = sender("ecn = true\ninitial_window = 4");
    let sent = h.call(|ctx| s.start(ctx));
    assert_eq!(seqs(&sent), vec![0, 1000, 2000, 3000]);
    assert!(sent.iter().all(|p| p.has(flags::ECT) && p.size == 1040));
    // ECE on the ACK of the first segment: no growth, cwnd 4000 -> 2000, CWR next.
    let a = ack(1000, 65_535, true);
    let sent = h.call(|ctx| s.on_packet(&a, ctx));
    assert_eq!((s.state().cwnd, s.state().ssthresh), (2000, 2000));
    assert!(sent.is_empty(), "3000 B in flight >= cwnd 2000");
    assert_eq!(h.flows[0].ecn_reactions, 1);
    // More ECE for data sent before the cut: ignored; cwnd does not grow either.
    let a = ack(3000, 65_535, true);
    let sent = h.call(|ctx| s.on_packet(&a, ctx));
    assert_eq!(s.state().cwnd, 2000);
    assert_eq!(seqs(&sent), vec![4000]);
    assert!(sent[0].has(flags::CWR));
    assert_eq!(h.flows[0].ecn_reactions, 1);
    // ECE beyond the snd_max of the reaction (4000): a new window, a new cut.
    let a = ack(5000, 65_535, true);
    h.call(|ctx| s.on_packet(&a, ctx));
    assert_eq!((s.state().cwnd, h.flows[0].ecn_reactions), (2000, 2));
}

#[test]
fn window_updates_are_not_duplicates_and_reopen_sending() {
    let mut h = AgentHarness::new(2);
    let mut s = sender("initial_window = 4\nrwnd = 2000");
    assert_eq!(seqs(&h.call(|ctx| s.start(ctx))), vec![0, 1000]);
    let a = ack(2000, 0, false);
    assert!(
        h.call(|ctx| s.on_packet(&a, ctx)).is_empty(),
        "window closed"
    );
    // The receiver reopens its window with the same ACK number: an update, not a dupack.
    let a = ack(2000, 3000, false);
    let sent = h.call(|ctx| s.on_packet(&a, ctx));
    assert_eq!(seqs(&sent), vec![2000, 3000, 4000]);
    assert_eq!(s.state().dupacks, 0);
    // Same ACK, same window, data outstanding: duplicates.
    let a = ack(2000, 3000, false);
    h.call(|ctx| s.on_packet(&a, ctx));
    h.call(|ctx| s.on_packet(&a, ctx));
    assert_eq!(s.state().dupacks, 2);
    // An old ACK changes nothing.
    let a = ack(1000, 9000, false);
    h.call(|ctx| s.on_packet(&a, ctx));
    assert_eq!((s.state().dupacks, s.state().rwnd), (2, 3000));
}

#[test]
fn manual_transfers_are_submitted_and_completed_on_demand() {
    let mut h = AgentHarness::new(2);
    let mut s = sender("initial_window = 10\napp = { kind = \"manual\" }");
    assert!(h.call(|ctx| s.start(ctx)).is_empty());
    h.now = secs(0.5);
    let mut ids = Vec::new();
    let first = h.call(|ctx| ids.push(s.submit(1500, ctx)));
    assert_eq!(seqs(&first), vec![0, 1000]);
    assert_eq!(first[1].size, 500 + 40);
    let second = h.call(|ctx| ids.push(s.submit(1000, ctx)));
    assert_eq!(ids, vec![0, 1]);
    assert_eq!(seqs(&second), vec![1500]);
    h.now = secs(0.6);
    let a = ack(1500, 65_535, false);
    h.call(|ctx| s.on_packet(&a, ctx));
    let t = s.transfers();
    assert_eq!((t[0].start, t[0].end, t[0].submitted), (0, 1500, secs(0.5)));
    assert_eq!((t[0].completed, t[1].completed), (Some(secs(0.6)), None));
    h.now = secs(0.7);
    let a = ack(2500, 65_535, false);
    h.call(|ctx| s.on_packet(&a, ctx));
    assert_eq!(s.transfers()[1].completed, Some(secs(0.7)));
    assert_eq!(
        h.flows[0].completed_at, None,
        "a manual application never finishes"
    );
}

#[test]
fn rto_expiry_goes_back_and_backs_off() {
    let mut h = AgentHarness::new(2);
    let mut s = sender("initial_window = 4");
    h.call(|ctx| s.start(ctx));
    // Initial RTO 1 s: the timer was set for 1 s.
    assert_eq!(h.timers, vec![(secs(1.0), RTO)]);
    h.now = secs(1.0);
    let sent = h.call(|ctx| s.on_timer(RTO, ctx));
    assert_eq!(seqs(&sent), vec![0]);
    assert!(sent[0].has(flags::RETX));
    let st = s.state();
    assert_eq!(
        (st.cwnd, st.ssthresh, st.snd_nxt, st.recover),
        (1000, 2000, 1000, Some(4000))
    );
    assert_eq!(
        h.timers.last(),
        Some(&(secs(3.0), RTO)),
        "backed off to 2 s"
    );
    assert_eq!((h.flows[0].timeouts, h.flows[0].retransmits), (1, 1));
}
