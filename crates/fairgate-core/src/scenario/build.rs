//! Turning a validated scenario into a running simulation.

use super::schema::Scenario;
use super::validate::{resolve, Resolved, ResolvedFlow};
use crate::config::error::ScenarioError;
use crate::engine::rng;
use crate::gateway::{FlowMap, Framing, Gateway, Peer};
use crate::net::link::Link;
use crate::net::node::{Node, NodeKind};
use crate::qdisc::QdiscEnv;
use crate::sim::device::DeviceQueue;
use crate::sim::port::Port;
use crate::sim::{AgentSlot, FlowInfo, FlowRole, SimParts, Simulation};
use crate::stats::PortStats;
use crate::traffic::pool::{PoolHost, Pools};
use crate::traffic::SourceEnv;
use std::collections::HashMap;

/// Builds the simulation a scenario describes.
pub fn build(scenario: &Scenario) -> Result<Simulation, ScenarioError> {
    if scenario.atm.is_some() {
        return Err(ScenarioError::new(
            "atm",
            "a scenario with an [atm] section runs on the cell network (atm::run), not here",
        ));
    }
    let resolved = resolve(scenario)?;
    let seed = scenario.simulation.seed;
    let flows = flow_table(&resolved);
    let flow_ids: HashMap<&str, u32> = flows
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i as u32))
        .collect();
    let flow_id = |name: &str| flow_ids.get(name).copied().unwrap_or(0);
    let mut nodes: Vec<Node> = resolved
        .nodes
        .iter()
        .map(|n| Node {
            name: n.name.clone(),
            kind: n.kind,
            ports: Vec::new(),
        })
        .collect();
    let mut ports = Vec::with_capacity(resolved.links.len());
    for (i, l) in resolved.links.iter().enumerate() {
        let name = format!(
            "{}->{}",
            nodes[l.from as usize].name, nodes[l.to as usize].name
        );
        nodes[l.from as usize].ports.push(i as u32);
        let env = QdiscEnv {
            link_rate_bps: l.rate_bps,
            port: name.clone(),
        };
        let link_rng = rng::stream(seed, &format!("link:{name}"));
        ports.push(Port {
            qdisc: l.queue.build(&env),
            device: DeviceQueue::new(l.device_queue),
            link: Link::new(l.rate_bps, &l.delay, l.loss.as_ref(), link_rng, &flow_id),
            rng: rng::stream(seed, &format!("qdisc:{name}")),
            name,
            from: l.from,
            to: l.to,
            busy_until: 0,
            tx_scheduled: false,
            monitor: l.monitor,
            timer_at: None,
            in_transit: 0,
            pass_bytes: 0,
            in_flight: Default::default(),
            stats: PortStats::default(),
            causes: Default::default(),
            waiting: Default::default(),
            any_waiting: false,
        });
    }
    let mut agents = build_agents(&resolved, &flows, &nodes, &ports, seed);
    let first_gateway_agent = agents.len() as u32;
    agents.extend(gateway_agents(
        &resolved,
        &flows,
        (&nodes, &ports),
        first_gateway_agent,
        seed,
    ));
    Ok(Simulation::new(SimParts {
        nodes,
        ports,
        agents,
        flows,
        end: resolved.end,
        sample_interval: resolved.sample_interval,
        trace_every_change: scenario.simulation.trace_every_change,
        window_start: resolved.window.0,
        window_stop: resolved.window.1,
        record_drops: scenario.simulation.record_drops,
        phase_edges: resolved.phase_edges.clone(),
        log_room: super::budget::log_room(scenario),
    }))
}

/// Data flows in declaration order, then the ACK flows of the sources that have them.
fn flow_table(r: &Resolved) -> Vec<FlowInfo> {
    let mut flows: Vec<FlowInfo> = r
        .flows
        .iter()
        .map(|f| FlowInfo {
            name: f.name.clone(),
            src: f.src,
            dst: f.dst,
            kind: f.source.kind().to_string(),
            role: FlowRole::Data,
            parent: None,
            start: f.start,
            stop: f.stop,
        })
        .collect();
    for (i, f) in r.flows.iter().enumerate() {
        if f.source.has_reverse_flow() {
            flows.push(FlowInfo {
                name: format!("{}.ack", f.name),
                src: f.dst,
                dst: f.src,
                kind: f.source.kind().to_string(),
                role: FlowRole::Ack,
                parent: Some(i as u32),
                start: f.start,
                stop: f.stop,
            });
        }
    }
    flows
}

fn first_hop_rate(nodes: &[Node], ports: &[Port], node: u32) -> u64 {
    nodes[node as usize]
        .ports
        .first()
        .map_or(0, |&p| ports[p as usize].link.rate_bps)
}

