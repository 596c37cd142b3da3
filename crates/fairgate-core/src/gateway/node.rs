//! The agent of a gateway node: it takes over the TCP packets crossing the node (data, SYN and
//! FIN going downstream; ACKs, SYN-ACKs and FIN-ACKs coming back), keeps one
//! [`SplitConnection`] per TCP connection (a flow, or one of the connections a web or HTTP
//! workload multiplexes on its flow), and lets every other packet (UDP, other protocols) be
//! routed as usual [Vaidyanathan99, §4.2]. At each sample it records, per flow (summed over its
//! connections), the occupancy the sources plot [Vaidyanathan99, §4.4; Byun07, §3] and checks
//! that no acknowledged byte was lost. A connection that has closed upstream (a FIN, or every
//! byte up to a FIN flag) and holds nothing more is retired: its cumulative counters stay in
//! its flow's totals, its state is freed and its slot reused.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use super::config::{GatewaySpec, PoolKind};
use super::flow_control::BufferFlowControl;
use super::legs::{LegsIn, LegsOut, LEG_TOKENS};
use super::mux::Framing;
use super::pool::{PoolShare, UserPool};
use super::split::{SlotId, SplitConnection, MAX_SLOTS};
use super::two_server::RateServer;
use crate::engine::Time;
use crate::net::{flags, Agent, AgentCtx, Packet, PacketKind};
use crate::transport::tcp::receiver::PROTO_TCP;

const SAMPLE: u64 = 0;
const SERVE: u64 = 1;
/// At most this many violations are kept (the first ones say what went wrong).
const MAX_VIOLATIONS: usize = 16;

/// The per-flow variables traced at each sample, prefixed by the gateway's name: levels summed
/// over the flow's open connections, and cumulative counts (see [`CUMULATIVE`]) that keep the
/// retired connections' share.
const TRACED: [&str; 10] = [
    "pep_buffer",
    "send_buffer",
    "unacked",
    "rhs_cwnd",
    "advertised_window",
    "relayed_bytes",
    "leg_retransmits",
    "leg_timeouts",
    "pep_limit",
    "fc_marks",
];
/// Which of [`TRACED`] are cumulative counts (the others are levels).
const CUMULATIVE: [usize; 4] = [5, 6, 7, 9];
/// The index of `pep_limit` in [`TRACED`] (NaN while the flow has no open connection).
const PEP_LIMIT: usize = 8;
/// How many of [`TRACED`] (from the first) are traced per connection.
const PER_CONNECTION: usize = 6;

/// Which flows the gateway may split: TCP data flows and their ACK flows.
#[derive(Clone, Debug, Default)]
pub struct FlowMap {
    /// Per flow id: the ACK flow of a TCP data flow.
    pub ack_flow_of: Vec<Option<u32>>,
    /// Per flow id: the data flow a TCP ACK flow answers.
    pub data_flow_of: Vec<Option<u32>>,
    /// Per flow id: whether its connections always open with a SYN (web and HTTP), so that a
    /// data segment of a connection the gateway does not hold belongs to one it retired and
    /// is routed as usual (absent = false: a data segment may open a connection).
    pub opens_with_syn: Vec<bool>,
}

pub struct Gateway {
    pub(super) name: String,
    pub(super) spec: GatewaySpec,
    pub(super) flows: FlowMap,
    /// Per (flow id, connection within the flow): its index in `conns`.
    pub(super) conn_of: HashMap<(u32, u32), u32>,
    /// Split connections by slot (timer tokens name them); `None` once retired.
    pub(super) conns: Vec<Option<SplitConnection>>,
    /// Slots of retired connections, reused by the next ones.
    free: Vec<usize>,
    /// Connections opened and retired so far, and those retired because their RHS gave up.
    opened: u64,
    retired_count: u64,
    abandoned: u64,
    /// Per flow that had a connection: the cumulative counters of its retired connections.
    retired: BTreeMap<u32, [f64; TRACED.len()]>,
    sample_interval: Option<Time>,
    trace_names: Vec<String>,
    pub(super) violations: Vec<String>,
    /// The IP subsystem of the two-server model, if configured.
    server: Option<RateServer>,
    /// With the two-server model, the (flow, connection) of every connection retired: what
    /// the IP subsystem serves for them is routed on and counted (see `docs/models/two_server.md`).
    retired_keys: Option<HashSet<(u32, u32)>>,
    /// The records of multiplexed legs (shared by the simulation's gateways).
    pub(super) framing: Framing,
    /// The legs this gateway multiplexes its connections onto, if configured.
    pub(super) legs_out: Option<LegsOut>,
    /// The legs other gateways multiplex onto this one.
    pub(super) legs_in: LegsIn,
    /// Per user (destination node), its PEP buffer pool, with `flow_control.pool = "user"`.
    pools: BTreeMap<u32, Arc<Mutex<UserPool>>>,
}

