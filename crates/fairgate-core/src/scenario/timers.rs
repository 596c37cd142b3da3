//! The timers a scenario's disciplines re-arm all run long, checked at validation: a period so
//! short that one timer fires more than `MAX_FIRINGS` times over the run is refused, naming the
//! field, because the run would spend hours on that one timer (a 1 ps SFB rehash interval made
//! a 2 s run fire 2x10^12 events) while its clock still advances, so the engine's check for a
//! run that makes no progress never triggers.
//!
//! Decisions: 10^9 firings cost a minute or two of run time on their own (90 ns each, measured
//! with PI's timer), more than most whole runs; the published periods fire 10^2-10^5 times a
//! simulated minute (PI's 170 Hz, SFB's 20 s rehash, RED-PD's 100 ms epochs), so the bound
//! refuses only periods far outside them (the 2x10^6 s soak could run PI at 170 Hz). A
//! discipline declares its timers with `QdiscConfig::periods`; a timer re-armed once per held
//! packet (RED with flow control's retries) counts once per packet the discipline may hold.

use super::validate::ResolvedLink;
use crate::config::error::{join, ScenarioError};
use crate::engine::{to_secs, Time};

/// The most times one discipline's timers may fire over a run.
pub const MAX_FIRINGS: f64 = 1e9;

/// Refuses a discipline timer that would fire more than [`MAX_FIRINGS`] times in `duration`.
pub fn check_periods(links: &[ResolvedLink], duration: Time) -> Result<(), ScenarioError> {
    let run_s = to_secs(duration);
    for link in links {
        for period in link.queue.periods() {
            let firings = run_s / period.secs * period.timers;
            if firings > MAX_FIRINGS {
                let shortest = run_s * period.timers / MAX_FIRINGS;
                return Err(ScenarioError::new(
                    join(&join(&link.path, "queue"), &period.field),
                    format!(
                        "got a period of {} s, which fires {firings:.3e} times over the {run_s} \
                         s run; expected a period of at least {shortest:.3e} s (at most \
                         {MAX_FIRINGS:.0e} firings of a discipline's timers)",
                        period.secs
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::scenario::parse;

    fn dumbbell(queue: &str) -> String {
        format!(
            "[simulation]\nduration = \"2s\"\n[topology]\nkind = \"dumbbell\"\nsenders = 1\n\
             bottleneck = {{ rate = \"10Mbps\", queue = {queue} }}\n\
             access = {{ rate = \"100Mbps\" }}\n"
        )
    }

    #[test]
    fn a_timer_firing_more_than_a_billion_times_is_refused_naming_its_field() {
        let cases = [
            (
                "{ kind = \"sfb\", rehash_interval = \"1ps\" }",
                "rehash_interval",
            ),
            ("{ kind = \"pi\", sampling_hz = 1e9 }", "sampling_hz"),
            ("{ kind = \"red_pd\", target_rtt = \"1ps\" }", "target_rtt"),
            ("{ kind = \"red_pd\", max_epoch = \"1ps\" }", "max_epoch"),
            (
                "{ kind = \"choke\", red = { adaptive = true, adapt_interval = \"1ns\" } }",
                "red.adapt_interval",
            ),
            (
                "{ kind = \"sfg\", inner = { kind = \"stochastic_fq\", perturb = \"1ns\" } }",
                "inner.perturb",
            ),
            (
                "{ kind = \"redfc\", retry = \"1ms\", hold_limit = 1000000 }",
                "retry",
            ),
        ];
        for (queue, field) in cases {
            let e = parse(&dumbbell(queue), &[]).unwrap_err();
            assert_eq!(e.path, format!("topology.bottleneck.queue.{field}"), "{e}");
            assert!(e.message.contains("at most 1e9 firings"), "{e}");
        }
    }

    #[test]
    fn published_periods_and_a_disabled_perturbation_pass() {
        for queue in [
            "{ kind = \"sfb\" }",
            "{ kind = \"pi\" }",
            "{ kind = \"red_pd\" }",
            "{ kind = \"redfc\" }",
            "{ kind = \"stochastic_fq\", perturb = 0 }",
            "{ kind = \"pi\", sampling_hz = 1e8 }",
        ] {
            parse(&dumbbell(queue), &[]).unwrap_or_else(|e| panic!("{queue}: {e}"));
        }
    }
}
