//! The MP-RDMA receiver (paper §3.1, §3.3.1, §3.4): places every packet on
//! arrival (out of order: a WRITE packet at its address, a SEND packet at
//! its offset in the buffer of the receive WQE its MSN names), tracks it
//! in the 2-bit bitmap, moves `rcv_nxt` over contiguous received slots and
//! completes messages in order as their tail slots pass, and answers every
//! data packet with an ACK echoing its VP, PSN (SACK), ECN mark and ReTx
//! bit, with the cumulative ACK.
//!
//! Drops are each answered by a NACK carrying the dropped packet's VP (so
//! the sender's clock on that VP survives); only the first per step of
//! progress asks for recovery, the rest are flagged `dup` (a recovery
//! restart per dropped packet would loop):
//! - a packet at or beyond `rcv_nxt + L` (bitmap overflow): NACK asking
//!   from `rcv_nxt`;
//! - a packet of a synchronise message whose earlier messages are not all
//!   received (its first PSN is beyond `rcv_nxt`): NACK asking from that
//!   first PSN, so memory is only ever updated in order around it.
//!
//! `rcv_nxt` moves per packet rather than per message so that messages
//! longer than L packets can be received; a slot's Tail state passing the
//! head is the message's completion, exactly as the paper's HoL scan.
//!
//! PSNs (from the QP's `rq_psn`) and MSNs are the QP's 32-bit serial
//! numbers (`crate::psn`), 24 bits on the wire, read back relative to
//! `rcv_nxt` and `send_base`; the out-of-order degree is the serial
//! distance from `rcv_nxt`.

use std::collections::VecDeque;

use super::bitmap::{Bitmap, Slot};
use super::config::MpRdmaConfig;
use crate::api::{Completion, CompletionSide, Event};
use crate::packet::{MpHeader, Packet, PacketKind, Verb};
use crate::psn::{Msn, Psn, MAX_PSN_SPAN};
use crate::rc::{Ctx, RecvWqe};

#[derive(Clone, Copy, Debug)]
struct Recv {
    /// The posted WQE: its buffer's address and length.
    wqe: RecvWqe,
    /// Bytes of the SEND it receives, and its immediate, known once its
    /// tail arrived.
    got: u64,
    imm: u64,
}

/// The reply to one data packet: its kind, the cumulative ACK and the
/// extension header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reply {
    pub kind: PacketKind,
    pub aack: Psn,
    pub ecn: bool,
    pub mp: MpHeader,
}

#[derive(Debug)]
pub(crate) struct Receiver {
    bitmap: Bitmap,
    pub rcv_nxt: Psn,
    /// `rcv_nxt` at the last overflow NACK (cleared when `rcv_nxt` moves,
    /// so that it cannot match again once the PSNs wrap).
    nacked_at: Option<Psn>,
    /// (first PSN of the synchronise message, `rcv_nxt`) at the last
    /// synchronise NACK (cleared as `nacked_at`).
    sync_nacked: Option<(Psn, Psn)>,
    recv: VecDeque<Recv>,
    /// MSN of the SEND the front receive WQE belongs to.
    send_base: Msn,
}

impl Receiver {
    /// A receiver that expects the PSN `first` first.
    pub fn new(cfg: &MpRdmaConfig, first: Psn) -> Receiver {
        Receiver {
            bitmap: Bitmap::new(cfg.l_slots),
            rcv_nxt: first,
            nacked_at: None,
            sync_nacked: None,
            recv: VecDeque::new(),
            send_base: Msn::initial(0),
        }
    }

    pub fn post_recv(&mut self, wqe: RecvWqe) {
        self.recv.push_back(Recv {
            wqe,
            got: 0,
            imm: 0,
        });
    }

