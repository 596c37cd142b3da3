//! Columnar time series: one vector per column, appended in time order.

use super::premap::reserve_mapped;
use super::sample_log::{FlowRow, PortRow};
use super::FlowStats;
use std::ops::Range;

/// Queue length of every port, and its arrival and departure rates over the interval that
/// ends at the sample, sampled at the scenario's interval.
#[derive(Clone, Debug, Default)]
pub struct QueueSeries {
    pub time: Vec<f64>,
    pub port: Vec<u32>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
    pub arrival_bps: Vec<f64>,
    pub departure_bps: Vec<f64>,
    /// Per port, cumulative arrival and departure bytes at the previous sample.
    previous_arrivals: Vec<u64>,
    previous_departures: Vec<u64>,
    previous_time: f64,
}

/// Reserves room for `rows` more values in each column and maps it
/// ([`reserve_mapped`]), so series whose final length is known early grow once instead of
/// being copied at every doubling, and are written into mapped memory.
macro_rules! reserve_columns {
    ($rows:expr; $($column:expr),+) => {
        $( reserve_mapped(&mut $column, $rows); )+
    };
}

impl QueueSeries {
    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(rows; self.time, self.port, self.packets, self.bytes,
            self.arrival_bps, self.departure_bps);
    }
}

impl FlowSeries {
    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(rows; self.time, self.flow);
        self.counters.reserve(rows);
    }
}

/// Every port's queue and cumulative byte counters at a sample, one column each, in port
/// order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PortLevels {
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
    pub arrivals_bytes: Vec<u64>,
    pub departures_bytes: Vec<u64>,
}

impl PortLevels {
    /// Room for `ports` ports, all zero.
    pub fn resize(&mut self, ports: usize) {
        for column in [
            &mut self.packets,
            &mut self.bytes,
            &mut self.arrivals_bytes,
            &mut self.departures_bytes,
        ] {
            column.resize(ports, 0);
        }
    }
}

impl PortLevels {
    /// Port `index` has the values of `row`.
    pub fn set(&mut self, index: usize, row: &PortRow) {
        self.packets[index] = row.packets;
        self.bytes[index] = row.bytes;
        self.arrivals_bytes[index] = row.arrivals_bytes;
        self.departures_bytes[index] = row.departures_bytes;
    }
}

impl QueueSeries {
    /// Appends one sample of every port, in port order; the first sample's rates are NaN
    /// (no interval ends there).
    pub fn push_levels(&mut self, time: f64, ports: &PortLevels) {
        let first = self.time.is_empty();
        if first {
            self.previous_arrivals = vec![0; ports.packets.len()];
            self.previous_departures = vec![0; ports.packets.len()];
        }
        let dt = time - self.previous_time;
        let rates = |now: &[u64], before: &[u64], out: &mut Vec<f64>| match first || dt <= 0.0 {
            true => out.resize(out.len() + now.len(), f64::NAN),
            false => out.extend(
                now.iter()
                    .zip(before)
                    .map(|(now, before)| (now - before) as f64 * 8.0 / dt),
            ),
        };
        rates(
            &ports.arrivals_bytes,
            &self.previous_arrivals,
            &mut self.arrival_bps,
        );
        rates(
            &ports.departures_bytes,
            &self.previous_departures,
            &mut self.departure_bps,
        );
        self.previous_arrivals
            .copy_from_slice(&ports.arrivals_bytes);
        self.previous_departures
            .copy_from_slice(&ports.departures_bytes);
        self.time
            .resize(self.time.len() + ports.packets.len(), time);
        self.port.extend(0..ports.packets.len() as u32);
        self.packets.extend_from_slice(&ports.packets);
        self.bytes.extend_from_slice(&ports.bytes);
        self.previous_time = time;
    }
}

/// Each flow's class index and the class names in order of first appearance; `None` (a flow
/// not counted) stays `None`.
pub fn class_indices(classes: &[Option<&str>]) -> (Vec<Option<u32>>, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    let class_of = classes
        .iter()
        .map(|c| {
            let name = (*c)?;
            let index = names.iter().position(|n| n == name).unwrap_or_else(|| {
                names.push(name.to_string());
                names.len() - 1
            });
            Some(index as u32)
        })
        .collect();
    (class_of, names)
}

