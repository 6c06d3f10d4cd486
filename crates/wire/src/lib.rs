//! RoCEv2 headers as bytes, and back: the formats only. This crate knows
//! nothing of the transport (DESIGN.md: `wire` sits under `transport`);
//! the mapping of the transport's `Packet` to a frame is
//! `transport::frame`, which uses it.
//!
//! Layers, bottom up (a module uses only those above it in this list):
//! - [`error`]: the one error type; parsers return it, never panic.
//! - [`ethernet`], [`ipv4`] (header checksum, DSCP and ECN), [`udp`]
//!   (port 4791; the source port is ECMP entropy and MP-RDMA's virtual
//!   path), [`pfc`] (802.1Qbb pause frames).
//! - [`bth`] (opcodes of RC and the CNP), [`iba`] (RETH, AETH, AtomicETH,
//!   AtomicAckETH, ImmDt), [`icrc`] (the invariant CRC as Linux's rxe
//!   computes it), [`extension`] (rdmalab's extension header, its fields
//!   as plain values), [`endpoint`] (a frame's MAC and IPv4 address; the
//!   simulator's host addressing plan).
//! - [`datagram`]: a frame's Ethernet, IPv4 and UDP layers down to a port,
//!   which RoCEv2 and UET frames share.
//! - [`roce`]: a whole frame with its lengths and checksums.
//! - [`uet`]: Ultra Ethernet Transport's PDS and SES headers and a whole
//!   UET frame over UDP (port 4793), beside RoCEv2, not under it.
//! - [`pcap`]: the file format traces are written in.
//!
//! Each header is a plain struct (`...Repr`, [`bth::Bth`], ...) with a
//! `parse` that takes a byte slice and returns the header and the bytes
//! after it, and an `emit` that appends to a `Vec<u8>`: smoltcp's
//! `Repr::parse`/`emit` split, without its zero-copy views (the
//! simulator's pcap and the datapath copy a packet once anyway).
//!
//! Where the fields IRN, MP-RDMA and Eunomia add travel. They need more
//! bits than IBA leaves free (BTH has 13 reserved bits; the fields are a
//! send time, a 32-bit SACK, a virtual path, flags, WQE sequence numbers
//! and, for IRN, the address and length of every packet), so they go in
//! an extension header of our own ([`extension`]), placed right after the
//! IBA headers where IBA puts the payload, and before the payload. So:
//! - the packet stays a valid RoCEv2 packet: every IBA field means what
//!   IBA says (opcode, QP, PSN, AckReq, RETH, AETH, ...), a dissector
//!   shows the opcode, QP and PSN and our header as the first payload
//!   bytes, the pad count and the ICRC cover it as payload;
//! - no reserved bit is used, so a packet never disagrees with IBA;
//! - a parser reads forward, and the extension is found at a fixed place
//!   after the opcode's headers (a trailer before the ICRC would have to
//!   be found from the end and would sit between the payload and its
//!   pad);
//! - each field is in the extension only when the IBA headers leave it
//!   unsaid, so a packet has exactly one encoding (`transport::frame`
//!   decides which, and its property test checks the round trip).

pub mod bth;
pub mod datagram;
pub mod endpoint;
pub mod error;
pub mod ethernet;
pub mod extension;
pub mod iba;
pub mod icrc;
pub mod ipv4;
pub mod pcap;
pub mod pfc;
pub mod roce;
pub mod udp;
pub mod uet;
pub mod vectors;

pub use endpoint::Endpoint;
pub use error::Error;
