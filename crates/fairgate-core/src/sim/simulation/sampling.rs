//! Periodic samples at scale. A sample re-reads only the ports and agents the engine has
//! called into since the previous one (see [`Touched`]), the agents whose samples read state
//! other agents change, and the flows whose counters were written
//! ([`crate::stats::flow_counters::FlowCounters`]), and logs their rows ([`SampleLog`]); the dense
//! series, with the rows of the objects not re-read carried forward, are built from the log
//! when they are asked for. They are the same as from re-reading every object, which
//! [`Simulation::sample_every_object`] does (the tests compare the two).

use super::Simulation;
use crate::engine::prefetch::prefetch;
use crate::sim::port::Port;
use crate::stats::sample_log::{FlowRow, PortRow};
use crate::stats::series::VarIndexCache;
use crate::stats::touched::Touched;

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
    /// Scratch: the indices re-read in this sample, and one agent's variables.
    fresh: Vec<u32>,
    values: Vec<(&'static str, f64)>,
}

impl Sampler {
    /// Nothing sampled yet: the first sample reads every object (but the ports found reading
    /// as zero after their discipline's `init`, [`Sampler::port_reads_as_zero`]).
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

    /// `port` reads as zero (see [`reads_as_zero`]) until the engine calls into it: a sample
    /// need not log it, as a port never logged expands to zero rows.
    pub(super) fn port_reads_as_zero(&mut self, port: usize) {
        self.ports_touched.unmark(port);
    }

    /// Every object is re-read at the next sample (after a change from outside the run).
    pub(super) fn touch_all(&mut self) {
        self.ports_touched.mark_all();
        self.agents_touched.mark_all();
    }
}

/// The queue and counters a sample logs for `port`.
fn port_row(port: &Port) -> PortRow {
    let (packets, bytes) = port.queue_lengths();
    PortRow {
        packets: packets as u64,
        bytes,
        arrivals_bytes: port.stats.arrivals_bytes,
        departures_bytes: port.stats.departures_bytes,
    }
}

/// Whether a sample of `port` would log only zeros: an empty queue, no traffic counted and a
/// discipline without variables.
pub(super) fn reads_as_zero(port: &Port) -> bool {
    port_row(port) == PortRow::default() && port.qdisc.state().is_empty()
}

/// Calls `read` on each object of the ascending list `fresh`; `hint` gets the rest of the
/// list from each read on.
fn walk(fresh: &[u32], hint: impl Fn(&[u32]), mut read: impl FnMut(usize)) {
    for (k, &index) in fresh.iter().enumerate() {
        hint(&fresh[k..]);
        read(index as usize);
    }
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

    /// Logs the sample at `t` of the ports, flows and agents changed since the last one.
    pub(super) fn log_sample(&mut self, t: f64) {
        let counts = [self.ports.len(), self.agents.len(), self.flow_stats.len()];
        let to_come = self.samples_to_come();
        if self.now == 0 {
            self.series
                .get_mut()
                .log
                .reserve_objects(counts, 1 + to_come);
        }
        self.sample_ports();
        self.sample_flows();
        self.sample_agents();
        let series = self.series.get_mut();
        series.log.end_sample(t, counts, series.traces.len());
        if self.now == 0 {
            series.log.reserve_samples(to_come);
        }
    }

    /// How many samples the run takes after this one.
    fn samples_to_come(&self) -> usize {
        self.sample_interval
            .map_or(0, |interval| ((self.end - self.now) / interval) as usize)
    }

    /// Logs the queue, counters and discipline variables of the ports touched since the last
    /// sample.
    fn sample_ports(&mut self) {
        let s = &mut self.sampler;
        let mut fresh = std::mem::take(&mut s.fresh);
        take_fresh(&mut s.ports_touched, s.every_object, &mut fresh);
        let ports = &self.ports;
        let hint = |ahead: &[u32]| {
            if let Some(&far) = ahead.get(2 * AHEAD) {
                let port = &ports[far as usize];
                prefetch(&port.qdisc);
                prefetch(&port.stats.arrivals_bytes);
                prefetch(&port.stats.departures_bytes);
            }
            if let Some(&near) = ahead.get(AHEAD) {
                let port = &ports[near as usize];
                if !port.lets_arrivals_pass() {
                    port.qdisc.prefetch_sample();
                }
            }
        };
        let series = self.series.get_mut();
        let (state, log) = (&mut series.state, &mut series.log);
        let mut names = VarIndexCache::default();
        walk(&fresh, hint, |i| {
            let port = &ports[i];
            log.open_port(i, port_row(port));
            for (k, (name, value)) in port.qdisc.state().into_iter().enumerate() {
                log.port_var(i as u32, names.index(k, name, state), value);
            }
            log.close_port();
        });
        s.fresh = fresh;
    }

    /// Logs the counters of the flows written since the last sample.
    fn sample_flows(&mut self) {
        let s = &mut self.sampler;
        let mut fresh = std::mem::take(&mut s.fresh);
        self.flow_stats.drain_written(s.every_object, &mut fresh);
        let flows = &self.flow_stats;
        let log = &mut self.series.get_mut().log;
        let hint = |ahead: &[u32]| {
            if let Some(&near) = ahead.get(AHEAD) {
                flows[near as usize].prefetch_series_lines();
            }
        };
        walk(&fresh, hint, |i| {
            log.flow(i as u32, FlowRow::of(&flows[i]));
        });
        s.fresh = fresh;
    }

    /// Logs the variables of the agents touched since the last sample and of those whose
    /// samples read shared state, but of none whose samples never give a value.
    fn sample_agents(&mut self) {
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
        let series = self.series.get_mut();
        let (traces, log) = (&mut series.traces, &mut series.log);
        let mut names = VarIndexCache::default();
        walk(&fresh, hint, |i| {
            let slot = &agents[i];
            slot.agent.sample(&mut s.values);
            let silent = slot.agent.samples_nothing();
            debug_assert!(
                !silent || s.values.is_empty(),
                "agent {i} gives samples but says it gives none"
            );
            log.open_agent(i);
            for (k, (name, value)) in s.values.drain(..).enumerate() {
                log.agent_var(slot.flow, names.index(k, name, traces), value);
            }
            log.close_agent();
            let shared = !silent && !slot.agent.sample_reads_only_self();
            s.agents_silent.set(i, silent);
            s.agents_shared.set(i, shared);
        });
        s.fresh = fresh;
    }
}
