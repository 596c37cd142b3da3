//! Every flow's counters, with the set of flows whose counters were written since the last
//! sample: a write goes through `IndexMut`, which marks the flow (one bit in a set that stays
//! in the caches), so a sample reads the counters of those flows only.

use super::touched::Touched;
use super::FlowStats;
use std::ops::{Deref, Index, IndexMut};

/// The counters of flows `0..len`; reads see a slice, writes mark the flow.
#[derive(Clone, Debug, Default)]
pub struct FlowCounters {
    stats: Vec<FlowStats>,
    written: Touched,
}

impl FlowCounters {
    /// `flows` flows with zero counters, none marked: a sample logs a flow once it is written,
    /// and a flow it never logged has the zero row (at 100,000 flows the first sample, at the
    /// start, read 200,000 untouched records).
    pub fn new(flows: usize) -> Self {
        FlowCounters {
            stats: vec![FlowStats::default(); flows],
            written: Touched::new(flows),
        }
    }

    /// Adds a flow with zero counters, marked.
    pub fn push(&mut self, stats: FlowStats) {
        self.stats.push(stats);
        self.written.grow(self.stats.len());
        self.written.mark(self.stats.len() - 1);
    }

    /// Moves the flows written since the last call into `out`, ascending (all of them with
    /// `every_flow`).
    pub fn drain_written(&mut self, every_flow: bool, out: &mut Vec<u32>) {
        if every_flow {
            self.written.mark_all();
        }
        self.written.drain_into(out);
    }
}

impl Deref for FlowCounters {
    type Target = [FlowStats];

    fn deref(&self) -> &[FlowStats] {
        &self.stats
    }
}

impl Index<usize> for FlowCounters {
    type Output = FlowStats;

    #[inline(always)]
    fn index(&self, flow: usize) -> &FlowStats {
        &self.stats[flow]
    }
}

impl IndexMut<usize> for FlowCounters {
    #[inline(always)]
    fn index_mut(&mut self, flow: usize) -> &mut FlowStats {
        self.written.mark(flow);
        &mut self.stats[flow]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_mark_the_flow_and_reads_do_not() {
        let mut table = FlowCounters::new(3);
        let mut out = Vec::new();
        table.drain_written(false, &mut out);
        assert!(out.is_empty(), "a new table has nothing written");
        table[2].retransmits += 1;
        let _ = table[1].retransmits;
        table.push(FlowStats::default());
        table.drain_written(false, &mut out);
        assert_eq!(out, [2, 3]);
        assert_eq!(table[2].retransmits, 1);
        table.drain_written(true, &mut out);
        assert_eq!(out, [0, 1, 2, 3]);
    }
}
