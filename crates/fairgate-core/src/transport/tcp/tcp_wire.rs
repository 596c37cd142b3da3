//! A two-host wire for packet-level TCP tests in the style of the ns-2 TCP test suite: one
//! sender and one receiver, a data path that serialises segments at `rate` and delays them by
//! `delay`, an ACK path with the same delay and no serialisation, and scripted losses (the
//! n-th transmission of a data segment, the n-th SYN, the n-th ACK) and reordering. Every
//! transmission is logged as a short line, so a test states the sequence it expects.

use super::config::TcpConfig;
use super::receiver::TcpReceiver;
use super::sender::{test_sender, TcpSender};
use crate::engine::{secs, to_secs, tx_time, Time};
use crate::net::{flags, Agent, Packet, PacketKind};
use crate::transport::testing::AgentHarness;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Sender,
    Receiver,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Deliver(Side, Packet),
    Timer(Side, u64),
}

pub struct Wire {
    pub sender: TcpSender,
    pub receiver: TcpReceiver,
    hs: AgentHarness,
    hr: AgentHarness,
    events: Vec<Event>,
    queue: BinaryHeap<Reverse<(Time, usize)>>,
    pub log: Vec<String>,
    mss: u64,
    rate_bps: u64,
    delay: Time,
    link_free: Time,
    /// Data segments to lose: segment number -> transmissions to lose (1 = the first only).
    lose_data: HashMap<u64, u32>,
    /// Indices (0-based) of ACKs to lose, and of SYNs to lose.
    lose_acks: Vec<usize>,
    lose_syns: Vec<usize>,
    acks_sent: usize,
    syns_sent: usize,
    /// Segment number held back by this extra delay on its first transmission.
    late: Option<(u64, Time)>,
    sent_data: HashMap<u64, u32>,
}

impl Wire {
    /// A wire with `rate_bps` on the data path and `delay_ms` each way; `config` is the TCP
    /// source's TOML body.
    pub fn new(config: &str, rate_bps: u64, delay_ms: f64) -> Self {
        let cfg: TcpConfig = toml::from_str(config).unwrap();
        let reply = super::receiver::Reply {
            ack_flow: 1,
            dst: 0,
            dst_agent: 0,
        };
        Wire {
            sender: test_sender(config),
            receiver: TcpReceiver::new(cfg.receiver_params(), reply),
            hs: AgentHarness::new(2),
            hr: AgentHarness::new(2),
            events: Vec::new(),
            queue: BinaryHeap::new(),
            log: Vec::new(),
            mss: cfg.mss,
            rate_bps,
            delay: secs(delay_ms / 1e3),
            link_free: 0,
            lose_data: HashMap::new(),
            lose_acks: Vec::new(),
            lose_syns: Vec::new(),
            acks_sent: 0,
            syns_sent: 0,
            late: None,
            sent_data: HashMap::new(),
        }
    }

    pub fn lose_segment(mut self, segment: u64, times: u32) -> Self {
        self.lose_data.insert(segment, times);
        self
    }

    pub fn lose_ack(mut self, index: usize) -> Self {
        self.lose_acks.push(index);
        self
    }

    pub fn lose_syn(mut self, index: usize) -> Self {
        self.lose_syns.push(index);
        self
    }

    pub fn delay_segment(mut self, segment: u64, extra_ms: f64) -> Self {
        self.late = Some((segment, secs(extra_ms / 1e3)));
        self
    }

    fn schedule(&mut self, at: Time, event: Event) {
        self.queue.push(Reverse((at, self.events.len())));
        self.events.push(event);
    }

    fn note(&mut self, now: Time, line: String) {
        self.log.push(format!("{:.3} {line}", to_secs(now) * 1e3));
    }

    /// Starts the sender and runs until `end_s` seconds or until nothing is left to do.
    pub fn run(&mut self, end_s: f64) -> &mut Self {
        let sent = self.hs.call(|ctx| self.sender.start(ctx));
        self.carry_from_sender(0, sent);
        let end = secs(end_s);
        while let Some(Reverse((at, index))) = self.queue.pop() {
            if at > end {
                break;
            }
            self.dispatch(at, self.events[index]);
        }
        self
    }

