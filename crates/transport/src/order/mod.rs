//! Ordering layers: what sits between the NIC's demultiplexing and a QP's
//! engine on the receive side. [`OrderingKind`] (in `config`) is the NIC's
//! choice; [`Ordering`] the per-QP state, with one variant per layer
//! ([`ideal`] today; a static bitmap and Eunomia go beside it), and
//! [`Ordering::on_packet`] the one match over them.
//!
//! The NIC counts reordering before any layer (a layer records what it
//! holds as out of order, `crate::reorder`), so the counters keep meaning
//! "what the fabric did"; the NIC only calls into this module when its
//! configuration names a layer, so that `none` costs one predictable
//! branch per packet.
//!
//! Adding a layer: a file (or folder) beside `ideal.rs` with its per-QP
//! state and `on_packet(qp, cx, pkt) -> bool`, a variant of
//! [`OrderingKind`] and of [`Ordering`], and one arm in [`Ordering::new`]
//! and [`Ordering::on_packet`].
//!
//! May use `crate::qp`, `crate::rc`, `crate::packet`, `crate::psn` and
//! `crate::memory`; never the NIC.

pub mod config;
mod ideal;

pub use config::OrderingKind;

use crate::packet::Packet;
use crate::qp::Qp;
use crate::rc::Ctx;
use ideal::IdealBuffer;

/// One QP's ordering layer.
#[derive(Debug)]
pub(crate) enum Ordering {
    /// Packets go straight to the engine (also a destroyed QP's).
    None,
    Ideal(IdealBuffer),
}

impl Ordering {
    /// The state of a new QP under `kind`.
    pub fn new(kind: OrderingKind) -> Ordering {
        match kind {
            OrderingKind::None => Ordering::None,
            OrderingKind::Ideal => Ordering::Ideal(IdealBuffer::default()),
        }
    }

    /// Hands `pkt` (and the payload in `cx.dma`) to `qp`'s engine, or
    /// holds it; hands on what it held that is now in order. True if the
    /// QP may have something new to send.
    #[inline]
    pub fn on_packet(&mut self, qp: &mut Qp, cx: &mut Ctx, pkt: &Packet) -> bool {
        match self {
            Ordering::None => qp.on_packet(cx, pkt),
            Ordering::Ideal(b) => b.on_packet(qp, cx, pkt),
        }
    }
}