/// Throughput and goodput of each traffic class (the source kind of the data flows) over the
/// interval that ends at each sample, summed in the core from the flows' counters.
#[derive(Clone, Debug, Default)]
pub struct ClassSeries {
    /// Per flow, its class index; `None` for ACK flows.
    class_of: Vec<Option<u32>>,
    pub names: Vec<String>,
    pub time: Vec<f64>,
    pub class: Vec<u32>,
    pub delivered_bytes: Vec<u64>,
    pub goodput_bytes: Vec<u64>,
    pub throughput_bps: Vec<f64>,
    pub goodput_bps: Vec<f64>,
    previous_time: f64,
}

impl ClassSeries {
    /// `classes` holds each flow's class name, `None` for flows that are not counted.
    pub fn new(classes: &[Option<&str>]) -> Self {
        let (class_of, names) = class_indices(classes);
        ClassSeries {
            class_of,
            names,
            ..ClassSeries::default()
        }
    }

    pub fn push(&mut self, time: f64, flows: &[FlowStats]) {
        let mut totals = self.zero_totals();
        for (flow, stats) in flows.iter().enumerate() {
            self.count(
                &mut totals,
                flow,
                stats.delivered_bytes,
                stats.goodput_bytes,
            );
        }
        self.push_totals(time, totals);
    }

    /// Per class, (delivered bytes, goodput bytes), before any flow is counted.
    fn zero_totals(&self) -> Vec<(u64, u64)> {
        vec![(0, 0); self.names.len()]
    }

    /// Adds the delivered and goodput bytes of `flow` to its class's totals.
    #[inline(always)]
    fn count(&self, totals: &mut [(u64, u64)], flow: usize, delivered: u64, goodput: u64) {
        if let Some(c) = self.class_of[flow] {
            totals[c as usize].0 += delivered;
            totals[c as usize].1 += goodput;
        }
    }

    /// Appends one row per class from the summed counters of its flows.
    fn push_totals(&mut self, time: f64, totals: Vec<(u64, u64)>) {
        let rows = self.time.len();
        let dt = time - self.previous_time;
        for (c, (delivered, goodput)) in totals.into_iter().enumerate() {
            let before = rows.checked_sub(self.names.len()).map(|r| r + c);
            let rate = |now: u64, column: &[u64]| match before {
                Some(r) if dt > 0.0 => (now - column[r]) as f64 * 8.0 / dt,
                _ => f64::NAN,
            };
            self.throughput_bps
                .push(rate(delivered, &self.delivered_bytes));
            self.goodput_bps.push(rate(goodput, &self.goodput_bytes));
            self.time.push(time);
            self.class.push(c as u32);
            self.delivered_bytes.push(delivered);
            self.goodput_bytes.push(goodput);
        }
        self.previous_time = time;
    }
}

/// Cumulative per-flow counters, sampled at the scenario's interval.
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub counters: FlowColumns,
}

impl FlowSeries {
    /// Appends the row of every flow at `time`, in flow order, and the sums of each class to
    /// `classes`.
    pub fn push_rows(&mut self, time: f64, rows: &FlowColumns, classes: &mut ClassSeries) {
        let mut totals = classes.zero_totals();
        for (i, (&delivered, &goodput)) in rows
            .delivered_bytes
            .iter()
            .zip(&rows.goodput_bytes)
            .enumerate()
        {
            classes.count(&mut totals, i, delivered, goodput);
        }
        classes.push_totals(time, totals);
        self.time.resize(self.time.len() + rows.len(), time);
        self.flow.extend(0..rows.len() as u32);
        self.counters.append(rows);
    }
}

/// Flows' counters, one column each: every flow's row as of a sample (in flow order), or
/// the rows of a series.
#[derive(Clone, Debug, Default)]
pub struct FlowColumns {
    pub delivered_pkts: Vec<u64>,
    pub delivered_bytes: Vec<u64>,
    pub goodput_bytes: Vec<u64>,
    pub dropped_pkts: Vec<u64>,
    /// Sum and count of the RTT samples a transport reported, for per-interval means.
    pub rtt_sum_s: Vec<f64>,
    pub rtt_samples: Vec<u64>,
    pub retransmits: Vec<u64>,
}

impl FlowColumns {
    pub fn len(&self) -> usize {
        self.delivered_pkts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.delivered_pkts.is_empty()
    }

