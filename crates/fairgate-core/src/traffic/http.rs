//! A population of HTTP connections held at a target, as in Byun's testbed [Byun07, §3.3]:
//! `source = { kind = "http", connections = 400, ... }` on a flow whose `src` is the server host
//! and `dst` the client host.
//!
//! Each of the `connections` user slots fetches a page of `page_size` bytes (default
//! U[250, 550] KB) over a request and a response connection (the machinery of the web
//! workload), then thinks (`think`, default 10 s). The slots join in a ramp-up of `ramp_batch`
//! (20) new connections spread over `ramp_step` (5 s), then a `ramp_pause` (5 s), until the
//! target is reached. The sender rate cap of Byun's testbed (5 Mb/s) is `tcp.rate_cap`.
//!
//! Decisions where the text is ambiguous (the long form is on `docs/models/http.md`):
//! - `think_in_connection = true` (default): a connection is one page and the think time after
//!   it, so it closes when the think time ends and is replaced at once ("each web page is
//!   250-550 KB with 10 s user think time"; "each closed connection is replaced"). With
//!   `false` a connection closes when its page is received and the think time is not used.
//! - The ramp-up reads "20 new connections every 5 s with 5 s sleep between": 20 per 10 s.
//! - TCP defaults to Reno (the testbed's senders follow RFC 2581) with the 5 Mb/s cap.
//! - Pools (`servers`, `clients`, `traffic::pool`): a slot draws its client once, each
//!   connection its server, uniformly (Byun's 200 clients and 60 servers).

use super::pool::{HostPool, PoolSpecs, Pools};
use super::web_conn::{ConnTable, Fin};
use super::workload::{endpoints, Workload, OWN_TIMER};
use super::{AgentPair, Population, SourceConfig, SourceEnv};
use crate::config::dist::{Dist, DurationDist, SizeDist};
use crate::config::error::{check, join, ScenarioError};
use crate::config::units::{Duration, Rate};
use crate::engine::{secs, Time};
use crate::net::Agent;
use crate::net::AgentCtx;

/// Memory per open connection: about 2.5 KiB (measured at 20,000 and 40,000), rounded up.
pub const CONNECTION_BYTES: f64 = 4096.0;
use crate::transport::tcp::config::{CcKind, TcpConfig};
use serde::{Deserialize, Serialize};

/// `kind = "http"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpConfig {
    /// Target number of concurrent connections.
    pub connections: u32,
    /// Hosts that serve objects (default: the flow's `src`); see `traffic::pool`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<HostPool>,
    /// Hosts that fetch them (default: the flow's `dst`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients: Option<HostPool>,
    pub page_size: SizeDist,
    pub think: DurationDist,
    pub think_in_connection: bool,
    pub ramp_batch: u32,
    pub ramp_step: Duration,
    pub ramp_pause: Duration,
    pub request_size: u64,
    /// Record each finished object in the transfers table (false: memory stays flat however
    /// many objects a run makes).
    pub record_transfers: bool,
    pub tcp: TcpConfig,
    /// How connections close: `"piggybacked"` (the FIN rides the last data segment of each
    /// direction) or `"none"`.
    #[serde(skip_serializing_if = "Fin::is_default")]
    pub fin: Fin,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            connections: 400,
            servers: None,
            clients: None,
            page_size: SizeDist(Dist::Uniform {
                min: 250_000.0,
                max: 550_000.0,
            }),
            think: DurationDist(Dist::constant(10.0)),
            think_in_connection: true,
            ramp_batch: 20,
            ramp_step: Duration::from_secs(5.0),
            ramp_pause: Duration::from_secs(5.0),
            request_size: 1000,
            record_transfers: true,
            fin: Fin::default(),
            tcp: TcpConfig {
                cc: CcKind::Reno,
                rate_cap: Some(Rate(5_000_000)),
                ..TcpConfig::default()
            },
        }
    }
}

