//! Simplex links: rate, propagation delay (fixed, or drawn per packet, flow or connection) and an
//! optional loss model (Bernoulli, Gilbert-Elliott, or a deterministic pattern).

use crate::config::dist::{Dist, DurationDist};
use crate::config::error::{check, join, ScenarioError};
use crate::config::units::Duration;
use crate::engine::{secs, Rng, Time};
use crate::net::in_order::LastArrivals;
use crate::net::packet::{Packet, PacketKind};
use rand::Rng as _;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

/// Propagation delay as written: `delay = "10ms"` or
/// `delay = { dist = "uniform", min = "1ms", max = "5ms", per = "packet" | "flow" | ... }`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DelaySpec {
    Fixed(Duration),
    PerPacket(DurationDist),
    /// Drawn per packet, but never overtaking an earlier packet of the same connection (flow
    /// and `conn`).
    PerPacketInOrder(DurationDist),
    PerFlow(DurationDist),
    /// Drawn once per connection (flow and `conn`: the connections a web or HTTP flow
    /// multiplexes each get their own).
    PerConnection(DurationDist),
}

/// The values `per` may take.
const PER_EXPECTED: &str = "\"packet\", \"packet_in_order\", \"flow\" or \"connection\"";

impl Default for DelaySpec {
    fn default() -> Self {
        DelaySpec::Fixed(Duration(0))
    }
}

impl<'de> Deserialize<'de> for DelaySpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = toml::Value::deserialize(d)?;
        let mut table = match value {
            toml::Value::Table(t) => t,
            other => {
                return Duration::deserialize(other)
                    .map(DelaySpec::Fixed)
                    .map_err(D::Error::custom)
            }
        };
        crate::config::dist::check_keys(&table, &["per"]).map_err(D::Error::custom)?;
        let per = match table.remove("per") {
            None => "packet".to_string(),
            Some(toml::Value::String(s)) => s,
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "field `per`: got {other}, expected {PER_EXPECTED}"
                )))
            }
        };
        let dist =
            DurationDist::deserialize(toml::Value::Table(table)).map_err(D::Error::custom)?;
        match per.as_str() {
            "packet" => Ok(DelaySpec::PerPacket(dist)),
            "packet_in_order" => Ok(DelaySpec::PerPacketInOrder(dist)),
            "flow" => Ok(DelaySpec::PerFlow(dist)),
            "connection" => Ok(DelaySpec::PerConnection(dist)),
            other => Err(D::Error::custom(format!(
                "field `per`: got {other:?}, expected {PER_EXPECTED}"
            ))),
        }
    }
}

impl Serialize for DelaySpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (dist, per) = match self {
            DelaySpec::Fixed(d) => return d.serialize(s),
            DelaySpec::PerPacket(d) => (d, "packet"),
            DelaySpec::PerPacketInOrder(d) => (d, "packet_in_order"),
            DelaySpec::PerFlow(d) => (d, "flow"),
            DelaySpec::PerConnection(d) => (d, "connection"),
        };
        let mut table = toml::Table::try_from(dist).map_err(serde::ser::Error::custom)?;
        table.insert("per".into(), toml::Value::String(per.into()));
        let mut map = s.serialize_map(Some(table.len()))?;
        for (k, v) in &table {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl DelaySpec {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        match self {
            DelaySpec::Fixed(_) => Ok(()),
            DelaySpec::PerPacket(d)
            | DelaySpec::PerPacketInOrder(d)
            | DelaySpec::PerFlow(d)
            | DelaySpec::PerConnection(d) => d.0.validate(path),
        }
    }

    /// The mean one-way delay in seconds (for RTT arithmetic in topology builders).
    pub fn mean_secs(&self) -> f64 {
        match self {
            DelaySpec::Fixed(d) => d.secs(),
            DelaySpec::PerPacket(d)
            | DelaySpec::PerPacketInOrder(d)
            | DelaySpec::PerFlow(d)
            | DelaySpec::PerConnection(d) => d.0.mean(),
        }
    }
}

/// Random or scripted loss on a link. A plain number is a Bernoulli probability.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LossSpec {
    Bernoulli(BernoulliLoss),
    GilbertElliott(GilbertElliottLoss),
    Pattern(PatternLoss),
    Seqs(SeqsLoss),
}

crate::config::tagged::deserialize_by_kind!(LossSpec, {
    "bernoulli" => Bernoulli,
    "gilbert_elliott" => GilbertElliott,
    "pattern" => Pattern,
    "seqs" => Seqs,
});

