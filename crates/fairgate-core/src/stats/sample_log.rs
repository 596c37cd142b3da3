//! The periodic samples of a run, kept as what changed. At a sample the engine logs the rows
//! of the ports, agents and flows it re-read (those changed since the previous sample) with
//! their indices, but no time or key column and no copy of an unchanged object's rows;
//! [`Series::expanded`] builds the dense series from the log when they are asked for,
//! carrying each object's last rows forward. A sample thus writes in proportion to what
//! changed, and the dense rows are written once, in one sequential pass, when the tables are
//! built. The expanded series are the same as those a sample of every object would append.

use super::series::{
    ClassSeries, FlowColumns, FlowSeries, PortLevels, QueueSeries, VarRows, VarSeries,
};
use super::FlowStats;
use std::ops::Range;

/// A port's values in the queue series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PortRow {
    pub packets: u64,
    pub bytes: u64,
    pub arrivals_bytes: u64,
    pub departures_bytes: u64,
}

/// A flow's values in the flow series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowRow {
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    pub goodput_bytes: u64,
    pub dropped_pkts: u64,
    pub rtt_sum_s: f64,
    pub rtt_samples: u64,
    pub retransmits: u64,
}

impl FlowRow {
    pub fn of(stats: &FlowStats) -> Self {
        FlowRow {
            delivered_pkts: stats.delivered_pkts,
            delivered_bytes: stats.delivered_bytes,
            goodput_bytes: stats.goodput_bytes,
            dropped_pkts: stats.dropped_total(),
            rtt_sum_s: stats.rtt_sum,
            rtt_samples: stats.rtt_count,
            retransmits: stats.retransmits,
        }
    }
}

/// The objects of one kind re-read at the logged samples, in sample and then index order,
/// each with the rows of its variables.
#[derive(Clone, Debug, Default)]
struct ObjectLog {
    index: Vec<u32>,
    /// Object k's rows end at `rows_end[k]` and start where object k - 1's end.
    rows_end: Vec<usize>,
    owner: Vec<u32>,
    var: Vec<u32>,
    value: Vec<f64>,
}

impl ObjectLog {
    fn open(&mut self, index: usize) {
        self.index.push(index as u32);
    }

    fn row(&mut self, owner: u32, var: u32, value: f64) {
        self.owner.push(owner);
        self.var.push(var);
        self.value.push(value);
    }

    fn close(&mut self) {
        self.rows_end.push(self.var.len());
    }

    /// The rows of the logged objects `objects`.
    fn rows_of(&self, objects: Range<usize>) -> Range<usize> {
        if objects.is_empty() {
            return 0..0;
        }
        let start = objects
            .start
            .checked_sub(1)
            .map_or(0, |before| self.rows_end[before]);
        start..self.rows_end[objects.end - 1]
    }

    /// Rebuilds `rows` for `count` objects from the entries `objects` (one sample's): the
    /// objects logged there get their logged rows, the others keep theirs.
    fn replay(&self, objects: Range<usize>, count: usize, rows: &mut VarRows) {
        if rows.is_empty() && self.rows_of(objects.clone()).is_empty() {
            rows.begin_without_rows(count); // objects without variables (a FIFO's port)
            return;
        }
        rows.begin();
        let mut kept_from = 0;
        for k in objects {
            let index = self.index[k] as usize;
            rows.keep(kept_from..index);
            let logged = self.rows_of(k..k + 1);
            rows.extend(
                &self.owner[logged.clone()],
                &self.var[logged.clone()],
                &self.value[logged],
            );
            rows.close_object();
            kept_from = index + 1;
        }
        rows.keep(kept_from..count);
    }
}

/// Where one sample's entries end in the log, and what it covered.
#[derive(Clone, Copy, Debug)]
struct Logged {
    time: f64,
    ports: usize,
    agents: usize,
    flows: usize,
    ports_end: usize,
    agents_end: usize,
    flows_end: usize,
    /// The trace rows the agents wrote themselves before this sample (its rows go after).
    traces_before: usize,
}

