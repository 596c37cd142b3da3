//! Semantic checks and name resolution: everything that serde's types cannot say.

use super::schema::{FlowSpec, LinkSpec, NodeSpec, Scenario};
use crate::config::error::{check, clipped, join, ScenarioError};
use crate::engine::{rng, secs, to_secs, Time};
use crate::net::link::{DelaySpec, LossSpec};
use crate::net::node::{Node, NodeKind};
use crate::net::routing::RoutingTable;
use crate::qdisc::QdiscSpec;
use crate::traffic::SourceSpec;
use std::collections::{HashMap, HashSet};

/// One direction of a link, with names resolved.
#[derive(Clone, Debug)]
pub struct ResolvedLink {
    pub path: String,
    pub from: u32,
    pub to: u32,
    pub rate_bps: u64,
    pub delay: DelaySpec,
    pub loss: Option<LossSpec>,
    pub queue: QdiscSpec,
    pub monitor: Option<u32>,
    pub device_queue: u64,
}

/// One flow, with `count` expanded and its start time drawn.
#[derive(Clone, Debug)]
pub struct ResolvedFlow {
    pub path: String,
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub start: Time,
    pub stop: Option<Time>,
    pub source: SourceSpec,
    /// Server and client hosts of a workload's pools (empty: the flow's own hosts).
    pub pools: super::pools::ResolvedPools,
}

/// A scenario with every name resolved to an index.
pub struct Resolved {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<ResolvedLink>,
    pub flows: Vec<ResolvedFlow>,
    pub end: Time,
    pub sample_interval: Option<Time>,
    pub window: (Time, Option<Time>),
    pub phase_edges: Vec<Time>,
}

/// Checks a scenario; the error names the first bad field.
pub fn validate(scenario: &Scenario) -> Result<(), ScenarioError> {
    if scenario.atm.is_some() {
        return super::atm::atm_config(scenario).map(|_| ());
    }
    resolve(scenario).map(|_| ())
}

/// The scenario with every name resolved; an error in a flow expanded from a schedule names
/// the entry as written.
pub fn resolve(s: &Scenario) -> Result<Resolved, ScenarioError> {
    resolve_expanded(s).map_err(|e| super::phases::entry_path(s, e))
}

fn resolve_expanded(s: &Scenario) -> Result<Resolved, ScenarioError> {
    check_scenario_name(s)?;
    let sim = &s.simulation;
    if sim.duration.0 == 0 {
        return Err(ScenarioError::new(
            "simulation.duration",
            "got 0, expected a positive duration",
        ));
    }
    let sample_interval = match sim.sample_interval {
        Some(d) if d.0 == 0 => {
            return Err(ScenarioError::new(
                "simulation.sample_interval",
                "got 0, expected a positive interval",
            ))
        }
        Some(d) => Some(d.0),
        None => Some((sim.duration.0 / 1000).max(1)),
    };
    let window = measurement_window(sim)?;
    let phase_edges = phase_edges(sim)?;
    super::budget::check_memory(s)?;
    let (node_specs, link_specs) = gather(s)?;
    let built = node_specs.len() - s.nodes.len(); // the topology's nodes come first
    let names = index_nodes(&node_specs, built)?;
    check_gateways(&node_specs, built)?;
    let flows_named = flow_names(&s.flows)?;
    let flow_set: HashSet<&str> = flows_named.iter().map(String::as_str).collect();
    let flow_exists = |name: &str| flow_set.contains(name);
    let links = resolve_links(&link_specs, &names, &flow_exists)?;
    super::timers::check_periods(&links, sim.duration.0)?;
    let flows = resolve_flows(s, &names, &node_specs, &links, flows_named)?;
    Ok(Resolved {
        nodes: node_specs,
        links,
        flows,
        end: sim.duration.0,
        sample_interval,
        window,
        phase_edges,
    })
}

