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
//! branch per packet received and per data packet sent. On the send side
//! a bitmap layer stamps each data packet ([`Layer::on_send`]) and, with
//! `last_packet = "sender_hold"`, may hold a WRITE's last packet back
//! ([`Layer::holds`], asked before the packet is built).
//!
//! Adding a layer: a file (or folder) beside `ideal.rs` with its per-QP
//! state and `on_packet(qp, cx, pkt) -> bool`, a variant of
//! [`OrderingKind`] and of [`Ordering`], and one arm in [`Ordering::new`]
//! and [`Ordering::on_packet`].
//!
//! May use `crate::qp`, `crate::rc`, `crate::packet`, `crate::psn`,
//! `crate::memory` and `crate::api`'s counters; never the NIC.

pub mod config;
pub mod eunomia;
mod free_runs;
mod hd;
mod held;
mod ideal;
mod mc;

pub use config::{EunomiaConfig, LastPacket, OrderingError, OrderingKind, StaticBitmapConfig};
pub use mc::OrderMemory;

use crate::api::NicStats;
use crate::packet::Packet;
use crate::qp::Qp;
use crate::rc::Ctx;
use engine::Time;
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
    /// `last_packet = "sender_hold"` under a bitmap layer.
    sender_hold: bool,
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
                live: 0,
                peak_live: 0,
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
                live: 0,
                peak_live: 0,
            }),
        };
        Layer {
            qps: Vec::new(),
            bitmaps,
            kind,
            sender_hold: kind.last_packet() == Some(LastPacket::SenderHold),
        }
    }

    /// The state of a new QP.
    pub fn push_qp(&mut self) {
        let o = match (&self.bitmaps, self.kind) {
            (_, OrderingKind::None) => Ordering::None,
            (_, OrderingKind::Ideal) => Ordering::Ideal(IdealBuffer::default()),
            (Some(b), _) => Ordering::Bitmap(Box::new(BitmapQp::new(b))),
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

    /// Whether QP `qi` must not send its next packet yet: the sender
    /// agent holds a WRITE's last packet (`sender_hold`, see `eunomia`).
    /// A QP held back this way is woken by the ACK that releases it; its
    /// READ responses meanwhile still go (`resp_turn`).
    #[inline(never)]
    pub fn holds(&mut self, qi: usize, qp: &mut Qp, now: Time) -> bool {
        let held = match &mut self.qps[qi] {
            Ordering::Bitmap(q) if self.sender_hold => q.holds(qp, now),
            _ => false,
        };
        if !held {
            return false;
        }
        if qp.engine.resp_has_data() {
            qp.resp_turn = true;
            return false;
        }
        true
    }

    /// The sender agent's metadata on a data packet `qp` just built at
    /// `now`, and the end of a hold.
    #[inline(never)]
    pub fn on_send(
        &mut self,
        qi: usize,
        qp: &Qp,
        pkt: &mut Packet,
        now: Time,
        stats: &mut NicStats,
    ) {
        if let Ordering::Bitmap(q) = &mut self.qps[qi] {
            q.on_send(qp, pkt, self.sender_hold.then_some((now, stats)));
        }
    }

    /// NIC memory of the bitmap layer (None without one): Eunomia's
    /// memory controller; a static bitmap's fixed bytes per live
    /// connection.
    pub fn memory(&self) -> Option<OrderMemory> {
        let b = self.bitmaps.as_ref()?;
        if b.dynamic {
            return Some(b.mc.memory());
        }
        let OrderingKind::StaticBitmap(c) = self.kind else {
            return None;
        };
        let (bitmap, metadata) = (
            u64::from(c.bits.div_ceil(8)),
            u64::from(StaticBitmapConfig::STATE_BYTES),
        );
        Some(OrderMemory {
            bitmap_bytes: b.live * bitmap,
            metadata_bytes: b.live * metadata,
            peak_bytes: b.peak_live * (bitmap + metadata),
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
