//! The connections of a request/response workload multiplexed on one agent pair: each object
//! is a request connection (client to server) and a response connection (server to client),
//! both the project's TCP driven through its public interface.
//!
//! Packets carry the object's connection id in `conn`; timers carry it in their token
//! (`id << 8 | endpoint << 4 | TCP's own token`). Ids are not reused before 2^32 objects, so a
//! stray packet or timer of a retired object finds no state and is ignored. Slots are reused,
//! so memory follows the number of open objects.

use super::conn_ledger::{ConnLedger, LegBytes};
use super::pool::{pick, Pools};
use super::SourceEnv;
use crate::engine::rng::Rng;
use crate::engine::Time;
use crate::net::Agent;
use crate::net::{flags, AgentCtx, Packet, PacketKind};
use crate::stats::transfers::{TransferRecord, TransferTable};
use crate::transport::app::AppSpec;
use crate::transport::tcp::config::TcpConfig;
use crate::transport::tcp::receiver::{Reply, TcpReceiver};
use crate::transport::tcp::sender::{Conn, TcpSender};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How an object's connections close (`fin` on web and HTTP flows; `docs/models/web.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fin {
    /// The FIN rides the last data segment of each direction as a flag: no extra packet, so
    /// the end points behave as without one, and a gateway can retire the connection.
    #[default]
    Piggybacked,
    /// No FIN (ns-2's one-way TCP): a gateway keeps the connection's state for the run.
    None,
}

impl Fin {
    pub fn is_default(&self) -> bool {
        *self == Fin::default()
    }
}

/// Which host an agent call happens on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Server,
    Client,
}

/// The four TCP end points of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Endpoint {
    RequestSender = 0,
    RequestReceiver = 1,
    ResponseSender = 2,
    ResponseReceiver = 3,
}

impl Endpoint {
    fn from_bits(bits: u64) -> Option<Endpoint> {
        Some(match bits {
            0 => Endpoint::RequestSender,
            1 => Endpoint::RequestReceiver,
            2 => Endpoint::ResponseSender,
            3 => Endpoint::ResponseReceiver,
            _ => return None,
        })
    }
}

/// One object being fetched.
pub struct ObjectConn {
    row: TransferRecord,
    /// Indices of its client and server in the pools.
    hosts: (u32, u32),
    request_tx: TcpSender,
    request_rx: TcpReceiver,
    response_tx: Option<TcpSender>,
    response_rx: TcpReceiver,
}

/// The open objects of a flow and the rows of the finished ones.
pub struct ConnTable {
    slots: Vec<Option<ObjectConn>>,
    free: Vec<usize>,
    index: HashMap<u32, usize>,
    next_id: u32,
    open: usize,
    request_tcp: TcpConfig,
    response_tcp: TcpConfig,
    request_size: u64,
    /// Whether finished objects become rows of the transfers table.
    record: bool,
    fin: Fin,
    /// The flow's own environment; each object's hosts come from the pools.
    env: SourceEnv,
    pools: Pools,
    finished: TransferTable,
    /// Byte-accounting violations of retired connections.
    ledger: ConnLedger,
}

impl ConnTable {
    /// Objects fetched with `tcp` (its `app` and `handshake` are set here), requests of
    /// `request_size` bytes, responses from a host of `pools.servers` to one of
    /// `pools.clients`, flows and timing from `env`; finished objects are recorded as
    /// transfers if `record`; connections close as `fin` says.
    pub fn new(
        tcp: &TcpConfig,
        request_size: u64,
        record: bool,
        fin: Fin,
        env: &SourceEnv,
        pools: &Pools,
    ) -> Self {
        let mut tcp = tcp.clone();
        tcp.app = AppSpec::Manual;
        tcp.handshake = true;
        ConnTable {
            slots: Vec::new(),
            free: Vec::new(),
            index: HashMap::new(),
            next_id: 1,
            open: 0,
            response_tcp: tcp.clone(),
            request_tcp: tcp,
            request_size,
            record,
            fin,
            env: env.clone(),
            pools: pools.clone(),
            finished: TransferTable::default(),
            ledger: ConnLedger::default(),
        }
    }