/// Each object's rows as of the last sample expanded.
#[derive(Clone, Debug, Default)]
struct LastRows {
    ports: PortLevels,
    port_vars: VarRows,
    agent_vars: VarRows,
    flows: FlowColumns,
}

/// A run's series: the dense ones, and the samples logged since they were last expanded.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub queue: QueueSeries,
    pub flows: FlowSeries,
    pub classes: ClassSeries,
    /// The disciplines' variables.
    pub state: VarSeries,
    /// The agents' variables: those they write themselves, and (after an expansion) samples.
    pub traces: VarSeries,
    pub log: SampleLog,
}

impl Series {
    /// The dense series of every sample taken so far.
    pub fn expanded(&mut self) -> &mut Self {
        let Series {
            queue,
            flows,
            classes,
            state,
            traces,
            log,
        } = self;
        log.expand_into(DenseSeries {
            queue,
            flows,
            classes,
            state,
            traces,
        });
        self
    }
}

/// The dense series a log expands into.
struct DenseSeries<'a> {
    queue: &'a mut QueueSeries,
    flows: &'a mut FlowSeries,
    classes: &'a mut ClassSeries,
    state: &'a mut VarSeries,
    traces: &'a mut VarSeries,
}

/// The samples logged since the last expansion.
#[derive(Clone, Debug, Default)]
pub struct SampleLog {
    samples: Vec<Logged>,
    ports: ObjectLog,
    port_rows: Vec<PortRow>,
    agents: ObjectLog,
    flow_index: Vec<u32>,
    flow_rows: Vec<FlowRow>,
    last: LastRows,
}

impl SampleLog {
    /// Logs port `index`, re-read: its queue and counters, then its variables
    /// ([`SampleLog::port_var`]) until [`SampleLog::close_port`].
    pub fn open_port(&mut self, index: usize, row: PortRow) {
        self.ports.open(index);
        self.port_rows.push(row);
    }

    pub fn port_var(&mut self, port: u32, var: u32, value: f64) {
        self.ports.row(port, var, value);
    }

    pub fn close_port(&mut self) {
        self.ports.close();
    }

    /// Logs agent `index`, re-read: its variables follow until [`SampleLog::close_agent`].
    pub fn open_agent(&mut self, index: usize) {
        self.agents.open(index);
    }

    pub fn agent_var(&mut self, flow: u32, var: u32, value: f64) {
        self.agents.row(flow, var, value);
    }

    pub fn close_agent(&mut self) {
        self.agents.close();
    }

    /// Logs the counters of flow `index`, re-read.
    pub fn flow(&mut self, index: u32, row: FlowRow) {
        self.flow_index.push(index);
        self.flow_rows.push(row);
    }

    /// Ends the sample at `time` of `ports`, `agents` and `flows` objects, taken after the
    /// first `traces_before` rows of the trace series.
    pub fn end_sample(
        &mut self,
        time: f64,
        [ports, agents, flows]: [usize; 3],
        traces_before: usize,
    ) {
        self.samples.push(Logged {
            time,
            ports,
            agents,
            flows,
            ports_end: self.ports.index.len(),
            agents_end: self.agents.index.len(),
            flows_end: self.flow_index.len(),
            traces_before,
        });
    }

    /// Room for `samples` samples that each log every one of `ports` ports, `agents` agents
    /// and `flows` flows, asked before the first sample: a bound that spares copying the log
    /// as it grows (memory never written is never mapped).
    pub fn reserve_objects(&mut self, [ports, agents, flows]: [usize; 3], samples: usize) {
        let all = |objects: usize| objects.saturating_mul(samples);
        for (log, objects) in [(&mut self.ports, ports), (&mut self.agents, agents)] {
            let _ = log.index.try_reserve_exact(all(objects));
            let _ = log.rows_end.try_reserve_exact(all(objects));
        }
        let _ = self.port_rows.try_reserve_exact(all(ports));
        let _ = self.flow_index.try_reserve_exact(all(flows));
        let _ = self.flow_rows.try_reserve_exact(all(flows));
    }

