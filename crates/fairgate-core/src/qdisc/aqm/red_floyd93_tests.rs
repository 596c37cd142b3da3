//! RED under the 1993 pseudo-code \[Floyd93] (`RedConfig::floyd93()`), arrival by arrival.

use super::*;
use crate::engine::secs;
use crate::net::packet::{flags, Packet};
use crate::qdisc::testing::Harness;
use crate::qdisc::QueueView;

/// The 1993 pseudo-code without the ns refinements (their tests are in `red_ns_tests`).
fn cfg() -> RedConfig {
    RedConfig::floyd93()
}

fn busy(packets: usize) -> Watched {
    Watched {
        packets,
        bytes: packets as u64 * 500,
        idle_since: None,
    }
}

#[test]
fn average_follows_the_ewma_of_the_arrival_lengths() {
    let mut core = RedCore::new(RedConfig { w_q: 0.5, ..cfg() }, 10_000_000);
    for q in [0, 1, 2, 3] {
        core.update_average(&busy(q), 0);
    }
    // 0 -> 0.5 -> 1.25 -> 2.125
    assert!((core.avg - 2.125).abs() < 1e-12);
}

#[test]
fn count_spacing_raises_p_a_until_a_notification_resets_it() {
    let mut core = RedCore::new(cfg(), 10_000_000);
    core.avg = 10.0; // p_b = 0.02 * (10 - 5) / (15 - 5) = 0.01
    assert_eq!(core.decide(1000, 0.5), Verdict::Accept);
    assert_eq!(core.count, 0);
    assert!((core.p_a - 0.01).abs() < 1e-15);
    for _ in 1..49 {
        assert_eq!(core.decide(1000, 0.5), Verdict::Accept);
    }
    // count 49: p_a = 0.01 / (1 - 0.49)
    assert_eq!(core.decide(1000, 0.0195), Verdict::Early);
    assert!((core.p_a - 0.01 / 0.51).abs() < 1e-15);
    assert_eq!(core.count, 0);
    assert_eq!(core.decide(1000, 0.5), Verdict::Accept);
    assert!((core.p_a - 0.01 / 0.99).abs() < 1e-15);
}

#[test]
fn spacing_saturates_at_one_when_count_p_b_reaches_one() {
    let mut core = RedCore::new(cfg(), 10_000_000);
    core.avg = 10.0; // p_b = 0.01
    for _ in 0..99 {
        assert_eq!(core.decide(1000, 0.999), Verdict::Accept);
    }
    assert_eq!(core.count, 98);
    assert!((core.p_a - 0.5).abs() < 1e-12); // 0.01 / (1 - 0.98)
    assert_eq!(core.decide(1000, 0.999), Verdict::Early); // count 99: p_a = 1
    assert!(core.p_a > 0.999_999);
}

#[test]
fn without_spacing_p_a_is_p_b() {
    let mut core = RedCore::new(
        RedConfig {
            count_spacing: false,
            ..cfg()
        },
        10_000_000,
    );
    core.avg = 10.0;
    for _ in 0..20 {
        core.decide(1000, 0.5);
    }
    assert!((core.p_a - 0.01).abs() < 1e-15);
}

#[test]
fn below_min_resets_count_and_above_max_forces() {
    let mut core = RedCore::new(cfg(), 10_000_000);
    core.avg = 4.9;
    assert_eq!(core.decide(1000, 0.0), Verdict::Accept);
    assert_eq!(core.count, -1);
    core.avg = 15.0;
    assert_eq!(core.decide(1000, 0.999), Verdict::Forced);
    assert_eq!(core.count, 0);
}

#[test]
fn gentle_ramps_from_max_p_to_one_between_max_and_twice_max() {
    let mut core = RedCore::new(
        RedConfig {
            gentle: true,
            max_p: 0.1,
            ..cfg()
        },
        10_000_000,
    );
    core.avg = 20.0; // 0.1 + 0.9 * (20 - 15) / 15 = 0.4
    assert!((core.base_probability() - 0.4).abs() < 1e-12);
    assert_eq!(core.decide(1000, 0.39), Verdict::Early);
    core.avg = 29.7; // 0.1 + 0.9 * 14.7 / 15 = 0.982
    assert!((core.base_probability() - 0.982).abs() < 1e-12);
    core.avg = 30.0;
    assert_eq!(core.decide(1000, 0.999), Verdict::Forced);
}

#[test]
fn byte_mode_scales_p_b_by_packet_size() {
    let mut core = RedCore::new(
        RedConfig {
            mode: QueueUnit::Bytes,
            min_th: 5000.0,
            max_th: 15000.0,
            ..cfg()
        },
        10_000_000,
    );
    core.avg = 10000.0; // p_b = 0.01, a 1500-byte packet: 0.01 * 1500 / 500 = 0.03
    core.decide(1500, 0.5);
    assert!((core.p_a - 0.03).abs() < 1e-15);
    core.update_average(&busy(40), 0); // 40 packets = 20000 bytes
    assert!((core.avg - (0.998 * 10000.0 + 0.002 * 20000.0)).abs() < 1e-9);
}

