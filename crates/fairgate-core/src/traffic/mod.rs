//! Applications and traffic sources, and the registry that makes each selectable from a
//! scenario (`source = { kind = "...", ... }`).

pub mod conn_ledger;
pub mod http;
pub mod open_loop;
pub mod pool;
pub mod registry;
pub mod sink;
pub mod web;
pub mod web_conn;
pub mod workload;

pub use registry::SourceSpec;

use crate::config::ScenarioError;
use crate::engine::Time;
use crate::net::Agent;

/// What a source's config learns about where it runs.
#[derive(Clone, Debug)]
pub struct SourceEnv {
    /// The data flow's id.
    pub flow: u32,
    /// The reverse (ACK) flow's id, when the source asked for one.
    pub ack_flow: Option<u32>,
    pub src_node: u32,
    pub dst_node: u32,
    pub sender_agent: u32,
    pub receiver_agent: u32,
    pub first_hop_rate_bps: u64,
    pub start: Time,
    pub stop: Option<Time>,
}

/// The two end points a source builds: one on the source host, one on the destination.
pub struct AgentPair {
    pub sender: Box<dyn Agent>,
    pub receiver: Box<dyn Agent>,
}

/// State a source keeps per unit of one of its numbers (an HTTP source's connections, a web
/// source's sessions and objects, a window source's window), for the memory estimate made at
/// validation.
#[derive(Clone, Copy, Debug)]
pub struct Population {
    /// The field that sets the number.
    pub field: &'static str,
    pub count: f64,
    /// Bytes each unit holds at most (measured, rounded up; see `scenario::budget`).
    pub bytes_each: f64,
}

/// Each source's configuration implements this; the registry dispatches to it.
pub trait SourceConfig {
    fn validate(&self, _path: &str) -> Result<(), ScenarioError> {
        Ok(())
    }
    /// Whether the receiver sends packets back (ACKs), which then form a flow of their own.
    fn has_reverse_flow(&self) -> bool {
        false
    }
    /// The numbers that size the source's own state (beside the flow's), if any do.
    fn population(&self) -> Vec<Population> {
        Vec::new()
    }
    /// Whether the source keeps a row per finished transfer (a log that grows with the run).
    fn records_transfers(&self) -> bool {
        false
    }
    fn build(&self, env: &SourceEnv) -> AgentPair;
    /// The client and server pools the source names, if it takes any.
    fn host_pools(&self) -> pool::PoolSpecs<'_> {
        pool::PoolSpecs::default()
    }
    /// The pair, and one more agent per pool host beyond the pair (in the order of
    /// `pools.servers` then `pools.clients`, skipping the pair's own agents).
    fn build_pooled(
        &self,
        env: &SourceEnv,
        _pools: &pool::Pools,
    ) -> (AgentPair, Vec<Box<dyn Agent>>) {
        (self.build(env), Vec::new())
    }
}