    /// Room for `flows` flows, those added all zero.
    pub fn resize(&mut self, flows: usize) {
        for column in [
            &mut self.delivered_pkts,
            &mut self.delivered_bytes,
            &mut self.goodput_bytes,
            &mut self.dropped_pkts,
            &mut self.rtt_samples,
            &mut self.retransmits,
        ] {
            column.resize(flows, 0);
        }
        self.rtt_sum_s.resize(flows, 0.0);
    }

    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(rows; self.delivered_pkts, self.delivered_bytes, self.goodput_bytes,
            self.dropped_pkts, self.rtt_sum_s, self.rtt_samples, self.retransmits);
    }

    /// Appends the rows of `other`.
    pub fn append(&mut self, other: &FlowColumns) {
        self.delivered_pkts.extend_from_slice(&other.delivered_pkts);
        self.delivered_bytes
            .extend_from_slice(&other.delivered_bytes);
        self.goodput_bytes.extend_from_slice(&other.goodput_bytes);
        self.dropped_pkts.extend_from_slice(&other.dropped_pkts);
        self.rtt_sum_s.extend_from_slice(&other.rtt_sum_s);
        self.rtt_samples.extend_from_slice(&other.rtt_samples);
        self.retransmits.extend_from_slice(&other.retransmits);
    }

    /// Flow `index` has the values of `row`.
    pub fn set(&mut self, index: usize, row: &FlowRow) {
        self.delivered_pkts[index] = row.delivered_pkts;
        self.delivered_bytes[index] = row.delivered_bytes;
        self.goodput_bytes[index] = row.goodput_bytes;
        self.dropped_pkts[index] = row.dropped_pkts;
        self.rtt_sum_s[index] = row.rtt_sum_s;
        self.rtt_samples[index] = row.rtt_samples;
        self.retransmits[index] = row.retransmits;
    }
}

/// Named variables in long format (a discipline's average queue, a sender's cwnd, ...).
/// `owner` is a port index or a flow index, depending on the table.
#[derive(Clone, Debug, Default)]
pub struct VarSeries {
    pub time: Vec<f64>,
    pub owner: Vec<u32>,
    pub var: Vec<u32>,
    pub value: Vec<f64>,
    /// Variable names; `var` indexes into this.
    pub names: Vec<String>,
}

impl VarSeries {
    pub fn push(&mut self, time: f64, owner: u32, name: &str, value: f64) {
        let var = self.var_index(name);
        self.time.push(time);
        self.owner.push(owner);
        self.var.push(var);
        self.value.push(value);
    }

    /// Appends the points (`owner[i]`, `var[i]`, `value[i]`) at `time`; `var` holds indices
    /// from [`VarSeries::var_index`].
    pub fn extend(&mut self, time: f64, owner: &[u32], var: &[u32], value: &[f64]) {
        self.time.resize(self.time.len() + owner.len(), time);
        self.owner.extend_from_slice(owner);
        self.var.extend_from_slice(var);
        self.value.extend_from_slice(value);
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    /// Moves the points from index `at` on into a series of their own (without the names,
    /// which stay here and which their `var` keeps indexing).
    pub fn split_off(&mut self, at: usize) -> VarSeries {
        VarSeries {
            time: self.time.split_off(at),
            owner: self.owner.split_off(at),
            var: self.var.split_off(at),
            value: self.value.split_off(at),
            names: Vec::new(),
        }
    }

    /// Appends the points `rows` of `other` (whose `var` indexes this series' names).
    pub fn append_rows(&mut self, other: &VarSeries, rows: Range<usize>) {
        self.time.extend_from_slice(&other.time[rows.clone()]);
        self.owner.extend_from_slice(&other.owner[rows.clone()]);
        self.var.extend_from_slice(&other.var[rows.clone()]);
        self.value.extend_from_slice(&other.value[rows]);
    }

    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(rows; self.time, self.owner, self.var, self.value);
    }

    /// Renames the points from index `start` on to `prefix` + their name (a gateway keeps its
    /// inner transports' traces apart from the end-to-end flow's).
    pub fn prefix_since(&mut self, start: usize, prefix: &str) {
        for i in start..self.var.len() {
            let name = format!("{prefix}{}", self.names[self.var[i] as usize]);
            self.var[i] = self.var_index(&name);
        }
    }

