//! The one-sided verbs' notices between two daemons, and their binary
//! encoding. They travel on the link's shared QPs as RC SENDs whose
//! immediate is [`IMM`] (no vQPN can be it: [`MAX_VQPN`]), each SEND a
//! batch of notices back to back, as many as a slot holds: one byte of
//! kind, then the fields, little-endian.
//!
//! A batch comes from the other daemon and is hostile input: an unknown
//! kind, a notice cut short or an empty batch is an error (the caller
//! ends the link), never a panic.
//!
//! Plain data.

/// The immediate that marks a SEND as a batch of notices.
pub const IMM: u32 = u32::MAX;
/// vQPNs stay below this: a one-sided work request's `wr_id` carries 30
/// bits of one, and no vQPN may be [`IMM`].
pub const MAX_VQPN: usize = 1 << 30;
/// The longest notice encoded (`Written`, `ReadFrom`).
pub const MAX_LEN: usize = 17;

/// One notice; addresses are in the region of the daemon that lends or
/// offers the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// A buffer the receiver may WRITE one message into, until its
    /// `Written` is handled.
    Lend {
        addr: u64,
    },
    /// A message of `len` bytes for connection `to` was written into the
    /// lent buffer at `addr`.
    Written {
        to: u32,
        addr: u64,
        len: u32,
    },
    /// A message of `len` bytes for connection `to` waits at `addr` in
    /// the sender's region: READ it, then say `ReadDone`.
    ReadFrom {
        to: u32,
        addr: u64,
        len: u32,
    },
    ReadDone {
        addr: u64,
    },
    /// The other end closed its side of the connection that is `vqpn`
    /// here. A notice, not a control message, so that it follows the
    /// connection's last `Written` or `ReadFrom` in the same stream
    /// (`daemon/closing.rs`).
    Close {
        vqpn: u32,
    },
}

const LEND: u8 = 1;
const WRITTEN: u8 = 2;
const READ_FROM: u8 = 3;
const READ_DONE: u8 = 4;
const CLOSE: u8 = 5;

impl Notice {
    /// Its encoded length.
    pub fn encoded_len(&self) -> usize {
        match self {
            Notice::Lend { .. } | Notice::ReadDone { .. } => 9,
            Notice::Close { .. } => 5,
            Notice::Written { .. } | Notice::ReadFrom { .. } => MAX_LEN,
        }
    }

    /// Appends its encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            Notice::Lend { addr } => {
                out.push(LEND);
                out.extend_from_slice(&addr.to_le_bytes());
            }
            Notice::ReadDone { addr } => {
                out.push(READ_DONE);
                out.extend_from_slice(&addr.to_le_bytes());
            }
            Notice::Close { vqpn } => {
                out.push(CLOSE);
                out.extend_from_slice(&vqpn.to_le_bytes());
            }
            Notice::Written { to, addr, len } | Notice::ReadFrom { to, addr, len } => {
                let kind = match self {
                    Notice::Written { .. } => WRITTEN,
                    _ => READ_FROM,
                };
                out.push(kind);
                out.extend_from_slice(&to.to_le_bytes());
                out.extend_from_slice(&addr.to_le_bytes());
                out.extend_from_slice(&len.to_le_bytes());
            }
        }
    }
}

/// Encodes notices from the front of `pending` into `out` (cleared
/// first) while they fit in `max` bytes; returns how many went in.
pub fn encode_batch(pending: &[Notice], max: usize, out: &mut Vec<u8>) -> usize {
    out.clear();
    let mut n = 0;
    for m in pending {
        if out.len() + m.encoded_len() > max {
            break;
        }
        m.encode(out);
        n += 1;
    }
    n
}

