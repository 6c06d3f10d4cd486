//! Classic pcap, the file format Wireshark and tshark read: the global
//! header (nanosecond timestamps, version 2.4, link type Ethernet) and
//! one record per frame. Used by the simulator's trace (fabric's
//! `observe/pcap.rs`, simulated time) and the datapath's `--pcap` (wall
//! time since the run started); [`frames`] reads such a file back (the
//! tests of frames tshark has no dissector for: UET's).
//!
//! Uses `crate::error`.

use crate::error::Error;

/// The snap length written: IPv4's largest datagram and its Ethernet
/// header, so no frame is cut.
pub const SNAPLEN: u32 = 65_535 + 14;

/// Bytes of the file header and of each record's header.
pub const FILE_HEADER_LEN: usize = 24;
pub const RECORD_HEADER_LEN: usize = 16;

/// Appends the file header: nanosecond magic, version 2.4, snap length
/// [`SNAPLEN`], link type 1 (Ethernet).
pub fn file_header(out: &mut Vec<u8>) {
    out.extend_from_slice(&0xa1b2_3c4d_u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes()); // thiszone
    out.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
    out.extend_from_slice(&SNAPLEN.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
}

/// Appends one record: `frame` whole, stamped `ns` nanoseconds after the
/// epoch (seconds wrap past 2^32, in the year 2106).
pub fn record(out: &mut Vec<u8>, ns: u64, frame: &[u8]) {
    let (sec, nsec) = (ns / 1_000_000_000, ns % 1_000_000_000);
    let len = frame.len() as u32;
    out.extend_from_slice(&(sec as u32).to_le_bytes());
    out.extend_from_slice(&(nsec as u32).to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes()); // captured
    out.extend_from_slice(&len.to_le_bytes()); // on the wire
    out.extend_from_slice(frame);
}

/// The frames of a file [`file_header`] and [`record`] wrote, with their
/// stamps (nanoseconds). Fails on another magic or link type, or a record
/// that runs past the end.
pub fn frames(file: &[u8]) -> Result<Vec<(u64, &[u8])>, Error> {
    let le32 = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let short = |need, have| Error::Truncated {
        layer: "pcap",
        need,
        have,
    };
    if file.len() < FILE_HEADER_LEN {
        return Err(short(FILE_HEADER_LEN, file.len()));
    }
    if le32(file, 0) != 0xa1b2_3c4d || le32(file, 20) != 1 {
        return Err(Error::Malformed {
            layer: "pcap",
            reason: "not a little-endian nanosecond pcap of Ethernet frames",
        });
    }
    let mut out = Vec::new();
    let mut at = FILE_HEADER_LEN;
    while at < file.len() {
        let rest = file.len() - at;
        if rest < RECORD_HEADER_LEN {
            return Err(short(RECORD_HEADER_LEN, rest));
        }
        let ns = u64::from(le32(file, at)) * 1_000_000_000 + u64::from(le32(file, at + 4));
        let len = le32(file, at + 8) as usize;
        at += RECORD_HEADER_LEN;
        if file.len() - at < len {
            return Err(short(len, file.len() - at));
        }
        out.push((ns, &file[at..at + len]));
        at += len;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_follows_the_header() {
        let mut out = Vec::new();
        file_header(&mut out);
        assert_eq!(out.len(), FILE_HEADER_LEN);
        record(&mut out, 2_000_000_123, &[7, 8, 9]);
        assert_eq!(out.len(), FILE_HEADER_LEN + RECORD_HEADER_LEN + 3);
        assert_eq!(&out[24..28], &2u32.to_le_bytes());
        assert_eq!(&out[28..32], &123u32.to_le_bytes());
        assert_eq!(&out[32..36], &3u32.to_le_bytes());
        assert_eq!(&out[40..], &[7, 8, 9]);
        assert_eq!(
            frames(&out).unwrap(),
            vec![(2_000_000_123, &[7u8, 8, 9][..])]
        );
        assert!(frames(&out[..out.len() - 1]).is_err());
        assert!(frames(&out[..10]).is_err());
    }
}
