//! The ordering-layer choice of a NIC ([`OrderingKind`]) and the
//! parameters of the bitmap layers ([`EunomiaConfig`],
//! [`StaticBitmapConfig`], and where a WRITE's last packet waits,
//! [`LastPacket`]), as the API's `NicConfig::ordering` and
//! scenario files name them: plain data, so that the API types
//! (`crate::api`) can hold them.
//!
//! Imports nothing of the crate.

/// What sits between the NIC's demultiplexing and each QP's engine on the
/// receive side (see `crate::order`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OrderingKind {
    /// Packets go straight to the engine (RoCE NICs today).
    #[default]
    None,
    /// An unbounded reorder buffer that hands request packets to the
    /// engine in PSN order (Eunomia §2's ideal layer).
    Ideal,
    /// Eunomia (§3): a hybrid-dynamic bitmap per connection that faces
    /// reordering, in a NIC-wide memory controller.
    Eunomia(EunomiaConfig),
    /// A fixed circular bitmap per connection (Eunomia §5.7's comparison).
    StaticBitmap(StaticBitmapConfig),
}

/// Eunomia's parameters (`[transport.eunomia]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EunomiaConfig {
    /// Bits of one bitmap block (a row of the hybrid-dynamic bitmap): the
    /// unit the bitmap grows by. A multiple of 8.
    pub block_bits: u32,
    /// The most bits one connection's bitmap may reach; a packet that
    /// would need more is dropped and NACKed.
    pub cap_bits: u32,
    /// Bytes of the NIC's memory controller (its master array of 2-byte
    /// blocks), shared by every connection's bitmap blocks and metadata.
    pub memory_bytes: u32,
    /// Where the last packet of a WRITE without immediate waits for
    /// everything before it.
    pub last_packet: LastPacket,
}

impl Default for EunomiaConfig {
    /// The paper's FPGA (§4): 256-bit cap in 16-bit blocks, and a master
    /// array of 1024 2-byte blocks ("a current configurable capacity of
    /// 1024 blocks"), i.e. 2048 bytes.
    fn default() -> Self {
        EunomiaConfig {
            block_bits: 16,
            cap_bits: 256,
            memory_bytes: 2048,
            last_packet: LastPacket::SenderHold,
        }
    }
}

/// A static bitmap's parameters (`[transport.static_bitmap]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticBitmapConfig {
    /// Bits of every connection's bitmap (PSNs it can track ahead of the
    /// expected one).
    pub bits: u32,
    /// As [`EunomiaConfig::last_packet`].
    pub last_packet: LastPacket,
}

impl Default for StaticBitmapConfig {
    /// The §4 comparison's 256 bits (32 bytes, as Eunomia's cap).
    fn default() -> Self {
        StaticBitmapConfig {
            bits: 256,
            last_packet: LastPacket::SenderHold,
        }
    }
}

/// Where the last packet of a WRITE without immediate (no completion at
/// the responder tells the application its data is whole) waits until
/// everything before it is in order (§3.5 "WRITE", Appendix A).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LastPacket {
    /// The paper's design: the sender agent sends it only once the
    /// cumulative ACK covers every earlier PSN (about one RTT).
    #[default]
    SenderHold,
    /// The appendix's proposal: the receiver NIC keeps it in host memory
    /// if it arrives out of order and places it once everything before it
    /// has (no RTT; its bytes cross PCIe twice more).
    ReceiverHold,
}

impl LastPacket {
    /// Every choice, as scenario files spell it.
    pub const NAMES: [&'static str; 2] = ["sender_hold", "receiver_hold"];

    pub fn name(self) -> &'static str {
        match self {
            LastPacket::SenderHold => "sender_hold",
            LastPacket::ReceiverHold => "receiver_hold",
        }
    }

    /// The choice named `s` (see [`LastPacket::NAMES`]).
    pub fn from_name(s: &str) -> Option<LastPacket> {
        match s {
            "sender_hold" => Some(LastPacket::SenderHold),
            "receiver_hold" => Some(LastPacket::ReceiverHold),
            _ => None,
        }
    }
}

/// The field of a bitmap layer's configuration that is wrong, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderingError {
    /// The key as scenario files spell it under `[transport.<layer>]`.
    pub key: &'static str,
    pub message: String,
}

impl std::fmt::Display for OrderingError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// The largest bitmap a connection may have: bit positions and block
/// counts fit the 16-bit fields the per-connection state keeps.
pub const MAX_BITMAP_BITS: u32 = 1 << 16;

impl EunomiaConfig {
    /// Bytes of one connection's metadata in the memory controller: the
    /// 16 bytes of Table 7's variables and 2 bytes per block the cap
    /// allows (the first block's address and the others' relative ones),
    /// as the paper's 48 bytes (24 blocks) for 256 bits in 16-bit blocks.
    pub fn metadata_bytes(&self) -> u32 {
        16 + 2 * (self.cap_bits / self.block_bits)
    }

    /// Master-array blocks (2 bytes each) one bitmap block occupies.
    pub fn units_per_block(&self) -> u32 {
        self.block_bits.div_ceil(16)
    }

