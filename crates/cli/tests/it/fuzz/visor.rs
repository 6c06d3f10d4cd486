//! `rdmavisord`'s client side, fed mutated sessions: request frames on
//! the session's socket and send frames in its shared-memory ring made
//! from valid ones and changed a few bytes at a time, and now and then
//! the ring's shared header words scribbled over, as a hostile local
//! user can. After every few hostile sessions another user's echo round
//! through the daemon pair must still complete, and the daemon must
//! still run.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use visor::proto::{Flags, Request, Sharing};
use visor::ring::Rings;
use visor::Visor;

use super::mutate::{budget, Mutator};
use crate::visor_daemon::{pair_with, rss_kb, OPTIONS};
use crate::visor_hostile::echo_round;

/// Valid requests, each encoded as a frame: what the mutations start from.
fn valid_frames() -> Vec<Vec<u8>> {
    let data = [7u8; 300];
    let reqs = [
        Request::Listen { port: 93 },
        Request::Connect {
            addr: "127.0.0.2:91".into(),
            sharing: Sharing::Peer,
        },
        Request::Connect {
            addr: "127.0.0.1:93".into(),
            sharing: Sharing::Connection,
        },
        Request::Send {
            fd: 3,
            flags: Flags::Send,
            data: &data,
        },
        Request::Send {
            fd: 2,
            flags: Flags::Write,
            data: &data[..10],
        },
        Request::Close { fd: 2 },
    ];
    reqs.iter()
        .map(|r| {
            let mut b = Vec::new();
            r.encode(&mut b);
            b
        })
        .collect()
}

/// One hostile session: a few mutated frames on the socket or in the
/// ring, then gone. What the daemon answers is not read: a client may
/// never read.
/// Whether the daemon handed the session its rings.
fn hostile_session(control: &std::path::Path, m: &mut Mutator, frames: &[Vec<u8>]) -> bool {
    let Ok(mut s) = UnixStream::connect(control) else {
        return false;
    };
    s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    // A daemon at its limits passes no rings; then the socket alone.
    let mut rings = Rings::attach(s.as_raw_fd()).ok();
    let attached = rings.is_some();
    for _ in 0..1 + m.below(4) {
        let mut input = Vec::new();
        for _ in 0..1 + m.below(3) {
            input.extend_from_slice(&frames[m.below(frames.len())]);
        }
        let input = m.bytes(&input);
        match (m.below(8), rings.as_mut()) {
            (0, Some(r)) => {
                // The shared header: the indices and flags both sides
                // read (the first 256 bytes hold them).
                let (base, len) = r.area();
                let at = 8 * m.below(32.min(len / 8));
                let v = [0u64, 1, u64::MAX, 1 << 40, 4096][m.below(5)];
                // SAFETY: `at + 8 <= 256 <= len` lies in the mapping; the
                // daemon treats these words as hostile, and so may we.
                unsafe { base.add(at).cast::<u64>().write_unaligned(v) };
            }
            (1..=3, Some(r)) => {
                let _ = r.push(&input);
            }
            _ => {
                if s.write_all(&input).is_err() {
                    break;
                }
            }
        }
    }
    attached
}

#[test]
fn mutated_sessions_leave_the_daemon_serving_others() {
    let b = budget(40);
    let (a, bd, _port) = pair_with(&OPTIONS);
    let mut server = Visor::open(&bd.control).unwrap();
    let l = server.listen(91).unwrap();
    let mut client = Visor::open(&a.control).unwrap();
    let c = client.connect("127.0.0.2:91").unwrap();
    let s = server.accept(l).unwrap();
    let frames = valid_frames();
    let rss_before = rss_kb(a.child.id());
    let mut attached = 0;
    for i in b.iterations.clone() {
        let mut m = Mutator::new(b.seed, i);
        attached += hostile_session(&a.control, &mut m, &frames) as u64;
        if i % 8 == 7 || i + 1 == b.iterations.end {
            echo_round(&mut client, c, &mut server, s, i as u32);
        }
    }
    let mut a = a;
    assert!(
        a.child.try_wait().unwrap().is_none(),
        "seed {}: the daemon exited",
        b.seed
    );
    assert!(
        attached > 0,
        "no hostile session got its rings: the rings went untested"
    );
    // Closed sessions give their memory back: what the daemon holds
    // afterwards does not grow with the sessions tried.
    let grown_mb = rss_kb(a.child.id()).saturating_sub(rss_before) / 1024;
    assert!(grown_mb < 128, "the daemon grew by {grown_mb} MB");
    eprintln!(
        "fuzz visor: {} hostile sessions (seed {}, {attached} with rings), the daemon \
         served throughout and grew by {grown_mb} MB",
        b.iterations.end - b.iterations.start,
        b.seed
    );
}
