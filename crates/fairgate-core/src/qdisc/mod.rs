//! Queue disciplines: the one interface every scheduler, AQM, buffer manager and filter
//! implements, and the registry that makes each selectable from a scenario.
//!
//! A discipline sees packets by handle and acts on them through a [`QdiscCtx`]: it may accept
//! an arrival, drop it, ECN-mark it, or push out packets it already holds. The engine owns the
//! packets, the link and every counter; the discipline only decides.

pub mod aqm;
pub mod buffer;
pub mod classify;
pub mod corrupt;
pub mod fifo;
pub mod filter;
pub mod leak;
pub mod limit;
pub mod registry;
pub mod sched;
pub mod structures;
pub mod testing;

pub use crate::stats::causes::Cause;
pub use crate::stats::DropReason;
pub use limit::Limit;
pub use registry::QdiscSpec;

use crate::config::ScenarioError;
use crate::engine::prefetch::prefetch_lines;
use crate::engine::{Rng, Time};
use crate::net::packet::{flags, PacketArena, PacketId};

/// What a discipline may see of another queue (monitor point different from drop point).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueView {
    pub len_packets: usize,
    pub len_bytes: u64,
    pub link_rate_bps: u64,
    /// When the monitored port last became idle, if it is idle now.
    pub idle_since: Option<Time>,
    /// Congestion-notification probability the monitored discipline reports.
    pub congestion_probability: f64,
}

/// Decisions a discipline took during one call, applied by the engine afterwards.
#[derive(Default)]
pub struct Effects {
    pub(crate) drops: Vec<(PacketId, DropReason)>,
    pub(crate) marks: [u64; DropReason::COUNT],
    /// The packets marked during the call, for the drop and mark events table.
    pub(crate) marked: Vec<(PacketId, DropReason)>,
    /// (index into `drops`, cause) of the drops the discipline named a cause for.
    pub(crate) drop_causes: Vec<(u32, Cause)>,
    /// (index into `marked`, cause) of the marks the discipline named a cause for.
    pub(crate) mark_causes: Vec<(u32, Cause)>,
    pub(crate) timer: Option<Time>,
    /// Whether any of the above was touched since the engine last applied them.
    pub(crate) dirty: bool,
}

impl Effects {
    pub fn drops(&self) -> &[(PacketId, DropReason)] {
        &self.drops
    }
    pub fn marks(&self, reason: DropReason) -> u64 {
        self.marks[reason as usize]
    }
    pub fn timer(&self) -> Option<Time> {
        self.timer
    }
    /// The causes named for some of `drops()`, as (index into `drops()`, cause).
    pub fn drop_causes(&self) -> &[(u32, Cause)] {
        &self.drop_causes
    }
    /// Forgets every decision, keeping the allocation (for drivers outside the engine).
    pub fn clear(&mut self) {
        self.drops.clear();
        self.marks = [0; DropReason::COUNT];
        self.marked.clear();
        self.drop_causes.clear();
        self.mark_causes.clear();
        self.timer = None;
    }
}

/// Everything a discipline may use while deciding.
pub struct QdiscCtx<'a> {
    pub now: Time,
    pub packets: &'a mut PacketArena,
    pub rng: &'a mut Rng,
    /// Rate of the link this discipline feeds.
    pub link_rate_bps: u64,
    /// The monitored port's view when the scenario sets `monitor = "a->b"` on this link;
    /// `None` means the discipline watches its own queue.
    pub monitored: Option<QueueView>,
    /// When this port's link last went idle, if it is idle now (RED's idle-time decay).
    pub idle_since: Option<Time>,
    pub effects: &'a mut Effects,
}

impl<'a> QdiscCtx<'a> {
    /// Discards a packet: the arrival being enqueued, or one the discipline held.
    /// The discipline must no longer hold `packet` afterwards.
    pub fn drop(&mut self, packet: PacketId, reason: DropReason) {
        self.effects.drops.push((packet, reason));
        self.effects.dirty = true;
    }

    /// Discards a packet, with the discipline's own cause when it names one.
    pub fn drop_with(&mut self, packet: PacketId, reason: DropReason, cause: Option<Cause>) {
        match cause {
            Some(cause) => self.drop_because(packet, reason, cause),
            None => self.drop(packet, reason),
        }
    }

    /// Discards a packet like [`Self::drop`], naming the discipline's own cause for it (a CHOKe
    /// match, an SFG filter drop), reported beside `reason` in the results.
    pub fn drop_because(&mut self, packet: PacketId, reason: DropReason, cause: Cause) {
        let index = self.effects.drops.len() as u32;
        self.effects.drop_causes.push((index, cause));
        self.drop(packet, reason);
    }

    /// Marks like [`Self::mark_ce`], naming the discipline's own cause for the mark.
    pub fn mark_ce_because(&mut self, packet: PacketId, reason: DropReason, cause: Cause) -> bool {
        let index = self.effects.marked.len() as u32;
        let marked = self.mark_ce(packet, reason);
        if marked {
            self.effects.mark_causes.push((index, cause));
        }
        marked
    }

    /// Sets CE on an ECN-capable packet and returns true; returns false (and changes nothing)
    /// when the packet is not ECT, in which case the caller should drop it instead.
    pub fn mark_ce(&mut self, packet: PacketId, reason: DropReason) -> bool {
        let p = self.packets.get_mut(packet);
        if !p.has(flags::ECT) {
            return false;
        }
        p.set(flags::CE);
        self.effects.marks[reason as usize] += 1;
        self.effects.marked.push((packet, reason));
        self.effects.dirty = true;
        true
    }

