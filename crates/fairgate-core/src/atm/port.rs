//! Cell ports: a cell queue feeding a cell link, and the backbone buffer's frame policies
//! counted by DFBA region [Goyal98, §2] and CLP.
//!
//! Decisions (docs/models/cell_link.md): a link sends one 53-byte cell per cell time and
//! keeps cell order; propagation is length × µs/km. Queues other than the backbone buffer are
//! unbounded FIFOs (the paper's bottleneck is the backbone switch; TCP windows bound them).
//! The backbone `fifo` is cell drop-tail with no frame awareness.

use super::config::{BackboneBuffer, CellFifo};
use crate::engine::{Rng, Time};
use crate::net::packet::{PacketArena, PacketId};
use crate::qdisc::buffer::dfba::{region, DfbaPolicy, Region};
use crate::qdisc::buffer::epd::EpdPolicy;
use crate::qdisc::buffer::fba::FbaPolicy;
use crate::qdisc::buffer::frame_fifo::{
    FrameArrival, FrameFifo, FramePolicy, FrameSettings, Frames,
};
use crate::qdisc::buffer::ppd::AcceptAll;
use crate::qdisc::buffer::selective_drop::SelectiveDropPolicy;
use crate::qdisc::classify::FlowKey;
use crate::qdisc::{Effects, QdiscCtx};
use std::collections::VecDeque;

/// Refused-frame counters: index 0 for disciplines without regions, 1-4 for DFBA's regions.
pub const REGIONS: usize = 5;

/// A frame policy that counts the frames it refuses by VC, region and CLP.
pub struct Counted {
    policy: Box<dyn FramePolicy>,
    dfba: Option<DfbaPolicy>,
    /// `refused[vc][region][clp]`
    pub refused: Vec<[[u64; 2]; REGIONS]>,
}

impl Counted {
    fn region_of(&self, frame: &FrameArrival) -> usize {
        let Some(d) = &self.dfba else { return 0 };
        let share = d.share(frame);
        match region(
            frame.total as f64,
            frame.vc_cells as f64,
            share,
            d.low,
            d.high,
        ) {
            Region::Underload => 1,
            Region::AboveShare => 2,
            Region::WithinShare => 3,
            Region::Severe => 4,
        }
    }
}

impl FramePolicy for Counted {
    fn accept(&mut self, frame: &FrameArrival, rng: &mut Rng) -> bool {
        let accepted = match &mut self.dfba {
            Some(d) => d.accept(frame, rng),
            None => self.policy.accept(frame, rng),
        };
        if !accepted {
            let region = self.region_of(frame);
            if let Some(row) = self.refused.get_mut(frame.vc as usize) {
                row[region][usize::from(frame.clp)] += 1;
            }
        }
        accepted
    }
    fn name(&self) -> &'static str {
        "counted"
    }
}

/// A queue of cells.
pub enum CellQueue {
    /// Unbounded unless `limit` (cell drop-tail); `per_vc` counts cells by VC.
    Fifo {
        cells: VecDeque<PacketId>,
        limit: Option<u64>,
        per_vc: Vec<u64>,
    },
    Frames(Box<FrameFifo<Counted>>),
}

impl CellQueue {
    pub fn unbounded(vcs: usize) -> Self {
        CellQueue::Fifo {
            cells: VecDeque::new(),
            limit: None,
            per_vc: vec![0; vcs],
        }
    }

    /// The backbone buffer; `mcrs` and `zs` in VC order.
    pub fn backbone(spec: &BackboneBuffer, mcrs: &[f64], zs: &[Option<f64>]) -> Self {
        let vcs = mcrs.len();
        let settings = |limit: u64, keep_eom: bool| FrameSettings {
            limit,
            vc: FlowKey::Flow,
            frames: Frames::Cells,
            keep_eom,
        };
        let (settings, policy, dfba): (_, Box<dyn FramePolicy>, _) = match spec {
            BackboneBuffer::Fifo(CellFifo { limit }) => {
                return CellQueue::Fifo {
                    cells: VecDeque::new(),
                    limit: Some(*limit),
                    per_vc: vec![0; vcs],
                }
            }
            BackboneBuffer::Dfba(c) => {
                let policy = dfba_policy(c, mcrs, zs);
                (
                    settings(c.limit, c.keep_eom),
                    Box::new(AcceptAll),
                    Some(policy),
                )
            }
            BackboneBuffer::Epd(c) => {
                let threshold_cells = c.threshold * c.limit as f64;
                (
                    settings(c.limit, c.keep_eom),
                    Box::new(EpdPolicy { threshold_cells }),
                    None,
                )
            }
            BackboneBuffer::Ppd(c) => (settings(c.limit, true), Box::new(AcceptAll), None),
            BackboneBuffer::SelectiveDrop(c) => {
                let threshold_cells = c.threshold * c.limit as f64;
                let policy = SelectiveDropPolicy {
                    threshold_cells,
                    z: c.z,
                };
                (settings(c.limit, c.keep_eom), Box::new(policy), None)
            }
            BackboneBuffer::Fba(c) => {
                let policy = FbaPolicy {
                    capacity: c.limit as f64,
                    threshold_cells: c.threshold * c.limit as f64,
                    z: c.z,
                };
                (settings(c.limit, c.keep_eom), Box::new(policy), None)
            }
        };
        let counted = Counted {
            policy,
            dfba,
            refused: vec![[[0; 2]; REGIONS]; vcs],
        };
        CellQueue::Frames(Box::new(FrameFifo::new(settings, counted)))
    }