#[test]
fn idle_time_decays_the_average_once_per_idle_period() {
    // 500 bytes at 10 Mb/s = 400 us per typical packet.
    let mut core = RedCore::new(cfg(), 10_000_000);
    core.avg = 10.0;
    let idle = Watched {
        packets: 0,
        bytes: 0,
        idle_since: Some(0),
    };
    core.update_average(&idle, secs(0.004)); // m = 10
    let once = 10.0 * 0.998f64.powi(10);
    assert!((core.avg - once).abs() < 1e-12, "{}", core.avg);
    core.update_average(&idle, secs(0.006)); // the arrival was dropped: m = 5 more
    assert!((core.avg - once * 0.998f64.powi(5)).abs() < 1e-12);
}

#[test]
fn adaptive_red_moves_max_p_toward_the_target_band() {
    let mut core = RedCore::new(
        RedConfig {
            adaptive: true,
            ..cfg()
        },
        10_000_000,
    );
    core.avg = 12.0; // above 5 + 0.6 * 10 = 11
    core.adapt();
    assert!((core.max_p - 0.025).abs() < 1e-15); // + min(0.01, 0.02 / 4)
    core.avg = 8.0; // below 9
    core.adapt();
    assert!((core.max_p - 0.0225).abs() < 1e-15);
    core.avg = 10.0; // inside the band
    core.adapt();
    assert!((core.max_p - 0.0225).abs() < 1e-15);
}

fn instant(limit: u64, ecn: bool, mark_forced: bool) -> Red {
    Red::new(
        RedConfig {
            limit: Limit::packets(limit),
            min_th: 1.0,
            max_th: 2.0,
            w_q: 1.0,
            ecn,
            mark_forced,
            ..cfg()
        },
        10_000_000,
    )
}

fn ect(h: &mut Harness, flow: u32) -> PacketId {
    h.packet_from(Packet {
        flow,
        size: 500,
        flags: flags::ECT,
        ..Default::default()
    })
}

#[test]
fn queue_drops_in_the_forced_region() {
    let mut h = Harness::new();
    let mut q = instant(3, false, false);
    let ids: Vec<_> = (0..3).map(|_| h.packet(0, 500)).collect();
    for &id in &ids {
        h.enqueue(&mut q, id);
    }
    // avg = q seen: 0 (accept), 1 (p_b = 0: accept), 2 (forced)
    assert_eq!(h.dropped(), vec![(ids[2], DropReason::Forced)]);
    assert_eq!(q.len_packets(), 2);
    assert_eq!(q.core().count, 0);
    assert_eq!(h.dequeue(&mut q), Some(ids[0]));
}

#[test]
fn a_full_buffer_overflows_below_the_thresholds() {
    let mut h = Harness::new();
    let mut q = Red::new(
        RedConfig {
            limit: Limit::packets(2),
            ..cfg()
        },
        10_000_000,
    );
    let ids: Vec<_> = (0..3).map(|_| h.packet(0, 500)).collect();
    for &id in &ids {
        h.enqueue(&mut q, id); // avg stays near 0: only the buffer limit acts
    }
    assert_eq!(h.dropped(), vec![(ids[2], DropReason::Overflow)]);
    assert!((q.core().avg - (0.998 * 0.002 + 0.002 * 2.0)).abs() < 1e-15);
}

#[test]
fn ecn_marks_ect_packets_and_drops_the_others() {
    let mut h = Harness::new();
    let mut q = instant(3, true, true);
    let a = ect(&mut h, 0);
    let b = ect(&mut h, 0);
    let c = ect(&mut h, 0);
    let d = h.packet(1, 500);
    for id in [a, b, c, d] {
        h.enqueue(&mut q, id);
    }
    // c is forced and marked (queued: 3 = limit); d is forced, not ECT, dropped.
    assert_eq!(h.marks(DropReason::Forced), 1);
    assert!(h.packets.get(c).has(flags::CE));
    assert_eq!(h.dropped(), vec![(d, DropReason::Forced)]);
    assert_eq!(q.len_packets(), 3);
}

#[test]
fn a_monitored_queue_drives_the_average() {
    let mut h = Harness::new();
    let mut q = instant(10, false, false);
    h.monitored = Some(QueueView {
        len_packets: 5,
        ..Default::default()
    });
    let a = h.packet(0, 500);
    h.enqueue(&mut q, a);
    assert_eq!(q.core().avg, 5.0);
    assert_eq!(h.dropped(), vec![(a, DropReason::Forced)]);
    assert_eq!(q.congestion_probability(), 1.0);
}

#[test]
fn bad_thresholds_name_the_field() {
    let bad = RedConfig {
        min_th: 20.0,
        ..cfg()
    };
    let e = bad.check("links[0].queue").unwrap_err();
    assert_eq!(e.path, "links[0].queue.max_th");
    let bad = RedConfig { w_q: 0.0, ..cfg() };
    assert_eq!(bad.check("q").unwrap_err().path, "q.w_q");
}
