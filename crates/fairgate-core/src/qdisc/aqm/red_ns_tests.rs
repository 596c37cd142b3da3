//! RED's reference rules checked arrival by arrival against ns-2 2.35 `queue/red.cc` and ns-3
//! `red-queue-disc.cc` (`DoEnqueue`, `Estimator`, `DropEarly`, `ModifyP`, `UpdateMaxP`) and
//! against \[Floyd01] for adaptive RED.

use super::*;
use crate::engine::secs;
use crate::qdisc::testing::Harness;
use crate::qdisc::QueueView;

fn seen(packets: usize) -> Watched {
    Watched {
        packets,
        bytes: packets as u64 * 500,
        idle_since: None,
    }
}

/// An arrival that sees `packets` queued and an average pinned at `avg` (w_q tiny).
fn arrive(core: &mut RedCore, packets: usize, avg: f64, u: f64) -> Verdict {
    core.update_average(&seen(packets), 0);
    core.avg = avg;
    core.decide(500, u)
}

#[test]
fn defaults_are_the_ns3_attributes() {
    let c = RedConfig::default();
    assert_eq!(c.limit.packets, 25); // MaxSize "25p"
    assert_eq!((c.min_th, c.max_th, c.w_q), (5.0, 15.0, 0.002)); // MinTh, MaxTh, QW
    assert_eq!(c.max_p, 1.0 / 50.0); // 1 / LInterm
    assert!(c.gentle && c.wait && c.skip_short_queue); // Gentle, Wait, `nQueued > 1`
    assert_eq!(c.mean_packet_size, 500); // MeanPktSize
    assert_eq!((c.count_rule, c.idle_decay), (CountRule::Ns, IdleDecay::Ns));
    assert!(!c.ecn && !c.mark_forced); // UseEcn false, UseHardDrop true
    assert_eq!(c.adapt_interval, Duration::from_secs(0.5)); // Interval
    assert_eq!((c.adapt_alpha, c.adapt_beta), (0.01, 0.9)); // Alpha, Beta
    assert_eq!((c.adapt_top, c.adapt_bottom), (0.5, 0.01)); // Top, Bottom (0 -> 0.01)
    assert_eq!((c.adapt_target_low, c.adapt_target_high), (0.4, 0.6));
}

#[test]
fn no_drop_while_at_most_one_packet_is_queued() {
    let mut core = RedCore::new(RedConfig::default(), 10_000_000);
    // avg 40 is past 2 max_th: forced, but only once two packets wait.
    assert_eq!(arrive(&mut core, 0, 40.0, 0.0), Verdict::Accept);
    assert_eq!(arrive(&mut core, 1, 40.0, 0.0), Verdict::Accept);
    assert_eq!(arrive(&mut core, 2, 40.0, 0.999), Verdict::Forced);
    let mut off = RedCore::new(
        RedConfig {
            skip_short_queue: false,
            ..RedConfig::default()
        },
        10_000_000,
    );
    assert_eq!(arrive(&mut off, 1, 40.0, 0.999), Verdict::Forced);
}

#[test]
fn a_monitored_single_packet_spares_the_arrival() {
    let mut h = Harness::new();
    let mut q = Red::new(
        RedConfig {
            min_th: 1.0,
            max_th: 2.0,
            w_q: 1.0,
            gentle: false,
            ..RedConfig::default()
        },
        10_000_000,
    );
    h.monitored = Some(QueueView {
        len_packets: 1,
        ..Default::default()
    });
    let a = h.packet(0, 500);
    h.enqueue(&mut q, a);
    assert!(h.dropped().is_empty(), "avg = min_th with one packet: kept");
    h.monitored = Some(QueueView {
        len_packets: 2,
        ..Default::default()
    });
    let b = h.packet(0, 500);
    h.enqueue(&mut q, b);
    assert_eq!(h.dropped(), vec![(b, DropReason::Forced)]);
}

