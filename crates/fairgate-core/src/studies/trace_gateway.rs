//! A passive trace-driven gateway, after Vaidyanathan's ASQG ([Vaidyanathan99, §2.5.2]): the
//! packets of a real trace arrive at one output port in their recorded order and times, are
//! classified into flows by a flow definition (f0 5-tuple, f1 address pair, f2 destination,
//! f3 source, or classful networks), kept in a hash table of per-flow state, and leave through
//! a FIFO line of the given rate. It alters nothing (no drops), so it measures load, not
//! throughput: active flows N(t) every `interval`, the maximum, flow operations, hash
//! collisions and efficiency (tab. 2.2-2.3), packets by protocol (tab. 2.4), and table 2.1's
//! per-packet cost of each discipline over time (fig. 2.5-2.6).
//!
//! Decisions (`docs/studies/trace_fq.md`): a flow's state lives from its first packet
//! while it has a packet in the gateway and until `timeout` after its last departure; a
//! packet that collides is one whose bucket holds another flow; efficiency is 1 - collisions
//! / packets; the hash is splitmix64 over the key into `buckets` buckets (1024, the stochastic
//! FQ divisor of Linux); the ASQG's routing, classification and switching latencies are 0.

use super::cost_model::{cost_series, Classification, CostSample};
use super::StudyError;
use crate::config::ScenarioError;
use crate::traces::{read_trace, TracePacket};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::path::Path;

/// A flow definition (§2.5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKey {
    /// f0: source and destination address, protocol and ports.
    FiveTuple,
    /// f1: source and destination address.
    Pair,
    /// f2: destination address.
    Destination,
    /// f3: source address.
    Source,
    /// Classful source and destination networks.
    NetPair,
    SourceNet,
    DestinationNet,
}

