//! The receiver of open-loop traffic: counts every arriving byte as goodput.

use crate::net::{Agent, AgentCtx, Packet};

pub struct Sink;

impl Agent for Sink {
    fn on_packet(&mut self, packet: &Packet, ctx: &mut AgentCtx) {
        ctx.goodput(packet.flow, packet.size as u64);
    }
    fn samples_nothing(&self) -> bool {
        true
    }

    fn name(&self) -> &'static str {
        "sink"
    }
}
