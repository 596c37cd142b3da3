//! Hardening (bad and extreme input): the engine's progress check, conservation failures made
//! visible, zero-progress and memory-hungry values refused at validation, and route building
//! without an all-pairs table.

use fairgate_core::net::{Agent, AgentCtx, Packet};
use fairgate_core::results::collect;
use fairgate_core::scenario::{build, parse};

fn two_hosts(queue: &str, source: &str) -> String {
    format!(
        r#"
name = "two-hosts"
[simulation]
duration = "2s"
[[nodes]]
name = "a"
[[nodes]]
name = "r"
kind = "router"
[[nodes]]
name = "b"
[[links]]
from = "a"
to = "r"
rate = "100Mbps"
[[links]]
from = "r"
to = "b"
rate = "10Mbps"
queue = {queue}
[[flows]]
name = "c0"
src = "a"
dst = "b"
source = {source}
"#
    )
}

const CBR: &str = r#"{ kind = "cbr", rate = "20Mbps", size = 1000 }"#;

/// An agent that sets a timer for the current instant every time one fires.
struct SameInstantTimer;

impl Agent for SameInstantTimer {
    fn start(&mut self, ctx: &mut AgentCtx) {
        ctx.set_timer(ctx.now, 0);
    }
    fn on_packet(&mut self, _packet: &Packet, _ctx: &mut AgentCtx) {}
    fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        ctx.set_timer(ctx.now, token);
    }
    fn name(&self) -> &'static str {
        "same-instant-timer"
    }
}

#[test]
fn a_run_without_progress_in_time_stops_with_an_error_naming_the_agent() {
    let scenario = parse(&two_hosts("{ kind = \"fifo\" }", CBR), &[]).unwrap();
    let mut sim = build(&scenario).unwrap();
    assert!(sim.wrap_agent(0, |_| Box::new(SameInstantTimer)));
    sim.run();
    let why = sim.failure().expect("the run is stopped").to_string();
    assert!(why.contains("no progress in time"), "{why}");
    assert!(why.contains("a timer of agent 0 of flow \"c0\""), "{why}");
    let results = collect(&mut sim, "two-hosts", 1);
    assert_eq!(results.summary["valid"], false);
    assert_eq!(results.summary["failure"], why);
}

#[test]
fn a_leaking_discipline_breaks_conservation_and_marks_the_summary_invalid() {
    let text = two_hosts("{ kind = \"test_leak\", every = 5 }", CBR);
    let scenario = parse(&text, &[]).unwrap();
    let mut sim = build(&scenario).unwrap();
    sim.run();
    let violations = sim.conservation_violations();
    assert!(
        violations.iter().any(|v| v.starts_with("flow c0")),
        "{violations:?}"
    );
    assert!(
        violations.iter().any(|v| v.starts_with("port r->b")),
        "{violations:?}"
    );
    let results = collect(&mut sim, "two-hosts", 1);
    assert_eq!(results.summary["valid"], false);
    assert_eq!(results.summary["conservation"]["ok"], false);
}

#[test]
fn zero_progress_values_are_refused_at_validation() {
    let cases = [
        (
            r#"{ kind = "cbr", rate = 1e17, size = 1000 }"#,
            "flows[0].source.rate",
            "at most 1 Tbps",
        ),
        (
            r#"{ kind = "telnet", gap = 0 }"#,
            "flows[0].source.gap",
            "mean gap of at least",
        ),
        (
            r#"{ kind = "telnet", gap = "1ps" }"#,
            "flows[0].source.gap",
            "at most 1 Tbps",
        ),
        (
            r#"{ kind = "telnet", gap = 1e-15 }"#,
            "flows[0].source.gap",
            "mean gap of at least",
        ),
        (
            r#"{ kind = "cbr", rate = "1Mbps", size = 2e6 }"#,
            "flows[0].source.size",
            "at most 1048560",
        ),
        (
            r#"{ kind = "cbr", rate = "10mbps" }"#,
            "flows[0].source.rate",
            "case matters",
        ),
        (
            r#"{ kind = "generic", app_gap = "1ps" }"#,
            "flows[0].source.app_gap",
            "at most 1 Tbps",
        ),
        (
            r#"{ kind = "packet_pair", initial_rtt = "1ps" }"#,
            "flows[0].source.initial_rtt",
            "at 1 Tbps",
        ),
        (
            r#"{ kind = "decbit", initial_rtt = "1ps" }"#,
            "flows[0].source.initial_rtt",
            "at 1 Tbps",
        ),
        // Keshav's sources took any size: a 10^9-byte ACK was counted sent at a port 80 s
        // before it could be (found by the fuzzers' rate invariant).
        (
            r#"{ kind = "packet_pair", ack_size = 1000000000 }"#,
            "flows[0].source.ack_size",
            "from 1 to 1048560",
        ),
        (
            r#"{ kind = "generic", size = 1048561 }"#,
            "flows[0].source.size",
            "from 1 to 1048560",
        ),
        (
            r#"{ kind = "pp_cth", size = 4294967295 }"#,
            "flows[0].source.size",
            "from 1 to 1048560",
        ),
    ];
    for (source, path, expected) in cases {
        let e = parse(&two_hosts("{ kind = \"fifo\" }", source), &[]).unwrap_err();
        assert!(e.path.starts_with(path), "{source}: {e}");
        assert!(e.message.contains(expected), "{source}: {e}");
    }
}