    /// A server of the pool drawn uniformly (no draw with one server).
    pub fn pick_server(&self, rng: &mut Rng) -> u32 {
        pick(self.pools.servers.len(), rng)
    }

    /// The clients of `n` sessions or slots, drawn once when the workload is built.
    pub fn assign_clients(&self, n: usize) -> Vec<u32> {
        self.pools.assign_clients(n)
    }

    /// The request's and the response's environment between client and server `hosts`.
    fn envs(&self, (client, server): (u32, u32)) -> (SourceEnv, SourceEnv) {
        let (c, s) = (
            self.pools.clients[client as usize],
            self.pools.servers[server as usize],
        );
        let response = SourceEnv {
            src_node: s.node,
            dst_node: c.node,
            sender_agent: s.agent,
            receiver_agent: c.agent,
            first_hop_rate_bps: s.first_hop_rate_bps,
            ..self.env.clone()
        };
        let request = SourceEnv {
            flow: self.env.ack_flow.unwrap_or(self.env.flow),
            ack_flow: Some(self.env.flow),
            src_node: c.node,
            dst_node: s.node,
            sender_agent: c.agent,
            receiver_agent: s.agent,
            first_hop_rate_bps: c.first_hop_rate_bps,
            ..self.env.clone()
        };
        (request, response)
    }

    pub fn open_count(&self) -> usize {
        self.open
    }

    pub fn finished_mut(&mut self) -> &mut TransferTable {
        &mut self.finished
    }

    pub fn slot_of(&self, conn: u32) -> Option<usize> {
        self.index.get(&conn).copied()
    }

    /// The slot and TCP token of a connection timer, if its object is still open.
    pub fn timer_target(&self, token: u64) -> Option<(usize, u64)> {
        let slot = self.slot_of((token >> 8) as u32)?;
        Some((slot, token & 0xff))
    }

    fn receiver(cfg: &TcpConfig, env: &SourceEnv) -> TcpReceiver {
        let reply = Reply {
            ack_flow: env.ack_flow.unwrap_or(env.flow),
            dst: env.src_node,
            dst_agent: env.sender_agent,
        };
        TcpReceiver::new(cfg.receiver_params(), reply)
    }

