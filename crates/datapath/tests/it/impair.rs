//! Unit tests of `impair.rs` (moved from the file, which the library's
//! `test = false` no longer compiles as a test harness).

use datapath::impair::*;
use engine::Time;
use std::net::SocketAddrV4;

#[test]
fn the_spec_parses_and_names_bad_keys() {
    let s = ImpairSpec::parse("loss=0.01, reorder=0.02,reorder_us=10,seed=7").unwrap();
    assert_eq!(
        (s.loss, s.reorder, s.reorder_us, s.seed),
        (0.01, 0.02, 10.0, 7)
    );
    assert!(s.is_active());
    assert!(!ImpairSpec::parse("").unwrap().is_active());
    for (bad, says) in [
        ("loss=2", "loss: must be in"),
        ("loss=x", "loss: `x` is not a number"),
        ("jitter=1", "`jitter`: unknown"),
        ("loss", "expected key=value"),
        ("delay_us=NaN", "delay_us: must be"),
    ] {
        let e = ImpairSpec::parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn loss_dup_and_reorder_happen_at_their_rates() {
    let spec = ImpairSpec::parse("loss=0.1,dup=0.1,reorder=0.2,reorder_us=5").unwrap();
    let mut imp = Impair::new(spec, 0);
    let a: SocketAddrV4 = "127.0.0.1:1".parse().unwrap();
    let d = Datagram {
        from: a,
        to: a,
        tos: 0,
        bytes: b"x",
    };
    let mut now_delivered = 0u64;
    for i in 0..10_000 {
        now_delivered += u64::from(imp.arrive(i * engine::time::NS, &d));
    }
    let c = imp.counts;
    assert!((800..1200).contains(&c.dropped), "{c:?}");
    assert!((700..1100).contains(&c.duplicated), "{c:?}");
    assert!((1500..2100).contains(&c.reordered), "{c:?}");
    let mut later = 0u64;
    imp.release(Time::MAX, |_| later += 1);
    assert_eq!(now_delivered + later, 10_000 - c.dropped + c.duplicated);
    assert_eq!(imp.next_release(), None);
}