impl TraceKey {
    pub const NAMES: [(&'static str, TraceKey); 7] = [
        ("five_tuple", TraceKey::FiveTuple),
        ("pair", TraceKey::Pair),
        ("destination", TraceKey::Destination),
        ("source", TraceKey::Source),
        ("net_pair", TraceKey::NetPair),
        ("source_net", TraceKey::SourceNet),
        ("destination_net", TraceKey::DestinationNet),
    ];

    /// The definition named `name` (`f0`..`f3` are the thesis's names of the first four).
    pub fn named(name: &str) -> Result<TraceKey, ScenarioError> {
        let alias = ["f0", "f1", "f2", "f3"].iter().position(|a| *a == name);
        alias
            .map(|i| TraceKey::NAMES[i].1)
            .or_else(|| {
                TraceKey::NAMES
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, k)| *k)
            })
            .ok_or_else(|| {
                let names: Vec<&str> = TraceKey::NAMES.iter().map(|(n, _)| *n).collect();
                ScenarioError::new(
                    "key",
                    format!(
                        "got {name:?}, expected f0..f3 or one of {}",
                        names.join(", ")
                    ),
                )
            })
    }

    fn id(self, p: &TracePacket) -> FlowId {
        let net = crate::qdisc::classify::classful;
        match self {
            TraceKey::FiveTuple => FlowId(
                p.src,
                p.dst,
                u64::from(p.proto) << 32 | u64::from(p.sport) << 16 | u64::from(p.dport),
            ),
            TraceKey::Pair => FlowId(p.src, p.dst, 0),
            TraceKey::Destination => FlowId(0, p.dst, 0),
            TraceKey::Source => FlowId(p.src, 0, 0),
            TraceKey::NetPair => FlowId(net(p.src), net(p.dst), 0),
            TraceKey::SourceNet => FlowId(net(p.src), 0, 0),
            TraceKey::DestinationNet => FlowId(0, net(p.dst), 0),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct FlowId(u32, u32, u64);

impl FlowId {
    fn bucket(self, buckets: u64) -> usize {
        let word = (u64::from(self.0) << 32 | u64::from(self.1)) ^ self.2.rotate_left(17);
        (splitmix64(word) % buckets) as usize
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The study's parameters; `TraceParams::check` gives each its range.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceParams {
    pub key: TraceKey,
    pub timeout_s: f64,
    pub interval_s: f64,
    pub rate_bps: f64,
    pub buckets: u64,
    /// The first this many IP packets of the trace are used.
    pub packets: u64,
}

/// At most this many packets: the gateway's queue could hold them all on an overloaded line.
pub const MAX_PACKETS: u64 = 50_000_000;

/// The most hash buckets of the gateway's flow table.
pub const MAX_BUCKETS: u64 = 1 << 24;
/// At most this many samples of N(t) (each gives a cost row per discipline): 10,000 s at the
/// default interval. A damaged time stamp that jumps years ahead is caught here.
pub const MAX_SAMPLES: u64 = 100_000;

/// How many IP packets the study reads between asking whether it was interrupted (about a
/// tenth of a second of reading).
pub const ASK_EVERY: u64 = 1 << 16;

impl Default for TraceParams {
    fn default() -> Self {
        TraceParams {
            key: TraceKey::FiveTuple,
            timeout_s: 0.0,
            interval_s: 0.1,
            rate_bps: 1.544e6,
            buckets: 1024,
            packets: 500_000,
        }
    }
}

impl TraceParams {
    pub fn check(&self) -> Result<(), ScenarioError> {
        let within = |field: &str, v: f64, lo: f64, hi: f64, what: &str| {
            if v.is_finite() && v >= lo && v <= hi {
                Ok(())
            } else {
                Err(ScenarioError::new(
                    field,
                    format!("got {v}, expected {what}"),
                ))
            }
        };
        within("timeout", self.timeout_s, 0.0, 1e6, "seconds from 0 to 1e6")?;
        within(
            "interval",
            self.interval_s,
            1e-6,
            1e6,
            "seconds from 1e-6 to 1e6",
        )?;
        within(
            "rate",
            self.rate_bps,
            1.0,
            1e13,
            "bits per second from 1 to 1e13",
        )?;
        if !(1..=MAX_BUCKETS).contains(&self.buckets) {
            return Err(ScenarioError::new(
                "buckets",
                format!(
                    "got {}, expected a whole number from 1 to 16777216",
                    self.buckets
                ),
            ));
        }
        if !(1..=MAX_PACKETS).contains(&self.packets) {
            return Err(ScenarioError::new(
                "packets",
                format!(
                    "got {}, expected a whole number from 1 to {MAX_PACKETS}",
                    self.packets
                ),
            ));
        }
        Ok(())
    }
}

/// What the gateway measured over the trace.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceSummary {
    pub packets: u64,
    pub non_ip: u64,
    /// Packets recorded earlier than the one before them (taken at that one's time).
    pub reordered: u64,
    pub duration_s: f64,
    /// The line's busy time over the trace's duration (above 1: the queue grew throughout).
    pub utilisation: f64,
    pub max_flows: u64,
    pub mean_flows: f64,
    /// Flows created (the thesis's "flow operations" count, each also deleted: x2).
    pub flow_creations: u64,
    pub collisions: u64,
    pub hash_efficiency: f64,
    /// Flows searched by a colliding packet (its own included), averaged over those packets.
    pub mean_colliding: f64,
    pub tcp: u64,
    pub udp: u64,
    pub other: u64,
}

/// The study's output: the summary, N(t) and table 2.1's costs at every sample.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStudy {
    pub summary: TraceSummary,
    pub active: Vec<(f64, f64)>,
    pub costs: Vec<CostSample>,
}

struct FlowState {
    queued: u32,
    expiry_ns: u64,
}

/// The gateway as the packets pass: per-flow state, the buckets, the FIFO line.
struct Gateway {
    params: TraceParams,
    timeout_ns: u64,
    interval_ns: u64,
    flows: HashMap<FlowId, FlowState>,
    bucket_flows: Vec<u32>,
    in_line: VecDeque<(u64, FlowId)>,
    expiries: BinaryHeap<Reverse<(u64, FlowId)>>,
    line_free_ns: u64,
    busy_ns: f64,
    origin_ns: Option<u64>,
    last_ns: u64,
    next_sample_ns: u64,
    colliding_searched: u64,
    /// The time, from the first packet, of a packet past `MAX_SAMPLES` intervals.
    overrun_ns: Option<u64>,
    summary: TraceSummary,
    active: Vec<(f64, f64)>,
}

const NS: f64 = 1e9;

impl Gateway {
    fn new(params: TraceParams) -> Self {
        let interval_ns = (params.interval_s * NS).round() as u64;
        Gateway {
            timeout_ns: (params.timeout_s * NS).round() as u64,
            interval_ns,
            next_sample_ns: interval_ns,
            bucket_flows: vec![0; params.buckets as usize],
            params,
            flows: HashMap::new(),
            in_line: VecDeque::new(),
            expiries: BinaryHeap::new(),
            line_free_ns: 0,
            busy_ns: 0.0,
            origin_ns: None,
            last_ns: 0,
            colliding_searched: 0,
            overrun_ns: None,
            summary: TraceSummary::default(),
            active: Vec::new(),
        }
    }

    /// Departures, then expiries, up to and including `now` (times from the first packet).
    fn advance(&mut self, now: u64) {
        while let Some(&(left, id)) = self.in_line.front().filter(|(t, _)| *t <= now) {
            self.in_line.pop_front();
            let flow = self
                .flows
                .get_mut(&id)
                .expect("a queued packet's flow has state");
            flow.queued -= 1;
            if flow.queued == 0 {
                flow.expiry_ns = left.saturating_add(self.timeout_ns);
                self.expiries.push(Reverse((flow.expiry_ns, id)));
            }
        }
        while let Some(&Reverse((at, id))) = self.expiries.peek().filter(|e| e.0 .0 <= now) {
            self.expiries.pop();
            let current = self
                .flows
                .get(&id)
                .is_some_and(|f| f.queued == 0 && f.expiry_ns == at);
            if current {
                self.flows.remove(&id);
                self.bucket_flows[id.bucket(self.params.buckets)] -= 1;
            }
        }
    }

    /// Samples N(t) at every interval up to `now`, counting before that instant's arrivals.
    fn sample_until(&mut self, now: u64) {
        while self.next_sample_ns <= now {
            let at = self.next_sample_ns;
            self.advance(at);
            self.active.push((at as f64 / NS, self.flows.len() as f64));
            self.next_sample_ns += self.interval_ns;
        }
    }

    /// Takes the packet in; false (and nothing changed) when it comes after `MAX_SAMPLES`
    /// intervals.
    fn arrive(&mut self, packet: &TracePacket) -> bool {
        let origin = *self.origin_ns.get_or_insert(packet.time_ns);
        let recorded = packet.time_ns.max(origin) - origin;
        let now = recorded.max(self.last_ns);
        if now / self.interval_ns >= MAX_SAMPLES {
            self.overrun_ns = Some(now);
            return false;
        }
        if recorded < self.last_ns || packet.time_ns < origin {
            self.summary.reordered += 1;
        }
        self.last_ns = now;
        self.sample_until(now);
        self.advance(now);
        self.count_protocol(packet.proto);
        let id = self.params.key.id(packet);
        let bucket = id.bucket(self.params.buckets);
        let known = self.flows.contains_key(&id);
        let others = self.bucket_flows[bucket] - u32::from(known);
        if others > 0 {
            self.summary.collisions += 1;
            self.colliding_searched += u64::from(others) + 1;
        }
        let flow = self.flows.entry(id).or_insert(FlowState {
            queued: 0,
            expiry_ns: 0,
        });
        if !known {
            self.bucket_flows[bucket] += 1;
            self.summary.flow_creations += 1;
        }
        flow.queued += 1;
        let transmit = f64::from(packet.ip_len) * 8.0 / self.params.rate_bps * NS;
        let start = self.line_free_ns.max(now);
        self.line_free_ns = start.saturating_add(transmit.round() as u64);
        self.busy_ns += transmit;
        self.in_line.push_back((self.line_free_ns, id));
        self.summary.packets += 1;
        self.summary.max_flows = self.summary.max_flows.max(self.flows.len() as u64);
        true
    }

    /// Takes the packet in; false when the gateway wants no more (the packet count reached, or
    /// a packet past `MAX_SAMPLES` intervals).
    fn take(&mut self, packet: &TracePacket) -> bool {
        self.arrive(packet) && self.summary.packets < self.params.packets
    }

    /// The error for a packet past `MAX_SAMPLES` intervals, if one came.
    fn overrun(&self) -> Result<(), ScenarioError> {
        let Some(at) = self.overrun_ns else {
            return Ok(());
        };
        let at_s = at as f64 / NS;
        Err(ScenarioError::new(
            "interval",
            format!(
                "packet {} comes {at_s:.6} s after the first, more than {MAX_SAMPLES} samples of \
                 {} s (a damaged time stamp?); expected a longer interval (at least {:.3} s) or \
                 fewer packets",
                self.summary.packets + 1,
                self.params.interval_s,
                at_s / (MAX_SAMPLES - 1) as f64
            ),
        ))
    }

    fn count_protocol(&mut self, proto: u8) {
        match proto {
            6 => self.summary.tcp += 1,
            17 => self.summary.udp += 1,
            _ => self.summary.other += 1,
        }
    }

    fn finish(mut self, non_ip: u64) -> TraceStudy {
        let s = &mut self.summary;
        s.non_ip = non_ip;
        s.duration_s = self.last_ns as f64 / NS;
        s.utilisation = if self.last_ns > 0 {
            self.busy_ns / self.last_ns as f64
        } else {
            0.0
        };
        s.hash_efficiency = 1.0 - s.collisions as f64 / s.packets.max(1) as f64;
        s.mean_colliding = if s.collisions > 0 {
            self.colliding_searched as f64 / s.collisions as f64
        } else {
            1.0
        };
        let n = self.active.len().max(1) as f64;
        s.mean_flows = self.active.iter().map(|a| a.1).sum::<f64>() / n;
        let classification = Classification::LinearSearch {
            efficiency: s.hash_efficiency,
            mean_colliding: s.mean_colliding,
        };
        TraceStudy {
            costs: cost_series(&self.active, classification),
            summary: self.summary,
            active: self.active,
        }
    }
}

/// Runs the gateway over the first `params.packets` IP packets of the trace at `path`, asking
/// `interrupted` every [`ASK_EVERY`] packets.
pub fn trace_study(
    path: &Path,
    format: Option<&str>,
    params: TraceParams,
    interrupted: &mut dyn FnMut() -> bool,
) -> Result<TraceStudy, StudyError> {
    params.check()?;
    let mut gateway = Gateway::new(params);
    let mut stopped = false;
    let counts = read_trace(path, format, &mut |p| {
        stopped = gateway.summary.packets % ASK_EVERY == 0 && interrupted();
        !stopped && gateway.take(&p)
    })?;
    if stopped {
        return Err(StudyError::Interrupted);
    }
    gateway.overrun()?;
    if gateway.summary.packets == 0 {
        return Err(ScenarioError::new(
            "trace",
            format!(
                "{}: got no IP packet, expected at least one",
                path.display()
            ),
        )
        .into());
    }
    if gateway.active.is_empty() {
        return Err(ScenarioError::new(
            "trace",
            format!(
                "{}: spans {:.3} s ({} IP packet{}), less than one sample interval; \
                 expected a trace of at least the `interval`, {} s",
                path.display(),
                gateway.last_ns as f64 / NS,
                gateway.summary.packets,
                if gateway.summary.packets == 1 {
                    ""
                } else {
                    "s"
                },
                gateway.params.interval_s
            ),
        )
        .into());
    }
    Ok(gateway.finish(counts.non_ip))
}

/// The gateway over packets given directly (for tests and callers that hold them).
pub fn packets_study(
    packets: &[TracePacket],
    params: TraceParams,
) -> Result<TraceStudy, ScenarioError> {
    params.check()?;
    let mut gateway = Gateway::new(params);
    for p in packets {
        if !gateway.take(p) {
            break;
        }
    }
    gateway.overrun()?;
    Ok(gateway.finish(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(t: f64, src: u32, dst: u32, sport: u16, len: u32) -> TracePacket {
        TracePacket {
            time_ns: (t * NS).round() as u64,
            src,
            dst,
            proto: 6,
            sport,
            dport: 80,
            ip_len: len,
        }
    }

    fn params(key: TraceKey, timeout_s: f64) -> TraceParams {
        TraceParams {
            key,
            timeout_s,
            rate_bps: 8e6, // 1000 bytes take 1 ms
            ..TraceParams::default()
        }
    }

    #[test]
    fn a_flow_lives_while_queued_and_until_the_timeout_after_its_last_departure() {
        // A at 0 leaves at 1 ms; B arrives at 1 ms; A again at 0.5 s.
        let trace = [
            packet(0.0, 1, 9, 1, 1000),
            packet(0.001, 2, 9, 1, 1000),
            packet(0.5, 1, 9, 1, 1000),
        ];
        let none = packets_study(&trace, params(TraceKey::Pair, 0.0))
            .unwrap()
            .summary;
        assert_eq!(
            (none.flow_creations, none.max_flows),
            (3, 1),
            "A expired as B arrived"
        );
        let long = packets_study(&trace, params(TraceKey::Pair, 1.0))
            .unwrap()
            .summary;
        assert_eq!((long.flow_creations, long.max_flows), (2, 2));
        // Back to back at 1 kB per 0.5 ms: the second packet of A finds the first queued.
        let queued = [packet(0.0, 1, 9, 1, 1000), packet(0.0005, 1, 9, 1, 1000)];
        let s = packets_study(&queued, params(TraceKey::Pair, 0.0))
            .unwrap()
            .summary;
        assert_eq!((s.flow_creations, s.utilisation), (1, 4.0));
    }

    #[test]
    fn collisions_efficiency_and_the_searched_flows() {
        let one_bucket = TraceParams {
            buckets: 1,
            ..params(TraceKey::Pair, 10.0)
        };
        let trace = [
            packet(0.0, 1, 9, 1, 100),
            packet(0.1, 2, 9, 1, 100),
            packet(0.2, 1, 9, 1, 100),
        ];
        let s = packets_study(&trace, one_bucket).unwrap().summary;
        assert_eq!((s.collisions, s.mean_colliding), (2, 2.0));
        assert!((s.hash_efficiency - (1.0 - 2.0 / 3.0)).abs() < 1e-12);
    }

    #[test]
    fn flow_definitions_aggregate_and_samples_count_before_arrivals() {
        // Two connections from host 1 to host 9, one from 2 to 9, all held by a 10 s timeout.
        let trace = [
            packet(0.0, 1, 9, 1, 100),
            packet(0.05, 1, 9, 2, 100),
            packet(0.2, 2, 9, 1, 100),
        ];
        let max = |key| {
            packets_study(&trace, params(key, 10.0))
                .unwrap()
                .summary
                .max_flows
        };
        assert_eq!(
            [
                TraceKey::FiveTuple,
                TraceKey::Pair,
                TraceKey::Destination,
                TraceKey::Source
            ]
            .map(max),
            [3, 2, 1, 2]
        );
        let study = packets_study(&trace, params(TraceKey::FiveTuple, 10.0)).unwrap();
        assert_eq!(study.active, vec![(0.1, 2.0), (0.2, 2.0)]);
        assert_eq!(study.costs.len(), 8);
        assert_eq!(TraceKey::named("f2").unwrap(), TraceKey::Destination);
        assert!(TraceKey::named("f9")
            .unwrap_err()
            .message
            .contains("f0..f3"));
    }

    #[test]
    fn packets_out_of_order_are_taken_at_the_time_before_them_and_counted() {
        let trace = [packet(1.0, 1, 9, 1, 100), packet(0.5, 2, 9, 1, 100)];
        let s = packets_study(&trace, params(TraceKey::Pair, 0.0))
            .unwrap()
            .summary;
        assert_eq!((s.reordered, s.duration_s, s.packets), (1, 0.0, 2));
    }

    #[test]
    fn a_time_stamp_years_ahead_is_refused_not_sampled_every_interval() {
        let trace = [packet(0.0, 1, 9, 1, 100), packet(4e9, 1, 9, 1, 100)];
        let e = packets_study(&trace, params(TraceKey::Pair, 0.0)).unwrap_err();
        assert_eq!(e.path, "interval");
        assert!(
            e.message
                .contains("packet 2 comes 4000000000.000000 s after"),
            "{e}"
        );
        let ok = [packet(0.0, 1, 9, 1, 100), packet(9999.0, 1, 9, 1, 100)];
        assert_eq!(
            packets_study(&ok, params(TraceKey::Pair, 0.0))
                .unwrap()
                .active
                .len(),
            99_990
        );
    }

    #[test]
    fn parameters_out_of_range_name_their_field() {
        let bad = [
            TraceParams {
                timeout_s: f64::NAN,
                ..TraceParams::default()
            },
            TraceParams {
                interval_s: 0.0,
                ..TraceParams::default()
            },
            TraceParams {
                rate_bps: 0.0,
                ..TraceParams::default()
            },
            TraceParams {
                buckets: 0,
                ..TraceParams::default()
            },
            TraceParams {
                packets: MAX_PACKETS + 1,
                ..TraceParams::default()
            },
        ];
        let fields: Vec<String> = bad.iter().map(|p| p.check().unwrap_err().path).collect();
        assert_eq!(
            fields,
            ["timeout", "interval", "rate", "buckets", "packets"]
        );
    }
}