/// Where a multiplexing gateway's legs go: the peer gateway's node and agent.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    pub node: u32,
    pub agent: u32,
}

impl Gateway {
    pub fn new(name: &str, spec: GatewaySpec, flows: FlowMap, sample: Option<Time>) -> Self {
        Self::with_peer(name, spec, flows, sample, Framing::default(), None)
    }

    /// A gateway that shares `framing` with the others and, with `multiplex`, sends its legs
    /// to `peer`.
    pub fn with_peer(
        name: &str,
        spec: GatewaySpec,
        flows: FlowMap,
        sample: Option<Time>,
        framing: Framing,
        peer: Option<Peer>,
    ) -> Self {
        let legs_out = match (&spec.multiplex, peer) {
            (Some(m), Some(peer)) => Some(LegsOut::new(peer, m.assignment())),
            _ => None,
        };
        Gateway {
            trace_names: TRACED.iter().map(|v| format!("{name}.{v}")).collect(),
            name: name.to_string(),
            flows,
            conn_of: HashMap::new(),
            conns: Vec::new(),
            free: Vec::new(),
            opened: 0,
            retired_count: 0,
            abandoned: 0,
            retired: BTreeMap::new(),
            sample_interval: sample,
            violations: Vec::new(),
            server: spec.two_server.as_ref().map(|ts| RateServer::new(ts, name)),
            retired_keys: spec.two_server.as_ref().map(|_| HashSet::new()),
            spec,
            framing,
            legs_out,
            legs_in: LegsIn::default(),
            pools: BTreeMap::new(),
        }
    }

    /// The connections not yet retired.
    pub fn connections(&self) -> impl Iterator<Item = &SplitConnection> {
        self.conns.iter().flatten()
    }

    /// Connections opened and retired so far.
    pub fn split_counts(&self) -> (u64, u64) {
        (self.opened, self.retired_count)
    }

    /// Whether the TCP layer takes `p` over (a segment, or an answer for a split connection).
    fn splits(&self, p: &Packet) -> bool {
        p.proto == PROTO_TCP && (self.connection_for(p).is_some() || self.may_open(p))
    }

    /// Whether the connections of `flow` always open with a SYN and close with a FIN flag
    /// (web and HTTP workloads), as opposed to a plain `tcp` flow.
    pub(super) fn opens_with_syn(&self, flow: u32) -> bool {
        let opens = self.flows.opens_with_syn.get(flow as usize);
        opens.copied().unwrap_or(false)
    }

    /// Whether `p` may open a connection: a SYN, or a data segment of a flow whose
    /// connections may start without one, of a TCP data flow.
    fn may_open(&self, p: &Packet) -> bool {
        let flow = p.flow as usize;
        let first = match p.kind {
            PacketKind::Syn => true,
            PacketKind::Data => !self.opens_with_syn(p.flow),
            _ => false,
        };
        first
            && self
                .flows
                .ack_flow_of
                .get(flow)
                .is_some_and(|a| a.is_some())
    }

    /// The TCP layer's handling of a packet it takes over.
    fn process(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        let upstream = matches!(p.kind, PacketKind::Data | PacketKind::Syn | PacketKind::Fin);
        let conn = match self.connection_for(p) {
            Some(c) => c,
            None if self.may_open(p) => match self.open(p, ctx) {
                Some(c) => c,
                None => return,
            },
            None => return,
        };
        let spec = &self.spec;
        let Some(c) = self.conns[conn].as_mut() else {
            return;
        };
        if upstream {
            c.on_upstream(p, spec, ctx);
        } else {
            c.on_downstream(p, spec, ctx);
        }
        let fed_by = c.fed_by;
        self.write_to_leg(conn, ctx);
        self.wake_partners(conn, ctx);
        self.retire_if_finished(conn);
        self.after_fed(fed_by, ctx);
    }