/// `[simulation] phase_edges`: increasing, each inside (0, duration).
fn phase_edges(sim: &super::schema::SimulationSpec) -> Result<Vec<Time>, ScenarioError> {
    let mut previous = 0;
    for (i, edge) in sim.phase_edges.iter().enumerate() {
        if edge.0 <= previous || edge.0 >= sim.duration.0 {
            return Err(ScenarioError::new(
                format!("simulation.phase_edges[{i}]"),
                format!(
                    "got {} s, expected a time after {} s and before the duration ({} s)",
                    to_secs(edge.0),
                    to_secs(previous),
                    to_secs(sim.duration.0)
                ),
            ));
        }
        previous = edge.0;
    }
    Ok(sim.phase_edges.iter().map(|e| e.0).collect())
}

/// `[simulation] warmup` and `end`: warmup < end <= duration.
pub(crate) fn measurement_window(
    sim: &super::schema::SimulationSpec,
) -> Result<(Time, Option<Time>), ScenarioError> {
    let duration = sim.duration.0;
    let warmup = sim.warmup.map_or(0, |w| w.0);
    let end = sim.end.map(|e| e.0);
    if let Some(e) = end {
        if e > duration {
            return Err(ScenarioError::new(
                "simulation.end",
                format!(
                    "got {} s, expected at most the duration ({} s)",
                    to_secs(e),
                    to_secs(duration)
                ),
            ));
        }
    }
    let limit = end.unwrap_or(duration);
    if warmup >= limit {
        return Err(ScenarioError::new(
            "simulation.warmup",
            format!(
                "got {} s, expected less than the window's end ({} s)",
                to_secs(warmup),
                to_secs(limit)
            ),
        ));
    }
    Ok((warmup, end))
}

/// Links with the field path they were declared at.
type PathedLinks = Vec<(String, LinkSpec)>;

/// Topology-built nodes and links first, then the explicit ones.
fn gather(s: &Scenario) -> Result<(Vec<NodeSpec>, PathedLinks), ScenarioError> {
    let (mut nodes, mut links) = match &s.topology {
        Some(topology) => {
            let expanded = topology.expand(s.simulation.seed)?;
            (expanded.nodes, expanded.links)
        }
        None => (Vec::new(), Vec::new()),
    };
    nodes.extend(s.nodes.iter().cloned());
    links.extend(
        s.links
            .iter()
            .enumerate()
            .map(|(i, l)| (format!("links[{i}]"), l.clone())),
    );
    Ok((nodes, links))
}

/// The field path of `field` of node `i` of the gathered list, whose first `built` nodes the
/// topology made: `nodes[i - built].field` as the file numbers them, or `topology`.
fn node_field(i: usize, built: usize, field: &str) -> String {
    match i.checked_sub(built) {
        Some(declared) => format!("nodes[{declared}].{field}"),
        None => "topology".to_string(),
    }
}

fn index_nodes(nodes: &[NodeSpec], built: usize) -> Result<HashMap<String, u32>, ScenarioError> {
    let mut names = HashMap::with_capacity(nodes.len());
    // Only a name with a character past ASCII can print as another: without one, the exact
    // names are the looks, and a second table is not built (200,000 hosts of a dumbbell).
    let alike_possible = nodes.iter().any(|n| !n.name.is_ascii());
    let mut looks: HashMap<std::borrow::Cow<str>, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(expected) = name_problem(&n.name) {
            return Err(ScenarioError::new(
                node_field(i, built, "name"),
                format!("got {:?}, expected {expected}", clipped(&n.name)),
            ));
        }
        let taken = if alike_possible {
            looks.insert(check::look(&n.name), i)
        } else {
            names.get(&n.name).map(|&j| j as usize)
        };
        if let Some(taken) = taken {
            return Err(ScenarioError::new(
                node_field(i, built, "name"),
                check::taken_message(&n.name, &nodes[taken].name, "node"),
            ));
        }
        names.insert(n.name.clone(), i as u32);
    }
    Ok(names)
}

/// The scenario's `name`, printed atop every run's tables: none, or a label (as a flow's).
pub(super) fn check_scenario_name(s: &Scenario) -> Result<(), ScenarioError> {
    match check::label_problem(&s.name) {
        Some(expected) if !s.name.is_empty() => Err(ScenarioError::new(
            "name",
            format!("got {:?}, expected none or {expected}", clipped(&s.name)),
        )),
        _ => Ok(()),
    }
}