/// Each packet is lost independently with probability `p`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BernoulliLoss {
    pub p: f64,
}

/// Two-state Markov loss: per-packet transition probabilities and a loss rate per state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottLoss {
    pub p_good_to_bad: f64,
    pub p_bad_to_good: f64,
    #[serde(default)]
    pub loss_good: f64,
    #[serde(default = "one")]
    pub loss_bad: f64,
}

/// Drops the listed packets (0-based order in which they cross this link) of one flow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternLoss {
    pub flow: String,
    pub packets: Vec<u64>,
}

/// Drops the data packets of one flow whose sequence number is listed, on each of their
/// first `times` crossings of this link (1 = the first transmission only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeqsLoss {
    pub flow: String,
    pub seqs: Vec<u64>,
    #[serde(default = "one_time")]
    pub times: u32,
}

fn one_time() -> u32 {
    1
}

fn one() -> f64 {
    1.0
}

/// Deserializes an optional loss given as a number or a table.
pub fn deserialize_loss<'de, D: Deserializer<'de>>(d: D) -> Result<Option<LossSpec>, D::Error> {
    let value = toml::Value::deserialize(d)?;
    match value {
        toml::Value::Float(p) => Ok(Some(LossSpec::Bernoulli(BernoulliLoss { p }))),
        toml::Value::Integer(p) => Ok(Some(LossSpec::Bernoulli(BernoulliLoss { p: p as f64 }))),
        other => crate::config::error::deserialize_nested::<LossSpec, D::Error>(other).map(Some),
    }
}

impl LossSpec {
    pub fn validate(
        &self,
        path: &str,
        flow_exists: &dyn Fn(&str) -> bool,
    ) -> Result<(), ScenarioError> {
        match self {
            LossSpec::Bernoulli(b) => check::probability(path, "p", b.p),
            LossSpec::GilbertElliott(g) => {
                check::probability(path, "p_good_to_bad", g.p_good_to_bad)?;
                check::probability(path, "p_bad_to_good", g.p_bad_to_good)?;
                check::probability(path, "loss_good", g.loss_good)?;
                check::probability(path, "loss_bad", g.loss_bad)
            }
            LossSpec::Pattern(pat) if !flow_exists(&pat.flow) => Err(ScenarioError::new(
                join(path, "flow"),
                format!(
                    "got {:?}, expected the name of a flow in [[flows]]",
                    pat.flow
                ),
            )),
            LossSpec::Pattern(_) => Ok(()),
            LossSpec::Seqs(seqs) if !flow_exists(&seqs.flow) => Err(ScenarioError::new(
                join(path, "flow"),
                format!(
                    "got {:?}, expected the name of a flow in [[flows]]",
                    seqs.flow
                ),
            )),
            LossSpec::Seqs(seqs) => check::positive_int(path, "times", seqs.times as u64),
        }
    }
}

enum DelayModel {
    Fixed(Time),
    PerPacket(Dist),
    /// Drawn per packet; the last arrival time of each connection keeps its packets in order.
    PerPacketInOrder(Dist, LastArrivals),
    /// Drawn once per flow, on the flow's first packet.
    PerFlow(Dist, Vec<Option<Time>>),
    /// Drawn once per (flow, connection), on its first packet.
    PerConnection(Dist, std::collections::HashMap<(u32, u32), Time>),
}

/// The loss models with state are boxed, so the model's kind and a Bernoulli probability
/// take 16 bytes and the delay model's kind still lies in the link's first cache line.
enum LossModel {
    None,
    Bernoulli(f64),
    GilbertElliott(Box<GilbertElliott>),
    Pattern(Box<LossPattern>),
    /// Remaining drops per listed sequence number.
    Seqs(Box<LossSeqs>),
}

struct GilbertElliott {
    to_bad: f64,
    to_good: f64,
    loss_good: f64,
    loss_bad: f64,
    bad: bool,
}

struct LossPattern {
    flow: u32,
    packets: Vec<u64>,
    seen: u64,
}

struct LossSeqs {
    flow: u32,
    remaining: Vec<(u64, u32)>,
}

/// A simplex link as the engine runs it. `repr(C)` keeps what every packet reads (the rate,
/// the loss model's kind, the delay model's kind and a fixed delay) in its first cache line.
#[repr(C)]
pub struct Link {
    pub rate_bps: u64,
    loss: LossModel,
    delay: DelayModel,
    rng: Rng,
}

