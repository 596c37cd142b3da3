//! The shared FIFO buffer with per-VC accounting and frame-level decisions under the frame
//! disciplines of \[Goyal98] (DFBA, EPD, PPD, Selective Drop, FBA). Each algorithm is a
//! [`FramePolicy`] in its own file that decides once per frame, at its first cell.
//!
//! Source: [Goyal98, §2-3].
//!
//! Units: a "cell" is one packet of the simulation, so the same code runs on ATM cells and on
//! packets; X (total) and X_i (per VC) count cells, `limit` (K) is in cells.
//!
//! Decisions (the long form is on `docs/models/dfba.md`, "Shared frame rules"): a VC is a
//! `FlowKey` class (`vc`); `frames = "packets"` (default) makes every packet a one-cell frame,
//! `"cells"` is AAL5 (a VC's cells up to EOM, numbered by `aux`; a new `aux` starts a new
//! frame); a frame refused at its first cell is discarded whole unless `keep_eom`; a frame cut
//! by a full buffer keeps its EOM cell when it fits (PPD); the cell that found K full is
//! `overflow`, the rest of its frame and refused frames are `frame`; draws use the port's RNG,
//! one uniform per frame.

use crate::config::{check, ScenarioError};
use crate::engine::Rng;
use crate::net::packet::{flags, PacketId};
use crate::qdisc::classify::FlowKey;
use crate::qdisc::fifo::PacketFifo;
use crate::qdisc::{Cause, DropReason, QdiscCtx};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// How cells are grouped into frames.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Frames {
    /// Every packet is a frame of one cell.
    #[default]
    Packets,
    /// AAL5: cells up to the EOM flag, numbered by `aux`.
    Cells,
}

/// What a policy sees when the first cell of a frame arrives (before it is queued).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameArrival {
    pub vc: u64,
    /// The frame is tagged (CLP = 1).
    pub clp: bool,
    /// X: cells in the buffer.
    pub total: u64,
    /// X_i: cells of this VC in the buffer.
    pub vc_cells: u64,
    /// N_a: VCs with at least one cell in the buffer.
    pub active_vcs: u64,
    /// K: the buffer size in cells.
    pub capacity: u64,
}

/// The cause of the cells discarded after one found the buffer full (partial packet discard).
pub const PARTIAL_DISCARD: Cause = "ppd";

/// A frame-level admission rule.
pub trait FramePolicy: Send {
    /// Whether to accept the frame whose first cell is arriving.
    fn accept(&mut self, frame: &FrameArrival, rng: &mut Rng) -> bool;
    fn name(&self) -> &'static str;
    /// The cause the cells of a frame it refused carry in the results: the policy's name
    /// unless it tells its refusals apart (DFBA's regions).
    fn refusal_cause(&self, _frame: &FrameArrival) -> Cause {
        self.name()
    }
}

/// The per-frame state of one VC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum FrameState {
    /// Between frames: the next cell starts one.
    #[default]
    Idle,
    Accepting {
        aux: u64,
    },
    Dropping {
        aux: u64,
        keep_eom: bool,
        cause: Cause,
    },
}

#[derive(Clone, Copy, Debug, Default)]
struct Vc {
    cells: u64,
    frame: FrameState,
}

/// Settings shared by every frame discipline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameSettings {
    pub limit: u64,
    pub vc: FlowKey,
    pub frames: Frames,
    pub keep_eom: bool,
}

impl FrameSettings {
    pub fn validate(&self, path: &str) -> Result<(), ScenarioError> {
        check::positive_int(path, "limit", self.limit)
    }
}

/// Hashes VC ids with the shared keyed mixer (cheaper than SipHash, deterministic).
#[derive(Default)]
struct VcHasher(u64);

impl Hasher for VcHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = crate::qdisc::classify::mix(self.0 ^ b as u64, 0);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = crate::qdisc::classify::mix(value, self.0);
    }
}

/// A FIFO of cells with per-VC counts and per-VC frame state, driven by a policy.
pub struct FrameFifo<P: FramePolicy> {
    settings: FrameSettings,
    queue: PacketFifo,
    vcs: HashMap<u64, Vc, BuildHasherDefault<VcHasher>>,
    active_vcs: u64,
    pub policy: P,
}