/// What a node name lacks, if anything: ports are named `from->to` and looked up by splitting
/// there and trimming, so a name with `->`, spaces at its ends or control characters would
/// name two ports alike or one that cannot be referred to.
fn name_problem(name: &str) -> Option<&'static str> {
    if name.contains("->") {
        Some("a name without \"->\" (ports are named from->to)")
    } else {
        check::label_problem(name)
    }
}

/// The index of node `name`; the error names `path` + `field` (joined only on failure, as
/// a 100,000-flow scenario looks up 400,000 names).
pub(super) fn lookup(
    names: &HashMap<String, u32>,
    path: &str,
    field: &str,
    name: &str,
) -> Result<u32, ScenarioError> {
    names.get(name).copied().ok_or_else(|| {
        let mut known: Vec<_> = names.keys().map(String::as_str).collect();
        known.sort_unstable();
        let shown = if known.len() > 12 {
            format!("{} ...", known[..12].join(", "))
        } else {
            known.join(", ")
        };
        ScenarioError::new(
            join(path, field),
            format!("got {name:?}, expected the name of a node ({shown})"),
        )
    })
}

fn resolve_links(
    specs: &[(String, LinkSpec)],
    names: &HashMap<String, u32>,
    flow_exists: &dyn Fn(&str) -> bool,
) -> Result<Vec<ResolvedLink>, ScenarioError> {
    let mut out: Vec<ResolvedLink> = Vec::with_capacity(specs.len() * 2);
    let mut monitors: Vec<(usize, String, String)> = Vec::new();
    for (path, l) in specs {
        let from = lookup(names, path, "from", &l.from)?;
        let to = lookup(names, path, "to", &l.to)?;
        if from == to {
            return Err(ScenarioError::new(
                join(path, "to"),
                format!("got {:?}, expected a node other than `from`", l.to),
            ));
        }
        l.delay.validate(&join(path, "delay"))?;
        if let Some(loss) = &l.loss {
            loss.validate(&join(path, "loss"), flow_exists)?;
        }
        l.queue.validate(&join(path, "queue"))?;
        if let Some(m) = &l.monitor {
            monitors.push((out.len(), join(path, "monitor"), m.clone()));
        }
        out.push(ResolvedLink {
            path: path.clone(),
            from,
            to,
            rate_bps: l.rate.bps(),
            delay: l.delay,
            loss: l.loss.clone(),
            queue: l.queue.clone(),
            monitor: None,
            device_queue: l.device_queue,
        });
        if !l.duplex && l.reverse.is_some() {
            return Err(ScenarioError::new(
                join(path, "reverse"),
                "got a table beside `duplex = false`, which makes no reverse link for it to \
                 set; expected `duplex = true` (the default) beside it, or no `reverse`",
            ));
        }
        if l.duplex {
            let r = l.reverse.clone().unwrap_or_default();
            let rpath = join(path, "reverse");
            if let Some(loss) = &r.loss {
                loss.validate(&join(&rpath, "loss"), flow_exists)?;
            }
            if let Some(q) = &r.queue {
                q.validate(&join(&rpath, "queue"))?;
            }
            if let Some(d) = &r.delay {
                d.validate(&join(&rpath, "delay"))?;
            }
            if let Some(m) = &r.monitor {
                monitors.push((out.len(), join(&rpath, "monitor"), m.clone()));
            }
            out.push(ResolvedLink {
                path: rpath,
                from: to,
                to: from,
                rate_bps: r.rate.unwrap_or(l.rate).bps(),
                delay: r.delay.unwrap_or(l.delay),
                loss: r.loss,
                queue: r.queue.unwrap_or_else(|| l.queue.clone()),
                monitor: None,
                device_queue: l.device_queue,
            });
        }
    }
    check_duplicates(&out, names)?;
    for (index, path, name) in monitors {
        out[index].monitor = Some(find_port(&out, names, &path, &name)?);
    }
    Ok(out)
}