    /// Queues `cell` of VC `vc`; refused cells are left in `ctx.effects`.
    pub fn enqueue(&mut self, cell: PacketId, vc: usize, ctx: &mut QdiscCtx) {
        match self {
            CellQueue::Fifo {
                cells,
                limit,
                per_vc,
            } => {
                if limit.is_some_and(|l| cells.len() as u64 >= l) {
                    ctx.drop(cell, crate::qdisc::DropReason::Overflow);
                } else {
                    cells.push_back(cell);
                    per_vc[vc] += 1;
                }
            }
            CellQueue::Frames(f) => f.enqueue(cell, ctx),
        }
    }

    pub fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        match self {
            CellQueue::Fifo { cells, per_vc, .. } => {
                let cell = cells.pop_front()?;
                per_vc[ctx.packets.get(cell).flow as usize] -= 1;
                Some(cell)
            }
            CellQueue::Frames(f) => f.dequeue(ctx),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            CellQueue::Fifo { cells, .. } => cells.len(),
            CellQueue::Frames(f) => f.len_packets(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// X_i: cells of VC `vc` held.
    pub fn vc_cells(&self, vc: usize) -> u64 {
        match self {
            CellQueue::Fifo { per_vc, .. } => per_vc[vc],
            CellQueue::Frames(f) => f.vc_cells(vc as u64),
        }
    }

    /// Refused frames by VC, region and CLP (empty for a plain FIFO).
    pub fn refused(&self) -> &[[[u64; 2]; REGIONS]] {
        match self {
            CellQueue::Fifo { .. } => &[],
            CellQueue::Frames(f) => &f.policy.refused,
        }
    }
}

/// DFBA with the VCs' MCRs (weights) and Z values, VC `i` being flow id `i` of its cells.
fn dfba_policy(
    c: &crate::qdisc::buffer::dfba::DfbaConfig,
    mcrs: &[f64],
    zs: &[Option<f64>],
) -> DfbaPolicy {
    let mut policy = c.policy();
    let total: f64 = mcrs.iter().sum();
    policy.shares = mcrs.iter().map(|m| m / total).collect();
    policy.default_share = 0.0;
    policy.z_values = zs
        .iter()
        .zip(&policy.shares)
        .map(|(z, &share)| z.unwrap_or_else(|| c.z.of(share)))
        .collect();
    policy
}

/// A cell queue feeding a cell link.
pub struct CellPort {
    pub queue: CellQueue,
    pub cell_time: Time,
    pub propagation: Time,
    pub busy_until: Time,
    pub tx_scheduled: bool,
    /// (arrival time at the far end, cell), oldest first.
    pub in_flight: VecDeque<(Time, PacketId)>,
    pub rng: Rng,
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
}

impl CellPort {
    pub fn new(queue: CellQueue, cell_time: Time, propagation: Time, rng: Rng) -> Self {
        CellPort {
            queue,
            cell_time,
            propagation,
            busy_until: 0,
            tx_scheduled: false,
            in_flight: VecDeque::new(),
            rng,
            arrivals: 0,
            departures: 0,
            drops: 0,
        }
    }

    /// A discipline context over this port's queue.
    pub fn ctx<'a>(
        &'a mut self,
        now: Time,
        packets: &'a mut PacketArena,
        effects: &'a mut Effects,
    ) -> (&'a mut CellQueue, QdiscCtx<'a>) {
        let ctx = QdiscCtx {
            now,
            packets,
            rng: &mut self.rng,
            link_rate_bps: 0,
            monitored: None,
            idle_since: None,
            effects,
        };
        (&mut self.queue, ctx)
    }
}