    /// After a connection fed by receiving leg `fed_by` acted: the leg's window may have grown.
    fn after_fed(&mut self, fed_by: Option<u32>, ctx: &mut AgentCtx) {
        if let Some(leg) = fed_by {
            self.update_leg_window(leg as usize, ctx);
        }
    }

    /// Frees a connection that holds nothing more, keeping its counters in its flow's totals.
    pub(super) fn retire_if_finished(&mut self, index: usize) {
        let Some(c) = self.conns[index].as_ref().filter(|c| c.finished()) else {
            return;
        };
        if self.violations.len() < MAX_VIOLATIONS {
            let found = c.check(&self.name, self.spec.send_buffer);
            self.violations.extend(found);
        }
        let values = traced_values(c);
        self.abandoned += c.rhs_gave_up() as u64;
        let totals = self.retired.entry(c.flow).or_insert([0.0; TRACED.len()]);
        for i in CUMULATIVE {
            totals[i] += values[i];
        }
        self.conn_of.remove(&(c.flow, c.conn));
        if let Some(keys) = &mut self.retired_keys {
            keys.insert((c.flow, c.conn));
        }
        if let (Some(share), Some(out)) = (c.leg_share(), self.legs_out.as_mut()) {
            out.leave(share.leg, index);
        }
        if let Some(leg) = c.fed_by {
            self.unfeed_from_leg(leg as usize, index);
        }
        if let Some(mut c) = self.conns[index].take() {
            c.leave_pool();
        }
        self.free.push(index);
        self.retired_count += 1;
    }

    /// One service of the IP subsystem: the served packet goes to the TCP layer or on.
    fn serve(&mut self, ctx: &mut AgentCtx) {
        let Some(server) = &mut self.server else {
            return;
        };
        let (served, next) = server.serve(ctx.now, ctx.rng);
        if let Some(at) = next {
            ctx.set_timer(at, SERVE);
        }
        let Some(p) = served else {
            return;
        };
        if p.dst == ctx.node && p.has(flags::MUX_LEG) {
            return self.on_leg_packet(&p, ctx);
        }
        if self.splits(&p) {
            return self.process(&p, ctx);
        }
        let retired = self.retired_keys.as_ref().zip(self.connection_key(&p));
        if retired.is_some_and(|(keys, key)| keys.contains(&key)) {
            if let Some(server) = &mut self.server {
                server.stale_packets += 1;
            }
        }
        let mark = ctx.mark();
        ctx.send(p);
        ctx.edit_sent_since(mark, |q| {
            q.src = p.src;
            q.src_agent = p.src_agent;
            q.created = p.created;
        });
    }

    fn connection_for(&self, p: &Packet) -> Option<usize> {
        let key = self.connection_key(p)?;
        self.conn_of.get(&key).map(|&c| c as usize)
    }

    /// The (data flow, connection) a TCP packet would belong to: its own flow for a segment,
    /// the flow it answers for an ACK.
    fn connection_key(&self, p: &Packet) -> Option<(u32, u32)> {
        let flow = match p.kind {
            PacketKind::Data | PacketKind::Syn | PacketKind::Fin => p.flow,
            _ => (*self.flows.data_flow_of.get(p.flow as usize)?)?,
        };
        (p.proto == PROTO_TCP).then_some((flow, p.conn))
    }

