//! The context every packet handler gets ([`Ctx`]: the time, the QP's
//! addressing, the NIC's configuration, counters, event and control-packet
//! queues, and the DMA of the packet), what a handler may touch of its QP
//! outside its engine ([`Conn`]: congestion control and CNP pacing), and
//! the construction of control packets (ACK, NACK, read (N)ACK, CNP).
//!
//! Uses `crate::api`, `crate::packet`, `crate::memory`, `crate::cc`,
//! `crate::int`, `crate::dcqcn` and `crate::reorder`.

use std::collections::VecDeque;

use crate::api::{Event, NicConfig, NicStats, QpConfig, QpId};
use crate::cc::Cc;
use crate::dcqcn::Notification;
use crate::int::IntStack;
use crate::memory::Dma;
use crate::packet::{Packet, PacketKind, Verb};
use crate::reorder::QpReorder;
use engine::Time;

/// What every handler of an input for one QP needs.
pub(crate) struct Ctx<'a, 'm> {
    pub now: Time,
    /// The QP the input is for.
    pub qp: QpId,
    /// Its peer and source port.
    pub peer: QpConfig,
    pub cfg: &'a NicConfig,
    pub stats: &'a mut NicStats,
    pub events: &'a mut VecDeque<Event>,
    /// Control packets to send, in order, before any data.
    pub ctrl: &'a mut VecDeque<Packet>,
    pub dma: &'a mut Dma<'m>,
    /// The QP's reordering counters (see [`Ctx::out_of_order`]).
    pub rx: &'a mut QpReorder,
    /// The in-band telemetry that came with the packet (HPCC's, on ACKs;
    /// empty otherwise).
    pub int: &'a IntStack,
}

/// The QP's state outside its engine that a packet handler may change.
pub(crate) struct Conn<'q> {
    /// How the QP, as a notification point, reports CE marks.
    pub notification: Notification,
    /// When the QP last sent a CNP packet.
    pub last_cnp: &'q mut Option<Time>,
    pub cc: &'q mut Cc,
}

/// The fields of a control packet that vary.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CtrlFields {
    pub kind: PacketKind,
    pub psn: u32,
    /// Equal to `psn`: no selective ack.
    pub sack_psn: u32,
    pub verb: Verb,
    pub ecn_echo: bool,
    pub sent_at: Time,
}

impl Ctx<'_, '_> {
    /// A new data packet arrived at the expected PSN (one bucket increment).
    #[inline(always)]
    pub fn in_order(&mut self) {
        self.stats.ood.in_order();
    }

    /// A new data packet arrived `degree` PSNs above the expected one.
    #[inline]
    pub fn out_of_order(&mut self, degree: u32) {
        self.rx.out_of_order(&mut self.stats.ood, u64::from(degree));
    }

    /// A data packet duplicated data already received.
    #[inline]
    pub fn duplicate(&mut self) {
        self.rx.duplicates += 1;
        self.stats.duplicates_received += 1;
    }

    /// Runs `f` with this context's DMA receiving `payload` instead (the
    /// same memory): an ordering layer handing on a packet it held.
    pub fn with_payload<R>(&mut self, payload: &[u8], f: impl FnOnce(&mut Ctx) -> R) -> R {
        let mut dma = self.dma.rx_again(payload);
        let mut cx = Ctx {
            now: self.now,
            qp: self.qp,
            peer: self.peer,
            cfg: self.cfg,
            stats: &mut *self.stats,
            events: &mut *self.events,
            ctrl: &mut *self.ctrl,
            dma: &mut dma,
            rx: &mut *self.rx,
            int: self.int,
        };
        f(&mut cx)
    }

    /// A control packet to the peer QP.
    #[inline]
    pub fn ctrl_packet(&self, f: CtrlFields) -> Packet {
        ctrl_packet(self.cfg, self.qp, &self.peer, f)
    }

    /// Sends a CNP for the marked packet `pkt` unless one went out less than
    /// `interval` ago.
    pub fn maybe_cnp(&mut self, conn: &mut Conn, interval: Time, pkt: &Packet) {
        let now = self.now;
        if conn
            .last_cnp
            .is_some_and(|t| now < t.saturating_add(interval))
        {
            return;
        }
        *conn.last_cnp = Some(now);
        let p = self.ctrl_packet(CtrlFields {
            kind: PacketKind::Cnp,
            psn: pkt.psn,
            sack_psn: pkt.psn,
            verb: pkt.verb,
            ecn_echo: false,
            sent_at: now,
        });
        self.ctrl.push_back(p);
        self.stats.cnps_sent += 1;
    }
}

/// A control packet from QP `qp` to its peer.
#[inline]
pub(crate) fn ctrl_packet(cfg: &NicConfig, qp: QpId, peer: &QpConfig, f: CtrlFields) -> Packet {
    Packet {
        src: cfg.host,
        dst: peer.peer_host,
        src_qp: qp,
        dst_qp: peer.peer_qp,
        sport: peer.sport,
        kind: f.kind,
        verb: f.verb,
        psn: f.psn,
        payload: 0,
        wire: cfg.ctrl_bytes,
        priority: cfg.ctrl_priority,
        ce: false,
        ecn_echo: f.ecn_echo,
        first: false,
        last: false,
        msg_len: 0,
        sent_at: f.sent_at,
        sack_psn: f.sack_psn,
        ..Packet::default()
    }
}

#[cfg(test)]
impl<'a, 'm> Ctx<'a, 'm> {
    /// A context for unit tests of one half (peer: host 0, QP 0, port 0).
    pub fn test(
        now: Time,
        qp: QpId,
        cfg: &'a NicConfig,
        stats: &'a mut NicStats,
        events: &'a mut VecDeque<Event>,
        ctrl: &'a mut VecDeque<Packet>,
        dma: &'a mut Dma<'m>,
    ) -> Self {
        Ctx {
            now,
            qp,
            peer: QpConfig {
                peer_host: 0,
                peer_qp: 0,
                sport: 0,
            },
            cfg,
            stats,
            events,
            ctrl,
            dma,
            // A test context's counters live as long as the test.
            rx: Box::leak(Box::default()),
            int: Box::leak(Box::default()),
        }
    }
}
