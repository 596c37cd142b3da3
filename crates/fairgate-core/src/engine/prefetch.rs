//! A cache-prefetch hint. Schedulers that know which records the next operation will touch
//! (the next bucket in a round robin, the packet that departs next) ask for them one step
//! early, so the memory latency overlaps with the work in between. A hint never changes a
//! result; on targets without a prefetch instruction it does nothing.

/// Asks the CPU to bring the cache line holding `value` into the first-level cache.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint that never faults and reads nothing architecturally;
        // the pointer comes from a live reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// [`prefetch`] of `slice[index]`, doing nothing when `index` is out of bounds.
#[inline(always)]
pub fn prefetch_at<T>(slice: &[T], index: usize) {
    if let Some(value) = slice.get(index) {
        prefetch(value);
    }
}
