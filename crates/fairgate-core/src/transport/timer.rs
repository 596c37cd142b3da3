//! A re-armable timer on top of the engine's uncancellable agent timers.
//!
//! The engine cannot cancel a timer, so re-arming on every ACK would leave one stale event per
//! ACK. Instead the deadline is kept here and at most one event per timer kind is pending: when
//! it fires early (the deadline moved later) it is re-scheduled for the deadline.

use crate::engine::Time;
use crate::net::AgentCtx;

#[derive(Clone, Copy, Debug, Default)]
pub struct LazyTimer {
    deadline: Option<Time>,
    scheduled: Option<Time>,
}

impl LazyTimer {
    pub fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }

    /// Sets the deadline to `at`, scheduling an engine event with `token` only if none is
    /// pending at or before `at`.
    /// A deadline already past is due now (the engine clamps the event to now as well).
    pub fn arm(&mut self, at: Time, token: u64, ctx: &mut AgentCtx) {
        let at = at.max(ctx.now);
        self.deadline = Some(at);
        if self.scheduled.is_none_or(|s| s > at) {
            self.scheduled = Some(at);
            ctx.set_timer(at, token);
        }
    }

    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    /// Call when the engine fires `token`; returns true when the deadline has been reached
    /// (the timer is then disarmed), false for an early or stale event.
    pub fn fire(&mut self, token: u64, ctx: &mut AgentCtx) -> bool {
        if self.scheduled != Some(ctx.now) {
            return false;
        }
        self.scheduled = None;
        match self.deadline {
            Some(d) if d <= ctx.now => {
                self.deadline = None;
                true
            }
            Some(d) => {
                self.scheduled = Some(d);
                ctx.set_timer(d, token);
                false
            }
            None => false,
        }
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
