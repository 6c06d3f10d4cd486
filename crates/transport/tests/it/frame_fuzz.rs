//! Parsers never panic: random buffers and mutated valid frames (bytes
//! flipped, set, inserted, removed, truncated, extended; half of them
//! with their checksums and ICRC fixed up afterwards, so the parsers
//! behind the checks see them too) go through every parser. A buffer
//! that decodes is a fixed point: encoding its packet and decoding again
//! gives the same packet.
//!
//! The suite runs 200k buffers; the long run is
//! `WIRE_FUZZ_BUFFERS=10000000 cargo test --release -p transport --test it frame_fuzz:: -- --ignored`.

use crate::frame;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use transport::frame::{decode, encode, encode_sim};
use transport::packet::Packet;
use wire::extension::Extension;
use wire::iba::IbaHeaders;
use wire::icrc::icrc;
use wire::pfc::PauseFrame;
use wire::roce::RoceFrame;

/// splitmix64: a fixed stream, so a failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Valid frames to mutate, from the property tests' packet strategy.
fn seeds(n: usize) -> Vec<Vec<u8>> {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strategy = frame::packet();
    let mut frames = Vec::new();
    while frames.len() < n {
        let (p, payload) = strategy.new_tree(&mut runner).unwrap().current();
        let payload = &payload[..payload.len().min(300)];
        let p = Packet {
            payload: payload.len() as u32,
            ..p
        };
        let mut out = Vec::new();
        if encode_sim(&p, payload, &mut out).is_ok() {
            frames.push(out);
        }
    }
    let mut pfc = Vec::new();
    PauseFrame::new([2, 0, 0, 0, 0, 1], 0x0f, [1, 2, 3, 4, 5, 6, 7, 8]).emit(&mut pfc);
    frames.push(pfc);
    frames
}

fn mutate(rng: &mut Rng, buf: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let i = rng.below(buf.len());
        match rng.below(7) {
            0 if !buf.is_empty() => buf[i] ^= 1 << rng.below(8),
            1 if !buf.is_empty() => buf[i] = rng.next() as u8,
            2 => buf.insert(i.min(buf.len()), rng.next() as u8),
            3 if !buf.is_empty() => {
                buf.remove(i);
            }
            4 => buf.truncate(i),
            5 => buf.extend((0..rng.below(16)).map(|_| rng.next() as u8)),
            _ if buf.len() > 2 => {
                // A 16-bit field set to an edge value.
                let v = [0u16, 1, 0xffff, 0x8000, 4791][rng.below(5)];
                let j = i.min(buf.len() - 2);
                buf[j..j + 2].copy_from_slice(&v.to_be_bytes());
            }
            _ => {}
        }
    }
}

/// Makes the IPv4 checksum and the ICRC right for the bytes as they are.
fn fix_up(buf: &mut [u8]) {
    if buf.len() < 14 + 20 + 8 + 12 + 4 {
        return;
    }
    buf[24] = 0;
    buf[25] = 0;
    let sum = wire::ipv4::checksum(&buf[14..34]);
    buf[24..26].copy_from_slice(&sum.to_be_bytes());
    buf[40] = 0;
    buf[41] = 0;
    let end = buf.len() - 4;
    let crc = icrc(&buf[14..34], &buf[34..end]);
    buf[end..].copy_from_slice(&crc);
}

fn check(buf: &[u8]) -> bool {
    let _ = RoceFrame::parse(buf);
    let _ = PauseFrame::parse(buf);
    let _ = Extension::parse(buf);
    let _ = IbaHeaders::parse(buf);
    let Ok(d) = decode(buf) else {
        return false;
    };
    let mut again = Vec::new();
    encode(&d.packet, &d.src, &d.dst, d.payload, &mut again)
        .unwrap_or_else(|e| panic!("a decoded packet encodes: {e}: {buf:02x?}"));
    let back = decode(&again).expect("an encoded packet decodes");
    assert_eq!(
        Packet {
            wire: 0,
            ..back.packet
        },
        Packet {
            wire: 0,
            ..d.packet
        },
        "{buf:02x?}"
    );
    assert_eq!(back.payload, d.payload);
    true
}

/// Feeds `n` buffers; returns how many decoded.
fn run(n: usize, seed: u64) -> usize {
    let frames = seeds(64);
    let mut rng = Rng(seed);
    let mut decoded = 0;
    let mut buf = Vec::new();
    for k in 0..n {
        buf.clear();
        if k % 8 == 0 {
            buf.extend((0..rng.below(200)).map(|_| rng.next() as u8));
        } else {
            buf.extend_from_slice(&frames[rng.below(frames.len())]);
            mutate(&mut rng, &mut buf);
            if rng.below(2) == 0 {
                fix_up(&mut buf);
            }
        }
        decoded += usize::from(check(&buf));
    }
    decoded
}

#[test]
fn parsers_never_panic_on_200k_buffers() {
    let decoded = run(200_000, 1);
    // Fixed-up mutations of valid frames often still decode: the
    // fixed-point check above ran on many of them.
    assert!(decoded > 1_000, "only {decoded} decoded");
}

#[test]
#[ignore = "long: run with WIRE_FUZZ_BUFFERS and --ignored"]
fn parsers_never_panic_long() {
    let n = std::env::var("WIRE_FUZZ_BUFFERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let seed = std::env::var("WIRE_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let decoded = run(n, seed);
    println!("{n} buffers, {decoded} decoded");
}
