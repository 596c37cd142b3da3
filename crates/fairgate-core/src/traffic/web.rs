//! Web sessions after ns-2's WebTraf, as the SFG evaluation drives them [Chung06, §4.1]:
//! `source = { kind = "web", sessions = 300, start_window = "30s", ... }` on a flow whose `src`
//! is the server host and `dst` the client host.
//!
//! A session is a sequence of pages separated by think times; a page is `objects` objects
//! requested together; each object is its own pair of TCP connections as in WebTraf: a request
//! of `request_size` bytes from client to server, then the response from server to client, each
//! opened with a SYN handshake. Object sizes follow `object_size` (default
//! the Pareto of ns-2's `RandomVariable/Pareto`: scale = mean (shape - 1) / shape, shape 1.2,
//! mean 5 KB), rounded up to whole segments as WebTraf rounds up to whole packets.
//!
//! Decisions (the long form is on `docs/models/web.md`):
//! - The server starts the response when the whole request has arrived (WebTraf hands the
//!   request over when its sender sees the last ACK, half a round trip later).
//! - A page ends when the client holds every byte of its objects; the next page starts a think
//!   time later (WebTraf's inter-page time counted from the end of a page).
//! - Session i of n starts at `start + i * start_window / n`.
//! - No FIN exchange (ns-2's one-way TCP has none): the FIN rides the last data segment of
//!   each direction as a flag (`fin`), which only a split-connection gateway reads; an object's
//!   state is retired once request and response are acknowledged; its slot is reused, so
//!   memory follows the number of open connections, not the number ever made.
//! - Pools (`servers`, `clients`, `traffic::pool`): a session draws its client once, a page
//!   its server, uniformly, as WebTraf's `picksrc` and `pickdst`.

use super::pool::{HostPool, PoolSpecs, Pools};
use super::web_conn::{ConnTable, Fin};
use super::workload::{endpoints, Workload, OWN_TIMER};
use super::{AgentPair, Population, SourceConfig, SourceEnv};
use crate::config::dist::{Dist, DurationDist, SizeDist};
use crate::config::error::{check, join, ScenarioError};
use crate::config::units::Duration;
use crate::engine::{secs, Time};
use crate::net::Agent;
use crate::net::AgentCtx;
use crate::transport::tcp::config::TcpConfig;
use serde::{Deserialize, Serialize};

/// `kind = "web"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    pub sessions: u32,
    /// Hosts that serve objects (default: the flow's `src`); see `traffic::pool`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub servers: Option<HostPool>,
    /// Hosts that fetch them (default: the flow's `dst`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients: Option<HostPool>,
    /// Session starts are spread evenly over this window after the flow's start.
    pub start_window: Duration,
    /// Pages per session (default: no limit, sessions browse until the flow stops).
    pub pages: Option<u64>,
    /// Objects per page.
    pub objects: u32,
    pub object_size: SizeDist,
    /// Round object sizes up to whole segments (WebTraf counts objects in packets).
    pub whole_segments: bool,
    pub think: DurationDist,
    pub request_size: u64,
    /// Record each finished object in the transfers table (false: memory stays flat however
    /// many objects a run makes).
    pub record_transfers: bool,
    /// The TCP of both connections (`app` and `handshake` are set by the workload).
    pub tcp: TcpConfig,
    /// How connections close: `"piggybacked"` (the FIN rides the last data segment of each
    /// direction) or `"none"`.
    #[serde(skip_serializing_if = "Fin::is_default")]
    pub fin: Fin,
}

impl Default for WebConfig {
    fn default() -> Self {
        WebConfig {
            sessions: 1,
            servers: None,
            clients: None,
            start_window: Duration::default(),
            pages: None,
            objects: 2,
            object_size: SizeDist(Dist::Pareto {
                mean: 5000.0,
                shape: 1.2,
            }),
            whole_segments: true,
            think: DurationDist(Dist::Exponential { mean: 7.0 }),
            request_size: 1000,
            record_transfers: true,
            fin: Fin::default(),
            tcp: TcpConfig::default(),
        }
    }
}

impl SourceConfig for WebConfig {
    /// About 5 KiB a session with its page of the default 2 objects (measured at 20,000 and
    /// 40,000 sessions in 1 s), rounded up, and a connection per further object, every
    /// session's page open at once at worst; that state is named after the larger of its two
    /// factors.
    fn records_transfers(&self) -> bool {
        self.record_transfers
    }