    fn allocate_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.checked_add(1).unwrap_or(1);
        id
    }

    /// Opens an object of `bytes` for `session` between client and server `hosts` (pool
    /// indices; a call on the client's host).
    pub fn open(
        &mut self,
        session: u32,
        page: u64,
        bytes: u64,
        hosts: (u32, u32),
        ctx: &mut AgentCtx,
    ) {
        let id = self.allocate_id();
        let (request_env, response_env) = self.envs(hosts);
        let row = TransferRecord {
            flow: self.env.flow,
            conn: id,
            session,
            page,
            client: response_env.dst_node,
            server: response_env.src_node,
            bytes,
            requested: ctx.now,
            first_byte: None,
            last_byte: None,
            completed: None,
            retransmits: 0,
            timeouts: 0,
            aborted: false,
        };
        let object = ObjectConn {
            row,
            hosts,
            request_tx: TcpSender::new(&self.request_tcp, &request_env),
            request_rx: Self::receiver(&self.request_tcp, &request_env),
            response_tx: None,
            response_rx: Self::receiver(&self.response_tcp, &response_env),
        };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(object);
                slot
            }
            None => {
                self.slots.push(Some(object));
                self.slots.len() - 1
            }
        };
        self.index.insert(id, slot);
        self.open += 1;
        let request_size = self.request_size;
        let (flows, fin) = (self.flows(), self.fin);
        let o = self.slots[slot].as_mut().expect("just filled");
        tagged(o, Endpoint::RequestSender, flows, fin, ctx, |o, ctx| {
            o.request_tx.start(ctx);
            o.request_tx.submit(request_size, ctx);
        });
    }

    fn flows(&self) -> (u32, u32) {
        (self.env.flow, self.env.ack_flow.unwrap_or(self.env.flow))
    }

    /// A packet of the object in `slot` arrived on `side`; returns the session whose object
    /// the client now holds whole, if this packet completed it.
    pub fn deliver(
        &mut self,
        slot: usize,
        side: Side,
        p: &Packet,
        ctx: &mut AgentCtx,
    ) -> Option<u32> {
        let to_receiver = matches!(p.kind, PacketKind::Data | PacketKind::Syn | PacketKind::Fin);
        let endpoint = match (side, to_receiver) {
            (Side::Server, true) => Endpoint::RequestReceiver,
            (Side::Server, false) => Endpoint::ResponseSender,
            (Side::Client, true) => Endpoint::ResponseReceiver,
            (Side::Client, false) => Endpoint::RequestSender,
        };
        self.drive(slot, endpoint, ctx, |e, ctx| e.on_packet(p, ctx))
    }

    /// A timer of the object in `slot` fired with TCP token `inner`.
    pub fn fire(&mut self, slot: usize, inner: u64, ctx: &mut AgentCtx) -> Option<u32> {
        let endpoint = Endpoint::from_bits(inner >> 4)?;
        self.drive(slot, endpoint, ctx, |e, ctx| e.on_timer(inner & 0xf, ctx))
    }

    fn drive(
        &mut self,
        slot: usize,
        endpoint: Endpoint,
        ctx: &mut AgentCtx,
        f: impl FnOnce(&mut dyn Agent, &mut AgentCtx),
    ) -> Option<u32> {
        let (flows, fin) = (self.flows(), self.fin);
        let o = self.slots[slot].as_mut()?;
        tagged(o, endpoint, flows, fin, ctx, |o, ctx| match endpoint {
            Endpoint::RequestSender => f(&mut o.request_tx, ctx),
            Endpoint::RequestReceiver => f(&mut o.request_rx, ctx),
            Endpoint::ResponseSender => {
                if let Some(tx) = o.response_tx.as_mut() {
                    f(tx, ctx)
                }
            }
            Endpoint::ResponseReceiver => f(&mut o.response_rx, ctx),
        });
        let request_whole = o.request_rx.rcv_nxt() >= self.request_size;
        if endpoint == Endpoint::RequestReceiver && o.response_tx.is_none() && request_whole {
            let hosts = o.hosts;
            let (_, response_env) = self.envs(hosts);
            let o = self.slots[slot].as_mut().expect("open");
            o.response_tx = Some(TcpSender::new(&self.response_tcp, &response_env));
            let bytes = o.row.bytes;
            tagged(o, Endpoint::ResponseSender, flows, fin, ctx, |o, ctx| {
                let tx = o.response_tx.as_mut().expect("just made");
                tx.start(ctx);
                tx.submit(bytes, ctx);
            });
        }
        let o = self.slots[slot].as_mut().expect("open");
        o.note_progress(ctx.now)
    }

    /// Retires the object in `slot` once the request and the response are acknowledged
    /// whole and the client holds the response and has acknowledged it (no FIN exchange, as
    /// ns-2's one-way TCP), or once one of its connections aborted. The client's last ACK
    /// matters behind a split-connection gateway, which acknowledges the server long before
    /// the client has everything; end to end, the server's completion implies it.
    pub fn retire_if_done(&mut self, slot: usize) {
        let Some(o) = self.slots[slot].as_ref() else {
            return;
        };
        let request_done = o
            .request_tx
            .transfers()
            .iter()
            .all(|t| t.completed.is_some());
        let response_acked = o.row.last_byte.is_some() && !o.response_rx.ack_pending();
        let done = request_done && o.row.completed.is_some() && response_acked;
        if !(done || o.row.aborted) {
            return;
        }
        let closed = done && !o.row.aborted;
        self.ledger
            .check(self.env.flow, o.row.conn, o.legs(), closed);
        let o = self.slots[slot].take().expect("checked");
        self.index.remove(&o.row.conn);
        self.free.push(slot);
        self.open -= 1;
        if self.record {
            self.finished.push(o.row);
        }
    }
}