    /// The index of variable `name` in `names`, added at the end if new.
    pub fn var_index(&mut self, name: &str) -> u32 {
        let index = match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        };
        index as u32
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
    }
}

/// The index in a [`VarSeries`] of the name each object of a sample gave at each position:
/// objects of one kind give the same names in the same order, so a sample of 100,000 senders
/// looks each name up once, not once per sender. Names are compared by address (a name is a
/// `&'static str`, and one literal keeps its address), so a cache is built per sample and
/// dropped before the series could change its names.
#[derive(Debug, Default)]
pub struct VarIndexCache {
    known: Vec<(&'static str, u32)>,
}

impl VarIndexCache {
    /// The index of `name`, given at `position` among one object's variables.
    #[inline]
    pub fn index(&mut self, position: usize, name: &'static str, series: &mut VarSeries) -> u32 {
        match self.known.get(position) {
            Some(&(known, index)) if std::ptr::eq(known, name) => index,
            _ => {
                let index = series.var_index(name);
                self.known.truncate(position);
                self.known.push((name, index));
                index
            }
        }
    }
}

/// The variables of each object (port or agent) as of the last sample, in object order, as
/// (owner, variable, value) rows: a sample copies the rows of the objects it does not re-read
/// and replaces those of the objects it does.
#[derive(Clone, Debug, Default)]
pub struct VarRows {
    last: RowTable,
    next: RowTable,
}

#[derive(Clone, Debug, Default)]
struct RowTable {
    /// Object i's rows end at `end[i]` and start where object i - 1's end.
    end: Vec<usize>,
    owner: Vec<u32>,
    var: Vec<u32>,
    value: Vec<f64>,
}

impl VarRows {
    /// Starts the rows of a new sample, to be given object by object in order.
    pub fn begin(&mut self) {
        std::mem::swap(&mut self.last, &mut self.next);
        let next = &mut self.next;
        next.end.clear();
        next.owner.clear();
        next.var.clear();
        next.value.clear();
    }

    /// Starts the rows of a new sample in which none of the `count` objects has a row.
    pub fn begin_without_rows(&mut self, count: usize) {
        self.begin();
        self.next.end.resize(count, 0);
    }

    /// The objects `objects` have the rows they had at the last sample; those past the last
    /// sample's objects were never given and have none.
    pub fn keep(&mut self, objects: Range<usize>) {
        let given = self.last.end.len();
        let seen = objects.start.min(given)..objects.end.min(given);
        let never_given = objects.len() - seen.len();
        self.keep_seen(seen);
        let end = self.next.var.len();
        self.next.end.resize(self.next.end.len() + never_given, end);
    }

    fn keep_seen(&mut self, objects: Range<usize>) {
        if objects.is_empty() {
            return;
        }
        let last = &self.last;
        let start = objects
            .start
            .checked_sub(1)
            .map_or(0, |before| last.end[before]);
        let stop = last.end[objects.end - 1];
        let next = &mut self.next;
        let base = next.var.len();
        next.owner.extend_from_slice(&last.owner[start..stop]);
        next.var.extend_from_slice(&last.var[start..stop]);
        next.value.extend_from_slice(&last.value[start..stop]);
        next.end
            .extend(last.end[objects].iter().map(|&end| end - start + base));
    }

    /// A row of the object being given.
    pub fn push(&mut self, owner: u32, var: u32, value: f64) {
        self.next.owner.push(owner);
        self.next.var.push(var);
        self.next.value.push(value);
    }

    /// Rows of the object being given.
    pub fn extend(&mut self, owner: &[u32], var: &[u32], value: &[f64]) {
        self.next.owner.extend_from_slice(owner);
        self.next.var.extend_from_slice(var);
        self.next.value.extend_from_slice(value);
    }

    /// The rows of the sample given last.
    pub fn len(&self) -> usize {
        self.next.var.len()
    }

    pub fn is_empty(&self) -> bool {
        self.next.var.is_empty()
    }

    /// Ends the rows of the object being given.
    pub fn close_object(&mut self) {
        self.next.end.push(self.next.var.len());
    }

