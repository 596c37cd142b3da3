//! Columnar time series: one vector per column, appended in time order.

use super::FlowStats;

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
    previous: Vec<(u64, u64)>,
    previous_time: f64,
}

/// Reserves room for `rows` more values in each column, so series whose final length is
/// known early grow once instead of being copied at every doubling. A reservation that
/// cannot be had is skipped: the columns then grow as usual.
macro_rules! reserve_columns {
    ($rows:expr; $($column:expr),+) => {
        $( let _ = $column.try_reserve_exact($rows); )+
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
        reserve_columns!(rows; self.time, self.flow, self.delivered_pkts, self.delivered_bytes,
            self.goodput_bytes, self.dropped_pkts, self.rtt_sum_s, self.rtt_samples,
            self.retransmits);
    }
}

/// A port's state at a sample.
pub struct PortSample {
    pub port: u32,
    pub packets: u64,
    pub bytes: u64,
    pub arrivals_bytes: u64,
    pub departures_bytes: u64,
}

impl QueueSeries {
    /// Appends one sample of every port, in port order; the first sample's rates are NaN
    /// (no interval ends there).
    pub fn push_all(&mut self, time: f64, ports: impl Iterator<Item = PortSample>) {
        let first = self.time.is_empty();
        let dt = time - self.previous_time;
        for (i, p) in ports.enumerate() {
            if first {
                self.previous.push((0, 0));
            }
            let (arrived, departed) = self.previous[i];
            let rate = |now: u64, before: u64| match first || dt <= 0.0 {
                true => f64::NAN,
                false => (now - before) as f64 * 8.0 / dt,
            };
            self.arrival_bps.push(rate(p.arrivals_bytes, arrived));
            self.departure_bps.push(rate(p.departures_bytes, departed));
            self.previous[i] = (p.arrivals_bytes, p.departures_bytes);
            self.time.push(time);
            self.port.push(p.port);
            self.packets.push(p.packets);
            self.bytes.push(p.bytes);
        }
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
        let mut totals = vec![(0u64, 0u64); self.names.len()];
        for (stats, class) in flows.iter().zip(&self.class_of) {
            if let Some(c) = class {
                totals[*c as usize].0 += stats.delivered_bytes;
                totals[*c as usize].1 += stats.goodput_bytes;
            }
        }
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
    pub delivered_pkts: Vec<u64>,
    pub delivered_bytes: Vec<u64>,
    pub goodput_bytes: Vec<u64>,
    pub dropped_pkts: Vec<u64>,
    /// Sum and count of the RTT samples a transport reported, for per-interval means.
    pub rtt_sum_s: Vec<f64>,
    pub rtt_samples: Vec<u64>,
    pub retransmits: Vec<u64>,
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
        let var = self.index_of(name);
        self.time.push(time);
        self.owner.push(owner);
        self.var.push(var as u32);
        self.value.push(value);
    }

    pub fn len(&self) -> usize {
        self.time.len()
    }

    pub fn reserve(&mut self, rows: usize) {
        reserve_columns!(rows; self.time, self.owner, self.var, self.value);
    }

    /// Renames the points from index `start` on to `prefix` + their name (a gateway keeps its
    /// inner transports' traces apart from the end-to-end flow's).
    pub fn prefix_since(&mut self, start: usize, prefix: &str) {
        for i in start..self.var.len() {
            let name = format!("{prefix}{}", self.names[self.var[i] as usize]);
            self.var[i] = self.index_of(&name) as u32;
        }
    }

    fn index_of(&mut self, name: &str) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.time.is_empty()
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
    fn port_rates_count_the_bytes_of_each_interval() {
        let mut series = QueueSeries::default();
        let sample = |arrivals_bytes, departures_bytes| PortSample {
            port: 0,
            packets: 0,
            bytes: 0,
            arrivals_bytes,
            departures_bytes,
        };
        series.push_all(0.0, [sample(0, 0)].into_iter());
        series.push_all(0.5, [sample(1000, 500)].into_iter());
        series.push_all(1.0, [sample(1000, 1000)].into_iter());
        assert!(series.arrival_bps[0].is_nan());
        assert_eq!(series.arrival_bps[1..], [16000.0, 0.0]);
        assert_eq!(series.departure_bps[1..], [8000.0, 8000.0]);
    }
}
