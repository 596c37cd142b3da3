//! Byun's per-user PEP buffer pool [Byun07, §6.1]: "625 KB is allocated for the PEP buffers of
//! each user", a user being a satellite terminal that may open several connections. With
//! `flow_control = { pool = "user", ... }` the connections a gateway splits toward one
//! destination host share one buffer limit B (the `buffer`, shrunk by every mark any of them
//! carries and grown by every unmarked arrival) and one count of bytes held; each advertises
//! min(B - bytes the user holds, MaxRcvWind) [Byun07, eq. 2.1].
//!
//! Decisions (long form on `docs/models/buffer_flow_control.md`):
//! - A user is a destination node: the clients' hosts behind the satellite terminal.
//! - The bytes a user holds are the sum of its connections' last reported holdings; a
//!   connection reports whenever it computes its window (after every action of its RHS), and
//!   uses its own current holding for itself, so no connection counts stale bytes of its own.
//! - When a connection's holding falls, the other connections of its user get a chance to
//!   send a window update (the shared sender has no persist timer to ask for one).

use std::sync::{Arc, Mutex, MutexGuard};

use super::flow_control::BufferFlowControl;
use crate::engine::Time;

/// One user's pool: its limit and the bytes its connections hold.
pub(crate) struct UserPool {
    fc: BufferFlowControl,
    held: u64,
    /// The gateway slots of its open connections.
    members: Vec<usize>,
}

impl UserPool {
    pub fn new(fc: BufferFlowControl) -> Self {
        UserPool {
            fc,
            held: 0,
            members: Vec::new(),
        }
    }

    /// The pool's limit B and the bytes its users hold, for traces.
    pub fn levels(&self) -> (f64, u64, u64) {
        (self.fc.limit(), self.held, self.fc.marks())
    }
}

/// A connection's flow control: its own limit, or its share of its user's pool.
pub enum FlowControl {
    Own(BufferFlowControl),
    Pool(PoolShare),
}

pub struct PoolShare {
    pool: Arc<Mutex<UserPool>>,
    slot: usize,
    /// The holding this connection last reported to the pool.
    reported: u64,
    /// Marks carried by this connection's own arrivals.
    marks: u64,
}

fn lock(pool: &Mutex<UserPool>) -> MutexGuard<'_, UserPool> {
    pool.lock().unwrap_or_else(|e| e.into_inner())
}

impl PoolShare {
    /// Joins `pool` as the connection in gateway slot `slot`.
    pub(crate) fn join(pool: Arc<Mutex<UserPool>>, slot: usize) -> Self {
        lock(&pool).members.push(slot);
        PoolShare {
            pool,
            slot,
            reported: 0,
            marks: 0,
        }
    }

    /// Takes the connection's holding out of the pool (it is retired).
    pub(crate) fn leave(&mut self) {
        let mut pool = lock(&self.pool);
        pool.held -= self.reported;
        pool.members.retain(|&m| m != self.slot);
        self.reported = 0;
    }

    /// The other connections of the same user.
    pub(crate) fn others(&self) -> Vec<usize> {
        let pool = lock(&self.pool);
        let others = pool.members.iter().filter(|&&m| m != self.slot);
        others.copied().collect()
    }
}

impl FlowControl {
    /// One data arrival at the PEP, `marked` by the receive queue or not.
    pub fn on_arrival(&mut self, marked: bool, now: Time) {
        match self {
            FlowControl::Own(fc) => fc.on_arrival(marked, now),
            FlowControl::Pool(share) => {
                share.marks += marked as u64;
                lock(&share.pool).fc.on_arrival(marked, now);
            }
        }
    }

    /// Reports the connection's current holding to its pool.
    pub fn report(&mut self, held: u64) {
        if let FlowControl::Pool(share) = self {
            let mut pool = lock(&share.pool);
            pool.held = pool.held - share.reported + held;
            share.reported = held;
        }
    }

    /// The window for a connection holding `held` bytes.
    pub fn window(&self, held: u64) -> u64 {
        match self {
            FlowControl::Own(fc) => fc.window(held),
            FlowControl::Pool(share) => {
                let pool = lock(&share.pool);
                pool.fc.window(pool.held - share.reported + held)
            }
        }
    }

    /// The connection's own limit B (NaN in a pool: the pool's is traced per user).
    pub fn limit(&self) -> f64 {
        match self {
            FlowControl::Own(fc) => fc.limit(),
            FlowControl::Pool(_) => f64::NAN,
        }
    }

    /// Marks carried by this connection's arrivals.
    pub fn marks(&self) -> u64 {
        match self {
            FlowControl::Own(fc) => fc.marks(),
            FlowControl::Pool(share) => share.marks,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::config::FlowControlSpec;

    fn pool() -> Arc<Mutex<UserPool>> {
        let spec: FlowControlSpec = toml::from_str("decr = 0.5").unwrap();
        Arc::new(Mutex::new(UserPool::new(BufferFlowControl::new(&spec))))
    }

    #[test]
    fn a_users_connections_share_one_limit_and_one_holding() {
        let shared = pool();
        let mut a = FlowControl::Pool(PoolShare::join(shared.clone(), 0));
        let mut b = FlowControl::Pool(PoolShare::join(shared.clone(), 1));
        a.report(600_000);
        // b holds nothing but its user holds 600,000 of 625,000 B.
        assert_eq!(b.window(0), 16_000);
        b.report(10_000);
        assert_eq!(a.window(600_000), 15_000);
        // A mark carried by b halves the user's B for a too.
        b.on_arrival(true, 0);
        assert_eq!((a.window(300_000), a.marks(), b.marks()), (2_500, 0, 1));
        let FlowControl::Pool(share) = &mut a else {
            unreachable!()
        };
        assert_eq!(share.others(), vec![1]);
        share.leave();
        assert_eq!(b.window(10_000), 16_000);
        assert_eq!(lock(&shared).members, vec![1]);
    }
}
