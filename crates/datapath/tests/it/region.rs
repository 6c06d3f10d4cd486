//! Unit tests of `region.rs` (moved from the file, which the library's
//! `test = false` no longer compiles as a test harness).

use datapath::region::*;
use transport::Memory;

/// Huge pages where the kernel gives them: an 8 MB region is advised
/// whenever transparent huge pages are not off, and works as the
/// plain one either way.
#[test]
fn a_huge_page_region_is_advised_where_the_kernel_allows() {
    let (mut r, advised) = Region::zeroed_huge(0x1000, 8 << 20);
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
    if mode.is_ok_and(|m| !m.contains("[never]")) {
        assert!(advised);
    }
    r.write(0x1000 + (4 << 20), b"huge");
    let mut b = [0u8; 4];
    r.read(0x1000 + (4 << 20), &mut b);
    assert_eq!(&b, b"huge");
    assert_eq!(r.bytes().len(), 8 << 20);
}

#[test]
fn accesses_stay_inside_the_region() {
    let mut r = Region::zeroed(1000, 16);
    assert!(r.write(1000, &[1; 16]));
    assert!(r.write(1015, &[2]));
    assert!(!r.write(1015, &[2, 2]), "one byte past the end");
    assert!(!r.write(999, &[3]), "below the base");
    assert!(!r.write(u64::MAX, &[3]), "an address that overflows");
    let mut b = [0u8; 4];
    assert!(r.read(1012, &mut b));
    assert_eq!(b, [1, 1, 1, 2]);
    assert!(!r.read(1013, &mut b));
    assert_eq!(r.bytes()[15], 2);
}

#[test]
fn the_pattern_depends_on_seed_and_place() {
    let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
    pattern(1, &mut a);
    pattern(2, &mut b);
    assert_ne!(a, b);
    assert_ne!(a[..8], a[8..16]);
    let mut c = [0u8; 61];
    pattern(1, &mut c);
    assert_eq!(a[..61], c[..], "a shorter buffer is a prefix");
}