fn build_agents(
    r: &Resolved,
    flows: &[FlowInfo],
    nodes: &[Node],
    ports: &[Port],
    seed: u64,
) -> Vec<AgentSlot> {
    let mut agents = Vec::with_capacity(r.flows.len() * 2);
    let mut ack_of = vec![None; r.flows.len()];
    for (ack, x) in flows.iter().enumerate() {
        if let Some(parent) = x.parent {
            ack_of[parent as usize] = Some(ack as u32);
        }
    }
    for (i, f) in r.flows.iter().enumerate() {
        let ack_flow = ack_of[i];
        let env = SourceEnv {
            flow: i as u32,
            ack_flow,
            src_node: f.src,
            dst_node: f.dst,
            sender_agent: agents.len() as u32,
            receiver_agent: agents.len() as u32 + 1,
            first_hop_rate_bps: first_hop_rate(nodes, ports, f.src),
            start: f.start,
            stop: f.stop,
        };
        let (pools, proxies) = pools_of(f, &env, nodes, ports, seed);
        let (pair, extra) = f.source.build_pooled(&env, &pools);
        agents.push(AgentSlot {
            agent: pair.sender,
            node: f.src,
            rng: rng::stream(seed, &format!("flow:{}:sender", f.name)),
            flow: i as u32,
            start: f.start,
            stop: f.stop,
            first_hop_rate_bps: env.first_hop_rate_bps,
        });
        agents.push(AgentSlot {
            agent: pair.receiver,
            node: f.dst,
            rng: rng::stream(seed, &format!("flow:{}:receiver", f.name)),
            flow: ack_flow.unwrap_or(i as u32),
            start: f.start,
            stop: None,
            first_hop_rate_bps: first_hop_rate(nodes, ports, f.dst),
        });
        for (agent, (host, server)) in extra.into_iter().zip(proxies) {
            agents.push(AgentSlot {
                agent,
                node: host.node,
                rng: rng::stream(seed, &format!("flow:{}:pool:{}", f.name, agents.len())),
                flow: if server {
                    i as u32
                } else {
                    ack_flow.unwrap_or(i as u32)
                },
                start: f.start,
                stop: if server { f.stop } else { None },
                first_hop_rate_bps: host.first_hop_rate_bps,
            });
        }
    }
    agents
}

/// The pools of flow `f` with their agents' ids: the flow's own sender and receiver where a
/// pool host is its `src` or `dst` (first listing), else a new agent after the pair; also
/// the new agents' hosts (and whether each serves), in id order.
fn pools_of(
    f: &ResolvedFlow,
    env: &SourceEnv,
    nodes: &[Node],
    ports: &[Port],
    seed: u64,
) -> (Pools, Vec<(PoolHost, bool)>) {
    let mut next = env.receiver_agent + 1;
    let mut proxies = Vec::new();
    let mut side = |listed: &[u32], own: (u32, u32), server: bool| {
        let hosts = if listed.is_empty() {
            vec![own.0]
        } else {
            listed.to_vec()
        };
        let mut own_used = false;
        hosts
            .into_iter()
            .map(|node| {
                let first_hop_rate_bps = first_hop_rate(nodes, ports, node);
                if node == own.0 && !own_used {
                    own_used = true;
                    return PoolHost {
                        node,
                        agent: own.1,
                        first_hop_rate_bps,
                    };
                }
                let host = PoolHost {
                    node,
                    agent: next,
                    first_hop_rate_bps,
                };
                next += 1;
                proxies.push((host, server));
                host
            })
            .collect::<Vec<_>>()
    };
    let servers = side(&f.pools.servers, (f.src, env.sender_agent), true);
    let clients = side(&f.pools.clients, (f.dst, env.receiver_agent), false);
    let pools = Pools {
        servers,
        clients,
        client_rng: rng::stream(seed, &format!("flow:{}:clients", f.name)),
    };
    (pools, proxies)
}

/// The agent of each gateway node, after the flows' agents (the first gets id `first`); they
/// share one framing of multiplexed legs.
fn gateway_agents(
    r: &Resolved,
    flows: &[FlowInfo],
    (nodes, ports): (&[Node], &[Port]),
    first: u32,
    seed: u64,
) -> Vec<AgentSlot> {
    let map = tcp_flow_map(flows);
    let framing = Framing::default();
    let gateways: Vec<_> = r
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.kind == NodeKind::Gateway)
        .collect();
    let peer_named = |name: &str| {
        let k = gateways.iter().position(|(_, n)| n.name == name)?;
        Some(Peer {
            node: gateways[k].0 as u32,
            agent: first + k as u32,
        })
    };
    gateways
        .iter()
        .map(|&(i, n)| {
            let spec = n.gateway.clone().unwrap_or_default();
            let peer = spec.multiplex.as_ref().and_then(|m| peer_named(&m.peer));
            let (sample, framing) = (r.sample_interval, framing.clone());
            let agent = Gateway::with_peer(&n.name, spec, map.clone(), sample, framing, peer);
            AgentSlot {
                agent: Box::new(agent),
                node: i as u32,
                rng: rng::stream(seed, &format!("gateway:{}", n.name)),
                flow: 0,
                start: 0,
                stop: None,
                first_hop_rate_bps: first_hop_rate(nodes, ports, i as u32),
            }
        })
        .collect()
}

/// The TCP data flows and their ACK flows, which a gateway may split.
fn tcp_flow_map(flows: &[FlowInfo]) -> FlowMap {
    let mut map = FlowMap {
        ack_flow_of: vec![None; flows.len()],
        data_flow_of: vec![None; flows.len()],
        opens_with_syn: flows
            .iter()
            .map(|f| matches!(f.kind.as_str(), "web" | "http"))
            .collect(),
    };
    for (i, f) in flows.iter().enumerate() {
        // Web and HTTP workloads multiplex TCP connections on their flow (the packets' `conn`).
        let tcp = matches!(f.kind.as_str(), "tcp" | "web" | "http");
        if let (FlowRole::Ack, Some(data), true) = (f.role, f.parent, tcp) {
            map.ack_flow_of[data as usize] = Some(i as u32);
            map.data_flow_of[i] = Some(data);
        }
    }
    map
}