    fn open(&mut self, p: &Packet, ctx: &mut AgentCtx) -> Option<usize> {
        let ack_flow = (*self.flows.ack_flow_of.get(p.flow as usize)?)?;
        let slot = self.next_slot()?;
        let leg = self.join_leg(slot.index, ack_flow, p, ctx);
        let mut conn = SplitConnection::open(&self.name, slot, ack_flow, p, &self.spec, leg, ctx);
        conn.fin_packet = p.kind == PacketKind::Syn && !self.opens_with_syn(p.flow);
        if let Some(fc) = self
            .spec
            .flow_control
            .as_ref()
            .filter(|fc| fc.pool == PoolKind::User)
        {
            let pool = self
                .pools
                .entry(p.dst)
                .or_insert_with(|| Arc::new(Mutex::new(UserPool::new(BufferFlowControl::new(fc)))));
            conn.share_pool(PoolShare::join(pool.clone(), slot.index));
        }
        self.register(conn);
        Some(slot.index)
    }

    /// After connection `index` acted: the other connections of its user's pool may offer a
    /// window that its falling holding has opened.
    fn wake_partners(&mut self, index: usize, ctx: &mut AgentCtx) {
        let partners = match self.conns.get(index) {
            Some(Some(c)) => c.pool_partners(),
            _ => return,
        };
        for m in partners {
            if let Some(Some(c)) = self.conns.get_mut(m) {
                c.update_window(&self.spec, ctx);
            }
        }
    }

    /// The slot of the next connection: a retired one's, else a new one (None, and a
    /// violation, beyond [`MAX_SLOTS`] connections open at once).
    pub(super) fn next_slot(&mut self) -> Option<SlotId> {
        let index = match self.free.pop() {
            Some(index) => index,
            None if self.conns.len() < MAX_SLOTS => self.conns.len(),
            None => {
                self.violations.push(format!(
                    "gateway {}: more than {MAX_SLOTS} connections open at once",
                    self.name
                ));
                return None;
            }
        };
        let serial = self.opened as u32;
        Some(SlotId { index, serial })
    }

    /// Adds a new connection in its slot.
    pub(super) fn register(&mut self, conn: SplitConnection) {
        let index = conn.slot.index;
        if let Some(keys) = &mut self.retired_keys {
            keys.remove(&(conn.flow, conn.conn));
        }
        self.conn_of.insert((conn.flow, conn.conn), index as u32);
        self.retired.entry(conn.flow).or_insert([0.0; TRACED.len()]);
        self.opened += 1;
        match self.conns.get_mut(index) {
            Some(slot) => *slot = Some(conn),
            None => self.conns.push(Some(conn)),
        }
    }

    fn sample_connections(&mut self, ctx: &mut AgentCtx) {
        if ctx.flows.is_empty() {
            // The gateway's totals are traced under flow 0; a run without flows has no flow 0
            // to own them (and nothing for the gateway to count).
            return;
        }
        let counts = [
            ("splits_opened", self.opened),
            ("splits_retired", self.retired_count),
            ("splits_abandoned", self.abandoned),
        ];
        for (var, value) in counts {
            ctx.trace(0, &format!("{}.{var}", self.name), value as f64);
        }
        if let Some(server) = &self.server {
            let served = [
                ("ip_buffer", server.len_bytes() as f64),
                ("ip_served_pkts", server.served_packets as f64),
                ("ip_served_bytes", server.served_bytes as f64),
                ("ip_dropped_pkts", server.dropped_packets as f64),
                ("tcp_stale_pkts", server.stale_packets as f64),
            ];
            for (var, value) in served {
                ctx.trace(0, &format!("{}.{var}", self.name), value);
            }
        }
        self.trace_legs(ctx);
        self.trace_leg_windows(ctx);
        self.trace_pools(ctx);
        let mut per_flow = self.retired.clone();
        let mut open_in = BTreeMap::new();
        for conn in self.conns.iter().flatten() {
            let sums = per_flow.entry(conn.flow).or_insert([0.0; TRACED.len()]);
            for (sum, value) in sums.iter_mut().zip(traced_values(conn)) {
                *sum += value;
            }
            *open_in.entry(conn.flow).or_insert(0) += 1;
            if self.violations.len() < MAX_VIOLATIONS {
                let found = conn.check(&self.name, self.spec.send_buffer);
                self.violations.extend(found);
            }
        }
        self.trace_each_connection(ctx);
        for (flow, mut values) in per_flow {
            if !open_in.contains_key(&flow) {
                values[PEP_LIMIT] = f64::NAN;
            }
            for (name, value) in self.trace_names.iter().zip(values) {
                ctx.trace(flow, name, value);
            }
        }
    }
}

