//! HPCC's telemetry between a host's NIC and the fabric. A data packet's
//! hop records wait here, by receiving host and QP, until the NIC sends the
//! ACK or NACK that answers it (the one echoing its send time), which then
//! carries them back; an ACK's records go to its NIC with it
//! (`Nic::set_rx_int`). The records travel beside the packets so that a
//! packet stays one cache line in the arena and the transport's packets
//! stay small with HPCC off. Touches the arena's telemetry, the hosts' NICs
//! and the table (`IntEcho`, in `host/mod.rs`); called only when switches
//! stamp telemetry.

use crate::net::Network;
use transport::{Packet, PacketKind};

impl Network {
    /// Host `h` receives `pkt`, packet `idx` of the arena: a data packet's
    /// records wait for its answer, an ACK's go to the NIC.
    pub(crate) fn int_received(&mut self, h: u32, pkt: &Packet, idx: u32) {
        let int = self.arena.int_of(idx);
        if pkt.is_data() {
            self.int_echo
                .queue(h, pkt.dst_qp)
                .push_back((pkt.sent_at, int));
        } else {
            self.hosts[h as usize].nic.set_rx_int(int);
        }
    }

    /// Host `h` sends `pkt`, packet `idx` of the arena: an ACK or NACK
    /// takes the records of the data packet it answers (records of packets
    /// answered by none before it are dropped).
    pub(crate) fn int_sent(&mut self, h: u32, pkt: &Packet, idx: u32) {
        if !matches!(pkt.kind, PacketKind::Ack | PacketKind::Nack) {
            return;
        }
        let q = self.int_echo.queue(h, pkt.src_qp);
        while let Some((sent_at, int)) = q.pop_front() {
            if sent_at == pkt.sent_at {
                self.arena.set_int(idx, int);
                return;
            }
        }
    }
}