impl SourceConfig for HttpConfig {
    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "connections", self.connections as u64)?;
        check::positive_int(path, "ramp_batch", self.ramp_batch as u64)?;
        check::positive_int(path, "request_size", self.request_size)?;
        check::non_negative(path, "ramp_step", self.ramp_step.secs())?;
        check::non_negative(path, "ramp_pause", self.ramp_pause.secs())?;
        self.page_size.validate(&join(path, "page_size"))?;
        self.think.0.validate(&join(path, "think"))?;
        self.tcp.validate(&join(path, "tcp"))
    }

    fn has_reverse_flow(&self) -> bool {
        true
    }

    fn records_transfers(&self) -> bool {
        self.record_transfers
    }

    fn population(&self) -> Vec<Population> {
        vec![Population {
            field: "connections",
            count: f64::from(self.connections),
            bytes_each: CONNECTION_BYTES,
        }]
    }

    fn build(&self, env: &SourceEnv) -> AgentPair {
        self.build_pooled(env, &Pools::own(env)).0
    }

    fn host_pools(&self) -> PoolSpecs<'_> {
        PoolSpecs::of(&self.servers, &self.clients)
    }

    fn build_pooled(&self, env: &SourceEnv, pools: &Pools) -> (AgentPair, Vec<Box<dyn Agent>>) {
        let conns = ConnTable::new(
            &self.tcp,
            self.request_size,
            self.record_transfers,
            self.fin,
            env,
            pools,
        );
        let population = HttpPopulation {
            cfg: self.clone(),
            pages: vec![0; self.connections as usize],
            client_of: conns.assign_clients(self.connections as usize),
            open_now: 0,
            births: 0,
            stopped: false,
        };
        endpoints(
            population,
            conns,
            ("http_server", "http_client"),
            env,
            pools,
        )
    }
}

/// The user slots of one HTTP flow.
struct HttpPopulation {
    cfg: HttpConfig,
    /// Pages fetched per slot so far.
    pages: Vec<u64>,
    /// The pool index of each slot's client (a user stays at one client host).
    client_of: Vec<u32>,
    /// Connections open now (a connection is open from its request to the end of its think
    /// time, or to its last byte without think time).
    open_now: u32,
    births: u64,
    stopped: bool,
}

impl HttpPopulation {
    /// When slot `k` joins, after the flow's start.
    fn join_offset(&self, k: u64) -> Time {
        let batch = self.cfg.ramp_batch as u64;
        let period = self.cfg.ramp_step.0.saturating_add(self.cfg.ramp_pause.0);
        let within = (self.cfg.ramp_step.0 as u128 * (k % batch) as u128 / batch as u128) as Time;
        (k / batch).saturating_mul(period).saturating_add(within)
    }

    /// Opens the next connection of `slot`.
    fn open(&mut self, slot: u32, conns: &mut ConnTable, ctx: &mut AgentCtx) {
        if self.stopped {
            return;
        }
        let bytes = self.cfg.page_size.0.sample(ctx.rng).round().max(1.0) as u64;
        let page = self.pages[slot as usize];
        self.pages[slot as usize] += 1;
        self.births += 1;
        self.open_now += 1;
        let hosts = (self.client_of[slot as usize], conns.pick_server(ctx.rng));
        conns.open(slot, page, bytes, hosts, ctx);
    }
}

impl Workload for HttpPopulation {
    fn start(&mut self, client: u32, _conns: &mut ConnTable, ctx: &mut AgentCtx) {
        let slots = 0..self.cfg.connections as u64;
        for k in slots.filter(|&k| self.client_of[k as usize] == client) {
            ctx.set_timer(ctx.now.saturating_add(self.join_offset(k)), OWN_TIMER | k);
        }
    }

    /// Slot `slot` joins, or its connection's think time ended (it closes): open its next.
    fn on_timer(&mut self, slot: u64, conns: &mut ConnTable, ctx: &mut AgentCtx) {
        if self.pages[slot as usize] > 0 {
            self.open_now -= 1;
        }
        self.open(slot as u32, conns, ctx);
    }

    fn on_received(&mut self, slot: u32, conns: &mut ConnTable, ctx: &mut AgentCtx) {
        if self.cfg.think_in_connection {
            let think = secs(self.cfg.think.0.sample(ctx.rng).max(0.0));
            ctx.set_timer(ctx.now.saturating_add(think), OWN_TIMER | slot as u64);
        } else {
            self.open_now -= 1;
            self.open(slot, conns, ctx);
        }
    }

    fn stop(&mut self) {
        self.stopped = true;
    }

    fn sample(&self, _conns: &ConnTable) -> Vec<(&'static str, f64)> {
        vec![
            ("population", self.open_now as f64),
            ("births", self.births as f64),
        ]
    }
}
