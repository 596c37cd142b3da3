//! Discipline-specific drop and mark causes (a CHOKe match, an SFG filter drop, RED's early
//! and forced regions, a PFD push-out) beside the shared [`DropReason`] set: every counter
//! and the conservation check stay by reason; a cause only tells events of one reason apart
//! (`docs/results.md`, causes).
//!
//! Decisions: a cause is a static name chosen by the discipline (`"choke_match"`), kept with
//! the reason it refines; a drop or mark with no named cause is reported under its reason's
//! name. Per-port counts cover the whole run, like the events table (not the measurement
//! window), and list only named causes, in the order they first occurred.

use super::DropReason;

/// A discipline's name for why it dropped or marked a packet.
pub type Cause = &'static str;

/// Drops and marks of one named cause at one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CauseCount {
    pub cause: Cause,
    pub reason: DropReason,
    pub drops: u64,
    pub marks: u64,
}

/// The named causes seen at one port (a discipline names a handful, so a short list).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CauseCounts(Vec<CauseCount>);

impl CauseCounts {
    pub fn count_drop(&mut self, cause: Cause, reason: DropReason) {
        self.entry(cause, reason).drops += 1;
    }

    pub fn count_mark(&mut self, cause: Cause, reason: DropReason) {
        self.entry(cause, reason).marks += 1;
    }

    pub fn all(&self) -> &[CauseCount] {
        &self.0
    }

    fn entry(&mut self, cause: Cause, reason: DropReason) -> &mut CauseCount {
        let found = self
            .0
            .iter()
            .position(|c| c.cause == cause && c.reason == reason);
        let index = found.unwrap_or_else(|| {
            self.0.push(CauseCount {
                cause,
                reason,
                drops: 0,
                marks: 0,
            });
            self.0.len() - 1
        });
        &mut self.0[index]
    }
}

/// Walks the `(index, cause)` pairs a discipline attached to some of its drops or marks, in
/// index order, alongside the full list.
pub struct CauseCursor<'a> {
    named: &'a [(u32, Cause)],
    next: usize,
}

impl<'a> CauseCursor<'a> {
    pub fn new(named: &'a [(u32, Cause)]) -> Self {
        CauseCursor { named, next: 0 }
    }

    /// The cause named for entry `index` (indices must be asked in increasing order).
    pub fn at(&mut self, index: usize) -> Option<Cause> {
        let &(at, cause) = self.named.get(self.next)?;
        (at as usize == index).then(|| {
            self.next += 1;
            cause
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_keep_first_seen_order_and_split_by_reason() {
        let mut c = CauseCounts::default();
        c.count_drop("choke_match", DropReason::PushOut);
        c.count_drop("red_early", DropReason::Early);
        c.count_drop("choke_match", DropReason::PushOut);
        c.count_mark("red_early", DropReason::Early);
        let names: Vec<_> = c
            .all()
            .iter()
            .map(|e| (e.cause, e.drops, e.marks))
            .collect();
        assert_eq!(names, [("choke_match", 2, 0), ("red_early", 1, 1)]);
    }

    #[test]
    fn the_cursor_finds_named_entries_only() {
        let named = [(1, "a"), (3, "b")];
        let mut cursor = CauseCursor::new(&named);
        let found: Vec<_> = (0..5).map(|i| cursor.at(i)).collect();
        assert_eq!(found, [None, Some("a"), None, Some("b"), None]);
    }
}
