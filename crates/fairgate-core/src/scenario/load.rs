//! Reading a scenario: TOML text, `--set key.path=value` overrides, then the typed schema with
//! errors that name the field path.

use super::schema::Scenario;
use crate::config::error::{clipped, ScenarioError};
use crate::config::strict::NO_DATES;
use std::collections::HashMap;

/// Parses TOML text, applies overrides, deserializes and validates.
pub fn parse(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let scenario = parse_for_build(text, overrides)?;
    super::validate::validate(&scenario)?;
    Ok(scenario)
}

/// Parses TOML text, applies overrides and deserializes, leaving validation to
/// [`super::build()`], which resolves (and so validates) the scenario anyway: a run validates
/// once instead of twice, which at 100,000 flows is about a third of the build time. The
/// errors are the same as [`parse`]'s.
pub fn parse_for_build(text: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let mut table = parse_document(text)?;
    apply_overrides(&mut table, overrides)?;
    deserialize(table).map_err(|e| with_full_path(e, text, overrides))
}

/// An override whose first key is no field of a scenario (`--set bottleneck.queue.limit=5`,
/// the short form a sweep's axis takes) gets the scenario's paths that end as it does.
fn with_full_path(mut e: ScenarioError, text: &str, overrides: &[String]) -> ScenarioError {
    if !e.message.starts_with("unknown field") || e.path.contains(['.', '[']) {
        return e; // not an unknown key at the top of the scenario
    }
    let Some(path) = overrides
        .iter()
        .filter_map(|o| Some(o.split_once('=')?.0.trim()))
        .find(|p| p.split(['.', '[']).next() == Some(e.path.as_str()))
    else {
        return e;
    };
    let Ok(document) = parse_document(text) else {
        return e;
    };
    let mut paths = Vec::new();
    collect_paths(&toml::Value::Table(document), String::new(), &mut paths);
    let ending = format!(".{path}");
    let full: Vec<String> = paths
        .into_iter()
        .filter(|p| p.ends_with(&ending))
        .map(|p| format!("`{p}`"))
        .take(4)
        .collect();
    if full.is_empty() {
        return e;
    }
    let listed = full.join(", ");
    let message = format!("{}; `--set {path}` takes a full path: {listed}", e.message);
    ScenarioError::new(std::mem::take(&mut e.path), message)
}

