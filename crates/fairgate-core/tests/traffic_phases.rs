//! The compact schedule `phases = { counts, length }` on a flow entry: it expands to the
//! groups written out by hand (same names, times and order, so byte-identical results), sets
//! the phase edges, keeps the flow counts of every phase, and names bad input by field.

mod workload_support;

use fairgate_core::results::Results;
use fairgate_core::scenario::parse;

use workload_support::run;

const HEAD: &str = r#"
name = "phases"
[simulation]
duration = "10s"
seed = 5
[topology]
kind = "dumbbell"
senders = 4
bottleneck = { rate = "10Mbps", delay = "5ms", queue = { kind = "red", limit = 60 } }
access = { rate = "100Mbps", delay = "1ms" }
"#;

const TCP: &str = r#"{ kind = "tcp", cc = "reno", timestamps = false, delayed_ack = false }"#;

fn compact(extra: &str) -> String {
    format!(
        "{HEAD}[[flows]]\nname = \"cbr\"\nsrc = \"s0\"\ndst = \"d0\"\nsource = {{ kind = \"cbr\", rate = \"1Mbps\" }}\n\
         [[flows]]\nname = \"ftp\"\nsrc = \"s{{i}}\"\ndst = \"d{{i}}\"\nsource = {TCP}\n\
         phases = {{ counts = [1, 3, 4, 2, 0], length = \"2s\" }}\n{extra}"
    )
}

/// The groups of [1, 3, 4, 2, 0] written out: rises open groups, falls stop the latest first.
fn by_hand() -> String {
    let group = |g: u32, count: u32, start: u32, stop: u32| {
        format!(
            "[[flows]]\nname = \"ftp{g}.{{i}}\"\nsrc = \"s{{i}}\"\ndst = \"d{{i}}\"\nsource = {TCP}\n\
             count = {count}\nstart = {start}\nstop = {stop}\n"
        )
    };
    let sim = HEAD.replace("seed = 5\n", "seed = 5\nphase_edges = [2, 4, 6, 8]\n");
    format!(
        "{sim}[[flows]]\nname = \"cbr\"\nsrc = \"s0\"\ndst = \"d0\"\nsource = {{ kind = \"cbr\", rate = \"1Mbps\" }}\n{}{}{}",
        group(0, 1, 0, 8),
        group(1, 1, 2, 8),
        group(2, 1, 2, 6),
    ) + &group(3, 1, 4, 6)
}

fn everything(r: &Results) -> String {
    format!(
        "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
        r.summary,
        r.flows,
        r.ports,
        r.queue_series,
        r.flow_series,
        r.drops,
        r.class_series,
        r.phase_classes,
        r.phase_ports
    )
}

#[test]
fn the_compact_schedule_runs_as_its_groups_written_out() {
    let compact = run(&compact(""));
    let written = run(&by_hand());
    assert_eq!(everything(&compact), everything(&written));
    // One cbr flow and four ftp groups of one flow each, with their ACK flows.
    assert!(compact.flows.rows() >= 5, "{} flows", compact.flows.rows());
    assert!(
        compact.phase_classes.rows() >= 5,
        "{}",
        compact.phase_classes.rows()
    );
}

#[test]
fn the_schedule_sets_the_edges_and_the_counts() {
    let s = parse(&compact(""), &[]).unwrap();
    let edges: Vec<f64> = s.simulation.phase_edges.iter().map(|d| d.secs()).collect();
    assert_eq!(edges, [2.0, 4.0, 6.0, 8.0]);
    let names: Vec<_> = s.flows.iter().map(|f| f.name.clone().unwrap()).collect();
    assert_eq!(
        names,
        ["cbr", "ftp0.{i}", "ftp1.{i}", "ftp2.{i}", "ftp3.{i}"]
    );
    let active = |t: f64| {
        s.flows[1..]
            .iter()
            .filter(|f| f.start.0 .0.mean() <= t && f.stop.is_none_or(|d| t < d.secs()))
            .map(|f| f.count.unwrap())
            .sum::<u32>()
    };
    let counts: Vec<u32> = [1.0, 3.0, 5.0, 7.0, 9.0].into_iter().map(active).collect();
    assert_eq!(counts, [1, 3, 4, 2, 0]);
}

#[test]
fn edges_past_the_end_are_left_out_and_given_edges_kept() {
    let text = compact("").replace("seed = 5\n", "seed = 5\nphase_edges = [\"3s\"]\n");
    let text = text.replace("duration = \"10s\"", "duration = \"7s\"");
    // A group starting at 8 s lies past the 7 s end: the error names the entry as written.
    let late = text.replace("[1, 3, 4, 2, 0]", "[1, 1, 1, 1, 2]");
    let err = parse(&late, &[]).unwrap_err();
    assert_eq!(err.path, "flows[1].start", "{err}");
    let text = text.replace("[1, 3, 4, 2, 0]", "[1, 3, 4, 2]");
    let s = parse(&text, &[]).unwrap();
    let edges: Vec<f64> = s.simulation.phase_edges.iter().map(|d| d.secs()).collect();
    assert_eq!(edges, [2.0, 3.0, 4.0, 6.0]);
}

#[test]
fn bad_schedules_name_their_field() {
    let cases = [
        (
            "counts = [1, 3, 4, 2, 0]",
            "counts = []",
            "flows[1].phases.counts",
        ),
        ("length = \"2s\"", "length = 0", "flows[1].phases.length"),
        (
            "length = \"2s\"",
            "length = \"2s\", every = 1",
            "flows[1].phases",
        ),
        (
            "name = \"ftp\"",
            "name = \"ftp\"\ncount = 3",
            "flows[1].count",
        ),
        (
            "name = \"ftp\"",
            "name = \"ftp\"\nstop = 3",
            "flows[1].stop",
        ),
        (
            "name = \"ftp\"",
            "name = \"ftp\"\nstart = 1",
            "flows[1].start",
        ),
        ("name = \"ftp\"", "name = \"ftp{i}\"", "flows[1].name"),
        (
            "dst = \"d{i}\"\nsource = {",
            "dst = \"nowhere\"\nsource = {",
            "flows[1].dst",
        ),
    ];
    for (from, to, field) in cases {
        let text = compact("").replacen(from, to, 1);
        assert_ne!(text, compact(""), "{from}");
        let err = parse(&text, &[]).unwrap_err();
        assert!(err.path.starts_with(field), "{to}: {err}");
    }
}

#[test]
fn an_error_after_a_schedule_names_the_entry_as_written() {
    let text = compact(
        "[[flows]]\nname = \"late\"\nsrc = \"s1\"\ndst = \"nowhere\"\nsource = { kind = \"cbr\", rate = \"1Mbps\" }\n",
    );
    let err = parse(&text, &[]).unwrap_err();
    assert_eq!(err.path, "flows[2].dst", "{err}");
}
