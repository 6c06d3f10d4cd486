//! IEEE 802.1Qbb priority flow control (PFC) pause frames: a MAC control
//! frame (EtherType 0x8808) with opcode 0x0101, a class-enable vector (the
//! low octet: bit `i` = priority `i` is paused or resumed; the high octet
//! reserved) and eight 16-bit pause times in quanta of 512 bit times
//! (0 resumes the class), padded with zeros to the 60-byte minimum frame.
//!
//! Uses `crate::error` and `crate::ethernet`.

use crate::error::{be16, need, Error};
use crate::ethernet::{EthernetRepr, Mac, ETHERTYPE_MAC_CONTROL, HEADER_LEN, MIN_FRAME};

/// The MAC control opcode of PFC (0x0001 is 802.3x's PAUSE).
pub const OPCODE_PFC: u16 = 0x0101;
/// The reserved multicast address MAC control frames are sent to.
pub const DST: Mac = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
/// Opcode, class-enable vector and eight times.
pub const BODY_LEN: usize = 2 + 2 + 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseFrame {
    pub dst: Mac,
    pub src: Mac,
    /// Bit `i`: `quanta[i]` applies to priority `i`.
    pub class_enable: u8,
    /// Pause time per priority, in quanta (512 bit times).
    pub quanta: [u16; 8],
}

impl PauseFrame {
    /// A frame to the MAC control address.
    pub fn new(src: Mac, class_enable: u8, quanta: [u16; 8]) -> PauseFrame {
        PauseFrame {
            dst: DST,
            src,
            class_enable,
            quanta,
        }
    }

    /// Parses a frame (its padding, if any, ignored). The reserved octet
    /// of the class-enable vector is ignored on receipt, as 802.1Qbb says.
    pub fn parse(frame: &[u8]) -> Result<PauseFrame, Error> {
        const L: &str = "pfc";
        let (eth, body) = EthernetRepr::parse(frame)?;
        if eth.ethertype != ETHERTYPE_MAC_CONTROL {
            return Err(Error::Malformed {
                layer: L,
                reason: "EtherType is not MAC control (0x8808)",
            });
        }
        need(body, BODY_LEN, L)?;
        if be16(body, 0) != OPCODE_PFC {
            return Err(Error::Malformed {
                layer: L,
                reason: "MAC control opcode is not PFC (0x0101)",
            });
        }
        let mut quanta = [0u16; 8];
        for (i, q) in quanta.iter_mut().enumerate() {
            *q = be16(body, 4 + 2 * i);
        }
        Ok(PauseFrame {
            dst: eth.dst,
            src: eth.src,
            class_enable: body[3],
            quanta,
        })
    }

    /// Appends the frame, padded to 60 bytes.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let start = out.len();
        EthernetRepr {
            dst: self.dst,
            src: self.src,
            ethertype: ETHERTYPE_MAC_CONTROL,
        }
        .emit(out);
        out.extend_from_slice(&OPCODE_PFC.to_be_bytes());
        out.extend_from_slice(&[0, self.class_enable]);
        for q in self.quanta {
            out.extend_from_slice(&q.to_be_bytes());
        }
        debug_assert_eq!(out.len() - start, HEADER_LEN + BODY_LEN);
        out.resize(start + MIN_FRAME, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_frame_bytes_follow_802_1qbb() {
        let f = PauseFrame::new(
            [2, 0, 0, 0, 0, 1],
            0b0000_1001,
            [0xffff, 0, 0, 7, 0, 0, 0, 0],
        );
        let mut out = Vec::new();
        f.emit(&mut out);
        let mut want = vec![
            0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, // dst
            0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // src
            0x88, 0x08, // MAC control
            0x01, 0x01, // PFC
            0x00, 0x09, // class-enable vector: priorities 0 and 3
            0xff, 0xff, 0, 0, 0, 0, 0x00, 0x07, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        want.resize(60, 0);
        assert_eq!(out, want);
        assert_eq!(PauseFrame::parse(&out), Ok(f));
        let mut pause = out.clone();
        pause[14] = 0x00; // 0x0001: 802.3x PAUSE, not PFC
        assert!(PauseFrame::parse(&pause).is_err());
        assert!(PauseFrame::parse(&out[..30]).is_err());
    }
}