fn collect_paths(value: &toml::Value, here: String, out: &mut Vec<String>) {
    match value {
        toml::Value::Table(table) => {
            for (key, child) in table {
                let path = crate::config::error::join(&here, key);
                collect_paths(child, path.clone(), out);
                out.push(path);
            }
        }
        toml::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect_paths(item, format!("{here}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// Applies `overrides` in order. One that replaces a table or array inside which an earlier
/// one set a value is refused: that value would be lost without a word (`--set
/// bottleneck.queue.limit=5` then a whole `bottleneck.queue`, or a sweep's fixed override
/// inside an axis's table).
pub fn apply_overrides(table: &mut toml::Table, overrides: &[String]) -> Result<(), ScenarioError> {
    // Every strict prefix of a path set so far, with the override that set below it: one
    // lookup per override, where a scan of the earlier ones was quadratic in their number.
    let mut set_inside: HashMap<&[Step], &String> = HashMap::new();
    let paths: Vec<Option<Vec<Step>>> = overrides.iter().map(|o| override_steps(o)).collect();
    for (assignment, steps) in overrides.iter().zip(&paths) {
        apply_override(table, assignment)?;
        let Some(steps) = steps else {
            continue;
        };
        if let Some(inside) = set_inside.get(steps.as_slice()) {
            return Err(ScenarioError::new(
                format!("--set {}", clipped(assignment)),
                format!(
                    "replaces the whole of what an earlier override, `--set {}`, set a value \
                     inside (that value would be lost); expected the whole first, then what is \
                     inside it",
                    clipped(inside)
                ),
            ));
        }
        for end in 1..steps.len() {
            set_inside.entry(&steps[..end]).or_insert(assignment);
        }
    }
    Ok(())
}

fn override_steps(assignment: &str) -> Option<Vec<Step>> {
    parse_path(assignment.split_once('=')?.0.trim())
}

/// TOML text as a table, before any field is read: the one TOML parser of the project, which
/// the Python side also uses (through the bindings) so a file that runs also sweeps.
pub fn parse_document(text: &str) -> Result<toml::Table, ScenarioError> {
    text.parse().map_err(|e: toml::de::Error| {
        ScenarioError::new(
            "",
            format!("TOML syntax error: {}", e.message().trim()) + &location(text, e.span()),
        )
    })
}

/// TOML text as a table of plain values, for a reader other than the schema (a sweep file):
/// [`parse_document`], refusing a date or time, which no field takes and which would reach
/// the reader as toml's private table `{"$__toml_private_datetime": ...}`.
pub fn parse_plain_document(text: &str) -> Result<toml::Table, ScenarioError> {
    let table = parse_document(text)?;
    for (key, value) in &table {
        if let Some((path, when)) = first_date(value, key.clone()) {
            let shown = format!("got date-time `{when}` ({NO_DATES}; quote it to make it text)");
            return Err(ScenarioError::new(path, shown));
        }
    }
    Ok(table)
}

/// The path and value of the first date or time in `value`, found at `path`.
fn first_date(value: &toml::Value, path: String) -> Option<(String, toml::value::Datetime)> {
    match value {
        toml::Value::Datetime(when) => Some((path, *when)),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| first_date(item, format!("{path}[{i}]"))),
        toml::Value::Table(table) => table
            .iter()
            .find_map(|(key, item)| first_date(item, format!("{path}.{key}"))),
        _ => None,
    }
}

fn location(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    let Some(span) = span else {
        return String::new();
    };
    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
    format!(" (line {line})")
}

/// Deserializes an already parsed table (the Python builders' path) and validates it.
pub fn from_table(table: toml::Table) -> Result<Scenario, ScenarioError> {
    let scenario = deserialize(table)?;
    super::validate::validate(&scenario)?;
    Ok(scenario)
}

fn deserialize(table: toml::Table) -> Result<Scenario, ScenarioError> {
    for (key, value) in &table {
        refuse_non_finite(value, key)?;
    }
    let strict = crate::config::strict::Strict(toml::Value::Table(table));
    let mut scenario: Scenario = serde_path_to_error::deserialize(strict).map_err(|e| {
        let outer = e.path().to_string();
        let outer = if outer == "." { String::new() } else { outer };
        let (inner, message) = crate::config::error::split_marked(e.into_inner().message());
        ScenarioError::new(crate::config::error::join(&outer, &inner), message)
    })?;
    super::phases::expand_phases(&mut scenario)?;
    Ok(scenario)
}

/// No field of the schema means anything by NaN or an infinity, so they are refused wherever
/// they appear, before any field could read them as a number.
fn refuse_non_finite(value: &toml::Value, path: &str) -> Result<(), ScenarioError> {
    match value {
        toml::Value::Float(f) if !f.is_finite() => Err(ScenarioError::new(
            path,
            format!("got {f}, expected a finite number"),
        )),
        toml::Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| refuse_non_finite(v, &format!("{path}[{i}]"))),
        toml::Value::Table(t) => t
            .iter()
            .try_for_each(|(k, v)| refuse_non_finite(v, &super::error::join(path, k))),
        _ => Ok(()),
    }
}

/// One step of an override path: a key or an array index.
#[derive(PartialEq, Eq, Hash)]
enum Step {
    Key(String),
    Index(usize),
}

/// The most steps an override path may take: the schema's deepest field is a dozen steps
/// down, and a path is walked (and its tables built and dropped) recursively.
const MAX_PATH_STEPS: usize = 64;

fn parse_path(path: &str) -> Option<Vec<Step>> {
    if path.matches(['.', '[']).count() >= MAX_PATH_STEPS {
        return None;
    }
    let mut steps = Vec::new();
    for part in path.split('.').map(str::trim) {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && rest.is_empty() {
            return None;
        }
        if !key.is_empty() {
            steps.push(Step::Key(key.to_string()));
        }
        while let Some(stripped) = rest.strip_prefix('[') {
            let end = stripped.find(']')?;
            steps.push(Step::Index(stripped[..end].parse().ok()?));
            rest = &stripped[end + 1..];
        }
        if !rest.is_empty() {
            return None;
        }
    }
    Some(steps)
}

/// An override's value: TOML value syntax, a bare word being a string. A whole number TOML
/// cannot hold is refused rather than taken for a word (a seed of 10^23 was read as the string
/// "99999999999999999999999").
fn parse_value(text: &str) -> Result<toml::Value, String> {
    let parsed = format!("v = {text}").parse::<toml::Table>();
    if let Err(err) = &parsed {
        if is_meant_as_a_table_or_array(text) {
            return Err(format!(
                "got {}, which is not a TOML table or array ({}); expected TOML value syntax \
                 such as {{ kind = \"red\", limit = 60 }} or [1, 2]",
                clipped(text),
                err.message()
            ));
        }
    }
    match parsed.ok().and_then(|mut t| t.remove("v")) {
        Some(value) => Ok(value),
        None if is_too_large_a_whole_number(text) => Err(format!(
            "got {}, expected a whole number from {} to {} (a float such as 1e23 for larger values)",
            clipped(text),
            i64::MIN,
            i64::MAX
        )),
        None if is_too_large_a_float(text) => Err(format!(
            "got {}, expected a number a float holds (magnitude up to 1.8e308)",
            clipped(text)
        )),
        None => Ok(toml::Value::String(text.to_string())),
    }
}

/// A value opening an inline table or an array: a syntax error in it is one, not a word (a
/// word would be refused later as "got '{kind = ...', expected a table", hiding the typo).
fn is_meant_as_a_table_or_array(text: &str) -> bool {
    text.trim_start().starts_with(['{', '['])
}

/// A decimal number past a float's range (1e400), which TOML refuses and a float reads as
/// infinite.
fn is_too_large_a_float(text: &str) -> bool {
    let numeric = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'));
    numeric && text.parse::<f64>().is_ok_and(f64::is_infinite)
}

/// Digits TOML would read as a whole number but for its size (a leading zero, which TOML
/// refuses, keeps "0123" a word).
fn is_too_large_a_whole_number(text: &str) -> bool {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    digits.len() > 18 && !digits.starts_with('0') && digits.chars().all(|c| c.is_ascii_digit())
}

/// Applies `key.path=value` (TOML value syntax; bare words are strings).
pub fn apply_override(table: &mut toml::Table, assignment: &str) -> Result<(), ScenarioError> {
    let bad = |msg: String| ScenarioError::new(format!("--set {}", clipped(assignment)), msg);
    let (path, value) = assignment
        .split_once('=')
        .ok_or_else(|| bad("expected key.path=value".into()))?;
    let steps = parse_path(path.trim()).ok_or_else(|| {
        bad(format!(
            "got path {path:?}, expected keys like a.b[0].c, at most {MAX_PATH_STEPS} steps"
        ))
    })?;
    let value = parse_value(value.trim()).map_err(bad)?;
    let mut root = toml::Value::Table(std::mem::take(table));
    let result = set_path(&mut root, &steps, value, "").map_err(bad);
    if let toml::Value::Table(t) = root {
        *table = t;
    }
    result
}

fn set_path(
    node: &mut toml::Value,
    steps: &[Step],
    value: toml::Value,
    walked: &str,
) -> Result<(), String> {
    let Some((step, rest)) = steps.split_first() else {
        *node = value;
        return Ok(());
    };
    match step {
        Step::Key(k) => {
            let here = crate::config::error::join(walked, k);
            let t = node
                .as_table_mut()
                .ok_or_else(|| format!("`{walked}` is not a table, so it has no key `{k}`"))?;
            let child = t
                .entry(k.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            set_path(child, rest, value, &here)
        }
        Step::Index(i) => {
            let here = format!("{walked}[{i}]");
            let a = node
                .as_array_mut()
                .ok_or_else(|| format!("`{walked}` is not an array"))?;
            let len = a.len();
            let child = a
                .get_mut(*i)
                .ok_or_else(|| format!("`{here}` is out of range: the array has {len} entries"))?;
            set_path(child, rest, value, &here)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_override_path_is_told_its_full_path() {
        let text = "[topology]\nkind = \"dumbbell\"\nsenders = 1\n\
            bottleneck = { rate = 1e6, delay = 0.001, queue = { kind = \"fifo\", limit = 5 } }\n\
            access = { rate = 1e6, delay = 0.001 }\n";
        let e = parse(text, &["bottleneck.queue.limit=9".to_string()]).unwrap_err();
        assert_eq!(e.path, "bottleneck");
        assert!(
            e.message.ends_with(
                "; `--set bottleneck.queue.limit` takes a full path: \
                 `topology.bottleneck.queue.limit`"
            ),
            "{e}"
        );
        let e = parse(text, &["nothing.like.it=9".to_string()]).unwrap_err();
        assert!(!e.message.contains("full path"), "{e}");
    }

    #[test]
    fn an_override_that_would_drop_an_earlier_one_is_refused() {
        let text = "[[flows]]\nsrc = \"a\"\nsource = { kind = \"cbr\" }\n";
        let apply = |overrides: &[&str]| {
            let mut t: toml::Table = text.parse().unwrap();
            let owned: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
            apply_overrides(&mut t, &owned).map(|()| t)
        };
        let e = apply(&[
            "flows[0].source.rate=1Mbps",
            "flows[0].source={kind=\"poisson\"}",
        ])
        .unwrap_err();
        assert_eq!(e.path, "--set flows[0].source={kind=\"poisson\"}");
        assert!(
            e.message.contains("`--set flows[0].source.rate=1Mbps`"),
            "{e}"
        );
        assert!(apply(&["flows[0].start=1", "flows=[]"]).is_err());
        let t = apply(&[
            "flows[0].source={kind=\"poisson\"}",
            "flows[0].source.rate=1Mbps",
        ]);
        assert_eq!(
            t.unwrap()["flows"][0]["source"]["rate"].as_str(),
            Some("1Mbps")
        );
        assert!(apply(&["flows[0].src=b", "flows[0].src=c", "flows[0].dst=d"]).is_ok());
    }

    #[test]
    fn a_plain_document_refuses_a_date_naming_where_it_is() {
        let e = parse_plain_document("seeds = 2\n[grid]\nlimit = [20, 1979-05-27]\n").unwrap_err();
        assert_eq!(e.path, "grid.limit[1]");
        assert!(
            e.message
                .starts_with("got date-time `1979-05-27` (no field"),
            "{e}"
        );
        let e = parse_plain_document("[[zip]]\nrate = { values = [07:00:00] }\n").unwrap_err();
        assert_eq!(e.path, "zip[0].rate.values[0]");
        assert!(parse_plain_document("seeds = [1, 2]\nscenario = \"s.toml\"\n").is_ok());
    }

    #[test]
    fn nan_and_infinity_are_refused_with_their_path() {
        let e = parse("[simulation]\nduration = nan\n", &[]).unwrap_err();
        assert_eq!(e.path, "simulation.duration");
        let e = parse("[[flows]]\nsrc = \"a\"\nweights = [1.0, inf]\n", &[]).unwrap_err();
        assert_eq!(e.path, "flows[0].weights[1]");
    }

    #[test]
    fn a_table_written_as_an_array_is_refused_not_read_field_by_field() {
        let two_hosts = "[[nodes]]\nname = \"a\"\nkind = \"gateway\"\n";
        let e = parse(
            &format!("{two_hosts}gateway = {{ two_server = [540] }}\n"),
            &[],
        );
        let e = e.unwrap_err();
        assert_eq!(e.path, "nodes[0].gateway.two_server");
        assert_eq!(e.message, "got an array, expected a table");
        let table = format!("{two_hosts}gateway = {{ two_server = {{ rate = 540 }} }}\n");
        if let Err(e) = parse(&table, &[]) {
            assert!(!e.path.contains("two_server"), "{e}");
        }
    }

    #[test]
    fn overrides_set_nested_values() {
        let mut t: toml::Table = "[simulation]\nduration = 1\n[[flows]]\nsrc = \"a\"\n"
            .parse()
            .unwrap();
        apply_override(&mut t, "simulation.duration=20s").unwrap();
        apply_override(&mut t, "flows[0].src=b").unwrap();
        apply_override(&mut t, "simulation . seed = 7").unwrap();
        assert_eq!(t["simulation"]["duration"].as_str(), Some("20s"));
        assert_eq!(t["flows"][0]["src"].as_str(), Some("b"));
        assert_eq!(t["simulation"]["seed"].as_integer(), Some(7));
        let e = apply_override(&mut t, "flows[3].src=b").unwrap_err();
        assert!(e.message.contains("out of range"), "{e}");
        let e = apply_override(&mut t, "simulation.seed=99999999999999999999999").unwrap_err();
        assert_eq!(e.path, "--set simulation.seed=99999999999999999999999");
        assert!(
            e.message
                .starts_with("got 9.9999999999999999999999e22, expected a whole"),
            "{e}"
        );
        let e = apply_override(&mut t, "simulation.duration=-1e400").unwrap_err();
        assert!(e
            .message
            .starts_with("got -1e400, expected a number a float holds"));
        apply_override(&mut t, "flows[0].src=0123").unwrap();
        assert_eq!(
            t["flows"][0]["src"].as_str(),
            Some("0123"),
            "a word, as TOML refuses it"
        );
    }

    #[test]
    fn a_broken_inline_table_or_array_is_a_syntax_error_not_a_word() {
        let mut t: toml::Table = "[[flows]]\nsrc = \"a\"\n".parse().unwrap();
        for value in ["{kind=\"cbr\", rate=", " [1, 2", "{ kind = red }"] {
            let e = apply_override(&mut t, &format!("flows[0].source={value}")).unwrap_err();
            assert!(
                e.message.contains("which is not a TOML table or array"),
                "{e}"
            );
            assert!(e.path.starts_with("--set flows[0].source="), "{e}");
        }
        apply_override(&mut t, "flows[0].source={ kind = \"red\" }").unwrap();
        apply_override(&mut t, "flows[0].src=a[1]").unwrap();
        assert_eq!(
            t["flows"][0]["src"].as_str(),
            Some("a[1]"),
            "a word that holds a bracket"
        );
    }

    #[test]
    fn a_path_deeper_than_any_field_is_refused_before_it_is_walked() {
        let mut t = toml::Table::new();
        let deep = format!("{}=1", vec!["a"; 100_000].join("."));
        let e = apply_override(&mut t, &deep).unwrap_err();
        assert!(e.message.contains("at most 64 steps"), "{e}");
        let e = apply_override(&mut t, &format!("flows{}=1", "[0]".repeat(64))).unwrap_err();
        assert!(e.message.contains("at most 64 steps"), "{e}");
        apply_override(&mut t, &format!("{}=1", vec!["a"; 64].join("."))).unwrap();
    }
}