/// Keshav's sources scale their timers by a factor of the RTT and pace pairs by a rate law: a
/// huge factor or setpoint once wrapped the deadline past u64 (a run with no progress) or made
/// the pair gap round to 0 ps. The deadlines saturate and a pair's slot lasts at least the time
/// the host's line takes to send it.
#[test]
fn extreme_keshav_timeouts_and_setpoints_run_to_the_end() {
    for source in [
        r#"{ kind = "generic", beta = 1e18 }"#,
        r#"{ kind = "decbit", beta = 1e300 }"#,
        r#"{ kind = "packet_pair", timeout_rtts = 1e18 }"#,
        r#"{ kind = "pp_cth", timeout_rtts = 1e300 }"#,
        r#"{ kind = "pp_cth", setpoint = 1e18 }"#,
    ] {
        let scenario = parse(&two_hosts("{ kind = \"fifo\" }", source), &[]).unwrap();
        let mut sim = build(&scenario).unwrap();
        sim.run();
        assert_eq!(sim.failure(), None, "{source}");
        assert!(sim.conservation_violations().is_empty(), "{source}");
        assert!(
            sim.events_processed() < 50_000_000,
            "{source}: {}",
            sim.events_processed()
        );
    }
}

/// Times past the end of the 64-bit picosecond clock (a think time or RTT drawn from the
/// tail of a distribution whose mean the bound allows, an HTTP ramp of a million seconds a
/// step) saturate instead of wrapping into the past; tests build with overflow checks, so a
/// wrap would panic here.
#[test]
fn times_past_the_end_of_the_clock_saturate_instead_of_wrapping() {
    let dumbbell = |senders: u32, rtt: &str, source: &str| {
        format!(
            r#"
[simulation]
duration = "1s"
[topology]
kind = "dumbbell"
senders = {senders}
bottleneck = {{ rate = "10Mbps", delay = "1ms" }}
access = {{ rate = "100Mbps", delay = "1ms" }}
{rtt}
[[flows]]
src = "s{{i}}"
dst = "d{{i}}"
count = {senders}
source = {source}
"#
        )
    };
    let think = r#"{ dist = "exponential", mean = 1.8e7 }"#;
    let scenarios = [
        dumbbell(
            1,
            "",
            &format!(r#"{{ kind = "web", sessions = 40, think = {think} }}"#),
        ),
        dumbbell(
            1,
            "",
            r#"{ kind = "http", connections = 400, ramp_step = "1e6s", ramp_pause = "1e6s" }"#,
        ),
        dumbbell(
            20,
            r#"rtt = { dist = "exponential", mean = 1.8e7 }"#,
            r#"{ kind = "tcp" }"#,
        ),
    ];
    for text in scenarios {
        let scenario = parse(&text, &[]).unwrap();
        let mut sim = build(&scenario).unwrap();
        sim.run();
        assert_eq!(sim.failure(), None, "{text}");
        assert!(sim.conservation_violations().is_empty(), "{text}");
    }
}

/// The logs no estimate sizes (every window change, every drop) stop the run with the field
/// named once they outgrow what the memory limit leaves them.
#[test]
fn logs_outgrowing_the_memory_limit_stop_the_run_naming_their_field() {
    let cases = [
        ("record_drops = \"all\"", CBR, "simulation.record_drops"),
        (
            "trace_every_change = true",
            r#"{ kind = "tcp" }"#,
            "simulation.trace_every_change",
        ),
    ];
    let web = r#"{ kind = "web", sessions = 50, think = "1ms", object_size = 2000 }"#;
    let cases = [
        cases[0],
        cases[1],
        ("", web, "flows[0].source.record_transfers"),
    ];
    for (setting, source, field) in cases {
        let text = two_hosts("{ kind = \"fifo\", limit = 20 }", source).replace(
            "duration = \"2s\"",
            &format!("duration = \"60s\"\nmemory_limit_mib = 2\n{setting}"),
        );
        let mut sim = build(&parse(&text, &[]).unwrap()).unwrap();
        sim.run();
        assert_eq!(sim.failure_field(), Some(field), "{:?}", sim.failure());
        assert!(sim.failure().unwrap().contains("memory_limit_mib"));
        assert!(sim.now() < sim.end(), "the run stops early");
        let unlimited = text.replace("memory_limit_mib = 2", "memory_limit_mib = 64");
        let mut sim = build(&parse(&unlimited, &[]).unwrap()).unwrap();
        sim.run();
        assert_eq!(sim.failure(), None);
    }
}

#[test]
fn a_flow_name_that_labels_nothing_is_refused_like_a_node_name() {
    for (name, expected) in [
        ("", "got \"\", expected a name"),
        (" ", "expected a name without spaces at its ends"),
        ("c\\t0", "control characters"),
        ("c\\u200b", "invisible ones"),
        ("c\\u202Eab", "invisible ones"),
        ("c\\u2028d", "invisible ones"),
        ("c\\uE000", "invisible ones"),
        ("\\u00A0c", "spaces at its ends"),
    ] {
        let text = two_hosts("{ kind = \"fifo\" }", CBR)
            .replace("name = \"c0\"", &format!("name = \"{name}\""));
        let e = parse(&text, &[]).unwrap_err();
        assert_eq!(e.path, "flows[0].name", "{name:?}");
        assert!(e.message.contains(expected), "{name:?}: {e}");
    }
    let arrow = two_hosts("{ kind = \"fifo\" }", CBR).replace("name = \"c0\"", "name = \"a->b\"");
    assert!(
        parse(&arrow, &[]).is_ok(),
        "a flow may be named after its path"
    );
    for visible in ["flöw", "фу", "流", "😀", "a b", "e\\u0301"] {
        let text = two_hosts("{ kind = \"fifo\" }", CBR)
            .replace("name = \"c0\"", &format!("name = \"{visible}\""));
        assert!(parse(&text, &[]).is_ok(), "{visible:?} is a visible name");
    }
}

#[test]
fn names_that_print_alike_but_are_encoded_differently_are_refused_as_one() {
    // "café" with a precomposed é (U+00E9) and with e + U+0301; the Kelvin sign and K.
    let flows = two_hosts("{ kind = \"fifo\" }", CBR).replace("name = \"c0\"", "name = \"caf\\u00e9\"")
        + "[[flows]]\nname = \"cafe\\u0301\"\nsrc = \"a\"\ndst = \"b\"\nsource = { kind = \"cbr\", rate = \"1Mbps\" }\n";
    let e = parse(&flows, &[]).unwrap_err();
    assert_eq!(e.path, "flows[1].name");
    assert!(e.message.contains("prints as another flow's name"), "{e}");
    let nodes = two_hosts("{ kind = \"fifo\" }", CBR)
        .replace("name = \"r\"", "name = \"\\u212a\"")
        .replace("to = \"r\"", "to = \"\\u212a\"")
        .replace("from = \"r\"", "from = \"\\u212a\"")
        + "[[nodes]]\nname = \"K\"\n";
    let e = parse(&nodes, &[]).unwrap_err();
    assert_eq!(e.path, "nodes[3].name");
    assert!(e.message.contains("prints as another node's name"), "{e}");
    let same = two_hosts("{ kind = \"fifo\" }", CBR) + "[[nodes]]\nname = \"a\"\n";
    let e = parse(&same, &[]).unwrap_err();
    assert!(
        e.message.contains("which names another node already"),
        "{e}"
    );
}

#[test]
fn a_scenario_name_that_would_print_otherwise_is_refused() {
    let text = two_hosts("{ kind = \"fifo\" }", CBR);
    for bad in ["show\\u001b[2Jcase", "a\\u202e", " a"] {
        let named = text.replace("name = \"two-hosts\"", &format!("name = \"{bad}\""));
        let e = parse(&named, &[]).unwrap_err();
        assert_eq!(e.path, "name", "{bad:?}");
    }
    let unnamed = text.replace("name = \"two-hosts\"", "name = \"\"");
    assert!(parse(&unnamed, &[]).is_ok(), "a scenario may go unnamed");
}

#[test]
fn an_unknown_kind_lists_the_disciplines_but_not_the_broken_ones_for_tests() {
    let text = two_hosts("{ kind = \"fiffo\" }", CBR);
    let e = parse(&text, &[]).unwrap_err();
    assert!(e.message.contains("expected one of fifo, "), "{e}");
    assert!(!e.message.contains("test_"), "{e}");
    let leak = two_hosts("{ kind = \"test_leak\" }", CBR);
    assert!(parse(&leak, &[]).is_ok(), "still accepted, for the tests");
}

#[test]
fn too_many_flows_are_refused_with_the_count_named() {
    let text = two_hosts("{ kind = \"fifo\" }", CBR)
        .replace("name = \"c0\"", "name = \"c{i}\"\ncount = 1000000000");
    let e = parse(&text, &[]).unwrap_err();
    assert_eq!(e.path, "flows[0].count");
    assert!(e.message.contains("memory_limit_mib"), "{e}");
}

#[test]
fn a_large_dumbbell_routes_through_two_router_columns() {
    let n = 20_000;
    let text = format!(
        r#"
[simulation]
duration = "0.2s"
sample_interval = "0.1s"
[topology]
kind = "dumbbell"
senders = {n}
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
access = {{ rate = "100Mbps", delay = "1ms" }}
[[flows]]
name = "t{{i}}"
count = {n}
src = "s{{i}}"
dst = "d{{i}}"
source = {{ kind = "tcp", cc = "newreno" }}
"#
    );
    let scenario = parse(&text, &[]).unwrap();
    let mut sim = build(&scenario).unwrap();
    sim.run();
    assert!(sim.conservation_violations().is_empty());
    assert!(parse(&text.replace("sample_interval = \"0.1s\"", ""), &[])
        .unwrap_err()
        .to_string()
        .contains("simulation.sample_interval"));
    let nodes = 2 * n + 2;
    // Data towards the right router's column, ACKs towards the left's: never nodes x nodes.
    assert!(
        sim.routes().column_bytes() <= 2 * nodes * 4,
        "{}",
        sim.routes().column_bytes()
    );
}

#[test]
fn gateways_without_flows_trace_no_row_for_a_flow_that_does_not_exist() {
    let text = std::fs::read_to_string("../../scenarios/spoofing_gateway.toml").unwrap();
    let text = text[..text.find("[[flows]]").unwrap()].replace("\"60s\"", "\"1s\"");
    let mut sim = build(&parse(&text, &[]).unwrap()).unwrap();
    sim.run();
    // A categorical code past its names trips the debug assertion in `collect`.
    let results = collect(&mut sim, "no-flows", 1);
    assert_eq!(results.traces.rows(), 0);
    assert_eq!(results.summary["valid"], true);
}

#[test]
fn windows_whose_bytes_would_overflow_are_refused_naming_the_field() {
    // segments x mss overflowed 64 bits at 10^18 segments (found with overflow checks on).
    for field in ["initial_window", "abc_limit"] {
        let tcp = format!("{{ kind = \"tcp\", {field} = 1000000000000000000 }}");
        let e = parse(&two_hosts("{ kind = \"fifo\" }", &tcp), &[]).unwrap_err();
        assert!(e.path.ends_with(field), "{e}");
        assert!(e.message.contains("from 1 to 2147483648"), "{e}");
        let tcp = format!("{{ kind = \"tcp\", {field} = 2147483648 }}");
        let mut sim = build(&parse(&two_hosts("{ kind = \"fifo\" }", &tcp), &[]).unwrap()).unwrap();
        sim.run();
        assert!(sim.conservation_violations().is_empty());
    }
}

#[test]
fn node_names_that_would_make_port_names_ambiguous_are_refused() {
    // Ports are named from->to and looked up by splitting there and trimming: a node "r->b"
    // made the port "a->r->b", and " r" could be routed through but never named as a port.
    let plain = two_hosts("{ kind = \"fifo\" }", CBR);
    for name in ["r->b", " r", "r ", "r\\n", ""] {
        let text = plain.replace("\"r\"", &format!("\"{name}\""));
        let e = parse(&text, &[])
            .and_then(|s| build(&s).map(|_| ()))
            .unwrap_err();
        assert_eq!(e.path, "nodes[1].name", "{name:?}: {e}");
        assert!(e.message.contains("expected a name"), "{name:?}: {e}");
    }
}

#[test]
fn a_node_of_the_file_is_named_by_its_place_in_the_file_beside_a_topology() {
    // The topology's nodes come first in the list the checks walk: the file's first node,
    // "s0" again beside a dumbbell's, was named `nodes[4]`.
    let text = "[simulation]\nduration = \"1s\"\n[topology]\nkind = \"dumbbell\"\nsenders = 1\n\
        bottleneck = { rate = \"1Mbps\", delay = \"1ms\" }\naccess = { rate = \"1Mbps\", delay = \"1ms\" }\n\
        [[nodes]]\nname = \"extra\"\n[[nodes]]\nname = \"s0\"\n";
    let e = parse(text, &[]).unwrap_err();
    assert_eq!(e.path, "nodes[1].name");
    assert!(
        e.message.contains("which names another node already"),
        "{e}"
    );
    let gateway = text.replace(
        "name = \"s0\"\n",
        "name = \"g\"\nkind = \"router\"\ngateway = { lhs = { rwnd = 1000 } }\n",
    );
    assert_eq!(parse(&gateway, &[]).unwrap_err().path, "nodes[1].gateway");
}

mod studies {
    use super::{two_hosts, CBR};
    use fairgate_core::scenario::parse;
    use fairgate_core::studies::keshav_buffers::study::{record_port, tahoe_workload, RunLength};
    use fairgate_core::studies::{never_interrupted, StudyError};

    fn refused(result: Result<Vec<impl Sized>, StudyError>) -> StudyError {
        match result {
            Ok(_) => panic!("the study ran"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_record_past_the_memory_limit_stops_the_run_naming_its_length() {
        let text = two_hosts("{ kind = \"fifo\" }", CBR).replace(
            "duration = \"2s\"",
            "duration = \"60s\"\nmemory_limit_mib = 1",
        );
        let scenario = parse(&text, &[]).unwrap();
        let port = "r->b";
        let e = refused(record_port(
            &scenario,
            port,
            &RunLength::SCENARIO,
            &mut never_interrupted,
        ));
        let StudyError::Input(e) = e else {
            panic!("{e}")
        };
        assert_eq!(e.path, "simulation.duration");
        for words in [
            "the study's record of port \"r->b\" reached",
            "of the run's 60 s",
            "the memory limit of 1 MiB",
            "or raise simulation.memory_limit_mib on purpose",
        ] {
            assert!(e.message.contains(words), "{words}: {e}");
        }
        let mut w = tahoe_workload(64, 32, 8, 2e4).unwrap();
        w.scenario.simulation.memory_limit_mib = Some(32);
        let e = refused(record_port(
            &w.scenario,
            &w.port,
            &w.length,
            &mut never_interrupted,
        ));
        let StudyError::Input(e) = e else {
            panic!("{e}")
        };
        assert_eq!(e.path, "trace_s");
        assert!(!e.message.contains("on purpose"), "{e}");
    }

    #[test]
    fn a_recorded_run_that_breaks_conservation_is_no_study() {
        let text = two_hosts("{ kind = \"test_leak\", every = 5 }", CBR);
        let scenario = parse(&text, &[]).unwrap();
        let e = refused(record_port(
            &scenario,
            "r->b",
            &RunLength::SCENARIO,
            &mut never_interrupted,
        ));
        assert!(
            matches!(&e, StudyError::Run(why) if why.starts_with(
                "conservation violated (1 port, 1 flow): port r->b: arrivals 5000 != departures"
            ) && why.contains("; flow c0: offered")),
            "{e}"
        );
    }

    #[test]
    fn an_interrupted_recording_stops_after_its_first_piece() {
        let text = two_hosts("{ kind = \"fifo\" }", CBR).replace("\"2s\"", "\"10000s\"");
        let scenario = parse(&text, &[]).unwrap();
        let mut asked = 0;
        let e = refused(record_port(
            &scenario,
            "r->b",
            &RunLength::SCENARIO,
            &mut || {
                asked += 1;
                true
            },
        ));
        assert_eq!((e, asked), (StudyError::Interrupted, 1));
    }
}
