//! Client and server pools of a request/response workload (web sessions, HTTP populations):
//! `servers = ["s0", "s1"]` or `clients = { hosts = "d{i}", count = 200 }` in the source.
//!
//! Picks follow ns-2's WebTraf (`PagePool/WebTraf`), which draws each uniformly at random:
//! a session (web) or a user slot (http) keeps one client, drawn when the flow is built; each
//! page (web) or connection (http) draws its server when it opens. A side without a pool is
//! the flow's own host (`src` for servers, `dst` for clients) and draws nothing, so a flow
//! without pools runs exactly as before. A host listed twice is drawn twice as often. The
//! long form is on `docs/models/web.md`.

use crate::engine::rng::Rng;
use rand::Rng as _;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};

/// A pool of hosts as written: a list of names, or `{ hosts = "d{i}", count = N }`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(untagged)]
pub enum HostPool {
    List(Vec<String>),
    Pattern { hosts: String, count: u32 },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PatternForm {
    hosts: String,
    count: u32,
}

impl<'de> Deserialize<'de> for HostPool {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d)? {
            toml::Value::Array(items) => items
                .into_iter()
                .map(|v| match v {
                    toml::Value::String(s) => Ok(s),
                    other => Err(D::Error::custom(format!(
                        "got {other}, expected a host name"
                    ))),
                })
                .collect::<Result<_, _>>()
                .map(HostPool::List),
            toml::Value::Table(t) => crate::config::error::deserialize_nested::<
                PatternForm,
                D::Error,
            >(toml::Value::Table(t))
            .map(|p| HostPool::Pattern {
                hosts: p.hosts,
                count: p.count,
            }),
            other => Err(D::Error::custom(format!(
                "got {other}, expected a list of host names or {{ hosts = \"d{{i}}\", count = N }}"
            ))),
        }
    }
}

impl HostPool {
    /// The host names, `{i}` replaced by 0..count in the pattern form.
    pub fn names(&self) -> Vec<String> {
        match self {
            HostPool::List(names) => names.clone(),
            HostPool::Pattern { hosts, count } => (0..*count)
                .map(|i| hosts.replace("{i}", &i.to_string()))
                .collect(),
        }
    }
}

/// The `servers` and `clients` of a workload's source, as written (None: the flow's host).
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolSpecs<'a> {
    pub servers: Option<&'a HostPool>,
    pub clients: Option<&'a HostPool>,
}

impl<'a> PoolSpecs<'a> {
    pub fn of(servers: &'a Option<HostPool>, clients: &'a Option<HostPool>) -> Self {
        PoolSpecs {
            servers: servers.as_ref(),
            clients: clients.as_ref(),
        }
    }
}

/// A host of a pool and the agent the workload runs there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolHost {
    pub node: u32,
    pub agent: u32,
    pub first_hop_rate_bps: u64,
}

/// The built pools of a flow: never empty; the first agent of each side may be the flow's own.
#[derive(Clone, Debug)]
pub struct Pools {
    pub servers: Vec<PoolHost>,
    pub clients: Vec<PoolHost>,
    /// Draws each session's or slot's client when the flow is built.
    pub client_rng: Rng,
}

impl Pools {
    /// The client of each of `n` sessions or slots: uniform over the pool, none drawn for one.
    pub fn assign_clients(&self, n: usize) -> Vec<u32> {
        let mut rng = self.client_rng.clone();
        (0..n).map(|_| pick(self.clients.len(), &mut rng)).collect()
    }
}

/// A uniform index below `len`; no draw when there is only one.
pub fn pick(len: usize, rng: &mut Rng) -> u32 {
    if len <= 1 {
        0
    } else {
        rng.random_range(0..len as u32)
    }
}

impl Pools {
    /// No pools: the flow's own server (`src`) and client (`dst`) and their agents (a pool
    /// of one draws nothing, so its stream is never used).
    pub fn own(env: &super::SourceEnv) -> Pools {
        let host = |node, agent| PoolHost {
            node,
            agent,
            first_hop_rate_bps: env.first_hop_rate_bps,
        };
        Pools {
            servers: vec![host(env.src_node, env.sender_agent)],
            clients: vec![host(env.dst_node, env.receiver_agent)],
            client_rng: crate::engine::rng::stream(0, "pool:own"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_spread_uniformly_and_one_host_draws_nothing() {
        let mut rng = crate::engine::rng::stream(3, "pick");
        let mut seen = [0u32; 8];
        for _ in 0..80_000 {
            seen[pick(8, &mut rng) as usize] += 1;
        }
        // 10,000 expected each; the binomial standard deviation is about 94.
        assert!(seen.iter().all(|&n| n.abs_diff(10_000) < 400), "{seen:?}");
        let before = rng.clone();
        assert_eq!(pick(1, &mut rng), 0);
        assert_eq!(rng, before, "a pool of one must not consume a draw");
    }

    #[test]
    fn patterns_expand_in_order() {
        let pool = HostPool::Pattern {
            hosts: "d{i}".into(),
            count: 3,
        };
        assert_eq!(pool.names(), ["d0", "d1", "d2"]);
    }
}
