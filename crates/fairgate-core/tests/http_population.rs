//! The HTTP population: exactly its target of open connections once the ramp-up is over,
//! births per second equal to the target over the mean connection lifetime (Little's law),
//! the ramp-up's schedule, and conservation.

mod workload_support;

use workload_support::{f64s, run, trace};

/// 40 connections of 25-55 KB pages and 10 s think time through a 2 Mb/s bottleneck.
fn scenario(duration: &str, extra: &str) -> String {
    format!(
        r#"
name = "http"
[simulation]
duration = "{duration}"
seed = 5
sample_interval = "1s"
[[nodes]]
name = "server"
[[nodes]]
name = "gw"
kind = "router"
[[nodes]]
name = "client"
[[links]]
from = "server"
to = "gw"
rate = "100Mbps"
delay = "20ms"
[[links]]
from = "gw"
to = "client"
rate = "2Mbps"
delay = "300ms"
queue = {{ kind = "fifo", limit = 60 }}
[[flows]]
name = "http"
src = "server"
dst = "client"
source = {{ kind = "http", connections = 40, page_size = {{ dist = "uniform", min = 25000, max = 55000 }} {extra} }}
"#
    )
}

#[test]
fn ramp_up_adds_twenty_per_ten_seconds_then_holds_the_target_exactly() {
    let r = run(&scenario("400s", ""));
    let population = trace(&r, "population");
    for &(t, n) in &population {
        // The sample at 0 s precedes the first join, made at the same instant.
        if t > 0.0 && t < 10.0 {
            // 20 spread over the first 5 s, none during the 5 s pause.
            let expected = if t < 5.0 {
                (t / 5.0 * 20.0).floor() + 1.0
            } else {
                20.0
            };
            assert_eq!(n, expected.min(20.0), "at {t} s");
        }
        if t >= 15.0 {
            assert_eq!(n, 40.0, "at {t} s the population is {n}");
        }
    }
}

#[test]
fn births_per_second_follow_littles_law() {
    let r = run(&scenario("1200s", ""));
    let t = &r.transfers;
    let (req, last) = (f64s(t, "request_s"), f64s(t, "last_byte_s"));
    let (from, to) = (100.0, 1100.0);
    let births = req.iter().filter(|&&x| x >= from && x < to).count() as f64;
    let rate = births / (to - from);
    let lifetimes: Vec<f64> = (0..t.rows())
        .filter(|&i| req[i] >= from && req[i] < to)
        .map(|i| last[i] - req[i] + 10.0)
        .collect();
    let mean_lifetime = lifetimes.iter().sum::<f64>() / lifetimes.len() as f64;
    let little = 40.0 / mean_lifetime;
    eprintln!("births {rate:.3}/s, Little's law {little:.3}/s, lifetime {mean_lifetime:.2} s");
    assert!((rate - little).abs() / little < 0.05, "{rate} vs {little}");
}

#[test]
fn without_think_time_in_the_connection_churn_is_faster() {
    let with = run(&scenario("300s", ""));
    let without = run(&scenario("300s", ", think_in_connection = false"));
    assert!(without.transfers.rows() > with.transfers.rows());
}
