//! Resolving a workload's client and server pools to hosts (see `traffic::pool`).

use super::validate::lookup;
use crate::config::error::{join, ScenarioError};
use crate::net::node::NodeKind;
use crate::net::routing::RoutingTable;
use crate::traffic::pool::{HostPool, PoolSpecs};
use crate::traffic::SourceSpec;
use std::collections::HashMap;

use super::schema::NodeSpec;

/// The server and client hosts of a flow's pools; an empty list means the flow's own host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolvedPools {
    pub servers: Vec<u32>,
    pub clients: Vec<u32>,
}

/// What a flow's pools need from its scenario.
pub struct PoolContext<'a> {
    pub names: &'a HashMap<String, u32>,
    pub nodes: &'a [NodeSpec],
    pub path: &'a str,
}

/// The pools of `source`, checked: hosts that exist, and a route from every server to every
/// client and back.
pub fn resolve_pools(
    cx: &PoolContext,
    source: &SourceSpec,
    (src, dst): (u32, u32),
    routes: &mut RoutingTable,
) -> Result<ResolvedPools, ScenarioError> {
    let PoolSpecs { servers, clients } = source.host_pools();
    let pools = ResolvedPools {
        servers: hosts(cx, "servers", servers)?,
        clients: hosts(cx, "clients", clients)?,
    };
    if pools == ResolvedPools::default() {
        return Ok(pools);
    }
    let either = |list: &[u32], own: u32| {
        if list.is_empty() {
            vec![own]
        } else {
            list.to_vec()
        }
    };
    for &server in &either(&pools.servers, src) {
        for &client in &either(&pools.clients, dst) {
            if server == client
                || !routes.reachable(server, client)
                || !routes.reachable(client, server)
            {
                return Err(ScenarioError::new(
                    join(cx.path, "source.clients"),
                    format!(
                        "client {:?} and server {:?} are not two hosts with a route both ways; \
                         expected every server to reach every client and back",
                        cx.nodes[client as usize].name, cx.nodes[server as usize].name
                    ),
                ));
            }
        }
    }
    Ok(pools)
}

fn hosts(
    cx: &PoolContext,
    field: &str,
    pool: Option<&HostPool>,
) -> Result<Vec<u32>, ScenarioError> {
    let Some(pool) = pool else {
        return Ok(Vec::new());
    };
    let field_path = join(cx.path, &format!("source.{field}"));
    if let HostPool::Pattern { count, .. } = pool {
        // Checked before the names are made: 4x10^9 of them aborted on the allocation.
        if *count as usize > cx.nodes.len() {
            return Err(ScenarioError::new(
                join(&field_path, "count"),
                format!(
                    "got {count}, expected at most {} (the scenario's nodes; a pool's hosts \
                     are distinct nodes)",
                    cx.nodes.len()
                ),
            ));
        }
    }
    let names = pool.names();
    if names.is_empty() {
        return Err(ScenarioError::new(
            field_path,
            "got an empty pool, expected at least one host",
        ));
    }
    names
        .iter()
        .enumerate()
        .map(|(j, name)| {
            let path = format!("{field_path}[{j}]");
            let id = lookup(cx.names, &path, "", name)?;
            if cx.nodes[id as usize].kind != NodeKind::Host {
                return Err(ScenarioError::new(
                    path,
                    format!(
                        "got {name:?}, a {:?} node; expected a host",
                        cx.nodes[id as usize].kind
                    ),
                ));
            }
            Ok(id)
        })
        .collect()
}
