//! A calendar bucket handed over to the run loop, sorted once, beside the heap. Pushing each
//! of a bucket's entries through the heap and popping it again cost two walks of the heap per
//! event; at 100,000 flows the heap's lower levels left the caches between pops, and the
//! queue took a fifth of the run's time. A sorted bucket gives its entries up in order at one
//! comparison each with the heap's top (the heap then holds only events scheduled since, that
//! fall before the horizon). Sorting keys that are unique (time, sequence) pairs gives the
//! same order as the heap, so every result is unchanged.

use super::Entry;

/// The released bucket's entries not taken yet, earliest first.
#[derive(Default)]
pub(super) struct Released {
    entries: Vec<Entry>,
    next: usize,
}

impl Released {
    /// Takes a bucket's entries (only once the previous bucket has been taken whole).
    pub(super) fn fill(&mut self, mut entries: Vec<Entry>) {
        debug_assert!(self.is_empty(), "a bucket released over another");
        entries.sort_unstable_by_key(|e| e.key);
        self.entries = entries;
        self.next = 0;
    }

    /// The key of the earliest entry not taken.
    #[inline(always)]
    pub(super) fn first_key(&self) -> Option<u128> {
        self.entries.get(self.next).map(|e| e.key)
    }

    /// The earliest entry, taken out; the vector is freed with the last one (a bucket's
    /// capacity kept would be every event of a turn of the ring, see `calendar.rs`).
    #[inline(always)]
    pub(super) fn take(&mut self) -> Option<Entry> {
        let entry = *self.entries.get(self.next)?;
        self.next += 1;
        if self.next == self.entries.len() {
            self.entries = Vec::new();
            self.next = 0;
        }
        Some(entry)
    }

    pub(super) fn len(&self) -> usize {
        self.entries.len() - self.next
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every entry not taken, taken out.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Entry> + '_ {
        let next = std::mem::take(&mut self.next);
        self.entries.drain(..).skip(next)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Event;
    use super::*;

    fn entry(key: u128) -> Entry {
        Entry {
            key,
            event: Event::Sample,
        }
    }

    #[test]
    fn entries_come_out_sorted_and_the_last_frees_the_vector() {
        let mut released = Released::default();
        released.fill([5, 1, 9, 3].map(entry).to_vec());
        assert_eq!(released.len(), 4);
        assert_eq!(released.first_key(), Some(1));
        let keys: Vec<u128> = std::iter::from_fn(|| released.take())
            .map(|e| e.key)
            .collect();
        assert_eq!(keys, vec![1, 3, 5, 9]);
        assert!(released.is_empty() && released.entries.capacity() == 0);
        assert_eq!(released.first_key(), None);
    }

    #[test]
    fn drain_gives_the_entries_not_taken() {
        let mut released = Released::default();
        released.fill([4, 2, 8].map(entry).to_vec());
        released.take();
        let rest: Vec<u128> = released.drain().map(|e| e.key).collect();
        assert_eq!(rest, vec![4, 8]);
        assert!(released.is_empty());
    }
}