    /// Sets a flag such as the DECbit and counts it as a mark.
    pub fn mark_flag(&mut self, packet: PacketId, flag: u16, reason: DropReason) {
        self.packets.get_mut(packet).set(flag);
        self.effects.marks[reason as usize] += 1;
        self.effects.marked.push((packet, reason));
        self.effects.dirty = true;
    }

    /// Asks for `on_timer` at `at`; replaces any earlier request.
    pub fn set_timer(&mut self, at: Time) {
        self.effects.timer = Some(at);
        self.effects.dirty = true;
    }

    pub fn size(&self, packet: PacketId) -> u32 {
        self.packets.get(packet).size
    }
}

/// The queue-discipline interface.
pub trait Qdisc: Send {
    /// Takes an arrival. The discipline either keeps it or drops it through `ctx`, and may
    /// push out packets it holds.
    fn enqueue(&mut self, packet: PacketId, ctx: &mut QdiscCtx);
    /// The next packet to transmit, if any is eligible now.
    fn dequeue(&mut self, ctx: &mut QdiscCtx) -> Option<PacketId>;
    /// The packet `dequeue` would return, without removing it.
    fn peek(&self) -> Option<PacketId>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> u64;
    /// Called once before the run; may set the first timer.
    fn init(&mut self, _ctx: &mut QdiscCtx) {}
    /// Called at the time requested with `ctx.set_timer` (periodic work).
    fn on_timer(&mut self, _ctx: &mut QdiscCtx) {}
    /// The current congestion-notification (drop or mark) probability, for filters in front.
    fn congestion_probability(&self) -> f64 {
        0.0
    }
    /// Internal variables worth plotting (average queue, probability, ...), sampled with the
    /// queue length. Like the lengths, they change only inside the engine's calls: a sample
    /// reuses the last values of a discipline not called since.
    fn state(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// A cache hint for what a sample reads (`len_packets`, `len_bytes`, `state`), given a
    /// few ports ahead of the sample's visit (a hint never changes a result): by default the
    /// discipline's first 128 bytes; a discipline whose lengths lie elsewhere names them.
    fn prefetch_sample(&self) {
        prefetch_lines(self, 128);
    }
    /// A cache hint for what an arrival's `enqueue` reads of the discipline (and, at an idle
    /// link, the `dequeue` that follows), given a few events ahead (a hint never changes a
    /// result): by default the discipline's first 512 bytes; a discipline names its lines.
    fn prefetch_enqueue(&self) {
        prefetch_lines(self, 512);
    }
    /// A second cache hint for an arrival, given a round after [`Qdisc::prefetch_enqueue`]
    /// and read through the lines it fetched: where the arrival goes (a ring's slot). By
    /// default none.
    fn prefetch_enqueue_slot(&self) {}
    /// The largest arrival, in bytes, that may skip this discipline onto an idle link: one
    /// that `enqueue` would keep and the `dequeue` that follows would hand straight back,
    /// leaving every other value as it was. Only an empty discipline may name one (a drop-tail
    /// FIFO while empty): the engine reads a non-zero answer as "holds no packet" and then
    /// does not ask the lengths. 0, the default, when there is none; the engine then calls
    /// both. Asked after every call into the discipline, so it may follow the state; the
    /// engine skips the two calls only with an idle link, no device queue and no monitored
    /// port (see `docs/engine.md`).
    fn passes_to_idle_link(&self) -> u32 {
        0
    }
    fn name(&self) -> &'static str;
}

/// What a discipline's config needs to build it.
#[derive(Clone, Debug)]
pub struct QdiscEnv {
    pub link_rate_bps: u64,
    /// Port name ("a->b"), for messages.
    pub port: String,
}

/// Each discipline's configuration implements this; the registry dispatches to it.
/// A timer a discipline re-arms for the whole run, with the field that sets its period.
#[derive(Clone, Debug, PartialEq)]
pub struct Period {
    /// The field, relative to the discipline's own path.
    pub field: String,
    /// The shortest time between two firings, seconds.
    pub secs: f64,
    /// How many such timers can run at once.
    pub timers: f64,
}

impl Period {
    /// One timer every `secs`, set by `field`.
    pub fn one(field: &str, secs: f64) -> Self {
        Period {
            field: field.to_string(),
            secs,
            timers: 1.0,
        }
    }

    /// The same period under a nested field (`red.adapt_interval`).
    pub fn nested(self, parent: &str) -> Self {
        Period {
            field: format!("{parent}.{}", self.field),
            ..self
        }
    }
}

/// The periods of a nested discipline, under its field `parent`.
pub fn nested_periods(periods: Vec<Period>, parent: &str) -> Vec<Period> {
    periods.into_iter().map(|p| p.nested(parent)).collect()
}

pub trait QdiscConfig {
    /// Checks parameters; `path` is the field path of this config in the scenario.
    fn validate(&self, _path: &str) -> Result<(), ScenarioError> {
        Ok(())
    }
    /// The timers the discipline re-arms all run long (checked against the run's length).
    fn periods(&self) -> Vec<Period> {
        Vec::new()
    }
    fn build(&self, env: &QdiscEnv) -> Box<dyn Qdisc>;
}