fn node_name(names: &HashMap<String, u32>, id: u32) -> String {
    names
        .iter()
        .find(|(_, &v)| v == id)
        .map(|(k, _)| k.clone())
        .unwrap_or_default()
}

fn check_duplicates(
    links: &[ResolvedLink],
    names: &HashMap<String, u32>,
) -> Result<(), ScenarioError> {
    let mut seen = HashMap::with_capacity(links.len());
    for (i, l) in links.iter().enumerate() {
        if let Some(first) = seen.insert((l.from, l.to), i) {
            let first = &links[first].path;
            return Err(ScenarioError::new(
                l.path.clone(),
                format!(
                    "a second link {}->{}; expected one link per direction (the first is {first})",
                    node_name(names, l.from),
                    node_name(names, l.to)
                ),
            ));
        }
    }
    Ok(())
}

fn find_port(
    links: &[ResolvedLink],
    names: &HashMap<String, u32>,
    path: &str,
    port: &str,
) -> Result<u32, ScenarioError> {
    let expected =
        format!("got {port:?}, expected a port written \"from->to\" naming an existing link");
    let (a, b) = port
        .split_once("->")
        .ok_or_else(|| ScenarioError::new(path, expected.clone()))?;
    let (a, b) = (names.get(a.trim()), names.get(b.trim()));
    links
        .iter()
        .position(|l| Some(&l.from) == a && Some(&l.to) == b)
        .map(|i| i as u32)
        .ok_or_else(|| ScenarioError::new(path, expected))
}

fn expand_name(template: &str, i: u32) -> String {
    template.replace("{i}", &i.to_string())
}

fn flow_names(flows: &[FlowSpec]) -> Result<Vec<String>, ScenarioError> {
    let total: u64 = flows.iter().map(|f| f.count.unwrap_or(1) as u64).sum();
    let mut names: Vec<String> = Vec::with_capacity(total as usize);
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(total as usize);
    for (i, f) in flows.iter().enumerate() {
        let count = f.count.unwrap_or(1);
        if count == 0 {
            return Err(ScenarioError::new(
                format!("flows[{i}].count"),
                "got 0, expected at least 1",
            ));
        }
        for k in 0..count {
            let name = match (&f.name, f.count) {
                (Some(n), Some(_)) if n.contains("{i}") => expand_name(n, k),
                (Some(n), Some(_)) => format!("{n}{k}"),
                (Some(n), None) => n.clone(),
                (None, _) => format!("f{}", names.len()),
            };
            if let Some(expected) = check::label_problem(&name) {
                return Err(ScenarioError::new(
                    format!("flows[{i}].name"),
                    format!("got {:?}, expected {expected}", clipped(&name)),
                ));
            }
            if let Some(taken) = seen.insert(check::look(&name).into_owned(), names.len()) {
                return Err(ScenarioError::new(
                    format!("flows[{i}].name"),
                    check::taken_message(&name, &names[taken], "flow"),
                ));
            }
            names.push(name);
        }
    }
    Ok(names)
}

