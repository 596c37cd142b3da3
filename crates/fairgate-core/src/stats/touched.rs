//! Which ports, agents and flows changed since the last sample: a discipline's queue, counters
//! and `state()`, and an agent's `sample()`, change only through the engine's calls into them,
//! and a flow's counters only through [`super::flow_counters::FlowCounters`]'s writes, so a sample
//! re-reads the objects in the set and reuses the previous row of the others.

/// A set of indices below a fixed bound, one bit each (50 KB for 400,000 ports).
#[derive(Clone, Debug, Default)]
pub struct Touched {
    words: Vec<u64>,
    len: usize,
}

impl Touched {
    /// The empty set of indices below `len`.
    pub fn new(len: usize) -> Self {
        Touched {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// Raises the bound to `len` (not below the current one); the new indices are unmarked.
    pub fn grow(&mut self, len: usize) {
        self.len = self.len.max(len);
        self.words.resize(self.len.div_ceil(64), 0);
    }

    #[inline(always)]
    pub fn mark(&mut self, index: usize) {
        self.words[index / 64] |= 1 << (index % 64);
    }

    /// Whether `index` is in the set (false for an index at or past the bound).
    #[inline(always)]
    pub fn contains(&self, index: usize) -> bool {
        self.words
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0)
    }

    pub fn unmark(&mut self, index: usize) {
        self.words[index / 64] &= !(1 << (index % 64));
    }

    /// Puts `index` in the set or takes it out.
    pub fn set(&mut self, index: usize, member: bool) {
        match member {
            true => self.mark(index),
            false => self.unmark(index),
        }
    }

    /// Puts every index in the set.
    pub fn mark_all(&mut self) {
        self.words.fill(u64::MAX);
        if let Some(last) = self.words.last_mut() {
            let used = self.len % 64;
            if used != 0 {
                *last = (1 << used) - 1;
            }
        }
    }

    /// Adds every index of `other` (a set of the same bound).
    pub fn add(&mut self, other: &Touched) {
        for (word, more) in self.words.iter_mut().zip(&other.words) {
            *word |= more;
        }
    }

    /// Takes out every index of `other` (a set of the same bound).
    pub fn remove(&mut self, other: &Touched) {
        for (word, less) in self.words.iter_mut().zip(&other.words) {
            *word &= !less;
        }
    }

    /// Moves the indices into `out` in ascending order, leaving the set empty.
    pub fn drain_into(&mut self, out: &mut Vec<u32>) {
        out.clear();
        for (w, word) in self.words.iter_mut().enumerate() {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                out.push((w * 64) as u32 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_the_marked_indices_in_order_and_empties() {
        let mut set = Touched::new(130);
        for i in [129, 3, 64, 3, 0] {
            set.mark(i);
        }
        set.unmark(64);
        let mut out = Vec::new();
        set.drain_into(&mut out);
        assert_eq!(out, [0, 3, 129]);
        set.drain_into(&mut out);
        assert!(out.is_empty());
        set.mark_all();
        set.drain_into(&mut out);
        assert_eq!(out, (0..130).collect::<Vec<u32>>());
    }

    #[test]
    fn adds_and_removes_another_set() {
        let (mut a, mut b) = (Touched::new(70), Touched::new(70));
        a.mark(1);
        b.mark(69);
        a.add(&b);
        let mut out = Vec::new();
        a.clone().drain_into(&mut out);
        assert_eq!(out, [1, 69]);
        b.set(1, true);
        b.set(69, false);
        a.remove(&b);
        a.drain_into(&mut out);
        assert_eq!(out, [69]);
    }
}
