//! Real bytes between two endpoints over loopback: every transport and
//! verb it carries moves a few MB, verified by checksum (`run` fails on
//! a mismatch), clean and with 1% loss and 1% reordering injected at
//! both ends, which the transports must recover from; and DCQCN slows
//! down on the CE marks of a receiver whose queue is past its threshold.

use crate::common;

use datapath::impair::ImpairSpec;
use datapath::VerbName;

fn transfer(transport: &str, verb: VerbName, impaired: bool) -> datapath::Report {
    let spec = impaired
        .then(|| ImpairSpec::parse("loss=0.01,reorder=0.01,reorder_us=100,seed=3").unwrap());
    let (addr, server) = common::serve_once(spec, 64);
    let mut o = common::options(addr, transport, verb, 4 << 20);
    o.port.impair = spec.map(|s| ImpairSpec { seed: 4, ..s });
    let report = datapath::run(&o).unwrap_or_else(|e| panic!("{transport:?} {verb:?}: {e}"));
    server.join().unwrap().unwrap();
    report
}

#[test]
fn every_transport_moves_verified_bytes() {
    for (t, v) in [
        ("roce", VerbName::Write),
        ("roce", VerbName::Read),
        ("roce", VerbName::Send),
        ("irn", VerbName::Write),
        ("irn", VerbName::Read),
        ("mprdma", VerbName::Write),
        ("mprdma", VerbName::Send),
    ] {
        let r = transfer(t, v, false);
        assert_eq!(
            r.latencies_ns.len(),
            16,
            "{t:?} {v:?}: every message completed"
        );
        assert!(r.goodput_gbps() > 0.0);
        let dropped: u64 = r
            .server_drops
            .iter()
            .map(|(k, n)| if k == "nic_duplicate" { 0 } else { *n })
            .sum();
        assert_eq!(dropped, 0, "{t:?} {v:?}: {:?}", r.server_drops);
    }
}

#[test]
fn every_transport_recovers_from_loss_and_reordering() {
    for (t, v) in [
        ("roce", VerbName::Write),
        ("irn", VerbName::Write),
        ("irn", VerbName::Read),
        ("mprdma", VerbName::Write),
    ] {
        let r = transfer(t, v, true);
        let lost = r.impaired.dropped;
        assert!(lost > 0, "{t:?} {v:?}: the client's layer dropped nothing");
        assert!(
            r.retransmitted + r.server_retransmitted > 0,
            "{t:?} {v:?}: loss recovered without retransmitting?"
        );
    }
}

#[test]
fn dcqcn_cuts_its_rate_on_the_receivers_marks() {
    for (backlog, marked) in [(1, true), (0, false)] {
        let (addr, server) = common::serve_once(None, backlog);
        let mut o = common::options(addr, "irn", VerbName::Write, 8 << 20);
        o.job.cc = datapath::CcName::Dcqcn;
        o.port.rate_gbps = 40.0;
        let r = datapath::run(&o).unwrap();
        server.join().unwrap().unwrap();
        assert_eq!(
            r.cnps_received > 0,
            marked,
            "backlog {backlog}: {} CNPs",
            r.cnps_received
        );
        assert_eq!(r.rate_decreases > 0, marked, "backlog {backlog}");
    }
}
