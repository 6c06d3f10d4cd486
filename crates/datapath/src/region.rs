//! Registered memory regions backed by real buffers: the one region an
//! endpoint registers, at a base address of its choosing, and the test
//! pattern transfers fill and check it with. Every access is checked
//! against the region's bounds (the transport's [`Memory`] contract): a
//! hostile address never reaches outside the buffer.
//!
//! Uses only `transport::Memory` (and libc's madvise, for huge pages).

use transport::Memory;

/// One registered region: `len` bytes at `base`.
pub struct Region {
    base: u64,
    bytes: Vec<u8>,
}

impl Region {
    /// A zeroed region, its pages written once now, as registering
    /// memory with an RNIC pins it: a page first touched by a packet would
    /// cost a page fault on the receive path (a tenth of a receiver's
    /// time, measured, with a lazily mapped buffer).
    pub fn zeroed(base: u64, len: usize) -> Region {
        let mut bytes = vec![0u8; len];
        touch(&mut bytes);
        Region { base, bytes }
    }

    /// [`Region::zeroed`], asking the kernel first for transparent huge
    /// pages over its 2 MB-aligned interior (madvise MADV_HUGEPAGE
    /// before any page is touched), so a large region takes a TLB entry
    /// per 2 MB rather than per 4 KB (RDMAvisor §2.3 uses huge pages, as
    /// FaRM does). Where the kernel has none to give, the advice fails
    /// and the region is the plain one; the bool says whether it was
    /// taken (the kernel may still fall back page by page).
    pub fn zeroed_huge(base: u64, len: usize) -> (Region, bool) {
        let mut bytes = vec![0u8; len];
        let advised = advise_huge(&mut bytes);
        touch(&mut bytes);
        (Region { base, bytes }, advised)
    }

    /// A region filled with [`pattern`]`(seed)`.
    pub fn patterned(base: u64, len: usize, seed: u64) -> Region {
        let mut r = Region::zeroed(base, len);
        pattern(seed, &mut r.bytes);
        r
    }

    pub fn base(&self) -> u64 {
        self.base
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// CRC-32 of the whole region.
    pub fn checksum(&self) -> u32 {
        crc32fast::hash(&self.bytes)
    }

    /// The region's bytes at `addr..addr + len`, if inside it.
    fn range(&self, addr: u64, len: usize) -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(addr.checked_sub(self.base)?).ok()?;
        let end = start.checked_add(len)?;
        (end <= self.bytes.len()).then_some(start..end)
    }
}

impl Memory for Region {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        match self.range(addr, buf.len()) {
            Some(r) => {
                buf.copy_from_slice(&self.bytes[r]);
                true
            }
            None => false,
        }
    }

    fn write(&mut self, addr: u64, data: &[u8]) -> bool {
        match self.range(addr, data.len()) {
            Some(r) => {
                self.bytes[r].copy_from_slice(data);
                true
            }
            None => false,
        }
    }
}

/// Writes every page of `bytes` once (see [`Region::zeroed`]).
fn touch(bytes: &mut [u8]) {
    for page in bytes.chunks_mut(4096) {
        // A volatile store: the allocator's zeroed pages would let a
        // plain store of zero be optimised away.
        // SAFETY: `page` is a valid, non-empty, exclusive slice.
        unsafe { std::ptr::write_volatile(page.as_mut_ptr(), 0) };
    }
}

/// madvise(MADV_HUGEPAGE) over the whole 2 MB pages inside `bytes`.
fn advise_huge(bytes: &mut [u8]) -> bool {
    const HUGE: usize = 2 << 20;
    let start = (bytes.as_mut_ptr() as usize).next_multiple_of(HUGE);
    let end = (bytes.as_mut_ptr() as usize + bytes.len()) / HUGE * HUGE;
    if start >= end {
        return false;
    }
    // SAFETY: start..end lies inside `bytes`, which this call borrows
    // mutably; the advice changes how pages are backed, not their
    // contents.
    unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) == 0 }
}

/// Fills `buf` with bytes that depend on `seed` and on each byte's place
/// (splitmix64 of the seed and the 8-byte word's index), so a byte placed
/// at the wrong offset or left out changes the checksum.
pub fn pattern(seed: u64, buf: &mut [u8]) {
    for (i, chunk) in buf.chunks_mut(8).enumerate() {
        let mut z = seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
}