impl Link {
    /// Bytes at the start of a link that a packet crossing it reads.
    pub const HOT_BYTES: usize = std::mem::offset_of!(Link, delay) + 16;

    /// `flow_id` resolves flow names in loss patterns.
    pub fn new(
        rate_bps: u64,
        delay: &DelaySpec,
        loss: Option<&LossSpec>,
        rng: Rng,
        flow_id: &dyn Fn(&str) -> u32,
    ) -> Self {
        let delay = match delay {
            DelaySpec::Fixed(d) => DelayModel::Fixed(d.0),
            DelaySpec::PerPacket(d) => DelayModel::PerPacket(d.0),
            DelaySpec::PerPacketInOrder(d) => {
                DelayModel::PerPacketInOrder(d.0, LastArrivals::default())
            }
            DelaySpec::PerFlow(d) => DelayModel::PerFlow(d.0, Vec::new()),
            DelaySpec::PerConnection(d) => DelayModel::PerConnection(d.0, Default::default()),
        };
        let loss = match loss {
            None => LossModel::None,
            Some(LossSpec::Bernoulli(b)) => LossModel::Bernoulli(b.p),
            Some(LossSpec::GilbertElliott(g)) => {
                LossModel::GilbertElliott(Box::new(GilbertElliott {
                    to_bad: g.p_good_to_bad,
                    to_good: g.p_bad_to_good,
                    loss_good: g.loss_good,
                    loss_bad: g.loss_bad,
                    bad: false,
                }))
            }
            Some(LossSpec::Pattern(pat)) => {
                let mut packets = pat.packets.clone();
                packets.sort_unstable();
                LossModel::Pattern(Box::new(LossPattern {
                    flow: flow_id(&pat.flow),
                    packets,
                    seen: 0,
                }))
            }
            Some(LossSpec::Seqs(spec)) => {
                let mut remaining: Vec<(u64, u32)> =
                    spec.seqs.iter().map(|&s| (s, spec.times)).collect();
                remaining.sort_unstable();
                remaining.dedup();
                LossModel::Seqs(Box::new(LossSeqs {
                    flow: flow_id(&spec.flow),
                    remaining,
                }))
            }
        };
        Link {
            rate_bps,
            delay,
            loss,
            rng,
        }
    }

    /// Whether packets leave this link in the order they entered it (a fixed delay), so the
    /// engine can keep them in a FIFO instead of one event each.
    pub fn preserves_order(&self) -> bool {
        matches!(self.delay, DelayModel::Fixed(_))
    }

    /// Propagation delay for this packet, which finishes serialisation at `sent`.
    pub fn propagation(&mut self, packet: &Packet, sent: Time) -> Time {
        match &mut self.delay {
            DelayModel::Fixed(t) => *t,
            DelayModel::PerPacket(d) => secs(d.sample(&mut self.rng)),
            DelayModel::PerPacketInOrder(d, last) => {
                let drawn = sent + secs(d.sample(&mut self.rng));
                last.arrival(packet.flow, packet.conn, sent, drawn) - sent
            }
            DelayModel::PerFlow(d, drawn) => {
                let i = packet.flow as usize;
                if drawn.len() <= i {
                    drawn.resize(i + 1, None);
                }
                *drawn[i].get_or_insert_with(|| secs(d.sample(&mut self.rng)))
            }
            DelayModel::PerConnection(d, drawn) => *drawn
                .entry((packet.flow, packet.conn))
                .or_insert_with(|| secs(d.sample(&mut self.rng))),
        }
    }

