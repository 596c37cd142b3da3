//! Topology builders: a dumbbell, a chain (parking lot) and the general graph, all expanded
//! into nodes and links before the network is built.

use super::schema::{LinkOverride, LinkParams, LinkSpec, NodeSpec};
use crate::config::dist::DurationDist;
use crate::config::error::{join, ScenarioError};
use crate::config::units::Duration;
use crate::engine::rng;
use crate::net::link::DelaySpec;
use crate::net::node::NodeKind;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

/// `[topology]`: a builder that adds nodes and links to those listed explicitly.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TopologySpec {
    /// Hosts s0..s{n-1} -> router `left` -> router `right` -> hosts d0..d{n-1}.
    Dumbbell(DumbbellSpec),
    /// Routers r0..r{k} in a line; host `src` on r0 and `dst` on r{k}; cross-traffic hosts
    /// x{i}s on r{i} and x{i}d on r{i+1} for each of the k bottlenecks.
    Chain(ChainSpec),
    /// Nothing beyond `[[nodes]]` and `[[links]]`.
    Graph(GraphSpec),
}

crate::config::tagged::deserialize_by_kind!(TopologySpec, {
    "dumbbell" => Dumbbell,
    "chain" => Chain,
    "graph" => Graph,
});

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    pub senders: u32,
    pub bottleneck: LinkParams,
    pub access: LinkParams,
    /// Round-trip propagation delay per sender: a list (one per sender) or a distribution.
    #[serde(default)]
    pub rtt: Option<RttSpec>,
    /// Where each flow's extra delay goes (see [`RttSplit`]).
    #[serde(default)]
    pub rtt_split: RttSplit,
}

/// Which access links carry the part of a flow's RTT beyond the base path.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RttSplit {
    /// The sender's access link carries it all; the receiver's keeps the access delay.
    #[default]
    Sender,
    /// Half on the sender's and half on the receiver's access link, each on top of the access
    /// delay (as the ns-2 and ns-3 dumbbell helpers are usually set up).
    Even,
}

/// One-way delays of a flow's sender and receiver access links.
struct AccessDelays {
    sender: DelaySpec,
    receiver: DelaySpec,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChainSpec {
    /// Number of bottleneck links (k).
    pub hops: u32,
    pub bottleneck: LinkParams,
    pub access: LinkParams,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GraphSpec {}

/// Round-trip times: an explicit list or a distribution drawn per sender.
#[derive(Clone, Debug, Serialize)]
pub enum RttSpec {
    List(Vec<Duration>),
    Drawn(DurationDist),
}

impl<'de> Deserialize<'de> for RttSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d)? {
            toml::Value::Array(items) => items
                .into_iter()
                .map(|v| Duration::deserialize(v).map_err(D::Error::custom))
                .collect::<Result<_, _>>()
                .map(RttSpec::List),
            other => DurationDist::deserialize(other)
                .map(RttSpec::Drawn)
                .map_err(D::Error::custom),
        }
    }
}

/// Nodes and links a topology adds.
#[derive(Default)]
pub struct Expanded {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<(String, LinkSpec)>,
}

fn node(name: impl Into<String>, kind: NodeKind) -> NodeSpec {
    NodeSpec {
        name: name.into(),
        kind,
        gateway: None,
    }
}

fn link(from: &str, to: &str, params: &LinkParams, delay: DelaySpec) -> LinkSpec {
    LinkSpec {
        from: from.into(),
        to: to.into(),
        rate: params.rate,
        delay,
        loss: params.loss.clone(),
        queue: params.queue.clone(),
        duplex: true,
        reverse: params.reverse_queue.clone().map(|q| LinkOverride {
            queue: Some(q),
            ..Default::default()
        }),
        monitor: None,
        device_queue: params.device_queue,
    }
}

fn validate_params(p: &LinkParams, path: &str) -> Result<(), ScenarioError> {
    p.delay.validate(&join(path, "delay"))?;
    p.queue.validate(&join(path, "queue"))?;
    if let Some(q) = &p.reverse_queue {
        q.validate(&join(path, "reverse_queue"))?;
    }
    Ok(())
}