    /// Appends this sample's rows to `series` at `time`.
    pub fn append_to(&self, time: f64, series: &mut VarSeries) {
        let next = &self.next;
        series.extend(time, &next.owner, &next.var, &next.value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_rates_are_the_differences_of_the_summed_counters() {
        let mut series = ClassSeries::new(&[Some("tcp"), Some("web"), None, Some("tcp")]);
        let flow = |goodput: u64| FlowStats {
            delivered_bytes: goodput + 40,
            goodput_bytes: goodput,
            ..FlowStats::default()
        };
        series.push(0.0, &[flow(0), flow(0), flow(0), flow(0)]);
        series.push(2.0, &[flow(1000), flow(500), flow(9999), flow(3000)]);
        assert_eq!(series.names, ["tcp", "web"]);
        assert_eq!(series.goodput_bytes, [0, 0, 4000, 500]);
        assert!(series.goodput_bps[0].is_nan());
        assert_eq!(series.goodput_bps[2..], [16000.0, 2000.0]);
        assert_eq!(series.throughput_bps[2], (4080.0 - 80.0) * 8.0 / 2.0);
    }

    #[test]
    fn kept_rows_are_copied_and_read_rows_replace_the_old() {
        let mut rows = VarRows::default();
        let mut series = VarSeries::default();
        rows.begin();
        for (object, values) in [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]].iter().enumerate() {
            for (var, value) in values.iter().enumerate() {
                rows.push(object as u32 * 10, var as u32, *value);
            }
            rows.close_object();
        }
        rows.append_to(0.0, &mut series);
        rows.begin();
        rows.keep(0..1);
        rows.push(10, 0, 7.0);
        rows.close_object();
        rows.keep(2..3);
        rows.keep(3..3);
        rows.append_to(1.0, &mut series);
        assert_eq!(series.owner[6..], [0, 0, 10, 20, 20]);
        assert_eq!(series.value[6..], [1.0, 2.0, 7.0, 5.0, 6.0]);
        assert_eq!(series.time[6..], [1.0; 5]);
        rows.begin();
        rows.keep(0..3);
        rows.append_to(2.0, &mut series);
        assert_eq!(series.value[11..], [1.0, 2.0, 7.0, 5.0, 6.0]);
    }

    #[test]
    fn objects_never_given_are_kept_without_rows() {
        let mut rows = VarRows::default();
        let mut series = VarSeries::default();
        rows.begin();
        rows.keep(0..1);
        rows.push(10, 0, 1.0);
        rows.close_object();
        rows.keep(2..4);
        rows.append_to(0.0, &mut series);
        assert_eq!(series.value, [1.0]);
        rows.begin();
        rows.keep(0..3);
        rows.push(30, 0, 2.0);
        rows.close_object();
        rows.append_to(1.0, &mut series);
        assert_eq!(series.owner[1..], [10, 30]);
        assert_eq!(series.value[1..], [1.0, 2.0]);
        rows.begin();
        rows.keep(0..5);
        rows.append_to(2.0, &mut series);
        assert_eq!(series.value[3..], [1.0, 2.0]);
    }

    #[test]
    fn cached_indices_are_those_of_the_series() {
        let mut series = VarSeries::default();
        let mut cache = VarIndexCache::default();
        let owned = String::from("cwnd");
        let leaked: &'static str = owned.leak();
        for (position, name) in [
            (0, "cwnd"),
            (1, "srtt"),
            (0, "cwnd"),
            (0, leaked),
            (1, "rto"),
        ] {
            let index = cache.index(position, name, &mut series);
            assert_eq!(series.names[index as usize], name);
        }
        assert_eq!(series.names, ["cwnd", "srtt", "rto"]);
    }

    #[test]
    fn port_rates_count_the_bytes_of_each_interval() {
        let mut series = QueueSeries::default();
        let sample = |arrivals_bytes, departures_bytes| PortLevels {
            packets: vec![0],
            bytes: vec![0],
            arrivals_bytes: vec![arrivals_bytes],
            departures_bytes: vec![departures_bytes],
        };
        series.push_levels(0.0, &sample(0, 0));
        series.push_levels(0.5, &sample(1000, 500));
        series.push_levels(1.0, &sample(1000, 1000));
        assert!(series.arrival_bps[0].is_nan());
        assert_eq!(series.arrival_bps[1..], [16000.0, 0.0]);
        assert_eq!(series.departure_bps[1..], [8000.0, 8000.0]);
    }
}