    /// Whether the loss model loses this packet.
    pub fn loses(&mut self, packet: &Packet) -> bool {
        match &mut self.loss {
            LossModel::None => false,
            LossModel::Bernoulli(p) => self.rng.random::<f64>() < *p,
            LossModel::GilbertElliott(g) => {
                let flip = if g.bad { g.to_good } else { g.to_bad };
                if self.rng.random::<f64>() < flip {
                    g.bad = !g.bad;
                }
                let p = if g.bad { g.loss_bad } else { g.loss_good };
                self.rng.random::<f64>() < p
            }
            LossModel::Pattern(pattern) => {
                if packet.flow != pattern.flow {
                    return false;
                }
                let index = pattern.seen;
                pattern.seen += 1;
                pattern.packets.binary_search(&index).is_ok()
            }
            LossModel::Seqs(seqs) => {
                if packet.flow != seqs.flow || packet.kind != PacketKind::Data {
                    return false;
                }
                let remaining = &mut seqs.remaining;
                match remaining.binary_search_by_key(&packet.seq, |&(s, _)| s) {
                    Ok(i) if remaining[i].1 > 0 => {
                        remaining[i].1 -= 1;
                        true
                    }
                    _ => false,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{rng, to_secs};

    fn delay(text: &str) -> Result<DelaySpec, String> {
        let table = toml::from_str::<toml::Table>(&format!("d = {text}")).unwrap();
        table["d"].clone().try_into().map_err(|e| e.to_string())
    }

    #[test]
    fn a_delay_tables_unknown_field_is_named_with_per_among_the_expected() {
        let err = delay("{ dist = \"uniform\", min = \"1ms\", max = \"2ms\", pre = \"flow\" }")
            .unwrap_err();
        assert!(
            err.contains("unknown field `pre`") && err.contains("`min`, `max`, `per`"),
            "{err}"
        );
        let sizes = delay("{ dist = \"normal\", mean = \"1ms\", std = \"1ms\", per = \"flow\" }");
        assert!(matches!(sizes, Ok(DelaySpec::PerFlow(_))));
    }

    #[test]
    fn a_delay_per_connection_is_drawn_once_for_each_connection_of_a_flow() {
        let spec: DelaySpec = toml::from_str::<toml::Table>(
            "d = { dist = \"uniform\", min = \"300ms\", max = \"400ms\", per = \"connection\" }",
        )
        .unwrap()["d"]
            .clone()
            .try_into()
            .unwrap();
        assert_eq!(
            toml::Value::try_from(spec).unwrap()["per"].as_str(),
            Some("connection")
        );
        let mut link = Link::new(1, &spec, None, rng::stream(1, "t"), &|_| 0);
        let on = |flow, conn| Packet {
            flow,
            conn,
            ..Default::default()
        };
        let mut delay = |p: Packet| to_secs(link.propagation(&p, 0));
        let (a, b, c) = (delay(on(0, 0)), delay(on(0, 1)), delay(on(1, 0)));
        assert!(
            [a, b, c].iter().all(|d| (0.3..=0.4).contains(d)),
            "{a} {b} {c}"
        );
        assert!(a != b && a != c && b != c);
        assert_eq!((delay(on(0, 1)), delay(on(0, 0))), (b, a));
    }

    #[test]
    fn packet_in_order_keeps_each_connection_in_order_and_apart() {
        let spec: DelaySpec = toml::from_str::<toml::Table>(
            "d = { dist = \"uniform\", min = \"300ms\", max = \"400ms\", per = \"packet_in_order\" }",
        )
        .unwrap()["d"]
            .clone()
            .try_into()
            .unwrap();
        let mut link = Link::new(1, &spec, None, rng::stream(1, "t"), &|_| 0);
        let ms = secs(0.001);
        let mut last = [0; 2];
        let mut overtaken_by_conn_1 = 0;
        for k in 0..1000u64 {
            let (sent, conn) = (k * ms, (k % 2) as u32);
            let packet = Packet {
                flow: 0,
                conn,
                ..Default::default()
            };
            let arrival = sent + link.propagation(&packet, sent);
            assert!(
                arrival >= last[conn as usize],
                "connection {conn} reordered"
            );
            if conn == 1 && arrival < last[0] {
                overtaken_by_conn_1 += 1;
            }
            last[conn as usize] = arrival;
        }
        assert!(overtaken_by_conn_1 > 100, "{overtaken_by_conn_1}");
    }

    #[test]
    fn seqs_loss_drops_listed_data_the_given_number_of_times() {
        let spec = LossSpec::Seqs(SeqsLoss {
            flow: "f".into(),
            seqs: vec![5000, 1000],
            times: 2,
        });
        let mut link = Link::new(
            1,
            &DelaySpec::default(),
            Some(&spec),
            rng::stream(1, "t"),
            &|_| 3,
        );
        let data = |flow, seq| Packet {
            flow,
            seq,
            kind: PacketKind::Data,
            ..Default::default()
        };
        let ack = Packet {
            kind: PacketKind::Ack,
            ..data(3, 1000)
        };
        let verdicts: Vec<bool> = [
            data(3, 1000),
            data(2, 1000),
            ack,
            data(3, 2000),
            data(3, 1000),
            data(3, 1000),
            data(3, 5000),
        ]
        .iter()
        .map(|p| link.loses(p))
        .collect();
        assert_eq!(verdicts, [true, false, false, false, true, false, true]);
    }
}
