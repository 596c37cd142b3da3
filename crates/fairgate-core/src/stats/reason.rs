//! Why a packet was dropped or marked: the shared reason set every counter is kept by, so
//! conservation can be checked whatever discipline dropped the packet.

/// Why a packet was dropped (or marked). Counters are kept per reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DropReason {
    /// The buffer was full and the arrival was refused (drop-tail).
    Overflow,
    /// The buffer was full and the packet at the head was discarded (drop-from-front).
    Front,
    /// A queued packet was pushed out to make room for an arrival (LQD, PFD, CHOKe matches).
    PushOut,
    /// A probabilistic early decision of an AQM.
    Early,
    /// A forced decision of an AQM (average above its maximum threshold, hard limit).
    Forced,
    /// A pre-queue filter or policer (SFG, RED-PD, SFB penalty box).
    Filter,
    /// A frame-level discard (EPD, PPD) on cells.
    Frame,
    /// Random loss on a link.
    LinkLoss,
    /// No route to the destination (an agent addressed an unreachable node).
    NoRoute,
}

impl DropReason {
    pub const ALL: [DropReason; 9] = [
        DropReason::Overflow,
        DropReason::Front,
        DropReason::PushOut,
        DropReason::Early,
        DropReason::Forced,
        DropReason::Filter,
        DropReason::Frame,
        DropReason::LinkLoss,
        DropReason::NoRoute,
    ];
    pub const COUNT: usize = Self::ALL.len();

    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Front => "front",
            DropReason::PushOut => "pushout",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::Filter => "filter",
            DropReason::Frame => "frame",
            DropReason::LinkLoss => "link_loss",
            DropReason::NoRoute => "no_route",
        }
    }
}
