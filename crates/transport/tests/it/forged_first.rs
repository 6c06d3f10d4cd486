//! A forged first packet whose address is outside the registered memory
//! starts nothing: the real first packet of the same PSN, which comes
//! after it, is placed and acknowledged (go-back-N's responder once kept
//! the forged message open and refused the real one as malformed, a
//! denial of service by one datagram), under every engine that places by
//! address.

use crate::common;

use common::chaos::{Mem, BASE};
use transport::{
    Engine, InitialPsns, IrnConfig, Nic, NicConfig, Packet, PacketKind, QpConfig, Verb,
};

fn first_write(addr: u64, len: u32, last: bool) -> Packet {
    Packet {
        src: 1,
        dst: 0,
        src_qp: 0,
        dst_qp: 0,
        kind: PacketKind::Request,
        verb: Verb::Write,
        psn: 50,
        payload: len,
        first: true,
        last,
        msg_len: if last {
            u64::from(len)
        } else {
            2 * u64::from(len)
        },
        addr,
        ..Packet::default()
    }
}

#[test]
fn a_forged_first_packet_does_not_block_the_real_one() {
    for engine in [Engine::GoBackN, Engine::Irn(IrnConfig::default())] {
        let mut nic = Nic::new(NicConfig {
            mtu: 64,
            engine,
            ..NicConfig::default()
        })
        .unwrap();
        let cfg = QpConfig {
            peer_host: 1,
            peer_qp: 0,
            sport: 9,
        };
        let psns = InitialPsns {
            sq_psn: 0,
            rq_psn: 50,
        };
        nic.create_qp_with_psns(cfg, psns).unwrap();
        let mut mem = Mem::new(vec![0; 128]);
        let forged = first_write(1_000_000, 64, false);
        nic.on_packet_with(0, &forged, &[7; 64], &mut mem);
        assert_eq!(nic.stats().access_errors, 1, "{engine:?}");
        let real = first_write(BASE, 64, true);
        nic.on_packet_with(1, &real, &[9; 64], &mut mem);
        assert_eq!(nic.stats().malformed_dropped, 0, "{engine:?}");
        assert!(
            mem.bytes[..64].iter().all(|&b| b == 9),
            "{engine:?}: the real write landed"
        );
        assert!(mem.bytes[64..].iter().all(|&b| b == 0), "{engine:?}");
    }
}
