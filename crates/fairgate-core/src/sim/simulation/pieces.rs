//! A run in pieces of wall-clock time, for callers that look for Ctrl-C or a growing record
//! between them (the studies); where a piece ends never changes a result.

use super::Simulation;
use crate::engine::Time;

/// [`Simulation::run_in_pieces`]'s first piece is this fraction of the run; no piece is
/// shorter than a microsecond.
const FIRST_PIECES: Time = 10_000;
const SMALLEST_PIECE: Time = 1_000_000;

impl Simulation {
    /// Runs to the end in pieces of about `wall` of wall-clock time each, asking `between`
    /// after every piece whether to go on (a caller checks for Ctrl-C or a growing record
    /// there); its error stops the run and is returned. Where a piece ends never changes a
    /// result. A run that fails (`failure()`) ends the loop with `Ok`.
    pub fn run_in_pieces<E>(
        &mut self,
        wall: std::time::Duration,
        mut between: impl FnMut(&Self) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut piece = (self.end / FIRST_PIECES).max(SMALLEST_PIECE);
        while !self.finished() && self.failure.is_none() {
            let started = std::time::Instant::now();
            self.run_until(self.now.saturating_add(piece));
            between(self)?;
            let scale = wall.as_secs_f64() / started.elapsed().as_secs_f64().max(1e-9);
            piece = ((piece as f64 * scale.clamp(0.01, 2.0)) as Time).max(SMALLEST_PIECE);
        }
        Ok(())
    }
}
