//! Workloads of many short request/response connections (web sessions, HTTP populations):
//! the two agents a workload places on its server and client hosts, which share the
//! workload's state and its [`ConnTable`], and the trait each workload implements.
//!
//! With client and server pools (see [`super::pool`]) the workload has one more agent per
//! pool host; all share the state. Each client agent starts the sessions or slots whose
//! client it is, so their timers and requests happen on that host. The flow's own client
//! agent samples the workload and hands over its transfers.
//!
//! The client agent starts the workload; packets and timers of a connection go to the
//! connection table, timers with [`OWN_TIMER`] set go to the workload with the rest of the
//! token. The two agents run one at a time, so the shared state is never contended.

use super::pool::Pools;
use super::web_conn::{ConnTable, Side};
use super::{AgentPair, SourceEnv};
use crate::net::{Agent, AgentCtx, Packet};
use crate::stats::transfers::TransferTable;
use std::sync::{Arc, Mutex};

/// Marks a timer token as the workload's own (the low bits are its payload).
pub const OWN_TIMER: u64 = 1 << 63;

/// What a workload decides: when to open connections and what to do when one is received.
pub trait Workload: Send {
    /// At the flow's start, on the host of client `client` of the pool.
    fn start(&mut self, client: u32, conns: &mut ConnTable, ctx: &mut AgentCtx);
    /// A timer the workload set with `OWN_TIMER | payload` fired.
    fn on_timer(&mut self, payload: u64, conns: &mut ConnTable, ctx: &mut AgentCtx);
    /// The client now holds the whole response of a connection of `session`.
    fn on_received(&mut self, session: u32, conns: &mut ConnTable, ctx: &mut AgentCtx);
    /// At the flow's stop time: open no more connections.
    fn stop(&mut self);
    /// Variables sampled into the trace table.
    fn sample(&self, _conns: &ConnTable) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

struct Shared<W> {
    workload: W,
    conns: ConnTable,
}

/// One of the two agents of a workload.
pub struct WorkloadEndpoint<W> {
    shared: Arc<Mutex<Shared<W>>>,
    side: Side,
    /// Which client of the pool this agent is (client side only).
    client: Option<u32>,
    /// The flow's own client agent samples and hands over the transfers.
    primary: bool,
    name: &'static str,
}

/// The server agent and the client agent of `workload`, named `names` (server, client), and
/// one agent per further pool host (servers, then clients, as the scenario builder numbers
/// them).
pub fn endpoints<W: Workload + 'static>(
    workload: W,
    conns: ConnTable,
    names: (&'static str, &'static str),
    env: &SourceEnv,
    pools: &Pools,
) -> (AgentPair, Vec<Box<dyn Agent>>) {
    let shared = Arc::new(Mutex::new(Shared { workload, conns }));
    let endpoint = |side, client, primary| -> Box<dyn Agent> {
        Box::new(WorkloadEndpoint {
            shared: shared.clone(),
            side,
            client,
            primary,
            name: if side == Side::Server {
                names.0
            } else {
                names.1
            },
        })
    };
    let own_client = pools
        .clients
        .iter()
        .position(|h| h.agent == env.receiver_agent)
        .map(|j| j as u32);
    let pair = AgentPair {
        sender: endpoint(Side::Server, None, false),
        receiver: endpoint(Side::Client, own_client, true),
    };
    let servers = pools.servers.iter().filter(|h| h.agent != env.sender_agent);
    let mut extra: Vec<Box<dyn Agent>> = servers
        .map(|_| endpoint(Side::Server, None, false))
        .collect();
    for (j, host) in pools.clients.iter().enumerate() {
        if host.agent != env.receiver_agent {
            extra.push(endpoint(Side::Client, Some(j as u32), false));
        }
    }
    (pair, extra)
}

impl<W: Workload> WorkloadEndpoint<W> {
    fn with<R>(&self, f: impl FnOnce(&mut Shared<W>) -> R) -> R {
        let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut shared)
    }
}

impl<W: Workload> Shared<W> {
    /// Page progress and retirement after a connection moved.
    fn after(&mut self, slot: usize, received: Option<u32>, ctx: &mut AgentCtx) {
        if let Some(session) = received {
            self.workload.on_received(session, &mut self.conns, ctx);
        }
        self.conns.retire_if_done(slot);
    }
}

impl<W: Workload> Agent for WorkloadEndpoint<W> {
    fn start(&mut self, ctx: &mut AgentCtx) {
        if let Some(client) = self.client {
            self.with(|s| s.workload.start(client, &mut s.conns, ctx));
        }
    }

    fn stop(&mut self, _ctx: &mut AgentCtx) {
        self.with(|s| s.workload.stop());
    }

    fn on_packet(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        let side = self.side;
        self.with(|s| {
            let Some(slot) = s.conns.slot_of(p.conn) else {
                return;
            };
            let received = s.conns.deliver(slot, side, p, ctx);
            s.after(slot, received, ctx);
        });
    }

    fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        self.with(|s| {
            if token & OWN_TIMER != 0 {
                return s.workload.on_timer(token & !OWN_TIMER, &mut s.conns, ctx);
            }
            let Some((slot, inner)) = s.conns.timer_target(token) else {
                return;
            };
            let received = s.conns.fire(slot, inner, ctx);
            s.after(slot, received, ctx);
        });
    }

    fn sample(&self, out: &mut Vec<(&'static str, f64)>) {
        if !self.primary {
            return;
        }
        self.with(|s| {
            out.push(("open_connections", s.conns.open_count() as f64));
            out.extend(s.workload.sample(&s.conns));
        })
    }

    /// The flow's own client samples the pool, which the other agents change; the other
    /// endpoints sample nothing.
    fn sample_reads_only_self(&self) -> bool {
        !self.primary
    }

    fn violations(&self) -> Vec<String> {
        if !self.primary {
            return Vec::new();
        }
        self.with(|s| s.conns.violations())
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn drain_transfers(&mut self, out: &mut TransferTable) {
        if self.primary {
            self.with(|s| out.append(s.conns.finished_mut()));
        }
    }

    fn transfers_held(&self) -> usize {
        if self.primary {
            self.with(|s| s.conns.finished_mut().rows.len())
        } else {
            0
        }
    }
}
