//! The one error type of the crate: why a buffer did not parse, or why a
//! packet could not be put into bytes. Every parser returns it instead of
//! panicking; each variant names the layer and says what was wrong.
//!
//! Uses nothing of the crate.

use std::fmt;

/// What went wrong, and in which header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// The buffer ends before the header (or the length it declares) does.
    Truncated {
        layer: &'static str,
        need: usize,
        have: usize,
    },
    /// A field holds a value the format forbids, or one this crate does not
    /// speak (IPv4 options, a UD opcode, an RNR NAK as a transport packet).
    Malformed {
        layer: &'static str,
        reason: &'static str,
    },
    /// A checksum or the ICRC disagrees with the bytes it covers.
    Checksum {
        layer: &'static str,
        carried: u32,
        computed: u32,
    },
    /// Encoding: a packet field does not fit its place on the wire.
    Unrepresentable {
        field: &'static str,
        reason: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Truncated { layer, need, have } => {
                write!(f, "{layer}: truncated: needs {need} bytes, has {have}")
            }
            Error::Malformed { layer, reason } => write!(f, "{layer}: {reason}"),
            Error::Checksum {
                layer,
                carried,
                computed,
            } => write!(
                f,
                "{layer}: checksum mismatch: carried {carried:#x}, computed {computed:#x}"
            ),
            Error::Unrepresentable { field, reason } => {
                write!(f, "cannot encode `{field}`: {reason}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Fails with [`Error::Truncated`] unless `buf` holds `need` bytes; after
/// it, indexing below `need` cannot panic.
#[inline]
pub(crate) fn need(buf: &[u8], need: usize, layer: &'static str) -> Result<(), Error> {
    if buf.len() < need {
        return Err(Error::Truncated {
            layer,
            need,
            have: buf.len(),
        });
    }
    Ok(())
}

/// Big-endian reads at `at` of a buffer already checked with [`need`].
#[inline]
pub(crate) fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

#[inline]
pub(crate) fn be24(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([0, b[at], b[at + 1], b[at + 2]])
}

#[inline]
pub(crate) fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[inline]
pub(crate) fn be64(b: &[u8], at: usize) -> u64 {
    (u64::from(be32(b, at)) << 32) | u64::from(be32(b, at + 4))
}

/// Appends the low 24 bits of `v`, big-endian.
#[inline]
pub(crate) fn put24(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes()[1..]);
}
