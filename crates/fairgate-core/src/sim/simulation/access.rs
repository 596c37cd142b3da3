//! What a built simulation shows and hands out: its counters, nodes, ports, flows, tables
//! and series, and the wrappers studies and tests put around a discipline or an agent before
//! the run.

use super::{FlowInfo, Simulation};
use crate::net::agent::Agent;
use crate::net::node::Node;
use crate::sim::port::Port;
use crate::stats::events::EventLog;
use crate::stats::series::{ClassSeries, FlowSeries, QueueSeries, VarSeries};
use crate::stats::FlowStats;

impl Simulation {
    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    /// Events still scheduled.
    pub fn events_pending(&self) -> usize {
        self.events.len()
    }

    /// Keeps the events beyond a horizon in a calendar instead of the event heap, overriding
    /// the choice [`Self::set_looks_ahead`] made (on with the lookahead). Where events wait
    /// never changes a result; tests and benchmarks compare the ways with this.
    pub fn set_uses_calendar(&mut self, on: bool) {
        self.events.use_calendar(on);
    }

    pub fn packet_hops(&self) -> u64 {
        self.packet_hops
    }

    pub fn arena_high_water(&self) -> usize {
        self.packets.capacity()
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    /// Replaces the discipline of the port named `name` ("a->b") by `wrap(old)`, before the
    /// run (studies that record a port's traffic wrap its discipline). False if no such port.
    pub fn wrap_qdisc(
        &mut self,
        name: &str,
        wrap: impl FnOnce(Box<dyn crate::qdisc::Qdisc>) -> Box<dyn crate::qdisc::Qdisc>,
    ) -> bool {
        let Some(port) = self.ports.iter_mut().find(|p| p.name == name) else {
            return false;
        };
        let placeholder = crate::qdisc::fifo::Fifo::new(Default::default(), false);
        let old = std::mem::replace(&mut port.qdisc, Box::new(placeholder));
        port.qdisc = wrap(old);
        self.sampler.touch_all();
        true
    }

    /// Replaces agent `index` by `wrap(old)` before the run (tests drive the engine with
    /// agents no scenario describes). False if there is no such agent.
    pub fn wrap_agent(
        &mut self,
        index: usize,
        wrap: impl FnOnce(Box<dyn Agent>) -> Box<dyn Agent>,
    ) -> bool {
        let Some(slot) = self.agents.get_mut(index) else {
            return false;
        };
        let placeholder: Box<dyn Agent> = Box::new(crate::traffic::sink::Sink);
        let old = std::mem::replace(&mut slot.agent, placeholder);
        slot.agent = wrap(old);
        self.sampler.touch_all();
        true
    }

    pub fn ports(&self) -> &[Port] {
        &self.ports
    }
    pub fn flows(&self) -> &[FlowInfo] {
        &self.flow_info
    }
    pub fn flow_stats(&self) -> &[FlowStats] {
        &self.flow_stats
    }
    pub fn queue_series(&self) -> &QueueSeries {
        &self.queue_series
    }
    pub fn flow_series(&self) -> &FlowSeries {
        &self.flow_series
    }
    /// Moves the per-class throughput series out.
    pub fn take_class_series(&mut self) -> ClassSeries {
        std::mem::take(&mut self.class_series)
    }
    pub fn qdisc_state(&self) -> &VarSeries {
        &self.qdisc_state
    }
    pub fn traces(&self) -> &VarSeries {
        &self.traces
    }
    /// Moves out the transfers the workloads finished so far.
    pub fn take_transfers(&mut self) -> crate::stats::transfers::TransferTable {
        let mut table = crate::stats::transfers::TransferTable::default();
        for slot in &mut self.agents {
            slot.agent.drain_transfers(&mut table);
        }
        self.sampler.touch_all();
        table
    }
    /// Moves out the recorded drop and mark events.
    pub fn take_drop_log(&mut self) -> EventLog {
        std::mem::take(&mut self.drop_log)
    }
    /// Moves the series out (for handing to Python without copying).
    pub fn take_series(&mut self) -> (QueueSeries, FlowSeries, VarSeries, VarSeries) {
        (
            std::mem::take(&mut self.queue_series),
            std::mem::take(&mut self.flow_series),
            std::mem::take(&mut self.qdisc_state),
            std::mem::take(&mut self.traces),
        )
    }
}
