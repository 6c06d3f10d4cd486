//! Unit tests of `fixed.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use engine::Rng;
use engine::StreamKind;
use workload::fixed::*;

#[test]
fn permutation_is_a_derangement_bijection() {
    let hosts: Vec<u32> = (100..228).collect();
    let mut rng = Rng::new(7, StreamKind::Workload, 0);
    let flows = permutation_flows(&hosts, 2_000_000, 5, &mut rng).unwrap();
    assert_eq!(flows.len(), 128);
    let mut dsts: Vec<u32> = flows.iter().map(|f| f.dst).collect();
    for (f, &h) in flows.iter().zip(&hosts) {
        assert_eq!(f.src, h);
        assert_ne!(f.src, f.dst);
        assert_eq!((f.bytes, f.start), (2_000_000, 5));
    }
    dsts.sort();
    assert_eq!(dsts, hosts);
}

#[test]
fn incast_and_all_to_all_shapes() {
    let inc = incast_flows(&[1, 2, 3], 0, 500, 9).unwrap();
    let pairs: Vec<(u32, u32)> = inc.iter().map(|f| (f.src, f.dst)).collect();
    assert_eq!(pairs, vec![(1, 0), (2, 0), (3, 0)]);
    let a2a = all_to_all_flows(&[0, 1, 2], 100, 0).unwrap();
    let pairs: Vec<(u32, u32)> = a2a.iter().map(|f| (f.src, f.dst)).collect();
    assert_eq!(pairs, vec![(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]);
    assert!(a2a.iter().enumerate().all(|(i, f)| f.id == i as u32));
}

#[test]
fn static_patterns_reject_bad_input() {
    let mut rng = Rng::new(7, StreamKind::Workload, 0);
    assert!(permutation_flows(&[3], 1, 0, &mut rng).is_err());
    assert!(permutation_flows(&[3, 3], 1, 0, &mut rng).is_err());
    assert!(incast_flows(&[1, 2], 2, 1, 0)
        .unwrap_err()
        .to_string()
        .contains("also a sender"));
    assert!(incast_flows(&[], 2, 1, 0).is_err());
    assert!(all_to_all_flows(&[0, 1], 0, 0).is_err());
}
