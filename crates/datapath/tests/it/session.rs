//! Unit tests of `session.rs` (moved from the file, which the library's
//! `test = false` no longer compiles as a test harness).

use datapath::session::*;
use transport::EngineKind;

fn job() -> Job {
    Job {
        transport: EngineKind::from_name("irn").unwrap(),
        verb: VerbName::Write,
        cc: CcName::None,
        bytes: 10_000,
        msg_bytes: 3000,
        qps: 3,
        mtu: 1024,
        paths: 1,
        rto_us: 1000,
        seed: 1,
        seeded_psns: true,
    }
}

#[test]
fn messages_cover_the_bytes_once() {
    let j = job();
    let mut all: Vec<(u64, u64)> = (0..j.qps).flat_map(|q| j.messages_of(q)).collect();
    all.sort();
    let mut at = 0;
    for (o, l) in all {
        assert_eq!(o, at);
        assert!(l > 0 && l <= j.msg_bytes);
        at += l;
    }
    assert_eq!(at, j.bytes);
}

/// A job's transport crosses the control connection as its name in
/// the engines' table; an alias is read as its engine, an unknown name
/// refused with the list.
#[test]
fn the_transport_travels_by_name() {
    let j = job();
    let text = serde_json::to_string(&j).unwrap();
    assert!(text.contains("\"transport\":\"irn\""), "{text}");
    assert_eq!(serde_json::from_str::<Job>(&text).unwrap(), j);
    let alias = text.replace("\"irn\"", "\"gbn\"");
    let roce = serde_json::from_str::<Job>(&alias).unwrap();
    assert_eq!(roce.transport.name(), "roce");
    let bad = text.replace("\"irn\"", "\"tcp\"");
    let e = serde_json::from_str::<Job>(&bad).unwrap_err().to_string();
    assert!(e.contains(&EngineKind::list()), "{e}");
}

#[test]
fn bad_jobs_name_the_option() {
    type Change = Box<dyn Fn(&mut Job)>;
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|j| j.bytes = 0), "--bytes"),
        (Box::new(|j| j.qps = 0), "--qps"),
        (Box::new(|j| j.mtu = 70_000), "--mtu"),
        (
            Box::new(|j| j.paths = 4),
            "--paths above 1 needs --transport mprdma",
        ),
        (
            Box::new(|j| {
                j.transport = EngineKind::from_name("mprdma").unwrap();
                j.verb = VerbName::Read
            }),
            "--transport mprdma with --verb read",
        ),
        (Box::new(|j| j.msg_bytes = 1), "messages: at most"),
        (
            Box::new(|j| {
                j.transport = EngineKind::from_name("mprdma").unwrap();
                j.cc = CcName::Dcqcn
            }),
            "--cc dcqcn cannot drive mprdma",
        ),
        (
            Box::new(|j| {
                j.transport = EngineKind::from_name("uet").unwrap();
                j.cc = CcName::Dcqcn
            }),
            "--cc dcqcn with --transport uet: UET has no CNP",
        ),
        (
            Box::new(|j| {
                j.transport = EngineKind::from_name("uet").unwrap();
                j.qps = 1;
                j.bytes = 70_000;
                j.msg_bytes = 1;
            }),
            "70000 messages per QP with --transport uet: at most 65536",
        ),
    ];
    for (f, says) in cases {
        let mut j = job();
        j.bytes = 10_000_000;
        f(&mut j);
        let e = j.check(1 << 30).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
    assert!(job().check(1 << 30).is_ok());
}

/// RoCE MTUs stop at 4096: a job asking for more (from `net run --mtu`, or
/// a client's hello at `net serve`) is refused naming the flag.
#[test]
fn an_mtu_above_4096_is_refused_by_name() {
    for mtu in [4097, 9000, 65_000] {
        let e = Job { mtu, ..job() }.check(u64::MAX).unwrap_err();
        assert!(
            e.contains(&format!("--mtu {mtu}")) && e.contains("stop at 4096"),
            "{e}"
        );
    }
    let e = Job { mtu: 63, ..job() }.check(u64::MAX).unwrap_err();
    assert!(e.contains("--mtu must be in 64..=4096"), "{e}");
    for mtu in [64, 1024, 4096] {
        Job { mtu, ..job() }.check(u64::MAX).unwrap();
    }
}