    fn population(&self) -> Vec<Population> {
        let (sessions, objects) = (f64::from(self.sessions), f64::from(self.objects));
        let per_object = super::http::CONNECTION_BYTES;
        if objects > sessions {
            vec![
                Population {
                    field: "sessions",
                    count: sessions,
                    bytes_each: 8192.0,
                },
                Population {
                    field: "objects",
                    count: objects,
                    bytes_each: sessions * per_object,
                },
            ]
        } else {
            vec![Population {
                field: "sessions",
                count: sessions,
                bytes_each: 8192.0 + (objects - 2.0).max(0.0) * per_object,
            }]
        }
    }

    fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "sessions", self.sessions as u64)?;
        check::positive_int(path, "objects", self.objects as u64)?;
        check::positive_int(path, "request_size", self.request_size)?;
        check::non_negative(path, "start_window", self.start_window.secs())?;
        if let Some(pages) = self.pages {
            check::positive_int(path, "pages", pages)?;
        }
        self.object_size.validate(&join(path, "object_size"))?;
        self.think.0.validate(&join(path, "think"))?;
        self.tcp.validate(&join(path, "tcp"))
    }

    fn has_reverse_flow(&self) -> bool {
        true
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
        let sessions = WebSessions {
            cfg: self.clone(),
            sessions: vec![Session::default(); self.sessions as usize],
            client_of: conns.assign_clients(self.sessions as usize),
            objects: 0,
            stopped: false,
        };
        endpoints(sessions, conns, ("web_server", "web_client"), env, pools)
    }
}

/// Where a session is.
#[derive(Clone, Copy, Debug, Default)]
struct Session {
    pages_done: u64,
    /// Objects of the current page the client does not hold yet.
    pending: u32,
}

/// The sessions of one web flow.
struct WebSessions {
    cfg: WebConfig,
    sessions: Vec<Session>,
    /// The pool index of each session's client.
    client_of: Vec<u32>,
    /// Objects requested so far.
    objects: u64,
    stopped: bool,
}

impl WebSessions {
    fn object_bytes(&self, ctx: &mut AgentCtx) -> u64 {
        let bytes = self.cfg.object_size.0.sample(ctx.rng).max(1.0);
        if self.cfg.whole_segments {
            let mss = self.cfg.tcp.mss as f64;
            ((bytes / mss).ceil() * mss) as u64
        } else {
            bytes.round() as u64
        }
    }
}

impl Workload for WebSessions {
    fn start(&mut self, client: u32, _conns: &mut ConnTable, ctx: &mut AgentCtx) {
        let n = self.cfg.sessions as u64;
        let window = self.cfg.start_window.0;
        for i in (0..n).filter(|&i| self.client_of[i as usize] == client) {
            let offset = (window as u128 * i as u128 / n as u128) as Time;
            ctx.set_timer(ctx.now.saturating_add(offset), OWN_TIMER | i);
        }
    }

    /// A session's next page, all its objects from one server (as WebTraf's pages).
    fn on_timer(&mut self, session: u64, conns: &mut ConnTable, ctx: &mut AgentCtx) {
        if self.stopped {
            return;
        }
        let page = self.sessions[session as usize].pages_done;
        self.sessions[session as usize].pending = self.cfg.objects;
        let hosts = (self.client_of[session as usize], conns.pick_server(ctx.rng));
        for _ in 0..self.cfg.objects {
            let bytes = self.object_bytes(ctx);
            conns.open(session as u32, page, bytes, hosts, ctx);
        }
        self.objects += self.cfg.objects as u64;
    }

    fn on_received(&mut self, session: u32, _conns: &mut ConnTable, ctx: &mut AgentCtx) {
        let s = &mut self.sessions[session as usize];
        s.pending -= 1;
        if s.pending > 0 {
            return;
        }
        s.pages_done += 1;
        if self.cfg.pages.is_some_and(|p| s.pages_done >= p) {
            return;
        }
        let think = secs(self.cfg.think.0.sample(ctx.rng).max(0.0));
        ctx.set_timer(ctx.now.saturating_add(think), OWN_TIMER | session as u64);
    }

    fn stop(&mut self) {
        self.stopped = true;
    }

    fn sample(&self, _conns: &ConnTable) -> Vec<(&'static str, f64)> {
        vec![("objects", self.objects as f64)]
    }
}