    /// Room for `samples` more samples whose objects each have as many variables as those
    /// logged so far (after the first sample, which logs every port and agent: a bound, as
    /// for [`Self::reserve_objects`]).
    pub fn reserve_samples(&mut self, samples: usize) {
        let more = |len: usize| len.saturating_mul(samples);
        let _ = self.samples.try_reserve_exact(samples);
        for log in [&mut self.ports, &mut self.agents] {
            let _ = log.owner.try_reserve_exact(more(log.owner.len()));
            let _ = log.var.try_reserve_exact(more(log.var.len()));
            let _ = log.value.try_reserve_exact(more(log.value.len()));
        }
    }

    /// Appends the dense rows of every logged sample to `out` and empties the log; the
    /// objects' last rows stay for the samples still to come.
    fn expand_into(&mut self, mut out: DenseSeries) {
        let Some(&first) = self.samples.first() else {
            return;
        };
        let samples = std::mem::take(&mut self.samples);
        let events = out.traces.split_off(first.traces_before);
        let mut events_from = first.traces_before;
        reserve_exact(&samples, &mut out);
        let mut from = (0, 0, 0);
        for (n, sample) in samples.iter().enumerate() {
            self.expand_ports(sample, from.0, out.queue, out.state);
            self.expand_flows(sample, from.2, out.flows, out.classes);
            let own = sample.traces_before - first.traces_before;
            out.traces
                .append_rows(&events, events_from - first.traces_before..own);
            events_from = sample.traces_before;
            let last = &mut self.last;
            self.agents.replay(
                from.1..sample.agents_end,
                sample.agents,
                &mut last.agent_vars,
            );
            last.agent_vars.append_to(sample.time, out.traces);
            if n == 0 {
                let remaining = samples.len() - 1;
                out.state.reserve(last.port_vars.len() * remaining);
                let events_left = events.len() - own;
                out.traces
                    .reserve(last.agent_vars.len() * remaining + events_left);
            }
            from = (sample.ports_end, sample.agents_end, sample.flows_end);
        }
        let done = events_from - first.traces_before;
        out.traces.append_rows(&events, done..events.len());
        self.release();
    }

    fn expand_ports(
        &mut self,
        sample: &Logged,
        from: usize,
        queue: &mut QueueSeries,
        state: &mut VarSeries,
    ) {
        let levels = &mut self.last.ports;
        if levels.packets.len() != sample.ports {
            levels.resize(sample.ports);
        }
        let logged = from..sample.ports_end;
        for (&index, row) in self.ports.index[logged.clone()]
            .iter()
            .zip(&self.port_rows[logged.clone()])
        {
            levels.set(index as usize, row);
        }
        queue.push_levels(sample.time, levels);
        let vars = &mut self.last.port_vars;
        self.ports.replay(logged, sample.ports, vars);
        vars.append_to(sample.time, state);
    }

    fn expand_flows(
        &mut self,
        sample: &Logged,
        from: usize,
        flows: &mut FlowSeries,
        classes: &mut ClassSeries,
    ) {
        let last = &mut self.last.flows;
        if last.len() != sample.flows {
            last.resize(sample.flows);
        }
        let logged = from..sample.flows_end;
        for (&index, row) in self.flow_index[logged.clone()]
            .iter()
            .zip(&self.flow_rows[logged])
        {
            last.set(index as usize, row);
        }
        flows.push_rows(sample.time, last, classes);
    }

    /// Empties the log and gives its memory back, keeping the objects' last rows.
    fn release(&mut self) {
        *self = SampleLog {
            last: std::mem::take(&mut self.last),
            ..SampleLog::default()
        };
    }
}

/// Room for the queue and flow rows of every sample in `samples` (their number is known).
fn reserve_exact(samples: &[Logged], out: &mut DenseSeries) {
    let rows = |count: fn(&Logged) -> usize| samples.iter().map(count).sum::<usize>();
    out.queue.reserve(rows(|s| s.ports));
    out.flows.reserve(rows(|s| s.flows));
}