impl Agent for Gateway {
    fn start(&mut self, ctx: &mut AgentCtx) {
        if self.sample_interval.is_some() {
            ctx.set_timer(ctx.now, SAMPLE);
        }
    }

    fn claims(&self, p: &Packet) -> bool {
        self.server.is_some() || self.splits(p)
    }

    fn on_packet(&mut self, p: &Packet, ctx: &mut AgentCtx) {
        match &mut self.server {
            Some(server) => {
                if let Some(at) = server.enqueue(*p, ctx.now, ctx.rng) {
                    ctx.set_timer(at, SERVE);
                }
            }
            None if p.dst == ctx.node && p.has(flags::MUX_LEG) => self.on_leg_packet(p, ctx),
            None => self.process(p, ctx),
        }
    }

    fn on_timer(&mut self, token: u64, ctx: &mut AgentCtx) {
        if token == SERVE {
            return self.serve(ctx);
        }
        if token == SAMPLE {
            self.sample_connections(ctx);
            if let Some(interval) = self.sample_interval {
                ctx.set_timer(ctx.now.saturating_add(interval), SAMPLE);
            }
            return;
        }
        if token & LEG_TOKENS != 0 {
            return self.on_leg_timer(token, ctx);
        }
        let (slot, local) = SlotId::of_token(token);
        if let Some(Some(c)) = self.conns.get_mut(slot.index) {
            if c.slot == slot {
                c.on_timer(local, &self.spec, ctx);
                let fed_by = c.fed_by;
                self.wake_partners(slot.index, ctx);
                self.retire_if_finished(slot.index);
                self.after_fed(fed_by, ctx);
            }
        }
    }

    fn violations(&self) -> Vec<String> {
        let now = self
            .connections()
            .filter_map(|c| c.check(&self.name, self.spec.send_buffer));
        let legs = self.leg_violations();
        self.violations
            .iter()
            .cloned()
            .chain(now)
            .chain(legs)
            .collect()
    }

    fn samples_nothing(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "gateway"
    }
}

impl Gateway {
    /// With `trace_connections = N`, per open connection among the first N opened, under its
    /// flow: `<gw>.conn<conn>.pep_buffer`, ... (the levels of [`TRACED`] and `relayed_bytes`).
    fn trace_each_connection(&self, ctx: &mut AgentCtx) {
        let first = self.spec.trace_connections as u64;
        let traced = self.conns.iter().flatten();
        for c in traced.filter(|c| (c.slot.serial as u64) < first) {
            let values = traced_values(c);
            for (var, value) in TRACED.iter().zip(values).take(PER_CONNECTION) {
                ctx.trace(
                    c.flow,
                    &format!("{}.conn{}.{var}", self.name, c.conn),
                    value,
                );
            }
        }
    }

    /// Per user pool, under flow 0: `<gw>.user<node>.pep_limit`, `.pep_buffer`, `.fc_marks`.
    fn trace_pools(&self, ctx: &mut AgentCtx) {
        for (user, pool) in &self.pools {
            let (limit, held, marks) = pool.lock().unwrap_or_else(|e| e.into_inner()).levels();
            let values = [
                ("pep_limit", limit),
                ("pep_buffer", held as f64),
                ("fc_marks", marks as f64),
            ];
            for (var, value) in values {
                ctx.trace(0, &format!("{}.user{user}.{var}", self.name), value);
            }
        }
    }
}

/// The values of [`TRACED`] for one connection (the pep_limit is NaN without flow control).
fn traced_values(conn: &SplitConnection) -> [f64; TRACED.len()] {
    let o = conn.occupancy();
    [
        o.held() as f64,
        o.unsent as f64,
        o.in_flight as f64,
        conn.rhs().map_or(0.0, |rhs| rhs.state().cwnd as f64),
        conn.advertised() as f64,
        o.accepted as f64,
        conn.leg.retransmits as f64,
        conn.leg.timeouts as f64,
        conn.flow_control().map_or(f64::NAN, |fc| fc.limit()),
        conn.flow_control().map_or(0.0, |fc| fc.marks() as f64),
    ]
}
