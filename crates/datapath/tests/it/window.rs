//! Unit tests of `window.rs` (moved from the file, which the library's
//! `test = false` no longer compiles as a test harness).

use datapath::window::*;
use transport::{Packet, PacketKind, Verb};

#[test]
fn only_ranges_inside_an_open_window_of_that_host_pass() {
    let mut w = Windows::default();
    assert!(!w.allows(1, 0, 0, Access::Read), "nothing open");
    w.open(1, 1000, 100, Access::Write);
    w.open(1, 2000, 50, Access::Read);
    assert!(w.allows(1, 1000, 100, Access::Write));
    assert!(w.allows(1, 1050, 50, Access::Write), "a middle packet");
    assert!(!w.allows(1, 1050, 51, Access::Write), "one byte past");
    assert!(!w.allows(1, 999, 2, Access::Write), "one byte before");
    assert!(!w.allows(1, 1000, 100, Access::Read), "write-only");
    assert!(
        !w.allows(1, 1000, 1100, Access::Write),
        "across two windows"
    );
    assert!(w.allows(1, 2000, 50, Access::Read));
    assert!(!w.allows(1, 2000, 50, Access::Write), "read-only");
    assert!(!w.allows(2, 1000, 10, Access::Write), "another host's");
    assert!(!w.allows(1, u64::MAX, 2, Access::Write), "wrapping");
    w.open(1, u64::MAX - 9, 10, Access::ReadWrite);
    assert!(w.allows(1, u64::MAX - 9, 10, Access::Read));
    assert!(w.allows(1, u64::MAX - 1, 1, Access::Write));
    w.close(1, 1000);
    assert!(!w.allows(1, 1000, 1, Access::Write), "closed");
    assert_eq!(w.count(1), 2);
    w.close_host(1);
    assert_eq!(w.count(1), 0);
    assert!(!w.allows(1, 2000, 1, Access::Read));
}

#[test]
fn packets_are_checked_by_verb() {
    let mut w = Windows::default();
    w.open(1, 4096, 4096, Access::Write);
    let p = |verb, addr, payload, msg_len| Packet {
        kind: PacketKind::Request,
        verb,
        src: 1,
        addr,
        payload,
        msg_len,
        ..Packet::default()
    };
    // A WRITE's last packet of 1000 bytes at the window's end.
    assert!(w.admits(&p(Verb::Write, 8192 - 1000, 1000, 4096)));
    assert!(w.admits(&p(Verb::WriteImm, 4096, 1000, 1000)));
    assert!(!w.admits(&p(Verb::Write, 8192 - 999, 1000, 1000)));
    // A READ request reads msg_len bytes (its own payload is none).
    assert!(!w.admits(&p(Verb::Read, 4096, 0, 10)), "not readable");
    w.open(1, 4096, 4096, Access::Read);
    assert!(w.admits(&p(Verb::Read, 4096, 0, 4096)));
    assert!(!w.admits(&p(Verb::Read, 4096, 0, 4097)));
    assert!(
        !w.admits(&p(Verb::FetchAdd, 4096, 0, 8)),
        "atomics need both"
    );
    // SENDs and anything that is not a request pass.
    assert!(w.admits(&p(Verb::Send, 0, 1000, 1000)));
    let mut ack = p(Verb::Write, 0, 0, 0);
    ack.kind = PacketKind::Ack;
    assert!(w.admits(&ack));
}