#[test]
fn crossing_min_th_restarts_the_count_at_one_without_a_drop() {
    let mut core = RedCore::new(RedConfig::default(), 10_000_000);
    for _ in 0..5 {
        arrive(&mut core, 5, 2.0, 0.0);
    }
    assert_eq!(core.count, 5); // counted below min_th too
    assert_eq!(arrive(&mut core, 5, 10.0, 0.0), Verdict::Accept);
    assert_eq!(core.count, 1);
    // count 2, p_b = 0.01: count p_b < 1, so `wait` gives p_a = 0 even for u = 0.
    assert_eq!(arrive(&mut core, 5, 10.0, 0.0), Verdict::Accept);
    assert_eq!(core.p_a, 0.0);
}

#[test]
fn wait_spaces_drops_uniformly_between_one_and_two_over_p_b() {
    let mut core = RedCore::new(RedConfig::default(), 10_000_000);
    arrive(&mut core, 5, 10.0, 0.0); // crossing: count 1
    for count in 2..100 {
        arrive(&mut core, 5, 10.0, 0.0);
        assert_eq!(core.p_a, 0.0, "count {count}");
    }
    arrive(&mut core, 5, 10.0, 0.5); // count 100: p_b / (2 - 1)
    assert!((core.p_a - 0.01).abs() < 1e-15);
    for _ in 101..150 {
        arrive(&mut core, 5, 10.0, 0.999);
    }
    assert!((core.p_a - 0.01 / (2.0 - 1.49)).abs() < 1e-12);
    let mut dropped_at = None;
    for count in 150..=200 {
        if arrive(&mut core, 5, 10.0, 0.999) == Verdict::Early {
            dropped_at = Some(count);
            break;
        }
    }
    // p_a = 0.01 / (2 - 0.01 c) passes 0.999 first at c = 199.
    assert_eq!(dropped_at, Some(199));
    assert_eq!(core.count, 0);
    assert_eq!(arrive(&mut core, 5, 10.0, 0.0), Verdict::Accept); // still above: no crossing
    assert_eq!(core.count, 1);
}

#[test]
fn without_wait_the_spacing_is_geometric_from_the_crossing() {
    let cfg = RedConfig {
        wait: false,
        ..RedConfig::default()
    };
    let mut core = RedCore::new(cfg, 10_000_000);
    arrive(&mut core, 5, 10.0, 0.0); // crossing, count 1
    arrive(&mut core, 5, 10.0, 0.999); // count 2
    assert!((core.p_a - 0.01 / (1.0 - 0.02)).abs() < 1e-15);
    assert_eq!(arrive(&mut core, 5, 10.0, 0.0), Verdict::Early);
}

#[test]
fn forced_drops_keep_the_count_and_falling_below_min_th_rearms_the_crossing() {
    let mut core = RedCore::new(RedConfig::default(), 10_000_000);
    arrive(&mut core, 5, 10.0, 0.0); // crossing: count 1
    arrive(&mut core, 5, 10.0, 0.999); // 2
    assert_eq!(arrive(&mut core, 5, 31.0, 0.999), Verdict::Forced);
    assert_eq!(core.count, 3); // ns-3 Ns1Compat = false: no reset
    arrive(&mut core, 5, 10.0, 0.999);
    assert_eq!(core.count, 4);
    arrive(&mut core, 5, 4.0, 0.0); // below min_th
    arrive(&mut core, 5, 10.0, 0.0); // crossing again
    assert_eq!(core.count, 1);
    arrive(&mut core, 1, 10.0, 0.0); // one packet queued: out of the region
    arrive(&mut core, 5, 10.0, 0.0);
    assert_eq!(core.count, 1, "a short queue also rearms the crossing");
}

#[test]
fn gentle_forced_region_starts_at_twice_max_th() {
    let mut core = RedCore::new(RedConfig::default(), 10_000_000);
    arrive(&mut core, 5, 10.0, 0.0);
    arrive(&mut core, 5, 29.9, 0.999);
    assert!((core.p_b - (0.02 + 0.98 * 14.9 / 15.0)).abs() < 1e-12);
    assert_eq!(arrive(&mut core, 5, 30.0, 0.999), Verdict::Forced);
}

