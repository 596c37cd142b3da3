//! A split connection alone: conservation of acknowledged bytes, the FIN it relays, its
//! timer tokens and the RHS trace.

use super::*;
use crate::transport::testing::AgentHarness;

const SLOT: SlotId = SlotId {
    index: 0,
    serial: 0,
};

fn data(seq: u64) -> Packet {
    Packet {
        flow: 0,
        src: 5,
        src_agent: 7,
        dst: 9,
        dst_agent: 11,
        kind: PacketKind::Data,
        seq,
        aux: 1000,
        size: 1040,
        ..Default::default()
    }
}

fn ack(ack: u64) -> Packet {
    Packet {
        flow: 1,
        kind: PacketKind::Ack,
        ack,
        aux: 65_535,
        ..Default::default()
    }
}

#[test]
fn bytes_acknowledged_upstream_are_delivered_in_flight_or_held() {
    // One upstream ACK per segment (no delayed ACKs), as the counts below assume.
    let body = "lhs = { delayed_ack = false }\nrhs = { initial_window = 1 }";
    let spec: GatewaySpec = toml::from_str(body).unwrap();
    let mut h = AgentHarness::new(2);
    let mut conn = None;
    let sent = h.call(|ctx| {
        let mut c = SplitConnection::open("gw", SLOT, 1, &data(0), &spec, None, ctx);
        c.on_upstream(&data(0), &spec, ctx);
        c.on_upstream(&data(1000), &spec, ctx);
        conn = Some(c);
    });
    let mut c = conn.unwrap();
    // Upstream ACKs go back to the source with the LHS window; one segment goes on.
    let acks: Vec<_> = sent.iter().filter(|p| p.kind == PacketKind::Ack).collect();
    assert_eq!(
        (acks.len(), acks[1].ack, acks[1].dst, acks[1].dst_agent),
        (2, 2000, 5, 7)
    );
    let relayed: Vec<_> = sent.iter().filter(|p| p.kind == PacketKind::Data).collect();
    assert_eq!(
        (relayed.len(), relayed[0].dst, relayed[0].dst_agent),
        (1, 9, 11)
    );
    let o = c.occupancy();
    assert_eq!(
        (o.accepted, o.delivered, o.in_flight, o.unsent),
        (2000, 0, 1000, 1000)
    );
    assert_eq!(
        h.flows[0].goodput_bytes, 0,
        "the gateway is not the destination"
    );
    assert_eq!(c.check("gw", None), None);
    assert!(c
        .check("gw", Some(500))
        .unwrap()
        .contains("above its limit"));
    h.call(|ctx| c.on_downstream(&ack(1000), &spec, ctx));
    let o = c.occupancy();
    assert_eq!((o.delivered, o.in_flight, o.unsent), (1000, 1000, 0));
    // A byte acknowledged upstream and not handed on is a violation.
    c.accepted += 1;
    assert!(c.check("gw", None).unwrap().contains("ACKed upstream"));
}

#[test]
fn a_fin_flag_closes_the_upstream_side_and_rides_the_relayed_last_segment() {
    // Delayed ACKs would hold the ACK of a lone segment; the FIN is acknowledged at once.
    let spec: GatewaySpec = toml::from_str("lhs = { delayed_ack = true }").unwrap();
    let mut only = data(0);
    only.set(flags::FIN);
    let mut h = AgentHarness::new(2);
    let mut conn = None;
    let sent = h.call(|ctx| {
        let mut c = SplitConnection::open("gw", SLOT, 1, &only, &spec, None, ctx);
        c.on_upstream(&only, &spec, ctx);
        conn = Some(c);
    });
    let mut c = conn.unwrap();
    let acks: Vec<_> = sent.iter().filter(|p| p.kind == PacketKind::Ack).collect();
    assert_eq!((acks.len(), acks[0].ack), (1, 1000));
    let relayed: Vec<_> = sent.iter().filter(|p| p.kind == PacketKind::Data).collect();
    assert_eq!(relayed.len(), 1);
    assert!(relayed[0].has(flags::FIN) && relayed[0].seq + relayed[0].aux == 1000);
    assert!(!c.finished(), "the relayed bytes are not yet acknowledged");
    h.call(|ctx| c.on_downstream(&ack(1000), &spec, ctx));
    assert!(c.finished());
}

#[test]
fn a_timer_token_names_its_slot_and_serial() {
    let slot = SlotId {
        index: MAX_SLOTS - 1,
        serial: u32::MAX,
    };
    let token = slot.tokens() | LHS_TIMER | 3;
    assert_eq!(SlotId::of_token(token), (slot, LHS_TIMER | 3));
    assert_eq!(token >> 61, 0, "clear of the legs' token bits");
}

#[test]
fn the_rhs_traces_its_cwnd_apart_from_the_end_to_end_flow() {
    let spec: GatewaySpec = toml::from_str("rhs = { initial_window = 1 }").unwrap();
    let mut h = AgentHarness::new(2);
    let mut conn = None;
    h.call(|ctx| {
        let mut c = SplitConnection::open("gw", SLOT, 1, &data(0), &spec, None, ctx);
        c.on_upstream(&data(0), &spec, ctx);
        c.on_upstream(&data(1000), &spec, ctx);
        conn = Some(c);
    });
    let mut c = conn.unwrap();
    h.call(|ctx| c.on_downstream(&ack(1000), &spec, ctx));
    let names: Vec<&str> = h
        .traces
        .var
        .iter()
        .map(|&v| h.traces.names[v as usize].as_str())
        .collect();
    assert!(names.contains(&"gw.rhs_cwnd"), "{names:?}");
    assert!(
        !names.contains(&"cwnd"),
        "the flow's own cwnd series stays the source's: {names:?}"
    );
    let last = h.traces.value[names.iter().rposition(|n| *n == "gw.rhs_cwnd").unwrap()];
    assert_eq!(last, c.rhs().unwrap().state().cwnd as f64);
}