impl<P: FramePolicy> FrameFifo<P> {
    pub fn new(settings: FrameSettings, policy: P) -> Self {
        FrameFifo {
            settings,
            queue: PacketFifo::default(),
            vcs: HashMap::default(),
            active_vcs: 0,
            policy,
        }
    }

    /// X_i of a VC.
    pub fn vc_cells(&self, vc: u64) -> u64 {
        self.vcs.get(&vc).map_or(0, |v| v.cells)
    }

    pub fn active_vcs(&self) -> u64 {
        self.active_vcs
    }

    pub fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx) {
        let (vc, aux, eom, clp, size) = {
            let p = ctx.packets.get(packet);
            let eom = self.settings.frames == Frames::Packets || p.has(flags::EOM);
            (
                self.settings.vc.id(p),
                p.aux,
                eom,
                p.has(flags::CLP),
                p.size,
            )
        };
        let state = self.vcs.get(&vc).map_or(FrameState::Idle, |v| v.frame);
        let next = match state {
            FrameState::Accepting { aux: a } if a == aux => {
                self.accept_cell(packet, size, vc, aux, ctx)
            }
            FrameState::Dropping {
                aux: a,
                keep_eom,
                cause,
            } if a == aux => {
                self.drop_cell(packet, size, vc, (eom && keep_eom, cause), ctx);
                state
            }
            _ => self.first_cell(packet, size, vc, aux, eom, clp, ctx),
        };
        self.vcs.entry(vc).or_default().frame = if eom { FrameState::Idle } else { next };
    }

    #[allow(clippy::too_many_arguments)]
    fn first_cell(
        &mut self,
        packet: PacketId,
        size: u32,
        vc: u64,
        aux: u64,
        eom: bool,
        clp: bool,
        ctx: &mut QdiscCtx,
    ) -> FrameState {
        let arrival = FrameArrival {
            vc,
            clp,
            total: self.queue.len() as u64,
            vc_cells: self.vc_cells(vc),
            active_vcs: self.active_vcs,
            capacity: self.settings.limit,
        };
        if self.policy.accept(&arrival, ctx.rng) {
            return self.accept_cell(packet, size, vc, aux, ctx);
        }
        let keep_eom = self.settings.keep_eom;
        let cause = self.policy.refusal_cause(&arrival);
        self.drop_cell(packet, size, vc, (eom && keep_eom, cause), ctx);
        FrameState::Dropping {
            aux,
            keep_eom,
            cause,
        }
    }

    /// Queues a cell of an accepted frame, or starts a partial discard if the buffer is full.
    fn accept_cell(
        &mut self,
        packet: PacketId,
        size: u32,
        vc: u64,
        aux: u64,
        ctx: &mut QdiscCtx,
    ) -> FrameState {
        if self.fits() {
            self.push(packet, size, vc);
            return FrameState::Accepting { aux };
        }
        ctx.drop(packet, DropReason::Overflow);
        FrameState::Dropping {
            aux,
            keep_eom: true,
            cause: PARTIAL_DISCARD,
        }
    }

    /// Discards a cell of a dropped frame for `cause`, except an EOM cell that is kept (`keep`)
    /// and fits.
    fn drop_cell(
        &mut self,
        packet: PacketId,
        size: u32,
        vc: u64,
        (keep, cause): (bool, Cause),
        ctx: &mut QdiscCtx,
    ) {
        if keep && self.fits() {
            self.push(packet, size, vc);
        } else {
            ctx.drop_because(packet, DropReason::Frame, cause);
        }
    }

    fn fits(&self) -> bool {
        (self.queue.len() as u64) < self.settings.limit
    }

    fn push(&mut self, packet: PacketId, size: u32, vc: u64) {
        self.queue.push(packet, size);
        let entry = self.vcs.entry(vc).or_default();
        if entry.cells == 0 {
            self.active_vcs += 1;
        }
        entry.cells += 1;
    }

    pub fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId> {
        let packet = self.queue.pop(ctx)?;
        let vc = self.settings.vc.id(ctx.packets.get(packet));
        if let Some(entry) = self.vcs.get_mut(&vc) {
            entry.cells = entry.cells.saturating_sub(1);
            if entry.cells == 0 {
                self.active_vcs -= 1;
            }
        }
        Some(packet)
    }

    pub fn peek(&self) -> Option<PacketId> {
        self.queue.front()
    }
    pub fn len_packets(&self) -> usize {
        self.queue.len()
    }
    pub fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }
}

