//! What a built simulation shows and hands out: its counters, nodes, ports, flows, tables
//! and series, and the wrappers studies and tests put around a discipline or an agent before
//! the run.

use super::{AgentSlot, FlowInfo, Simulation};
use crate::net::agent::Agent;
use crate::net::node::Node;
use crate::sim::port::Port;
use crate::stats::events::EventLog;
use crate::stats::sample_log::Series;
use crate::stats::series::{ClassSeries, FlowSeries, QueueSeries, VarSeries};
use crate::stats::FlowStats;
use std::cell::Ref;

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
        port.refresh_pass();
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

    /// The agents with where they live, in agent order.
    pub fn agents(&self) -> &[AgentSlot] {
        &self.agents
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
    /// The series of every sample taken so far (expanded from the log when read).
    fn series(&self) -> Ref<'_, Series> {
        // A series still borrowed was expanded when it was read, and nothing has been logged
        // since (that takes `&mut self`): there is nothing to expand then.
        if let Ok(mut series) = self.series.try_borrow_mut() {
            series.expanded();
        }
        self.series.borrow()
    }
    pub fn queue_series(&self) -> Ref<'_, QueueSeries> {
        Ref::map(self.series(), |s| &s.queue)
    }
    pub fn flow_series(&self) -> Ref<'_, FlowSeries> {
        Ref::map(self.series(), |s| &s.flows)
    }
    /// Moves the per-class throughput series out.
    pub fn take_class_series(&mut self) -> ClassSeries {
        std::mem::take(&mut self.series.get_mut().expanded().classes)
    }
    pub fn qdisc_state(&self) -> Ref<'_, VarSeries> {
        Ref::map(self.series(), |s| &s.state)
    }
    pub fn traces(&self) -> Ref<'_, VarSeries> {
        Ref::map(self.series(), |s| &s.traces)
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
        let s = self.series.get_mut().expanded();
        (
            std::mem::take(&mut s.queue),
            std::mem::take(&mut s.flows),
            std::mem::take(&mut s.state),
            std::mem::take(&mut s.traces),
        )
    }
}