/// Decodes a batch into `out` (appended); on an error `out` may hold the
/// notices before it, which the caller discards with the link.
pub fn decode_batch(mut bytes: &[u8], out: &mut Vec<Notice>) -> Result<(), String> {
    if bytes.is_empty() {
        return Err("an empty notice batch".into());
    }
    while let Some((&kind, rest)) = bytes.split_first() {
        let need = match kind {
            CLOSE => 4,
            LEND | READ_DONE => 8,
            WRITTEN | READ_FROM => 16,
            k => return Err(format!("a notice of unknown kind {k}")),
        };
        let Some(f) = rest.get(..need) else {
            return Err(format!(
                "a notice cut short ({} of {need} bytes)",
                rest.len()
            ));
        };
        let u32_at = |i: usize| u32::from_le_bytes(f[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(f[i..i + 8].try_into().expect("8 bytes"));
        out.push(match kind {
            LEND => Notice::Lend { addr: u64_at(0) },
            READ_DONE => Notice::ReadDone { addr: u64_at(0) },
            CLOSE => Notice::Close { vqpn: u32_at(0) },
            WRITTEN => Notice::Written {
                to: u32_at(0),
                addr: u64_at(4),
                len: u32_at(12),
            },
            _ => Notice::ReadFrom {
                to: u32_at(0),
                addr: u64_at(4),
                len: u32_at(12),
            },
        });
        bytes = &rest[need..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Notice> {
        vec![
            Notice::Lend {
                addr: 0x4000_0000_0000,
            },
            Notice::Written {
                to: 7,
                addr: u64::MAX,
                len: 65536,
            },
            Notice::ReadFrom {
                to: u32::MAX,
                addr: 1,
                len: 0,
            },
            Notice::ReadDone { addr: 42 },
            Notice::Close { vqpn: 3 },
        ]
    }

    #[test]
    fn a_batch_decodes_to_what_was_encoded() {
        let pending = all();
        let mut bytes = Vec::new();
        assert_eq!(encode_batch(&pending, 1 << 16, &mut bytes), 5);
        assert_eq!(
            bytes.len(),
            pending.iter().map(Notice::encoded_len).sum::<usize>()
        );
        let mut got = Vec::new();
        decode_batch(&bytes, &mut got).unwrap();
        assert_eq!(got, pending);
    }

    #[test]
    fn a_batch_stops_at_the_slot_size() {
        let pending = all();
        let mut bytes = Vec::new();
        // Lend (9) and Written (17) fit in 30 bytes; ReadFrom does not.
        assert_eq!(encode_batch(&pending, 30, &mut bytes), 2);
        assert_eq!(bytes.len(), 26);
        assert_eq!(encode_batch(&pending[2..], 30, &mut bytes), 2);
        assert_eq!(encode_batch(&pending[4..], 30, &mut bytes), 1);
        assert_eq!(encode_batch(&pending, 8, &mut bytes), 0);
        assert!(bytes.is_empty());
    }

    #[test]
    fn hostile_batches_are_errors_not_panics() {
        let mut bytes = Vec::new();
        encode_batch(&all(), 1 << 16, &mut bytes);
        let mut out = Vec::new();
        // Every cut that is not on a notice's boundary is an error.
        let bounds = [0, 9, 26, 43, 52, 57];
        for cut in 0..bytes.len() {
            let r = decode_batch(&bytes[..cut], &mut out);
            assert_eq!(r.is_ok(), bounds.contains(&cut) && cut > 0, "cut {cut}");
        }
        assert!(decode_batch(&[], &mut out).unwrap_err().contains("empty"));
        for kind in [0u8, 6, 255] {
            let e = decode_batch(&[kind; 17], &mut out).unwrap_err();
            assert!(e.contains("unknown kind"), "{e}");
        }
        // Random bytes: any result, never a panic.
        let mut rng = engine::Rng::new(7, engine::StreamKind::Host, 0);
        for _ in 0..10_000 {
            let n = rng.below(64) as usize;
            let junk: Vec<u8> = (0..n).map(|_| (rng.below(7)) as u8).collect();
            out.clear();
            let _ = decode_batch(&junk, &mut out);
        }
    }
}
