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

/// A per-flow FIFO scheduler that follows the buffer-manager protocol of `mod.rs` exactly
/// (queue index = flow id), to check the managers on real packet handles.
pub struct MiniScheduler {
    pub queues: Vec<std::collections::VecDeque<crate::net::packet::PacketId>>,
    pub manager: Box<dyn super::BufferManager>,
    lens: TestQueues,
}

impl MiniScheduler {
    pub fn new(flows: usize, manager: Box<dyn super::BufferManager>) -> Self {
        MiniScheduler {
            queues: vec![Default::default(); flows],
            manager,
            lens: TestQueues::new(&vec![0; flows]),
        }
    }

    fn remove(&mut self, v: super::Victim, ctx: &mut crate::qdisc::QdiscCtx) {
        let queue = &mut self.queues[v.queue as usize];
        let packet = match v.end {
            super::End::Head => queue.pop_front(),
            super::End::Tail => queue.pop_back(),
        };
        if let Some(p) = packet {
            self.lens.remove(v.queue);
            ctx.drop_with(p, v.reason, v.cause);
            self.manager.on_change(v.queue, &self.lens);
        }
    }

    pub fn enqueue(
        &mut self,
        packet: crate::net::packet::PacketId,
        ctx: &mut crate::qdisc::QdiscCtx,
    ) {
        let queue = ctx.packets.get(packet).flow;
        self.queues[queue as usize].push_back(packet);
        self.lens.add(queue);
        if let Some(v) = self.manager.early(queue, &self.lens, ctx) {
            self.remove(v, ctx);
        }
        while self.manager.over_capacity(&self.lens) {
            let v = self.manager.overflow(queue, &self.lens, ctx);
            self.remove(v, ctx);
        }
        self.manager.on_change(queue, &self.lens);
    }

    pub fn len(&self, queue: u32) -> usize {
        self.queues[queue as usize].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::buffer::BufferSpec;
    use crate::qdisc::testing::Harness;
    use crate::qdisc::DropReason;

    /// Eight arrivals of flow 0, then two of flow 1, into B = 6; returns the drops as
    /// (flow, arrival index within the flow, reason) and the final queue lengths.
    /// A drop as (flow, arrival index within the flow, reason).
    type Drop = (u32, usize, DropReason);

    fn run(kind: &str, extra: &str) -> (Vec<Drop>, (usize, usize)) {
        let text = format!("kind = \"{kind}\"\nlimit = 6\n{extra}");
        let spec: BufferSpec = toml::from_str(&text).unwrap();
        let mut s = MiniScheduler::new(2, spec.build());
        let mut h = Harness::new();
        let mut ids = Vec::new();
        for flow in [0, 0, 0, 0, 0, 0, 0, 0, 1, 1] {
            let id = h.packet(flow, 100);
            ids.push((flow, id));
            let mut ctx = h.ctx();
            s.enqueue(id, &mut ctx);
        }
        let drops = h
            .effects
            .drops()
            .iter()
            .map(|&(p, r)| {
                let flow = h.packets.get(p).flow;
                let index = ids
                    .iter()
                    .filter(|&&(f, _)| f == flow)
                    .position(|&(_, i)| i == p);
                (flow, index.unwrap_or(usize::MAX), r)
            })
            .collect();
        (drops, (s.len(0), s.len(1)))
    }

    #[test]
    fn managers_choose_their_victims_under_the_scheduler_protocol() {
        use DropReason::*;
        // Longest-queue managers push out flow 0's oldest packets, so flow 1 loses nothing.
        let pushout = vec![
            (0, 0, PushOut),
            (0, 1, PushOut),
            (0, 2, PushOut),
            (0, 3, PushOut),
        ];
        // PFD's early coin is switched off (p = 0) to make its overflow choice visible.
        for (kind, extra) in [
            ("lqd", ""),
            ("rnd", ""),
            ("pfd", "p = 0.0"),
            ("quasi_pushout_pfd", "p = 0.0"),
        ] {
            let (drops, lens) = run(kind, extra);
            assert_eq!(drops, pushout, "{kind}");
            assert_eq!(lens, (4, 2), "{kind}");
        }
        // With p = 1 every arrival above thresh * B = 1.2 packets pushes out early: each
        // flow-0 arrival from the second on pushes out its predecessor; the first flow-1
        // arrival ties 1-1 with flow 0 and the tie goes to queue 0; the second makes flow 1
        // the longest and pushes out its own head.
        let (drops, lens) = run("pfd", "p = 1.0");
        let mut want: Vec<_> = (0..8).map(|i| (0, i, Early)).collect();
        want.push((1, 0, Early));
        assert_eq!(drops, want);
        assert_eq!(lens, (0, 1));
        // Drop-from-front discards the head of the arrival's queue: flow 0's two oldest,
        // then each flow-1 arrival is itself the head of its queue.
        let (drops, lens) = run("drop_from_front", "");
        assert_eq!(
            drops,
            vec![(0, 0, Front), (0, 1, Front), (1, 0, Front), (1, 1, Front)]
        );
        assert_eq!(lens, (6, 0));
        // FQ-RED (w_q = 1, no early coin) drops every arrival once the backlog before it
        // reaches max_th = 0.6 B = 3.6, whichever flow it belongs to: flow 1 loses both.
        let (drops, lens) = run("red", "w_q = 1.0\nmax_p = 0.0");
        let mut want: Vec<_> = (4..8).map(|i| (0, i, Forced)).collect();
        want.extend([(1, 0, Forced), (1, 1, Forced)]);
        assert_eq!(drops, want);
        assert_eq!(lens, (4, 0));
        // Drop-tail refuses the arrivals.
        let (drops, lens) = run("droptail", "");
        assert_eq!(
            drops,
            vec![
                (0, 6, Overflow),
                (0, 7, Overflow),
                (1, 0, Overflow),
                (1, 1, Overflow)
            ]
        );
        assert_eq!(lens, (6, 0));
    }
}