    /// Processes a WRITE/SEND data packet, placing its payload through
    /// `dma`. `None`: no reply (malformed, RNR or an access error).
    pub fn on_data(&mut self, cx: &mut Ctx, pkt: &Packet) -> Option<Reply> {
        let (now, qp, cfg) = (cx.now, cx.qp, cx.cfg);
        let (stats, events, dma) = (&mut *cx.stats, &mut *cx.events, &mut *cx.dma);
        let rx = &mut *cx.rx;
        let h = MpHeader::of(pkt);
        // A message spans at most `MAX_PSN_SPAN` PSNs.
        if pkt.verb == Verb::Read || pkt.payload > cfg.mtu || h.ipsn > MAX_PSN_SPAN {
            stats.malformed_dropped += 1;
            return None;
        }
        let p = Psn::from_wire(pkt.psn, self.rcv_nxt);
        let ack = |rcv_nxt: Psn, dup: bool| Reply {
            kind: PacketKind::Ack,
            aack: rcv_nxt,
            ecn: pkt.ce,
            mp: MpHeader {
                sack: p.wire(),
                vp: pkt.sport,
                retx: h.retx,
                dup,
                ..MpHeader::default()
            },
        };
        let nack = |rcv_nxt: Psn, from: Psn, sync: bool, dup: bool| Reply {
            kind: PacketKind::Nack,
            aack: rcv_nxt,
            ecn: pkt.ce,
            mp: MpHeader {
                sack: from.wire(),
                vp: pkt.sport,
                retx: h.retx,
                sync,
                dup,
                ..MpHeader::default()
            },
        };
        if p.lt(self.rcv_nxt) {
            rx.duplicates += 1;
            stats.duplicates_received += 1;
            return Some(ack(self.rcv_nxt, true));
        }
        let off = p.since(self.rcv_nxt);
        if off >= self.bitmap.slots() {
            rx.out_of_order(&mut stats.ood, off as u64);
            stats.out_of_order_dropped += 1;
            stats.mp_bitmap_drops += 1;
            let repeat = self.nacked_at == Some(self.rcv_nxt);
            self.nacked_at = Some(self.rcv_nxt);
            return Some(nack(self.rcv_nxt, self.rcv_nxt, false, repeat));
        }
        let first = p - h.ipsn;
        if h.sync && first.gt(self.rcv_nxt) {
            stats.mp_sync_drops += 1;
            let key = (first, self.rcv_nxt);
            if self.sync_nacked == Some(key) {
                return Some(nack(self.rcv_nxt, self.rcv_nxt, false, true));
            }
            self.sync_nacked = Some(key);
            return Some(nack(self.rcv_nxt, first, true, false));
        }
        if self.bitmap.get(off) != Slot::Empty {
            rx.duplicates += 1;
            stats.duplicates_received += 1;
            return Some(ack(self.rcv_nxt, true));
        }
        let placed = if pkt.verb == Verb::Send {
            let k = Msn::from_wire(h.msn, self.send_base).since(self.send_base) as usize;
            let Some(w) = self.recv.get_mut(k) else {
                // RNR: no receive WQE for this SEND yet; the sender's
                // timeout or early retransmission tries again.
                stats.rnr_drops += 1;
                return None;
            };
            // A SEND lands in its receive buffer, which it may not overrun
            // (`addr` is the packet's offset in the message).
            let fits = pkt
                .addr
                .checked_add(pkt.payload as u64)
                .is_some_and(|end| end <= w.wqe.len);
            let placed = fits && dma.place(w.wqe.addr + pkt.addr);
            if placed && pkt.last {
                w.got = pkt.msg_len;
                w.imm = pkt.imm;
            }
            placed
        } else {
            dma.place(pkt.addr)
        };
        if !placed {
            // Dropped unacknowledged, as go-back-N and IRN do (a real NIC
            // would fail the QP with a remote access error; not modelled).
            stats.access_errors += 1;
            return None;
        }
        let slot = match (pkt.last, pkt.verb) {
            (false, _) => Slot::Received,
            (true, Verb::Send) => Slot::TailCompletion,
            (true, _) => Slot::Tail,
        };
        self.bitmap.set(off, slot);
        stats.mp_max_ooo_degree = stats.mp_max_ooo_degree.max(off as u64);
        if off > 0 {
            rx.out_of_order(&mut stats.ood, off as u64);
        } else {
            stats.ood.in_order();
        }
        let before = self.rcv_nxt;
        while self.bitmap.get(0) != Slot::Empty {
            let s = self.bitmap.pop_front();
            self.rcv_nxt += 1;
            if s == Slot::TailCompletion {
                if let Some(w) = self.recv.pop_front() {
                    self.send_base += 1;
                    events.push_back(Event::Completion(Completion {
                        qp,
                        wr_id: w.wqe.wr_id,
                        verb: Verb::Send,
                        len: w.got,
                        side: CompletionSide::Responder,
                        at: now,
                        imm: w.imm,
                    }));
                }
            }
        }
        if self.rcv_nxt != before {
            // Progress: no NACK so far was for this `rcv_nxt`.
            self.nacked_at = None;
            self.sync_nacked = None;
        }
        Some(ack(self.rcv_nxt, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{NicConfig, NicStats};
    use crate::memory::Dma;
    use crate::memory::Memory;

    fn data(psn: u32, ipsn: u32, last: bool, verb: Verb) -> Packet {
        Packet {
            src: 1,
            dst: 0,
            src_qp: 0,
            dst_qp: 0,
            sport: 500 + psn as u16,
            kind: PacketKind::Request,
            verb,
            psn,
            payload: 1000,
            wire: 1048,
            priority: 3,
            ce: psn == 3,
            ecn_echo: false,
            first: ipsn == 0,
            last,
            msg_len: 1000 * (ipsn as u64 + 1),
            sent_at: 0,
            // The offset in the message (SEND), or the address (WRITE) of a
            // message at 0.
            addr: ipsn as u64 * 1000,
            ipsn,
            ..Packet::default()
        }
    }

    /// One registered region: these bytes, from `BASE`.
    struct Mem(Vec<u8>);

    const BASE: u64 = 0x1000;

    impl Memory for Mem {
        fn read(&mut self, _: u64, _: &mut [u8]) -> bool {
            unreachable!("the receiver only writes")
        }
        fn write(&mut self, addr: u64, data: &[u8]) -> bool {
            let Some(a) = addr.checked_sub(BASE).map(|a| a as usize) else {
                return false;
            };
            if a + data.len() > self.0.len() {
                return false;
            }
            self.0[a..a + data.len()].copy_from_slice(data);
            true
        }
    }

    struct H {
        r: Receiver,
        c: NicConfig,
        st: NicStats,
        ev: VecDeque<Event>,
    }

    impl H {
        fn new(l: u32) -> H {
            let cfg = MpRdmaConfig {
                l_slots: l,
                delta: l.min(32),
                ..MpRdmaConfig::default()
            };
            H {
                r: Receiver::new(&cfg, Psn::default()),
                c: NicConfig::default(),
                st: NicStats::default(),
                ev: VecDeque::new(),
            }
        }
        fn rx(&mut self, p: Packet) -> Option<Reply> {
            self.r.on_data(
                &mut Ctx::test(
                    0,
                    0,
                    &self.c,
                    &mut self.st,
                    &mut self.ev,
                    &mut VecDeque::new(),
                    &mut Dma::none(),
                ),
                &p,
            )
        }
        /// Receives `p` with a payload of `p.payload` copies of `fill`.
        fn rx_bytes(&mut self, p: Packet, fill: u8, mem: &mut Mem) -> Option<Reply> {
            let bytes = vec![fill; p.payload as usize];
            let mut dma = Dma::rx(mem, &bytes);
            self.r.on_data(
                &mut Ctx::test(
                    0,
                    0,
                    &self.c,
                    &mut self.st,
                    &mut self.ev,
                    &mut VecDeque::new(),
                    &mut dma,
                ),
                &p,
            )
        }
        fn post_recv(&mut self, wr_id: u64, addr: u64, len: u64) {
            self.r.post_recv(RecvWqe { wr_id, addr, len });
        }
        fn done(&mut self) -> Vec<(u64, u64)> {
            self.ev
                .drain(..)
                .map(|e| match e {
                    Event::Completion(c) => (c.wr_id, c.len),
                })
                .collect()
        }
    }

    #[test]
    fn ack_echoes_vp_sack_aack_ecn_and_retx() {
        let mut h = H::new(8);
        let mut p = data(3, 3, false, Verb::Write);
        p.mp_flags |= MpHeader::RETX;
        let r = h.rx(p).unwrap();
        assert_eq!(r.kind, PacketKind::Ack);
        assert_eq!((r.aack.wire(), r.mp.sack, r.mp.vp), (0, 3, 503));
        assert!(r.ecn && r.mp.retx && !r.mp.dup);
        // A duplicate is flagged.
        assert!(h.rx(p).unwrap().mp.dup);
    }

    #[test]
    fn completes_head_of_line_sends_in_order_with_tail_states() {
        let mut h = H::new(8);
        h.post_recv(10, 0, 1 << 20);
        h.post_recv(11, 0, 1 << 20);
        // SEND 0 = PSNs 0,1; SEND 1 = PSN 2. Arrive 2, 1, 0.
        let mut s1 = data(2, 0, true, Verb::Send);
        s1.wqe_sn = 1;
        assert_eq!(h.rx(s1).unwrap().aack.wire(), 0);
        assert_eq!(h.r.bitmap.get(2), Slot::TailCompletion);
        let mut b = data(1, 1, true, Verb::Send);
        b.msg_len = 2000;
        h.rx(b);
        assert_eq!(h.r.bitmap.get(1), Slot::TailCompletion);
        assert!(h.done().is_empty(), "the head is missing");
        let r = h.rx(data(0, 0, false, Verb::Send)).unwrap();
        assert_eq!(r.aack.wire(), 3);
        assert_eq!(h.done(), vec![(10, 2000), (11, 1000)]);
        // A WRITE tail needs no completion.
        h.rx(data(3, 0, true, Verb::Write));
        assert_eq!(h.r.rcv_nxt.wire(), 4);
        assert!(h.done().is_empty());
    }

    #[test]
    fn beyond_l_is_dropped_and_nacked_once_per_progress() {
        let mut h = H::new(4);
        let r = h.rx(data(4, 4, false, Verb::Write)).unwrap();
        assert_eq!((r.kind, r.aack.wire(), r.mp.sack), (PacketKind::Nack, 0, 0));
        let r = h.rx(data(5, 5, false, Verb::Write)).unwrap();
        assert!(
            r.kind == PacketKind::Nack && r.mp.dup,
            "same hole: a drop report only"
        );
        assert_eq!(h.st.mp_bitmap_drops, 2);
        assert_eq!(h.r.bitmap.get(0), Slot::Empty, "nothing recorded");
        // PSN 3 fits (offset 3 < L).
        assert_eq!(
            h.rx(data(3, 3, false, Verb::Write)).unwrap().kind,
            PacketKind::Ack
        );
        h.rx(data(0, 0, false, Verb::Write));
        assert_eq!(h.r.rcv_nxt.wire(), 1);
        // Progress: a new overflow NACKs again.
        let r = h.rx(data(9, 9, false, Verb::Write)).unwrap();
        assert_eq!((r.kind, r.mp.sack, r.mp.dup), (PacketKind::Nack, 1, false));
    }

    #[test]
    fn wraps_around_a_long_stream() {
        let mut h = H::new(5);
        // Pairs swapped: 1,0,3,2,... for 10_000 packets of one WRITE.
        for i in (0..10_000u32).step_by(2) {
            h.rx(data(i + 1, i + 1, i + 1 == 9_999, Verb::Write));
            let r = h.rx(data(i, i, false, Verb::Write)).unwrap();
            assert_eq!(r.aack.wire(), i + 2);
        }
        assert_eq!(h.st.mp_max_ooo_degree, 1);
    }

    #[test]
    fn early_synchronise_message_is_dropped_and_nacked() {
        let mut h = H::new(16);
        // PSN 0 (message 0) missing; message 1 (PSN 1, 2) is synchronise.
        let mut s = data(2, 1, true, Verb::Write);
        s.mp_flags |= MpHeader::SYNC;
        let r = h.rx(s).unwrap();
        assert_eq!((r.kind, r.mp.sack, r.mp.sync), (PacketKind::Nack, 1, true));
        let mut s0 = data(1, 0, false, Verb::Write);
        s0.mp_flags |= MpHeader::SYNC;
        assert!(h.rx(s0).unwrap().mp.dup, "one recovery NACK until progress");
        assert_eq!(h.st.mp_sync_drops, 2);
        h.rx(data(0, 0, true, Verb::Write));
        // Now the synchronise message is accepted.
        assert_eq!(h.rx(s0).unwrap().kind, PacketKind::Ack);
        assert_eq!(h.rx(s).unwrap().aack.wire(), 3);
    }

    #[test]
    fn places_writes_at_their_address_and_sends_in_their_buffer() {
        let mut h = H::new(16);
        let mut mem = Mem(vec![0; 6000]);
        // Two receive WQEs; SEND 1 (MSN 1) lands in the second buffer.
        h.post_recv(10, BASE, 1000);
        h.post_recv(11, BASE + 1000, 2000);
        // PSN 0: SEND 0 (one packet); PSNs 1-2: SEND 1; PSNs 3-4: a WRITE
        // at BASE + 3000. They arrive in reverse order.
        let mut w1 = data(4, 1, true, Verb::Write);
        w1.addr = BASE + 4000;
        let mut w0 = data(3, 0, false, Verb::Write);
        w0.addr = BASE + 3000;
        let mut s1b = data(2, 1, true, Verb::Send);
        s1b.wqe_sn = 1;
        s1b.payload = 500;
        s1b.msg_len = 1500;
        let mut s1a = data(1, 0, false, Verb::Send);
        s1a.wqe_sn = 1;
        let s0 = data(0, 0, true, Verb::Send);
        for (p, fill) in [(w1, 5), (w0, 4), (s1b, 3), (s1a, 2), (s0, 1)] {
            assert_eq!(h.rx_bytes(p, fill, &mut mem).unwrap().kind, PacketKind::Ack);
        }
        let mut want = vec![1; 1000];
        want.extend([2; 1000]);
        want.extend([3; 500]);
        want.extend([0; 500]);
        want.extend([4; 1000]);
        want.extend([5; 1000]);
        want.extend([0; 1000]);
        assert!(mem.0 == want, "placed by address and receive buffer");
        assert_eq!(h.done(), vec![(10, 1000), (11, 1500)]);
        assert_eq!(h.st.access_errors, 0);
    }

    #[test]
    fn a_send_longer_than_its_buffer_or_a_write_outside_memory_is_not_placed() {
        let mut h = H::new(16);
        let mut mem = Mem(vec![0; 3000]);
        h.post_recv(10, BASE, 1500);
        // A 2000-byte SEND into a 1500-byte buffer: its second packet would
        // overrun into the (registered) bytes after the buffer.
        let a = data(0, 0, false, Verb::Send);
        let mut b = data(1, 1, true, Verb::Send);
        b.msg_len = 2000;
        assert!(h.rx_bytes(a, 7, &mut mem).is_some());
        assert_eq!(h.rx_bytes(b, 8, &mut mem), None, "dropped, no reply");
        assert_eq!(h.st.access_errors, 1);
        assert!(mem.0[..1000].iter().all(|&x| x == 7));
        assert!(mem.0[1000..].iter().all(|&x| x == 0), "nothing overrun");
        assert!(h.done().is_empty(), "the SEND never completes");
        // A WRITE outside the registered region.
        let mut w = data(2, 0, true, Verb::Write);
        w.addr = BASE + 2500;
        assert_eq!(h.rx_bytes(w, 9, &mut mem), None);
        assert_eq!(h.st.access_errors, 2);
        assert_eq!(h.r.rcv_nxt.wire(), 1, "neither is recorded as received");
    }
}