    pub fn validate(&self) -> Result<(), OrderingError> {
        let err = |key, message: String| Err(OrderingError { key, message });
        if self.block_bits == 0 || !self.block_bits.is_multiple_of(8) {
            return err(
                "block_bits",
                format!("{} is not a positive multiple of 8", self.block_bits),
            );
        }
        if self.cap_bits < self.block_bits {
            return err(
                "cap_bits",
                format!(
                    "{} is smaller than one block ({} bits)",
                    self.cap_bits, self.block_bits
                ),
            );
        }
        if !self.cap_bits.is_multiple_of(self.block_bits) || self.cap_bits > MAX_BITMAP_BITS {
            return err(
                "cap_bits",
                format!(
                    "{} must be a whole number of {}-bit blocks, at most {MAX_BITMAP_BITS}",
                    self.cap_bits, self.block_bits
                ),
            );
        }
        let one = self.metadata_bytes() + 2 * self.units_per_block();
        if self.memory_bytes < one
            || !self.memory_bytes.is_multiple_of(2)
            || self.memory_bytes > 1 << 24
        {
            return err(
                "memory_bytes",
                format!(
                    "{} must be even, at most 2^24, and hold one connection's metadata and one block ({one} bytes)",
                    self.memory_bytes
                ),
            );
        }
        Ok(())
    }
}

impl StaticBitmapConfig {
    /// Bytes of one connection's state besides its bitmap: Head and Last
    /// Seq (4 bytes each) and the head's index (1 byte), as §4's static
    /// bitmap (41 bytes with 256 bits).
    pub const STATE_BYTES: u32 = 9;

    pub fn validate(&self) -> Result<(), OrderingError> {
        if self.bits == 0 || self.bits > MAX_BITMAP_BITS {
            return Err(OrderingError {
                key: "bits",
                message: format!("{} must be in 1..={MAX_BITMAP_BITS}", self.bits),
            });
        }
        Ok(())
    }

    /// Bytes of one connection's bitmap and state.
    pub fn bytes_per_qp(&self) -> u32 {
        self.bits.div_ceil(8) + Self::STATE_BYTES
    }
}

impl OrderingKind {
    /// Every kind, as scenario files spell it.
    pub const NAMES: [&'static str; 4] = ["none", "ideal", "eunomia", "static_bitmap"];

    /// The kind's name as scenario files spell it.
    pub fn name(self) -> &'static str {
        match self {
            OrderingKind::None => "none",
            OrderingKind::Ideal => "ideal",
            OrderingKind::Eunomia(_) => "eunomia",
            OrderingKind::StaticBitmap(_) => "static_bitmap",
        }
    }

    /// The kind named `s` (see [`OrderingKind::NAMES`]), with default
    /// parameters.
    pub fn from_name(s: &str) -> Option<OrderingKind> {
        match s {
            "none" => Some(OrderingKind::None),
            "ideal" => Some(OrderingKind::Ideal),
            "eunomia" => Some(OrderingKind::Eunomia(EunomiaConfig::default())),
            "static_bitmap" => Some(OrderingKind::StaticBitmap(StaticBitmapConfig::default())),
            _ => None,
        }
    }

    /// Where a bitmap layer holds a WRITE's last packet (None: no bitmap
    /// layer; the ideal layer holds nothing back).
    pub fn last_packet(self) -> Option<LastPacket> {
        match self {
            OrderingKind::None | OrderingKind::Ideal => None,
            OrderingKind::Eunomia(c) => Some(c.last_packet),
            OrderingKind::StaticBitmap(c) => Some(c.last_packet),
        }
    }

    /// Checks the parameters of a bitmap layer.
    pub fn validate(&self) -> Result<(), OrderingError> {
        match self {
            OrderingKind::None | OrderingKind::Ideal => Ok(()),
            OrderingKind::Eunomia(c) => c.validate(),
            OrderingKind::StaticBitmap(c) => c.validate(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in OrderingKind::NAMES {
            assert_eq!(OrderingKind::from_name(n).map(OrderingKind::name), Some(n));
        }
        assert_eq!(OrderingKind::from_name("hd_bitmap"), None);
        for n in LastPacket::NAMES {
            assert_eq!(LastPacket::from_name(n).map(LastPacket::name), Some(n));
        }
        assert_eq!(LastPacket::from_name("hold"), None);
    }

    #[test]
    fn paper_sizes() {
        let e = EunomiaConfig::default();
        assert_eq!(e.metadata_bytes(), 48, "§4: 48 bytes of metadata");
        assert_eq!(e.validate(), Ok(()));
        assert_eq!(StaticBitmapConfig::default().bytes_per_qp(), 41, "§4");
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let bad = |c: EunomiaConfig| c.validate().unwrap_err().key;
        let d = EunomiaConfig::default();
        assert_eq!(
            bad(EunomiaConfig {
                block_bits: 12,
                ..d
            }),
            "block_bits"
        );
        assert_eq!(bad(EunomiaConfig { block_bits: 0, ..d }), "block_bits");
        assert_eq!(bad(EunomiaConfig { cap_bits: 8, ..d }), "cap_bits");
        assert_eq!(bad(EunomiaConfig { cap_bits: 40, ..d }), "cap_bits");
        assert_eq!(
            bad(EunomiaConfig {
                memory_bytes: 20,
                ..d
            }),
            "memory_bytes"
        );
        let s = StaticBitmapConfig {
            bits: 0,
            ..StaticBitmapConfig::default()
        };
        assert_eq!(s.validate().unwrap_err().key, "bits");
    }
}
