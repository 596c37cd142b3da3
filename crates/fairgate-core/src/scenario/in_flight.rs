//! Packets a scenario can hold at once, for the memory estimate: every queue full to its
//! packet limit (plus its transmit ring) and every link carrying a bandwidth-delay product of
//! packets, unless the flows' windows allow fewer.
//!
//! Decisions: queues and links bound what any source can put into the network; when every
//! flow is TCP, their windows bound it too (a window of data and as many ACKs, `rwnd / mss`
//! packets each way), and the smaller bound counts; any other source counts as unbounded. A
//! link's packets are counted at 1,500 bytes each over its fixed delay (a drawn delay counts
//! as zero); a discipline without a `limit` field counts the FIFO default of 50.

use super::schema::{LinkParams, LinkSpec, Scenario};
use super::topology::TopologySpec;
use crate::net::link::DelaySpec;
use crate::qdisc::registry::QdiscSpec;

const DEFAULT_QUEUE_LIMIT: f64 = 50.0;
const LINK_PACKET_BITS: f64 = 1500.0 * 8.0;

/// The packets one place can hold, and the field that sets the number.
pub struct Holder {
    pub packets: f64,
    pub path: String,
}

/// Every place that holds packets: one entry per link spec (all its ports together).
pub fn holders(s: &Scenario) -> Vec<Holder> {
    let mut out = Vec::new();
    match &s.topology {
        Some(TopologySpec::Dumbbell(d)) => {
            out.push(params("topology.bottleneck", &d.bottleneck, 1.0));
            out.push(params("topology.access", &d.access, 2.0 * d.senders as f64));
        }
        Some(TopologySpec::Chain(c)) => {
            out.push(params("topology.bottleneck", &c.bottleneck, c.hops as f64));
            out.push(params(
                "topology.access",
                &c.access,
                2.0 * c.hops as f64 + 2.0,
            ));
        }
        Some(TopologySpec::Graph(_)) | None => {}
    }
    for (i, l) in s.links.iter().enumerate() {
        out.push(link(&format!("links[{i}]"), l));
    }
    out
}

/// Packets the flows' windows allow into the network at once; `None` when a flow is not
/// TCP (an open-loop source is bounded only by the queues it fills).
pub fn window_bound(s: &Scenario) -> Option<f64> {
    s.flows.iter().try_fold(0.0, |sum, f| {
        let source = serde_json::to_value(&f.source).ok()?;
        if source.get("kind")?.as_str()? != "tcp" {
            return None;
        }
        let rwnd = source.get("rwnd")?.as_u64()? as f64;
        let mss = source.get("mss")?.as_u64()?.max(1) as f64;
        Some(sum + 2.0 * f.count.unwrap_or(1) as f64 * (rwnd / mss).ceil())
    })
}

/// A duplex link of the topology builders, `copies` times over.
fn params(path: &str, p: &LinkParams, copies: f64) -> Holder {
    let reverse = p.reverse_queue.as_ref().unwrap_or(&p.queue);
    let disciplines = queue_limit(&p.queue) + queue_limit(reverse);
    let rings = 2.0 * p.device_queue as f64;
    let on_wire = 2.0 * packets_on_wire(p.rate.bps(), &p.delay);
    held(
        path,
        &p.queue,
        [disciplines, rings, on_wire].map(|n| copies * n),
    )
}

fn link(path: &str, l: &LinkSpec) -> Holder {
    let directions = if l.duplex { 2.0 } else { 1.0 };
    let disciplines = queue_limit(&l.queue);
    let rings = l.device_queue as f64;
    let on_wire = packets_on_wire(l.rate.bps(), &l.delay);
    held(
        path,
        &l.queue,
        [disciplines, rings, on_wire].map(|n| directions * n),
    )
}

/// Names the largest share's field among the packets the disciplines hold, those the
/// transmit rings hold and those on the wire: the queue limit (or the queue itself when its
/// discipline has no `limit`), the `device_queue`, or the link's delay.
fn held(path: &str, queue: &QdiscSpec, [disciplines, rings, on_wire]: [f64; 3]) -> Holder {
    let field = if on_wire > disciplines.max(rings) {
        "delay"
    } else if rings > disciplines {
        "device_queue"
    } else if limit_field(queue).is_some() {
        "queue.limit"
    } else {
        "queue"
    };
    Holder {
        packets: disciplines + rings + on_wire,
        path: format!("{path}.{field}"),
    }
}

fn limit_field(queue: &QdiscSpec) -> Option<f64> {
    let value = serde_json::to_value(queue).ok()?;
    value.get("limit")?.as_u64().map(|l| l as f64)
}

fn queue_limit(queue: &QdiscSpec) -> f64 {
    limit_field(queue).unwrap_or(DEFAULT_QUEUE_LIMIT)
}

fn packets_on_wire(rate_bps: u64, delay: &DelaySpec) -> f64 {
    match delay {
        DelaySpec::Fixed(d) => rate_bps as f64 * d.secs() / LINK_PACKET_BITS,
        _ => 0.0,
    }
}