#[test]
fn idle_time_counts_whole_typical_packets_then_the_arrival() {
    // 500 bytes at 10 Mb/s: 400 us per typical packet.
    let mut core = RedCore::new(RedConfig::default(), 10_000_000);
    core.avg = 10.0;
    let idle = Watched {
        packets: 0,
        bytes: 0,
        idle_since: Some(0),
    };
    core.update_average(&idle, secs(0.0041)); // m = floor(10.25) = 10, then one arrival
    let once = 10.0 * 0.998f64.powi(11);
    assert!((core.avg - once).abs() < 1e-12, "{}", core.avg);
    core.update_average(&idle, secs(0.006)); // same idle period: m = floor(4.75) = 4
    assert!((core.avg - once * 0.998f64.powi(5)).abs() < 1e-12);
}

#[test]
fn byte_mode_counts_bytes_in_mean_packets_and_scales_after_spacing() {
    let cfg = RedConfig {
        mode: QueueUnit::Bytes,
        min_th: 5000.0,
        max_th: 15000.0,
        wait: false,
        ..RedConfig::default()
    };
    let mut core = RedCore::new(cfg, 10_000_000);
    let big = |core: &mut RedCore, u| {
        core.update_average(&seen(5), 0);
        core.avg = 10000.0; // p_b = 0.01
        core.decide(1500, u)
    };
    big(&mut core, 0.0); // crossing: count_bytes = 1500
    big(&mut core, 0.999); // 3000 bytes = 6 mean packets
    let expected = 0.01 / (1.0 - 6.0 * 0.01) * 1500.0 / 500.0;
    assert!((core.p_a - expected).abs() < 1e-15, "{}", core.p_a);
}

#[test]
fn adaptive_red_uses_its_configured_band_steps_and_bounds() {
    let cfg = RedConfig {
        adaptive: true,
        adapt_alpha: 0.001,
        adapt_beta: 0.5,
        adapt_target_low: 0.2,
        adapt_target_high: 0.8,
        ..RedConfig::default()
    };
    let mut core = RedCore::new(cfg, 10_000_000);
    core.avg = 12.0; // inside 7..13
    core.adapt();
    assert_eq!(core.max_p, 0.02);
    core.avg = 13.5;
    core.adapt();
    assert!((core.max_p - 0.021).abs() < 1e-15); // + min(alpha, max_p / 4)
    core.avg = 6.0;
    core.adapt();
    assert!((core.max_p - 0.0105).abs() < 1e-15);
    core.adapt();
    core.adapt(); // 0.00525 is below bottom 0.01: no further decrease
    assert!((core.max_p - 0.00525).abs() < 1e-15);
    core.max_p = 0.6;
    core.avg = 14.0;
    core.adapt(); // above top 0.5: no increase
    assert_eq!(core.max_p, 0.6);
}

#[test]
fn keys_their_switch_leaves_unread_are_refused_not_ignored() {
    let unread = |cfg: RedConfig| cfg.check("q").unwrap_err();
    let forced = unread(RedConfig {
        mark_forced: true,
        ..RedConfig::default()
    });
    assert_eq!(forced.path, "q.mark_forced");
    assert!(
        forced.message.contains("only `ecn = true` reads"),
        "{forced}"
    );
    let interval = unread(RedConfig {
        adapt_interval: Duration::from_secs(2.0),
        ..RedConfig::default()
    });
    assert_eq!(interval.path, "q.adapt_interval");
    assert!(interval.message.contains("beside `adaptive = false`"));
    let read = RedConfig {
        ecn: true,
        mark_forced: true,
        adaptive: true,
        adapt_interval: Duration::from_secs(2.0),
        ..RedConfig::default()
    };
    assert!(read.check("q").is_ok());
}

#[test]
fn bad_adaptive_parameters_name_the_field() {
    let bad = RedConfig {
        adaptive: true,
        adapt_target_low: 0.7,
        adapt_target_high: 0.3,
        ..RedConfig::default()
    };
    assert_eq!(bad.check("q").unwrap_err().path, "q.adapt_target_high");
    let bad = RedConfig {
        adaptive: true,
        adapt_beta: 0.0,
        ..RedConfig::default()
    };
    assert_eq!(bad.check("q").unwrap_err().path, "q.adapt_beta");
}
