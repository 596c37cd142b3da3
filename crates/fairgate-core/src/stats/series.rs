//! Columnar time series: one vector per column, appended in time order.

/// Queue length of every port, sampled at the scenario's interval.
#[derive(Clone, Debug, Default)]
pub struct QueueSeries {
    pub time: Vec<f64>,
    pub port: Vec<u32>,
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
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