impl ConnTable {
    /// Broken byte-accounting laws: of the retired connections, and of the open ones now.
    pub fn violations(&self) -> Vec<String> {
        let mut now = ConnLedger::default();
        for o in self.slots.iter().flatten() {
            now.check(self.env.flow, o.row.conn, o.legs(), false);
        }
        let mut out = self.ledger.sentences();
        out.extend(now.sentences());
        out
    }
}

impl ObjectConn {
    /// The byte counts of the request and of the response.
    fn legs(&self) -> [(&'static str, LegBytes); 2] {
        [
            (
                "request",
                LegBytes::of(Some(&self.request_tx), &self.request_rx),
            ),
            (
                "response",
                LegBytes::of(self.response_tx.as_ref(), &self.response_rx),
            ),
        ]
    }

    /// Records first byte, last byte, completion and abortion; returns the session when the
    /// client has just received the last byte, or the object was just given up unreceived.
    fn note_progress(&mut self, now: Time) -> Option<u32> {
        let received = self.note_bytes(now);
        // Without a FIN exchange a sender is closed only when it aborted.
        let aborted = self.request_tx.conn() == Conn::Closed
            || self
                .response_tx
                .as_ref()
                .is_some_and(|t| t.conn() == Conn::Closed);
        if aborted && !self.row.aborted {
            self.row.aborted = true;
            if self.row.last_byte.is_none() {
                return Some(self.row.session);
            }
        }
        received
    }

    fn note_bytes(&mut self, now: Time) -> Option<u32> {
        let held = self.response_rx.rcv_nxt();
        if held > 0 && self.row.first_byte.is_none() {
            self.row.first_byte = Some(now);
        }
        if let Some(tx) = &self.response_tx {
            if self.row.completed.is_none() {
                self.row.completed = tx.transfers().first().and_then(|t| t.completed);
            }
        }
        if held >= self.row.bytes && self.row.last_byte.is_none() {
            self.row.last_byte = Some(now);
            return Some(self.row.session);
        }
        None
    }
}

/// Runs `f` on an object's end point and labels what it did with the object's id: the
/// packets it sent (and, with a piggybacked `fin`, a sender's last data segment), the timers
/// it set, and the retransmissions and timeouts it counted.
fn tagged(
    o: &mut ObjectConn,
    endpoint: Endpoint,
    (data_flow, reverse_flow): (u32, u32),
    fin: Fin,
    ctx: &mut AgentCtx,
    f: impl FnOnce(&mut ObjectConn, &mut AgentCtx),
) {
    let losses = |ctx: &AgentCtx| {
        let (d, r) = (
            &ctx.flows[data_flow as usize],
            &ctx.flows[reverse_flow as usize],
        );
        (d.retransmits + r.retransmits, d.timeouts + r.timeouts)
    };
    let (retx_before, timeouts_before) = losses(ctx);
    let sent_before = ctx.effects.outbox.len();
    let timers_before = ctx.effects.timers.len();
    f(o, ctx);
    let id = o.row.conn;
    let last_byte = match (endpoint, fin) {
        (_, Fin::None) => None,
        (Endpoint::RequestSender, _) => Some(o.request_tx.state().app_end),
        (Endpoint::ResponseSender, _) => o.response_tx.as_ref().map(|t| t.state().app_end),
        _ => None,
    };
    for &packet in &ctx.effects.outbox[sent_before..] {
        let p = ctx.packets.get_mut(packet);
        p.conn = id;
        if p.kind == PacketKind::Data && Some(p.seq + p.aux) == last_byte {
            p.set(flags::FIN);
        }
    }
    for timer in &mut ctx.effects.timers[timers_before..] {
        timer.1 |= (id as u64) << 8 | (endpoint as u64) << 4;
    }
    let (retx, timeouts) = losses(ctx);
    o.row.retransmits += retx - retx_before;
    o.row.timeouts += timeouts - timeouts_before;
}
