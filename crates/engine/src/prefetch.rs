//! A cache hint for hot paths that read, in a known order, data written
//! long before (a packet is read when it reaches its host, hundreds of
//! events after it was sent): asking for the next item while the current
//! one is handled hides most of the wait. Touches nothing else.

/// Hints the CPU to bring the cache line at `x`, and the next one if `T`
/// is larger than a line, into L1.
#[inline]
pub fn prefetch<T>(x: &T) {
    let at: *const u8 = (x as *const T).cast();
    prefetch_ptr(at);
    if std::mem::size_of::<T>() > 64 {
        prefetch_ptr(at.wrapping_add(64));
    }
}

/// Hints the CPU to bring the cache line at `at` into L1. `at` need not
/// point at anything valid (it is never read), so callers compute it with
/// `wrapping_add` and skip the bounds check.
#[inline]
pub fn prefetch_ptr<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch is only a hint: it reads nothing the program
        // sees and cannot fault; SSE is baseline on x86_64.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at.cast()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
