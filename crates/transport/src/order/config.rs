//! The ordering-layer choice of a NIC ([`OrderingKind`]), as the API's
//! `NicConfig::ordering` and scenario files name it: plain data, so that
//! the API types (`crate::api`) can hold it.
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
}

impl OrderingKind {
    /// Every kind, as scenario files spell it.
    pub const NAMES: [&'static str; 2] = ["none", "ideal"];

    /// The kind's name as scenario files spell it.
    pub fn name(self) -> &'static str {
        match self {
            OrderingKind::None => "none",
            OrderingKind::Ideal => "ideal",
        }
    }

    /// The kind named `s` (see [`OrderingKind::NAMES`]).
    pub fn from_name(s: &str) -> Option<OrderingKind> {
        match s {
            "none" => Some(OrderingKind::None),
            "ideal" => Some(OrderingKind::Ideal),
            _ => None,
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
        assert_eq!(OrderingKind::from_name("eunomia"), None);
    }
}
