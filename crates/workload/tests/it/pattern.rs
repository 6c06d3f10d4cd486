//! Unit tests of `pattern.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use engine::Rng;
use engine::StreamKind;
use workload::pattern::*;

fn rng(id: u64) -> Rng {
    Rng::new(42, StreamKind::Workload, id)
}

#[test]
fn derangement_is_a_bijection_without_fixed_points() {
    let mut r = rng(0);
    for n in [2, 3, 5, 128, 1024] {
        for _ in 0..20 {
            let p = derangement(n, &mut r);
            let mut seen = vec![false; n];
            for (i, &j) in p.iter().enumerate() {
                assert_ne!(i, j);
                assert!(!seen[j]);
                seen[j] = true;
            }
        }
    }
}

#[test]
fn derangements_of_three_are_both_reached() {
    // The two derangements of 3 elements are both 3-cycles; check both
    // come out in roughly equal numbers (uniformity).
    let mut r = rng(1);
    let a = (0..4000)
        .filter(|_| derangement(3, &mut r) == vec![1, 2, 0])
        .count();
    assert!((1700..2300).contains(&a), "{a}");
}

#[test]
fn all_to_all_never_picks_self_and_covers_everyone() {
    let c = Chooser::AllToAll;
    let mut r = rng(2);
    let mut hit = [0u32; 6];
    for _ in 0..6000 {
        let d = c.pick(3, 6, &mut r);
        assert_ne!(d, 3);
        hit[d] += 1;
    }
    assert_eq!(hit[3], 0);
    assert!(hit.iter().enumerate().all(|(i, &h)| i == 3 || h > 1000));
}

#[test]
fn build_rejects_bad_patterns() {
    let hosts = [0, 1, 2, 3, 4, 5];
    let mut r = rng(3);
    let err = |p: Pattern, r: &mut Rng| Chooser::build(&p, &hosts, r).unwrap_err().to_string();
    assert!(err(Pattern::Group { size: 4 }, &mut r).contains("groups of 4"));
    assert!(err(Pattern::Group { size: 1 }, &mut r).contains("at least 2"));
    let hs = |hot: Vec<u32>, fraction| Pattern::HotSpot { hot, fraction };
    assert!(err(hs(vec![], 0.5), &mut r).contains("at least one hot"));
    assert!(err(hs(vec![9], 0.5), &mut r).contains("host 9 is not one"));
    assert!(err(hs(vec![1, 1], 0.5), &mut r).contains("listed twice"));
    assert!(err(hs(vec![1], 1.5), &mut r).contains("fraction"));
}

#[test]
fn hot_source_never_sends_to_itself() {
    let c = Chooser::HotSpot {
        hot: vec![0],
        fraction: 1.0,
    };
    let mut r = rng(4);
    for _ in 0..1000 {
        assert_ne!(c.pick(0, 4, &mut r), 0);
        assert_eq!(c.pick(2, 4, &mut r), 0);
    }
}
