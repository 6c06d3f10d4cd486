//! Ultra Ethernet Transport (UE 1.0) headers as bytes, and back: the
//! packet delivery sublayer's headers ([`pds`]), the semantic sublayer's
//! ([`ses`]), the pair as a packet carries them ([`UetHeaders`]) and a
//! whole frame over UDP to port 4793 ([`frame`]). Formats only, as the rest
//! of the crate: the transport that sends them is elsewhere.
//!
//! Over UDP the entropy value that switches hash to spread one
//! connection's packets over paths is the UDP source port (the spec's
//! entropy header is for UET directly over IP, which is not framed here).
//!
//! Uses `crate::error` and, through [`frame`], the Ethernet, IPv4 and UDP
//! layers.

pub mod frame;
pub mod pds;
pub mod ses;

use crate::error::Error;
use pds::Pds;
use ses::Ses;

/// The IANA port of UET over UDP.
pub const UET_PORT: u16 = 4793;

/// A packet's PDS header and the SES header its next-header code names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UetHeaders {
    pub pds: Pds,
    pub ses: Ses,
}

impl UetHeaders {
    /// The headers and the bytes after them (the payload).
    pub fn parse(buf: &[u8]) -> Result<(UetHeaders, &[u8]), Error> {
        let (pds, code, rest) = Pds::parse(buf)?;
        let (ses, rest) = Ses::parse(code, rest)?;
        Ok((UetHeaders { pds, ses }, rest))
    }

    /// Appends both headers; the PDS next-header code is the SES header's.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        self.pds.emit(self.ses.code(), out)?;
        self.ses.emit(out)
    }

    pub fn wire_len(&self) -> usize {
        self.pds.wire_len() + self.ses.wire_len()
    }
}
