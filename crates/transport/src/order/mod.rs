//! Ordering layers: what sits between the NIC's demultiplexing and a QP's
//! engine on the receive side (and, for Eunomia, a sender agent beside
//! the engine's send side). [`OrderingKind`] (in `config`) is the NIC's
//! choice; [`Ordering`] the per-QP state, with one variant per layer
//! ([`ideal`]; [`eunomia`]'s agents over a hybrid-dynamic or a static
//! bitmap), [`Ordering::on_packet`] the one match over them, and
//! [`Layer`] what the NIC holds: every QP's state and the NIC-wide part
//! (Eunomia's memory controller, `mc`).
//!
//! The NIC counts reordering before any layer (a layer records what it
//! holds as out of order, `crate::reorder`), so the counters keep meaning
//! "what the fabric did"; the NIC only calls into this module when its
//! configuration names a layer, so that `none` costs one predictable
//! branch per packet received and per data packet sent.
//!
//! Adding a layer: a file (or folder) beside `ideal.rs` with its per-QP
//! state and `on_packet(qp, cx, pkt) -> bool`, a variant of
//! [`OrderingKind`] and of [`Ordering`], and one arm in [`Ordering::new`]
//! and [`Ordering::on_packet`].
//!
//! May use `crate::qp`, `crate::rc`, `crate::packet`, `crate::psn` and
//! `crate::memory`; never the NIC.

pub mod config;
pub mod eunomia;
mod hd;
mod held;
mod ideal;
mod mc;

pub use config::{EunomiaConfig, OrderingError, OrderingKind, StaticBitmapConfig};
pub use mc::OrderMemory;

use crate::packet::Packet;
use crate::psn::Psn;
use crate::qp::Qp;
use crate::rc::Ctx;
use eunomia::{BitmapQp, Bitmaps};
use hd::Geometry;
use ideal::IdealBuffer;
use mc::MemoryController;

/// One QP's ordering layer.
#[derive(Debug)]
pub(crate) enum Ordering {
    /// Packets go straight to the engine (also a destroyed QP's).
    None,
    Ideal(IdealBuffer),
    /// Eunomia's agents, over a dynamic or a static bitmap.
    Bitmap(Box<BitmapQp>),
}

/// The NIC's ordering layer: every QP's state, indexed as the NIC's QPs,
/// and the bitmap layers' NIC-wide part.
#[derive(Debug)]
pub(crate) struct Layer {
    qps: Vec<Ordering>,
    bitmaps: Option<Bitmaps>,
    kind: OrderingKind,
}

impl Layer {
    pub fn new(kind: OrderingKind) -> Layer {
        let bitmaps = match kind {
            OrderingKind::None | OrderingKind::Ideal => None,
            OrderingKind::Eunomia(c) => Some(Bitmaps {
                mc: MemoryController::new(c.memory_bytes),
                geo: Geometry {
                    block_bits: c.block_bits,
                    cap_bits: c.cap_bits,
                    units_per_block: c.units_per_block(),
                    metadata_units: c.metadata_bytes().div_ceil(2),
                },
                dynamic: true,
            }),
            OrderingKind::StaticBitmap(c) => Some(Bitmaps {
                mc: MemoryController::new(0),
                geo: Geometry {
                    block_bits: c.bits,
                    cap_bits: c.bits,
                    units_per_block: c.bits.div_ceil(16),
                    metadata_units: 0,
                },
                dynamic: false,
            }),
        };
        Layer {
            qps: Vec::new(),
            bitmaps,
            kind,
        }
    }

    /// The state of a new QP whose first expected PSN is `rq`.
    pub fn push_qp(&mut self, rq: Psn) {
        let o = match (&self.bitmaps, self.kind) {
            (_, OrderingKind::None) => Ordering::None,
            (_, OrderingKind::Ideal) => Ordering::Ideal(IdealBuffer::default()),
            (Some(b), _) => Ordering::Bitmap(Box::new(BitmapQp::new(b, rq))),
            (None, _) => unreachable!("bitmap layers have their NIC-wide part"),
        };
        self.qps.push(o);
    }

    /// QP `qi` is destroyed: its layer's state goes, its bitmap back to
    /// the memory controller.
    pub fn destroy(&mut self, qi: usize) {
        if let (Ordering::Bitmap(q), Some(b)) = (&mut self.qps[qi], &mut self.bitmaps) {
            q.release(b);
        }
        self.qps[qi] = Ordering::None;
    }

    /// Hands `pkt` (and the payload in `cx.dma`) to `qp`'s engine, or
    /// holds it; hands on what it held that is now in order. True if the
    /// QP may have something new to send.
    #[inline]
    pub fn on_packet(&mut self, qi: usize, qp: &mut Qp, cx: &mut Ctx, pkt: &Packet) -> bool {
        match (&mut self.qps[qi], &mut self.bitmaps) {
            (Ordering::None, _) => qp.on_packet(cx, pkt),
            (Ordering::Ideal(b), _) => b.on_packet(qp, cx, pkt),
            (Ordering::Bitmap(q), Some(b)) => q.on_packet(b, qp, cx, pkt),
            (Ordering::Bitmap(_), None) => unreachable!("see Layer::push_qp"),
        }
    }

    /// The sender agent's metadata on a data packet `qp` just built.
    #[inline(never)]
    pub fn on_send(&self, qi: usize, qp: &Qp, pkt: &mut Packet) {
        if let Ordering::Bitmap(q) = &self.qps[qi] {
            q.stamp(pkt, qp.engine.req_has_data());
        }
    }

    /// NIC memory of the bitmap layer (None without one): Eunomia's
    /// memory controller; a static bitmap's fixed bytes per live QP.
    pub fn memory(&self) -> Option<OrderMemory> {
        let b = self.bitmaps.as_ref()?;
        if b.dynamic {
            return Some(b.mc.memory());
        }
        let OrderingKind::StaticBitmap(c) = self.kind else {
            return None;
        };
        let live = self
            .qps
            .iter()
            .filter(|q| matches!(q, Ordering::Bitmap(_)))
            .count() as u64;
        let bitmap = live * u64::from(c.bits.div_ceil(8));
        let metadata = live * u64::from(StaticBitmapConfig::STATE_BYTES);
        Some(OrderMemory {
            bitmap_bytes: bitmap,
            metadata_bytes: metadata,
            peak_bytes: bitmap + metadata,
        })
    }

    /// Bits of bitmap QP `qi` holds now and the most it held at once (0
    /// without a bitmap layer).
    pub fn qp_bitmap_bits(&self, qi: usize) -> (u32, u32) {
        match (&self.qps[qi], &self.bitmaps) {
            (Ordering::Bitmap(q), Some(b)) => (q.bitmap_bits(b), q.peak_bits()),
            _ => (0, 0),
        }
    }
}
