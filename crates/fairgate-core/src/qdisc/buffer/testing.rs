//! A hand-filled `FlowQueues` for the buffer managers' unit tests.

use super::FlowQueues;

/// Queue `i` holds `packets[i]` packets of `bytes_each` bytes; flow of queue i is `flows[i]`.
pub struct TestQueues {
    pub packets: Vec<usize>,
    pub bytes_each: u64,
    pub weights: Vec<f64>,
    pub flows: Vec<Option<u32>>,
    backlogged: Vec<u32>,
}

impl TestQueues {
    pub fn new(packets: &[usize]) -> Self {
        let mut q = TestQueues {
            packets: packets.to_vec(),
            bytes_each: 100,
            weights: vec![1.0; packets.len()],
            flows: (0..packets.len() as u32).map(Some).collect(),
            backlogged: Vec::new(),
        };
        q.refresh();
        q
    }

    fn refresh(&mut self) {
        self.backlogged = (0..self.packets.len() as u32)
            .filter(|&i| self.packets[i as usize] > 0)
            .collect();
    }

    pub fn add(&mut self, queue: u32) {
        self.packets[queue as usize] += 1;
        self.refresh();
    }

    pub fn remove(&mut self, queue: u32) {
        self.packets[queue as usize] -= 1;
        self.refresh();
    }
}

impl FlowQueues for TestQueues {
    fn backlogged(&self) -> &[u32] {
        &self.backlogged
    }
    fn len_packets(&self, queue: u32) -> usize {
        self.packets[queue as usize]
    }
    fn len_bytes(&self, queue: u32) -> u64 {
        self.packets[queue as usize] as u64 * self.bytes_each
    }
    fn weight(&self, queue: u32) -> f64 {
        self.weights[queue as usize]
    }
    fn flow_of(&self, queue: u32) -> Option<u32> {
        self.flows[queue as usize]
    }
    fn total_packets(&self) -> usize {
        self.packets.iter().sum()
    }
    fn total_bytes(&self) -> u64 {
        self.total_packets() as u64 * self.bytes_each
    }
}
