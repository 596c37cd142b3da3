//! Periodic samples at scale. The values every port and agent gave at the last sample stay in
//! dense arrays; a sample re-reads only the objects the engine has called into since (see
//! [`Touched`]) and the agents whose samples read state other agents change, and reuses the
//! rows of the rest, so a sample of 400,000 mostly idle ports is a pass over arrays instead of
//! a visit of every discipline behind its box. The series are the same as from re-reading
//! every object, which [`Simulation::sample_every_object`] does (the tests compare the two).

use super::touched::Touched;
use super::Simulation;
use crate::engine::prefetch::prefetch;
use crate::stats::series::{PortLevels, VarIndexCache, VarRows};

/// The hints run this many objects ahead in the list of those re-read: the object behind the
/// box this far, the record holding the box twice as far.
const AHEAD: usize = 16;

/// What a sample keeps between samples.
#[derive(Default)]
pub(super) struct Sampler {
    ports_touched: Touched,
    agents_touched: Touched,
    /// Agents whose `sample()` may change without a call into them: re-read every time.
    agents_shared: Touched,
    /// Agents whose `sample()` never gives a value: not visited after the first sample.
    agents_silent: Touched,
    every_object: bool,
    /// Each port's queue and counters at the last sample.
    ports: PortLevels,
    port_vars: VarRows,
    agent_vars: VarRows,
    /// Scratch: the indices re-read in this sample, and one agent's variables.
    fresh: Vec<u32>,
    values: Vec<(&'static str, f64)>,
}

impl Sampler {
    /// Nothing sampled yet: the first sample reads every object.
    pub(super) fn new(ports: usize, agents: usize) -> Self {
        let mut sampler = Sampler {
            ports_touched: Touched::new(ports),
            agents_touched: Touched::new(agents),
            agents_shared: Touched::new(agents),
            agents_silent: Touched::new(agents),
            ..Sampler::default()
        };
        sampler.touch_all();
        sampler
    }

    /// The engine called into the discipline of `port`.
    #[inline(always)]
    pub(super) fn port_called(&mut self, port: usize) {
        self.ports_touched.mark(port);
    }

    /// The engine called into `agent`.
    #[inline(always)]
    pub(super) fn agent_called(&mut self, agent: usize) {
        self.agents_touched.mark(agent);
    }

    /// Every object is re-read at the next sample (after a change from outside the run).
    pub(super) fn touch_all(&mut self) {
        self.ports_touched.mark_all();
        self.agents_touched.mark_all();
    }
}

/// Rebuilds `rows` for the objects `0..count` in order: `read` gives the rows of each object
/// in the ascending list `fresh`, the others keep theirs; `hint` gets the rest of the list from
/// each read on.
fn walk(
    count: usize,
    fresh: &[u32],
    rows: &mut VarRows,
    hint: impl Fn(&[u32]),
    mut read: impl FnMut(usize, &mut VarRows),
) {
    rows.begin();
    let mut kept_from = 0;
    for (k, &index) in fresh.iter().enumerate() {
        let index = index as usize;
        hint(&fresh[k..]);
        rows.keep(kept_from..index);
        read(index, rows);
        rows.close_object();
        kept_from = index + 1;
    }
    rows.keep(kept_from..count);
}

/// Moves the objects of `touched` (all of them with `every_object`) into `out`, ascending.
fn take_fresh(touched: &mut Touched, every_object: bool, out: &mut Vec<u32>) {
    if every_object {
        touched.mark_all();
    }
    touched.drain_into(out);
}

impl Simulation {
    /// Makes every sample re-read every port and agent instead of reusing the rows of those
    /// not called since the last (the same series, slower: a check of the reuse).
    pub fn sample_every_object(&mut self) {
        self.sampler.every_object = true;
    }

    /// Appends every port's row to the queue series and its discipline's variables to the
    /// state table, re-reading the ports touched since the last sample.
    pub(super) fn sample_ports(&mut self, t: f64) {
        let s = &mut self.sampler;
        let mut fresh = std::mem::take(&mut s.fresh);
        take_fresh(&mut s.ports_touched, s.every_object, &mut fresh);
        if s.ports.packets.len() != self.ports.len() {
            s.ports.resize(self.ports.len());
        }
        let ports = &self.ports;
        let hint = |ahead: &[u32]| {
            if let Some(&far) = ahead.get(2 * AHEAD) {
                let port = &ports[far as usize];
                prefetch(&port.qdisc);
                prefetch(&port.stats.arrivals_bytes);
                prefetch(&port.stats.departures_bytes);
            }
            if let Some(&near) = ahead.get(AHEAD) {
                ports[near as usize].qdisc.prefetch_sample();
            }
        };
        let state = &mut self.qdisc_state;
        let mut names = VarIndexCache::default();
        walk(ports.len(), &fresh, &mut s.port_vars, hint, |i, rows| {
            let port = &ports[i];
            let levels = &mut s.ports;
            levels.packets[i] = port.qdisc.len_packets() as u64;
            levels.bytes[i] = port.qdisc.len_bytes();
            levels.arrivals_bytes[i] = port.stats.arrivals_bytes;
            levels.departures_bytes[i] = port.stats.departures_bytes;
            for (k, (name, value)) in port.qdisc.state().into_iter().enumerate() {
                rows.push(i as u32, names.index(k, name, state), value);
            }
        });
        s.fresh = fresh;
        self.queue_series.push_levels(t, &s.ports);
        s.port_vars.append_to(t, state);
    }

    /// Appends every agent's variables to the trace table, re-reading the agents touched
    /// since the last sample and those whose samples read shared state, but none whose
    /// samples never give a value.
    pub(super) fn sample_agents(&mut self, t: f64) {
        let s = &mut self.sampler;
        s.agents_touched.add(&s.agents_shared);
        s.agents_touched.remove(&s.agents_silent);
        let mut fresh = std::mem::take(&mut s.fresh);
        take_fresh(&mut s.agents_touched, s.every_object, &mut fresh);
        let agents = &self.agents;
        let hint = |ahead: &[u32]| {
            if let Some(&far) = ahead.get(2 * AHEAD) {
                let slot = &agents[far as usize];
                prefetch(&slot.agent);
                prefetch(&slot.flow);
            }
            if let Some(&near) = ahead.get(AHEAD) {
                agents[near as usize].agent.prefetch_sample();
            }
        };
        let traces = &mut self.traces;
        let mut names = VarIndexCache::default();
        walk(agents.len(), &fresh, &mut s.agent_vars, hint, |i, rows| {
            let slot = &agents[i];
            slot.agent.sample(&mut s.values);
            let silent = slot.agent.samples_nothing();
            debug_assert!(
                !silent || s.values.is_empty(),
                "agent {i} gives samples but says it gives none"
            );
            for (k, (name, value)) in s.values.drain(..).enumerate() {
                rows.push(slot.flow, names.index(k, name, traces), value);
            }
            let shared = !silent && !slot.agent.sample_reads_only_self();
            s.agents_silent.set(i, silent);
            s.agents_shared.set(i, shared);
        });
        s.fresh = fresh;
        s.agent_vars.append_to(t, traces);
    }
}