/// Implements `Qdisc` for a discipline that wraps a `FrameFifo` in field `.0`.
macro_rules! frame_qdisc {
    ($ty:ty, $name:literal) => {
        impl $crate::qdisc::Qdisc for $ty {
            fn enqueue(
                &mut self,
                packet: $crate::net::packet::PacketId,
                ctx: &mut $crate::qdisc::QdiscCtx,
            ) {
                self.0.enqueue(packet, ctx)
            }
            fn dequeue(
                &mut self,
                ctx: &mut $crate::qdisc::QdiscCtx,
            ) -> Option<$crate::net::packet::PacketId> {
                self.0.dequeue(ctx)
            }
            fn peek(&self) -> Option<$crate::net::packet::PacketId> {
                self.0.peek()
            }
            fn len_packets(&self) -> usize {
                self.0.len_packets()
            }
            fn len_bytes(&self) -> u64 {
                self.0.len_bytes()
            }
            fn state(&self) -> Vec<(&'static str, f64)> {
                vec![("active_vcs", self.0.active_vcs() as f64)]
            }
            fn name(&self) -> &'static str {
                $name
            }
        }
    };
}
pub(crate) use frame_qdisc;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::net::packet::Packet;
    use crate::qdisc::testing::Harness;

    /// Accepts frames whose first cell sees fewer than `max_total` cells; records arrivals.
    pub struct Below {
        pub max_total: u64,
        pub seen: Vec<FrameArrival>,
    }

    impl FramePolicy for Below {
        fn accept(&mut self, frame: &FrameArrival, _rng: &mut Rng) -> bool {
            self.seen.push(*frame);
            frame.total < self.max_total
        }
        fn name(&self) -> &'static str {
            "below"
        }
    }

    pub fn cell(h: &mut Harness, flow: u32, frame: u64, eom: bool, clp: bool) -> PacketId {
        let mut flags = 0;
        if eom {
            flags |= flags::EOM;
        }
        if clp {
            flags |= flags::CLP;
        }
        h.packet_from(Packet {
            flow,
            size: 53,
            aux: frame,
            flags,
            ..Default::default()
        })
    }

    fn cells_fifo(limit: u64, max_total: u64, keep_eom: bool) -> FrameFifo<Below> {
        let settings = FrameSettings {
            limit,
            vc: FlowKey::Flow,
            frames: Frames::Cells,
            keep_eom,
        };
        FrameFifo::new(
            settings,
            Below {
                max_total,
                seen: Vec::new(),
            },
        )
    }

    fn send(h: &mut Harness, q: &mut FrameFifo<Below>, id: PacketId) {
        let mut ctx = h.ctx();
        q.enqueue(id, &mut ctx);
    }

    /// Sends a frame of `n` cells of `flow`; returns the ids.
    fn frame(
        h: &mut Harness,
        q: &mut FrameFifo<Below>,
        flow: u32,
        number: u64,
        n: usize,
    ) -> Vec<PacketId> {
        (0..n)
            .map(|i| {
                let id = cell(h, flow, number, i + 1 == n, false);
                send(h, q, id);
                id
            })
            .collect()
    }

    fn drops(h: &Harness) -> Vec<(PacketId, DropReason)> {
        h.effects.drops().to_vec()
    }

    #[test]
    fn policy_decides_once_per_frame_and_counts_per_vc() {
        let mut h = Harness::new();
        let mut q = cells_fifo(100, 100, false);
        frame(&mut h, &mut q, 1, 0, 3);
        frame(&mut h, &mut q, 2, 0, 2);
        frame(&mut h, &mut q, 1, 1, 1);
        // Three frames, three decisions, seen with X = 0, 3, 5 and N_a = 0, 1, 2.
        let seen: Vec<(u64, u64, u64)> = q
            .policy
            .seen
            .iter()
            .map(|f| (f.total, f.vc_cells, f.active_vcs))
            .collect();
        assert_eq!(seen, vec![(0, 0, 0), (3, 0, 1), (5, 3, 2)]);
        assert_eq!((q.vc_cells(1), q.vc_cells(2), q.active_vcs()), (4, 2, 2));
        let mut ctx = h.ctx();
        for _ in 0..3 {
            q.dequeue(&mut ctx);
        }
        assert_eq!((q.vc_cells(1), q.active_vcs()), (1, 2));
    }

    #[test]
    fn a_refused_frame_is_discarded_whole_and_the_eom_kept_only_on_request() {
        for keep_eom in [false, true] {
            let mut h = Harness::new();
            let mut q = cells_fifo(100, 2, keep_eom);
            frame(&mut h, &mut q, 1, 0, 2);
            let refused = frame(&mut h, &mut q, 2, 0, 3);
            let mut want = vec![
                (refused[0], DropReason::Frame),
                (refused[1], DropReason::Frame),
            ];
            if !keep_eom {
                want.push((refused[2], DropReason::Frame));
            }
            assert_eq!(drops(&h), want);
            let named: Vec<_> = h.effects.drop_causes().iter().map(|&(_, c)| c).collect();
            assert_eq!(
                named,
                vec!["below"; want.len()],
                "the policy's refusal cause"
            );
            assert_eq!(q.len_packets(), if keep_eom { 3 } else { 2 });
            assert_eq!(q.policy.seen.len(), 2, "one decision per frame");
        }
    }

    #[test]
    fn a_full_buffer_cuts_the_frame_and_keeps_its_eom_when_it_fits() {
        let mut h = Harness::new();
        let mut q = cells_fifo(3, 100, false);
        // Frame of 5 cells into K = 3: cells 0-2 queued, cell 3 overflows, cell 4 (EOM) is
        // discarded too since the buffer is still full.
        let cells = frame(&mut h, &mut q, 1, 0, 5);
        assert_eq!(
            drops(&h),
            vec![
                (cells[3], DropReason::Overflow),
                (cells[4], DropReason::Frame)
            ]
        );
        assert_eq!(h.effects.drop_causes(), [(1, PARTIAL_DISCARD)]);
        // Next frame: one cell leaves, a 3-cell frame of VC 2 is accepted (X = 2 < 100); its
        // second cell overflows, its EOM cell then fits after a departure and is kept.
        let mut ctx = h.ctx();
        q.dequeue(&mut ctx);
        let a = cell(&mut h, 2, 7, false, false);
        let b = cell(&mut h, 2, 7, false, false);
        let c = cell(&mut h, 2, 7, true, false);
        send(&mut h, &mut q, a);
        send(&mut h, &mut q, b);
        let mut ctx = h.ctx();
        q.dequeue(&mut ctx);
        send(&mut h, &mut q, c);
        assert_eq!(drops(&h)[2..], [(b, DropReason::Overflow)]);
        assert_eq!(q.vc_cells(2), 2);
    }

    #[test]
    fn a_new_frame_number_starts_a_new_frame_and_packets_are_one_cell_frames() {
        let mut h = Harness::new();
        let mut q = cells_fifo(100, 100, false);
        let first = cell(&mut h, 1, 0, false, false);
        send(&mut h, &mut q, first);
        // Frame 0 lost its EOM upstream: a cell of frame 1 starts a new frame.
        let next = cell(&mut h, 1, 1, true, false);
        send(&mut h, &mut q, next);
        assert_eq!(q.policy.seen.len(), 2);
        let settings = FrameSettings {
            limit: 100,
            vc: FlowKey::Flow,
            frames: Frames::Packets,
            keep_eom: false,
        };
        let mut p = FrameFifo::new(
            settings,
            Below {
                max_total: 100,
                seen: Vec::new(),
            },
        );
        for _ in 0..3 {
            let id = h.packet(4, 1000);
            let mut ctx = h.ctx();
            p.enqueue(id, &mut ctx);
        }
        assert_eq!(p.policy.seen.len(), 3, "every packet is a frame");
    }
}
