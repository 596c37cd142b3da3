//! A cache-prefetch hint. Schedulers that know which records the next operation will touch
//! (the next bucket in a round robin, the packet that departs next) ask for them one step
//! early, so the memory latency overlaps with the work in between. A hint never changes a
//! result; on targets without a prefetch instruction it does nothing.

/// Asks the CPU to bring the cache line holding `value` into the first-level cache.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    prefetch_address((value as *const T).cast::<u8>());
}

/// [`prefetch`] of the line at `pointer`, which may point at no object (a hint never faults).
#[inline(always)]
pub fn prefetch_pointer<T>(pointer: *const T) {
    prefetch_address(pointer.cast::<u8>());
}

/// [`prefetch`] of `slice[index]`, doing nothing when `index` is out of bounds.
#[inline(always)]
pub fn prefetch_at<T>(slice: &[T], index: usize) {
    if let Some(value) = slice.get(index) {
        prefetch(value);
    }
}

/// [`prefetch`] of every cache line holding `value`'s first `max_bytes`: a record of
/// several lines, or the object behind a `Box<dyn Trait>` (whose size its vtable knows).
#[inline(always)]
pub fn prefetch_lines<T: ?Sized>(value: &T, max_bytes: usize) {
    const LINE: usize = 64;
    let start = (value as *const T).cast::<u8>();
    let bytes = std::mem::size_of_val(value).min(max_bytes);
    let into_first_line = start as usize % LINE;
    for offset in (0..into_first_line + bytes).step_by(LINE) {
        prefetch_address(start.wrapping_add(offset).wrapping_sub(into_first_line));
    }
}

#[inline(always)]
fn prefetch_address(address: *const u8) {
    #[cfg(feature = "hint-trace")]
    trace::record(address as usize);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is a hint that never faults and reads nothing architecturally;
        // the address lies inside a live object.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// With the `hint-trace` feature, a recording of every hinted address, for studies of the
/// hints' memory footprint (`fairgate-pages`). Without it nothing is recorded or compiled.
#[cfg(feature = "hint-trace")]
pub mod trace {
    use std::cell::RefCell;

    thread_local! {
        static HINTED: RefCell<Option<Vec<usize>>> = const { RefCell::new(None) };
    }

    /// Starts recording this thread's hints (dropping any recorded before).
    pub fn start() {
        HINTED.with(|hinted| *hinted.borrow_mut() = Some(Vec::new()));
    }

    /// The addresses hinted since the last call (or [`start`]), oldest first; empty when not
    /// recording.
    pub fn take() -> Vec<usize> {
        HINTED.with(|hinted| {
            hinted
                .borrow_mut()
                .as_mut()
                .map(std::mem::take)
                .unwrap_or_default()
        })
    }

    pub(super) fn record(address: usize) {
        HINTED.with(|hinted| {
            if let Some(addresses) = hinted.borrow_mut().as_mut() {
                addresses.push(address);
            }
        });
    }
}