    fn dispatch(&mut self, at: Time, event: Event) {
        match event {
            Event::Deliver(Side::Receiver, p) => {
                self.hr.now = at;
                let sent = self.hr.call(|ctx| self.receiver.on_packet(&p, ctx));
                self.carry_from_receiver(at, sent);
            }
            Event::Deliver(Side::Sender, p) => {
                self.hs.now = at;
                let sent = self.hs.call(|ctx| self.sender.on_packet(&p, ctx));
                self.carry_from_sender(at, sent);
            }
            Event::Timer(Side::Receiver, token) => {
                self.hr.now = at;
                let sent = self.hr.call(|ctx| self.receiver.on_timer(token, ctx));
                self.carry_from_receiver(at, sent);
            }
            Event::Timer(Side::Sender, token) => {
                self.hs.now = at;
                let sent = self.hs.call(|ctx| self.sender.on_timer(token, ctx));
                self.carry_from_sender(at, sent);
            }
        }
    }

    fn take_timers(&mut self, side: Side) {
        let harness = match side {
            Side::Sender => &mut self.hs,
            Side::Receiver => &mut self.hr,
        };
        for (at, token) in std::mem::take(&mut harness.timers) {
            self.schedule(at, Event::Timer(side, token));
        }
    }

    fn carry_from_sender(&mut self, now: Time, sent: Vec<Packet>) {
        self.take_timers(Side::Sender);
        for p in sent {
            let (line, lost, extra) = self.classify_sent(&p);
            self.note(now, if lost { format!("{line} lost") } else { line });
            if lost {
                continue;
            }
            let departs = self.link_free.max(now) + tx_time(p.size, self.rate_bps);
            self.link_free = departs;
            self.schedule(
                departs + self.delay + extra,
                Event::Deliver(Side::Receiver, p),
            );
        }
    }

    /// The log line of a sender packet, whether it is lost and its extra delay.
    fn classify_sent(&mut self, p: &Packet) -> (String, bool, Time) {
        match p.kind {
            PacketKind::Data => {
                let segment = p.seq / self.mss;
                let count = self.sent_data.entry(segment).or_insert(0);
                *count += 1;
                let lost = self.lose_data.get(&segment).is_some_and(|&n| *count <= n);
                let extra = match self.late {
                    Some((s, extra)) if s == segment && *count == 1 => extra,
                    _ => 0,
                };
                let kind = if p.has(flags::RETX) { "retx" } else { "data" };
                (format!("{kind} {segment}"), lost, extra)
            }
            PacketKind::Syn => {
                let lost = self.lose_syns.contains(&self.syns_sent);
                self.syns_sent += 1;
                ("syn".to_string(), lost, 0)
            }
            other => (format!("{other:?}").to_lowercase(), false, 0),
        }
    }

    fn carry_from_receiver(&mut self, now: Time, sent: Vec<Packet>) {
        self.take_timers(Side::Receiver);
        for p in sent {
            let mut line = match p.kind {
                PacketKind::Ack => format!("ack {}", p.ack / self.mss),
                other => format!("{other:?}").to_lowercase(),
            };
            for &(a, b) in &p.sack[..p.sack_len as usize] {
                line += &format!(" [{}-{}]", a / self.mss, b / self.mss);
            }
            let lost = p.kind == PacketKind::Ack && self.lose_acks.contains(&self.acks_sent);
            if p.kind == PacketKind::Ack {
                self.acks_sent += 1;
            }
            self.note(now, if lost { format!("{line} lost") } else { line });
            if !lost {
                self.schedule(
                    now.saturating_add(self.delay),
                    Event::Deliver(Side::Sender, p),
                );
            }
        }
    }

    /// The sender's transmissions at or after `from_ms`, as "time kind segment" lines.
    pub fn sent_from(&self, from_ms: f64) -> Vec<String> {
        self.log
            .iter()
            .filter(|l| {
                let (t, what) = l.split_once(' ').unwrap();
                let from_receiver = ["ack", "synack", "finack"]
                    .iter()
                    .any(|r| what.starts_with(r));
                !from_receiver && t.parse::<f64>().unwrap() >= from_ms
            })
            .cloned()
            .collect()
    }

    /// Log lines whose text (after the time) starts with `prefix`.
    pub fn lines(&self, prefix: &str) -> Vec<String> {
        self.log
            .iter()
            .filter(|l| l.split_once(' ').unwrap().1.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// The sender's flow counters.
    pub fn stats(&self) -> &crate::stats::FlowStats {
        &self.hs.flows[0]
    }
}
