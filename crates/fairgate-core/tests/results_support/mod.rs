//! Helpers shared by the tests that run one scenario two ways and require identical results.

use fairgate_core::results::Results;

/// Every table of a run and its summary as text, by name (`{:?}` of an f64 gives back its
/// exact value, NaN included).
pub fn tables_as_text(r: &Results) -> [(&'static str, String); 12] {
    [
        ("summary", format!("{}", r.summary)),
        ("flows", format!("{:?}", r.flows)),
        ("ports", format!("{:?}", r.ports)),
        ("queue_series", format!("{:?}", r.queue_series)),
        ("flow_series", format!("{:?}", r.flow_series)),
        ("qdisc_state", format!("{:?}", r.qdisc_state)),
        ("traces", format!("{:?}", r.traces)),
        ("transfers", format!("{:?}", r.transfers)),
        ("drops", format!("{:?}", r.drops)),
        ("class_series", format!("{:?}", r.class_series)),
        ("phase_classes", format!("{:?}", r.phase_classes)),
        ("phase_ports", format!("{:?}", r.phase_ports)),
    ]
}