impl TopologySpec {
    /// Expands the builder; `seed` draws random RTTs.
    pub fn expand(&self, seed: u64) -> Result<Expanded, ScenarioError> {
        match self {
            TopologySpec::Dumbbell(d) => d.expand(seed),
            TopologySpec::Chain(c) => c.expand(),
            TopologySpec::Graph(_) => Ok(Expanded::default()),
        }
    }
}

impl DumbbellSpec {
    fn rtts(&self, seed: u64) -> Result<Option<Vec<f64>>, ScenarioError> {
        let n = self.senders as usize;
        let Some(rtt) = &self.rtt else {
            return Ok(None);
        };
        match rtt {
            RttSpec::List(list) if list.len() != n => Err(ScenarioError::new(
                "topology.rtt",
                format!("got {} values, expected one per sender ({n})", list.len()),
            )),
            RttSpec::List(list) => Ok(Some(list.iter().map(|d| d.secs()).collect())),
            RttSpec::Drawn(dist) => {
                dist.0.validate("topology.rtt")?;
                let mut r = rng::stream(seed, "topology:rtt");
                Ok(Some((0..n).map(|_| dist.0.sample(&mut r)).collect()))
            }
        }
    }

    fn access_delays(&self, seed: u64) -> Result<Vec<AccessDelays>, ScenarioError> {
        let access = self.access.delay;
        let Some(rtts) = self.rtts(seed)? else {
            let same = || AccessDelays {
                sender: access,
                receiver: access,
            };
            return Ok((0..self.senders).map(|_| same()).collect());
        };
        let base = match self.rtt_split {
            RttSplit::Sender => self.bottleneck.delay.mean_secs() + access.mean_secs(),
            RttSplit::Even => self.bottleneck.delay.mean_secs() + 2.0 * access.mean_secs(),
        };
        let fixed = |secs: f64| DelaySpec::Fixed(Duration::from_secs(secs.max(0.0)));
        rtts.iter()
            .enumerate()
            .map(|(i, rtt)| {
                let extra = rtt / 2.0 - base;
                if extra < -1e-12 {
                    return Err(ScenarioError::new(
                        format!("topology.rtt[{i}]"),
                        format!(
                            "got {rtt} s, expected at least twice the base one-way delay = {} s",
                            2.0 * base
                        ),
                    ));
                }
                Ok(match self.rtt_split {
                    RttSplit::Sender => AccessDelays {
                        sender: fixed(extra),
                        receiver: access,
                    },
                    RttSplit::Even => AccessDelays {
                        sender: fixed(access.mean_secs() + extra / 2.0),
                        receiver: fixed(access.mean_secs() + extra / 2.0),
                    },
                })
            })
            .collect()
    }

    fn expand(&self, seed: u64) -> Result<Expanded, ScenarioError> {
        if self.senders == 0 {
            return Err(ScenarioError::new(
                "topology.senders",
                "got 0, expected at least 1 sender",
            ));
        }
        validate_params(&self.bottleneck, "topology.bottleneck")?;
        validate_params(&self.access, "topology.access")?;
        let delays = self.access_delays(seed)?;
        let n = self.senders as usize;
        let mut out = Expanded {
            nodes: Vec::with_capacity(2 * n + 2),
            links: Vec::with_capacity(2 * n + 1),
        };
        out.nodes.push(node("left", NodeKind::Router));
        out.nodes.push(node("right", NodeKind::Router));
        for i in 0..self.senders {
            out.nodes.push(node(format!("s{i}"), NodeKind::Host));
            out.nodes.push(node(format!("d{i}"), NodeKind::Host));
        }
        for (i, delay) in delays.iter().enumerate() {
            let spec = link(&format!("s{i}"), "left", &self.access, delay.sender);
            out.links.push(("topology.access".into(), spec));
        }
        let spec = link("left", "right", &self.bottleneck, self.bottleneck.delay);
        out.links.push(("topology.bottleneck".into(), spec));
        for (i, delay) in delays.iter().enumerate() {
            let spec = link("right", &format!("d{i}"), &self.access, delay.receiver);
            out.links.push(("topology.access".into(), spec));
        }
        Ok(out)
    }
}