fn resolve_flows(
    s: &Scenario,
    names: &HashMap<String, u32>,
    nodes: &[NodeSpec],
    links: &[ResolvedLink],
    flow_names: Vec<String>,
) -> Result<Vec<ResolvedFlow>, ScenarioError> {
    let mut routes = routing_of(nodes, links);
    let end = s.simulation.duration;
    let mut out = Vec::with_capacity(flow_names.len());
    for (i, f) in s.flows.iter().enumerate() {
        let path = format!("flows[{i}]");
        f.source.validate(&join(&path, "source"))?;
        f.start.0 .0.validate(&join(&path, "start"))?;
        for k in 0..f.count.unwrap_or(1) {
            let name = flow_names[out.len()].clone();
            let src_name = expand_name(&f.src, k);
            let dst_name = expand_name(&f.dst, k);
            let src = lookup(names, &path, "src", &src_name)?;
            let dst = lookup(names, &path, "dst", &dst_name)?;
            for (field, id, nm) in [("src", src, &src_name), ("dst", dst, &dst_name)] {
                if nodes[id as usize].kind != NodeKind::Host {
                    return Err(ScenarioError::new(
                        join(&path, field),
                        format!(
                            "got {nm:?}, a {:?} node; expected a host",
                            nodes[id as usize].kind
                        ),
                    ));
                }
            }
            if src == dst {
                return Err(ScenarioError::new(
                    join(&path, "dst"),
                    format!("got {dst_name:?}, expected a host other than `src`"),
                ));
            }
            if !routes.reachable(src, dst) {
                return Err(ScenarioError::new(
                    join(&path, "dst"),
                    format!("got {dst_name:?}, but there is no route from {src_name:?} to it"),
                ));
            }
            if f.source.has_reverse_flow() && !routes.reachable(dst, src) {
                return Err(ScenarioError::new(
                    join(&path, "src"),
                    format!("no route back from {dst_name:?} to {src_name:?}, which the ACKs need"),
                ));
            }
            let mut r = rng::stream(s.simulation.seed, &format!("flow:{name}:start"));
            let start = secs(f.start.0 .0.sample(&mut r));
            if start >= end.0 {
                return Err(ScenarioError::new(
                    join(&path, "start"),
                    format!(
                        "got {} s, expected a time before the end of the simulation ({} s)",
                        crate::engine::to_secs(start),
                        end.secs()
                    ),
                ));
            }
            if let Some(stop) = f.stop {
                if stop.0 <= start {
                    return Err(ScenarioError::new(
                        join(&path, "stop"),
                        format!(
                            "got {} s, expected a time after the start ({} s)",
                            stop.secs(),
                            crate::engine::to_secs(start)
                        ),
                    ));
                }
            }
            let pool_cx = super::pools::PoolContext {
                names,
                nodes,
                path: &path,
            };
            let pools = super::pools::resolve_pools(&pool_cx, &f.source, (src, dst), &mut routes)?;
            out.push(ResolvedFlow {
                pools,
                path: path.clone(),
                name,
                src,
                dst,
                start,
                stop: f.stop.map(|d| d.0),
                source: f.source.clone(),
            });
        }
    }
    Ok(out)
}

/// Routing over resolved nodes and links, ports numbered in link order.
pub fn routing_of(nodes: &[NodeSpec], links: &[ResolvedLink]) -> RoutingTable {
    let mut net_nodes: Vec<Node> = nodes
        .iter()
        .map(|n| Node {
            name: n.name.clone(),
            kind: n.kind,
            ports: Vec::new(),
        })
        .collect();
    for (i, l) in links.iter().enumerate() {
        net_nodes[l.from as usize].ports.push(i as u32);
    }
    let port_to: Vec<u32> = links.iter().map(|l| l.to).collect();
    RoutingTable::compute(&net_nodes, &port_to)
}

/// A multiplexing gateway's peer is another gateway node.
fn check_multiplex_peer(
    nodes: &[NodeSpec],
    i: usize,
    spec: &crate::gateway::GatewaySpec,
    path: &str,
) -> Result<(), ScenarioError> {
    let Some(m) = &spec.multiplex else {
        return Ok(());
    };
    let peer = nodes.iter().position(|n| n.name == m.peer);
    match peer {
        Some(p) if p != i && nodes[p].kind == NodeKind::Gateway => Ok(()),
        _ => Err(ScenarioError::new(
            format!("{path}.multiplex.peer"),
            format!(
                "got {:?}, expected the name of another node of kind \"gateway\"",
                m.peer
            ),
        )),
    }
}

/// Gateway options belong to gateway nodes; each node's options must be valid.
fn check_gateways(nodes: &[NodeSpec], built: usize) -> Result<(), ScenarioError> {
    for (i, n) in nodes.iter().enumerate() {
        let path = node_field(i, built, "gateway");
        match (&n.gateway, n.kind) {
            (Some(spec), NodeKind::Gateway) => {
                spec.validate(&path)?;
                check_multiplex_peer(nodes, i, spec, &path)?;
            }
            (Some(_), kind) => {
                return Err(ScenarioError::new(
                    path,
                    format!("got gateway options on a {kind:?} node; expected kind = \"gateway\""),
                ))
            }
            (None, _) => {}
        }
    }
    Ok(())
}
