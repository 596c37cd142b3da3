//! A re-armable timer on top of the engine's uncancellable agent timers.
//!
//! The engine cannot cancel a timer, so re-arming on every ACK would leave one stale event per
//! ACK. Instead the deadline is kept here and at most one event per timer kind is pending: when
//! it fires early (the deadline moved later) it is re-scheduled for the deadline.

use crate::engine::Time;
use crate::net::AgentCtx;

/// Both times hold `Time::MAX` for "none", so a timer takes 16 bytes of its agent's record
/// instead of 32 (a TCP sender's timeout reads it beside the rest of its hot fields).
#[derive(Clone, Copy, Debug)]
pub struct LazyTimer {
    deadline: Time,
    scheduled: Time,
}

/// No deadline, or no event pending. A deadline asked for at this time is kept one
/// picosecond earlier, still past the end of any run.
const NEVER: Time = Time::MAX;

impl Default for LazyTimer {
    fn default() -> Self {
        LazyTimer {
            deadline: NEVER,
            scheduled: NEVER,
        }
    }
}

impl LazyTimer {
    pub fn deadline(&self) -> Option<Time> {
        (self.deadline != NEVER).then_some(self.deadline)
    }

    pub fn is_armed(&self) -> bool {
        self.deadline != NEVER
    }

    /// Sets the deadline to `at`, scheduling an engine event with `token` only if none is
    /// pending at or before `at`.
    /// A deadline already past is due now (the engine clamps the event to now as well).
    pub fn arm(&mut self, at: Time, token: u64, ctx: &mut AgentCtx) {
        let at = at.max(ctx.now).min(NEVER - 1);
        self.deadline = at;
        if self.scheduled > at {
            self.scheduled = at;
            ctx.set_timer(at, token);
        }
    }

    pub fn cancel(&mut self) {
        self.deadline = NEVER;
    }

    /// Call when the engine fires `token`; returns true when the deadline has been reached
    /// (the timer is then disarmed), false for an early or stale event.
    pub fn fire(&mut self, token: u64, ctx: &mut AgentCtx) -> bool {
        if self.scheduled != ctx.now {
            return false;
        }
        self.scheduled = NEVER;
        if self.deadline <= ctx.now {
            self.deadline = NEVER;
            return true;
        }
        if self.deadline != NEVER {
            self.scheduled = self.deadline;
            ctx.set_timer(self.deadline, token);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::testing::AgentHarness;

    #[test]
    fn later_deadlines_reuse_the_pending_event() {
        let mut h = AgentHarness::new(1);
        let mut t = LazyTimer::default();
        h.call(|ctx| t.arm(10, 7, ctx));
        h.call(|ctx| t.arm(20, 7, ctx));
        assert_eq!(h.timers, vec![(10, 7)], "one event for both deadlines");
        h.now = 10;
        let mut fired = None;
        h.call(|ctx| fired = Some(t.fire(7, ctx)));
        assert_eq!(fired, Some(false));
        assert_eq!(
            h.timers,
            vec![(10, 7), (20, 7)],
            "moved to the real deadline"
        );
        // An earlier deadline schedules its own event; the later one becomes stale.
        h.call(|ctx| t.arm(15, 7, ctx));
        h.now = 15;
        h.call(|ctx| fired = Some(t.fire(7, ctx)));
        assert_eq!(fired, Some(true));
        h.now = 20;
        h.call(|ctx| fired = Some(t.fire(7, ctx)));
        assert_eq!(fired, Some(false), "stale event ignored");
        assert!(!t.is_armed());
    }

    #[test]
    fn a_deadline_at_the_end_of_time_stays_armed() {
        // `Time::MAX` marks "none" inside the timer; a deadline there is kept 1 ps earlier.
        let mut h = AgentHarness::new(1);
        let mut t = LazyTimer::default();
        assert_eq!(t.deadline(), None);
        h.call(|ctx| t.arm(Time::MAX, 7, ctx));
        assert!(t.is_armed());
        assert_eq!(t.deadline(), Some(Time::MAX - 1));
        assert_eq!(h.timers, vec![(Time::MAX - 1, 7)]);
        t.cancel();
        assert_eq!(t.deadline(), None);
    }

    #[test]
    fn a_deadline_in_the_past_fires_now() {
        // A deadline computed with a shrunken RTT estimate can lie before now; the engine
        // schedules the event at now, and the timer must accept it there (else it never fires
        // again).
        let mut h = AgentHarness::new(1);
        let mut t = LazyTimer::default();
        h.now = 50;
        h.call(|ctx| t.arm(30, 7, ctx));
        assert_eq!(h.timers, vec![(50, 7)]);
        let mut fired = None;
        h.call(|ctx| fired = Some(t.fire(7, ctx)));
        assert_eq!(fired, Some(true));
        h.call(|ctx| t.arm(80, 7, ctx));
        assert_eq!(h.timers, vec![(50, 7), (80, 7)], "re-armed after firing");
    }
}