impl ChainSpec {
    fn expand(&self) -> Result<Expanded, ScenarioError> {
        if self.hops == 0 {
            return Err(ScenarioError::new(
                "topology.hops",
                "got 0, expected at least 1 bottleneck",
            ));
        }
        validate_params(&self.bottleneck, "topology.bottleneck")?;
        validate_params(&self.access, "topology.access")?;
        let k = self.hops;
        let mut out = Expanded::default();
        for i in 0..=k {
            out.nodes.push(node(format!("r{i}"), NodeKind::Router));
        }
        out.nodes.push(node("src", NodeKind::Host));
        out.nodes.push(node("dst", NodeKind::Host));
        let access = |from: &str, to: &str| {
            (
                "topology.access".to_string(),
                link(from, to, &self.access, self.access.delay),
            )
        };
        out.links.push(access("src", "r0"));
        for i in 0..k {
            let (a, b) = (format!("r{i}"), format!("r{}", i + 1));
            let spec = link(&a, &b, &self.bottleneck, self.bottleneck.delay);
            out.links.push(("topology.bottleneck".into(), spec));
            out.nodes.push(node(format!("x{i}s"), NodeKind::Host));
            out.nodes.push(node(format!("x{i}d"), NodeKind::Host));
            out.links.push(access(&format!("x{i}s"), &a));
            out.links.push(access(&b, &format!("x{i}d")));
        }
        out.links.push(access(&format!("r{k}"), "dst"));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::dist::Dist;

    fn constant(s: f64) -> DurationDist {
        DurationDist(Dist::constant(s))
    }

    fn params(delay_ms: f64) -> LinkParams {
        LinkParams {
            rate: crate::config::units::Rate(10_000_000),
            delay: DelaySpec::Fixed(Duration::from_secs(delay_ms / 1000.0)),
            loss: None,
            queue: Default::default(),
            reverse_queue: None,
            device_queue: 0,
        }
    }

    /// Two senders with RTTs of 100 and 200 ms over a 10 ms bottleneck and 1 ms access links.
    fn two_senders(rtt_split: RttSplit) -> DumbbellSpec {
        DumbbellSpec {
            senders: 2,
            bottleneck: params(10.0),
            access: params(1.0),
            rtt: Some(RttSpec::List(vec![
                Duration::from_secs(0.1),
                Duration::from_secs(0.2),
            ])),
            rtt_split,
        }
    }

    #[test]
    fn dumbbell_puts_rtt_on_sender_access() {
        let e = two_senders(RttSplit::Sender).expand(1).unwrap();
        assert_eq!(e.nodes.len(), 6);
        let s1 = &e.links[1].1;
        assert_eq!(s1.from, "s1");
        assert!((s1.delay.mean_secs() - 0.089).abs() < 1e-12);
        assert!((e.links[4].1.delay.mean_secs() - 0.001).abs() < 1e-12);
    }

    #[test]
    fn even_split_shares_the_extra_delay_between_both_access_links() {
        let e = two_senders(RttSplit::Even).expand(1).unwrap();
        // One way 100 ms: 10 bottleneck + 2 x 1 access, extra 88 split 44 + 44.
        let (sender, receiver) = (&e.links[1].1, &e.links[4].1);
        assert_eq!((sender.from.as_str(), receiver.to.as_str()), ("s1", "d1"));
        assert!((sender.delay.mean_secs() - 0.045).abs() < 1e-12);
        assert!((receiver.delay.mean_secs() - 0.045).abs() < 1e-12);
        let one_way: f64 = 2.0 * 0.045 + 0.010;
        assert!((2.0 * one_way - 0.2).abs() < 1e-12);
    }

    #[test]
    fn rtt_shorter_than_fixed_path_is_an_error() {
        let d = DumbbellSpec {
            senders: 1,
            bottleneck: params(10.0),
            access: params(1.0),
            rtt: Some(RttSpec::Drawn(constant(0.01))),
            rtt_split: RttSplit::Even,
        };
        let e = d.expand(1).err().unwrap();
        assert_eq!(e.path, "topology.rtt[0]");
    }

    #[test]
    fn chain_has_cross_hosts_per_hop() {
        let c = ChainSpec {
            hops: 3,
            bottleneck: params(5.0),
            access: params(1.0),
        };
        let e = c.expand().unwrap();
        assert_eq!(e.nodes.len(), 4 + 2 + 6);
        assert_eq!(e.links.len(), 2 + 3 * 3);
    }
}
