//! Property-based scenarios over the schema: random topologies, rates, sizes, disciplines,
//! sources and start times, valid and invalid. Each must be refused with a field-naming error
//! or build, run to its end without a failure and conserve every packet; none may panic.
//! 256 cases by default; `FAIRGATE_SLOW=1` runs 10,000.

use fairgate_core::qdisc::QdiscSpec;
use fairgate_core::scenario::{build, parse};
use proptest::prelude::*;
use proptest::test_runner::Config;

fn cases() -> u32 {
    if std::env::var_os("FAIRGATE_SLOW").is_some() {
        10_000
    } else {
        256
    }
}

/// Mostly good values (weight 7), sometimes bad ones (weight 1).
fn mostly(good: &'static [&'static str], bad: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![
        7 => prop::sample::select(good).prop_map(str::to_string),
        1 => prop::sample::select(bad).prop_map(str::to_string),
    ]
    .boxed()
}

fn rate() -> BoxedStrategy<String> {
    mostly(
        &[
            "\"10Mbps\"",
            "\"1Gbps\"",
            "\"64kbit/s\"",
            "\"2MB/s\"",
            "5e6",
        ],
        &[
            "\"10mbps\"",
            "0",
            "-1",
            "1e17",
            "\"2Tbps\"",
            "nan",
            "inf",
            "\"fast\"",
        ],
    )
}

fn delay() -> BoxedStrategy<String> {
    mostly(
        &["\"10ms\"", "0", "\"1ps\"", "0.002"],
        &["-1", "\"10 parsecs\"", "nan", "\"1e9s\""],
    )
}

fn queue() -> BoxedStrategy<String> {
    let kinds: Vec<&'static str> = QdiscSpec::KINDS
        .iter()
        .copied()
        .filter(|k| !k.starts_with("test_"))
        .collect();
    (
        prop::sample::select(kinds),
        mostly(&["", ", limit = 20"], &[", limit = 0", ", bogus = 1"]),
    )
        .prop_map(|(kind, extra)| {
            let extra = if kind == "fifo" { extra } else { String::new() };
            format!("{{ kind = \"{kind}\"{extra} }}")
        })
        .boxed()
}

fn source() -> BoxedStrategy<String> {
    let size = mostly(&["40", "1000", "1500", "9000"], &["0", "2e6", "nan", "-5"]);
    let gap = mostly(&["\"10ms\"", "0.001"], &["0", "1e-15", "nan"]);
    prop_oneof![
        (rate(), size).prop_map(|(r, s)| format!("{{ kind = \"cbr\", rate = {r}, size = {s} }}")),
        rate().prop_map(|r| format!("{{ kind = \"poisson\", rate = {r} }}")),
        gap.clone()
            .prop_map(|g| format!("{{ kind = \"telnet\", gap = {g} }}")),
        prop::sample::select(&["newreno", "reno", "tahoe", "cubic"][..])
            .prop_map(|cc| format!("{{ kind = \"tcp\", cc = \"{cc}\" }}")),
        (rate(), gap.clone(), gap).prop_map(|(r, on, off)| format!(
            "{{ kind = \"onoff\", rate = {r}, on = {on}, off = {off} }}"
        )),
    ]
    .boxed()
}

/// A flow's stop line: mostly none or within the run, sometimes before its start or not a time.
fn stop() -> BoxedStrategy<String> {
    mostly(
        &["", "", "stop = 0.15\n", "stop = \"250ms\"\n"],
        &["stop = 0\n", "stop = -1\n", "stop = nan\n"],
    )
}

prop_compose! {
    fn scenario()(
        senders in prop_oneof![7 => 1u32..4, 1 => Just(0u32)],
        duration in mostly(&["0.2", "\"300ms\""], &["0", "-1"]),
        seed in 0u64..(1 << 40),
        rates in (rate(), rate()),
        delays in (delay(), delay()),
        queue in queue(),
        flows in prop::collection::vec(
            (source(), mostly(&["0", "\"10ms\""], &["5", "-1"]), stop()), 0..4),
    ) -> String {
        let mut text = format!(
            "[simulation]\nduration = {duration}\nseed = {seed}\n[topology]\nkind = \"dumbbell\"\n\
             senders = {senders}\nbottleneck = {{ rate = {}, delay = {}, queue = {queue} }}\n\
             access = {{ rate = {}, delay = {} }}\n",
            rates.0, delays.0, rates.1, delays.1
        );
        for (i, (source, start, stop)) in flows.iter().enumerate() {
            let host = i as u32 % senders.max(1);
            text += &format!(
                "[[flows]]\nsrc = \"s{host}\"\ndst = \"d{host}\"\nstart = {start}\n{stop}source = {source}\n"
            );
        }
        text
    }
}

proptest! {
    #![proptest_config(Config { cases: cases(), failure_persistence: None, ..Config::default() })]

    #[test]
    fn random_scenarios_are_refused_or_run_and_conserve(text in scenario()) {
        match parse(&text, &[]) {
            Err(e) => prop_assert!(!e.path.is_empty() || !e.message.is_empty(), "{text}"),
            Ok(scenario) => {
                let mut sim = build(&scenario).expect("a valid scenario builds");
                sim.run();
                prop_assert_eq!(sim.failure(), None, "{}", text);
                let violations = sim.conservation_violations();
                prop_assert!(violations.is_empty(), "{violations:?}\n{text}");
            }
        }
    }
}

/// Failures the generators found, kept as regression cases.
#[test]
fn regression_corpus() {
    let corpus = [
        // A 1e17 b/s CBR source: its gap rounded to 0 ps and the run never advanced.
        "[simulation]\nduration = 1\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n\
         [[links]]\nfrom = \"a\"\nto = \"b\"\nrate = \"10Mbps\"\n\
         [[flows]]\nsrc = \"a\"\ndst = \"b\"\nsource = { kind = \"cbr\", rate = 1e17 }\n",
    ];
    for text in corpus {
        let e = parse(text, &[]).unwrap_err();
        assert_eq!(e.path, "flows[0].source.rate", "{e}");
    }
}
