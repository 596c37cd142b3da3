//! The congestion-control variant a [`super::sender::TcpSender`] holds, inline in the sender's
//! record instead of boxed: with many flows each timer or ACK reaches a sender whose state
//! left the caches, and a box was one more cold line (about 30 ns once the fill buffers are
//! full, `docs/engine.md`). A variant whose state is large (SACK's scoreboard) stays boxed
//! inside, so the record does not grow. Calls are matched, not dispatched through a table.
//!
//! A new variant is one file implementing [`CongestionControl`], one line in the list below
//! and one in [`super::config::CcKind`].

use super::cc::{AckEvent, CongestionControl, Reaction, TcpState};
use super::{newreno::NewReno, reno::Reno, sack::Sack, tahoe::Tahoe};
use crate::engine::prefetch::prefetch_lines;

/// Declares [`Variant`] over the listed variants and forwards every trait method to the one
/// held.
macro_rules! variants {
    ($($name:ident($ty:ty)),* $(,)?) => {
        /// One of the built-in congestion-control variants.
        pub enum Variant {
            $($name($ty)),*
        }

        impl CongestionControl for Variant {
            fn name(&self) -> &'static str {
                match self { $(Variant::$name(cc) => cc.name()),* }
            }
            #[inline]
            fn on_ack(&mut self, s: &mut TcpState, ack: &AckEvent) -> Reaction {
                match self { $(Variant::$name(cc) => cc.on_ack(s, ack)),* }
            }
            #[inline]
            fn on_timeout(&mut self, s: &mut TcpState) {
                match self { $(Variant::$name(cc) => cc.on_timeout(s)),* }
            }
            #[inline]
            fn flight_at_timeout(&self, s: &TcpState) -> u64 {
                match self { $(Variant::$name(cc) => cc.flight_at_timeout(s)),* }
            }
            #[inline]
            fn in_recovery(&self) -> bool {
                match self { $(Variant::$name(cc) => cc.in_recovery()),* }
            }
            #[inline]
            fn next_segment(&mut self, s: &TcpState) -> Option<(u64, u64)> {
                match self { $(Variant::$name(cc) => cc.next_segment(s)),* }
            }
            #[inline]
            fn on_sent(&mut self, s: &TcpState, seq: u64, len: u64) {
                match self { $(Variant::$name(cc) => cc.on_sent(s, seq, len)),* }
            }
        }
    };
}

variants! {
    Tahoe(Tahoe),
    Reno(Reno),
    NewReno(NewReno),
    Sack(Box<Sack>),
}

impl Variant {
    /// A cache hint for the variant's state outside the sender's record (a hint never changes
    /// a result).
    pub fn prefetch_boxed(&self) {
        if let Variant::Sack(sack) = self {
            prefetch_lines(&**sack, usize::MAX);
        }
    }
}

const _: () = assert!(
    std::mem::size_of::<Variant>() <= 16,
    "inline, a variant takes no more room in the sender than the box it replaced"
);
