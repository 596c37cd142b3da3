//! A broken conservation law in one sentence of bounded length: a discipline that leaks at a
//! port shared by 20,000 flows broke 20,001 laws, and the error listing each was 1.3 MB on
//! one line of standard error. The sentence counts the laws by kind and shows the first few,
//! the ones that locate the fault first (a port, a link, a gateway's connection, then the
//! flows through them); every one stays in the summary's `conservation.violations`.

/// How many broken laws the sentence shows.
pub const SHOWN: usize = 4;

/// "conservation violated (1 port, 20000 flows): port a->b: ...; flow f0: ...; ...; and 19997
/// more (the summary lists every one)".
pub fn brief(violations: &[String]) -> String {
    let mut ordered: Vec<&String> = violations.iter().collect();
    ordered.sort_by_key(|v| rank(v)); // stable: within a kind, the run's own order
    let shown: Vec<&str> = ordered.iter().take(SHOWN).map(|v| v.as_str()).collect();
    let hidden = violations.len().saturating_sub(SHOWN);
    let more = if hidden > 0 {
        format!("; and {hidden} more (the summary lists every one)")
    } else {
        String::new()
    };
    format!(
        "conservation violated ({}): {}{more}",
        counts(violations),
        shown.join("; ")
    )
}

/// A violation's kind: its first word ("port", "link", "flow", "gateway", ...).
fn kind(violation: &str) -> &str {
    violation.split(' ').next().unwrap_or("")
}

/// A port's, a link's, then any other kind's (a gateway's connection), then a flow's.
fn rank(violation: &str) -> usize {
    match kind(violation) {
        "port" => 0,
        "link" => 1,
        "flow" => 3,
        _ => 2,
    }
}

/// "1 port, 20000 flows", kinds in rank order.
fn counts(violations: &[String]) -> String {
    let mut kinds: Vec<(usize, &str, usize)> = Vec::new();
    for v in violations {
        let k = kind(v);
        match kinds.iter_mut().find(|(_, name, _)| *name == k) {
            Some((_, _, n)) => *n += 1,
            None => kinds.push((rank(v), k, 1)),
        }
    }
    kinds.sort_by_key(|(r, _, _)| *r);
    let words: Vec<String> = kinds
        .iter()
        .map(|(_, k, n)| {
            let plural = if *n == 1 { "" } else { "s" };
            format!("{n} {k}{plural}")
        })
        .collect();
    words.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laws(flows: usize) -> Vec<String> {
        let mut v: Vec<String> = (0..flows)
            .map(|i| format!("flow f{i}: offered 4 != delivered 2 + dropped 0 + in network 1"))
            .collect();
        v.push("port a->b: arrivals 6 != departures 4 + drops 0 + queued 0".into());
        v
    }

    #[test]
    fn many_broken_laws_are_counted_and_the_port_is_shown_first() {
        let text = brief(&laws(20_000));
        assert!(text.len() < 600, "{} bytes", text.len());
        assert!(
            text.starts_with("conservation violated (1 port, 20000 flows): port a->b: arrivals"),
            "{text}"
        );
        assert!(text.contains("; flow f0: offered 4"), "{text}");
        assert!(text.contains("; flow f2: offered 4"), "{text}");
        assert!(!text.contains("flow f3:"), "{text}");
        let end = "; and 19997 more (the summary lists every one)";
        assert!(text.ends_with(end), "{text}");
    }

    #[test]
    fn a_few_broken_laws_are_shown_whole() {
        let text = brief(&laws(1));
        assert_eq!(
            text,
            "conservation violated (1 port, 1 flow): port a->b: arrivals 6 != departures 4 + \
             drops 0 + queued 0; flow f0: offered 4 != delivered 2 + dropped 0 + in network 1"
        );
        let other = vec!["connection c1: acknowledged 5 != relayed 4".to_string()];
        assert!(brief(&other).starts_with("conservation violated (1 connection): connection c1"));
    }
}
