//! The packet arena and the packet's fabric header.
//!
//! Packets in flight live in one slab addressed by `u32`; steady state
//! allocates nothing. Queues and wires carry a [`Hdr`]: the arena handle
//! plus the few fields a switch reads, so a hop never touches the packet
//! itself (which is cold by then: it was written a whole hop ago). A slot
//! holds the packet without what its header carries (`dst`, `wire`) and
//! without the operands of WRITE with immediate and atomics, which the few
//! packets that carry them keep in a side table: one cache line a packet.

use std::collections::HashMap;

use transport::{IntHop, IntStack, Packet, PacketKind, Verb};

/// What links and switches need of a packet, in 16 bytes: four to a cache
/// line in a queue, and with its arrival time 24 bytes on a wire (`Frame`
/// keeps PFC frames in the values `class` cannot take). Hence the limits
/// [`Hdr::MAX_WIRE`], [`Hdr::MAX_PORTS`] and [`Hdr::MAX_HOSTS`], which
/// `Network::new` checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hdr {
    /// The packet in the arena.
    pub idx: u32,
    pub dst: u32,
    /// The packet's flow identity, `sport << 16 | src`: the source host
    /// and the UDP source port, exactly (host ids are below
    /// [`Hdr::MAX_HOSTS`], which `Network::new` checks, so the two never
    /// overlap). With `dst`, the ECMP key of the RoCEv2 5-tuple. Two QPs
    /// of one host that drew the same source port share it, as they share
    /// a 5-tuple on a real network.
    pub flow: u32,
    /// Bytes on the wire (low 14 bits), [`Hdr::DATA`] and [`Hdr::CE`].
    wire_flags: u16,
    /// Local index of the ingress port at the switch that holds it (for
    /// buffer release).
    pub in_port: u8,
    class: Class,
}

/// A traffic class, 0..8.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
enum Class {
    #[default]
    C0,
    C1,
    C2,
    C3,
    C4,
    C5,
    C6,
    C7,
}

impl Hdr {
    /// The largest frame a header can describe (MTU plus headers).
    pub const MAX_WIRE: u32 = (1 << 14) - 1;
    /// The most ports a switch may have.
    pub const MAX_PORTS: usize = 256;
    /// The most hosts a fabric may have: a host id fills the low 16 bits
    /// of [`Hdr::flow`].
    pub const MAX_HOSTS: usize = 1 << 16;
    const DATA: u16 = 1 << 14;
    /// Congestion experienced, set by a switch; copied into the packet on
    /// delivery.
    const CE: u16 = 1 << 15;

    /// A header for tests and tools: no packet behind it.
    pub fn of(class: u8, wire: u32, data: bool) -> Hdr {
        debug_assert!(wire <= Hdr::MAX_WIRE);
        const CLASSES: [Class; 8] = [
            Class::C0,
            Class::C1,
            Class::C2,
            Class::C3,
            Class::C4,
            Class::C5,
            Class::C6,
            Class::C7,
        ];
        Hdr {
            wire_flags: wire as u16 | if data { Hdr::DATA } else { 0 },
            class: CLASSES[class as usize & 7],
            ..Hdr::default()
        }
    }

    #[inline]
    fn new(idx: u32, pkt: &Packet) -> Hdr {
        let mut h = Hdr::of(pkt.priority, pkt.wire, pkt.is_data());
        h.idx = idx;
        h.dst = pkt.dst;
        debug_assert!((pkt.src as usize) < Hdr::MAX_HOSTS);
        h.flow = (pkt.sport as u32) << 16 | pkt.src;
        if pkt.ce {
            h.set_ce();
        }
        h
    }

    /// Bytes on the wire.
    #[inline(always)]
    pub fn wire(&self) -> u32 {
        (self.wire_flags & Hdr::MAX_WIRE as u16) as u32
    }

    #[inline(always)]
    pub fn class(&self) -> usize {
        self.class as usize
    }

    #[inline(always)]
    pub fn is_data(&self) -> bool {
        self.wire_flags & Hdr::DATA != 0
    }

    #[inline(always)]
    pub fn ce(&self) -> bool {
        self.wire_flags & Hdr::CE != 0
    }

    #[inline(always)]
    pub fn set_ce(&mut self) {
        self.wire_flags |= Hdr::CE;
    }

    /// The header of the same packet trimmed to `wire` bytes and moved to
    /// `class` (`switch/trim.rs`).
    pub fn trimmed(self, wire: u32, class: u8) -> Hdr {
        let mut h = Hdr::of(class, wire, self.is_data());
        h.wire_flags |= self.wire_flags & Hdr::CE;
        Hdr {
            idx: self.idx,
            dst: self.dst,
            flow: self.flow,
            in_port: self.in_port,
            ..h
        }
    }
}

/// A packet as the slab keeps it: all of [`Packet`] but the operands only
/// WRITE-with-immediate and atomic packets carry (`imm`, `compare`), which
/// would make every slot 16 bytes larger (at a few million packets in
/// flight, a 1024-host permutation peaks at 1.27 M, that is 20 MB), and but
/// `dst` and `wire`, which its [`Hdr`] carries anyway. What is left is one
/// cache line, aligned: a host reading a packet that left its sender long
/// ago waits for one line, not two.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
struct Slot {
    msg_len: u64,
    sent_at: engine::Time,
    addr: u64,
    src: u32,
    src_qp: u32,
    dst_qp: u32,
    psn: u32,
    payload: u32,
    wqe_sn: u32,
    /// A data packet's `ipsn`, a control packet's `sack_psn`: a packet
    /// carries only the one its kind allows (as on the wire,
    /// `transport::frame`), so one word holds it; [`split`] and [`join`]
    /// are its only readers and writers.
    sack_or_ipsn: u32,
    sport: u16,
    vp: u16,
    kind: PacketKind,
    verb: Verb,
    priority: u8,
    ce: bool,
    ecn_echo: bool,
    first: bool,
    last: bool,
    mp_flags: u8,
}

/// Splits a packet into its slot and its rare operands.
#[inline]
fn split(p: Packet) -> (Slot, (u64, u64)) {
    // Destructured whole: a new `Packet` field must be placed here.
    let Packet {
        src,
        dst,
        src_qp,
        dst_qp,
        sport,
        kind,
        verb,
        psn,
        payload,
        wire,
        priority,
        ce,
        ecn_echo,
        first,
        last,
        msg_len,
        sent_at,
        addr,
        imm,
        compare,
        wqe_sn,
        sack_psn,
        ipsn,
        vp,
        mp_flags,
    } = p;
    // `dst` and `wire` travel in the header.
    let _ = (dst, wire);
    debug_assert!(
        if p.is_data() {
            sack_psn == 0
        } else {
            ipsn == 0
        },
        "a data packet with a SACK or a control packet with an iPSN"
    );
    let slot = Slot {
        msg_len,
        sent_at,
        addr,
        src,
        src_qp,
        dst_qp,
        psn,
        payload,
        wqe_sn,
        // One of the two is 0: an or, not a branch on the kind.
        sack_or_ipsn: ipsn | sack_psn,
        sport,
        vp,
        kind,
        verb,
        priority,
        ce,
        ecn_echo,
        first,
        last,
        mp_flags,
    };
    (slot, (imm, compare))
}

#[inline]
fn join(s: Slot, hdr: &Hdr, (imm, compare): (u64, u64)) -> Packet {
    // All ones for a data packet, else 0: the word goes to its field by
    // masks, not a branch on the kind.
    let data = (hdr.is_data() as u32).wrapping_neg();
    Packet {
        src: s.src,
        dst: hdr.dst,
        src_qp: s.src_qp,
        dst_qp: s.dst_qp,
        sport: s.sport,
        kind: s.kind,
        verb: s.verb,
        psn: s.psn,
        payload: s.payload,
        wire: hdr.wire(),
        priority: s.priority,
        ce: s.ce,
        ecn_echo: s.ecn_echo,
        first: s.first,
        last: s.last,
        msg_len: s.msg_len,
        sent_at: s.sent_at,
        addr: s.addr,
        imm,
        compare,
        wqe_sn: s.wqe_sn,
        sack_psn: s.sack_or_ipsn & !data,
        ipsn: s.sack_or_ipsn & data,
        vp: s.vp,
        mp_flags: s.mp_flags,
    }
}

/// log2 of the slots in one chunk of the slab (1 MiB).
const CHUNK_SHIFT: u32 = 14;
const CHUNK: usize = 1 << CHUNK_SHIFT;

pub struct Arena {
    /// The slab, in chunks that never move: growing it copies nothing, so
    /// the peak memory is what the packets use (a doubling `Vec` of
    /// cache-aligned slots would be copied, old and new alive at once).
    chunks: Vec<Box<[Slot; CHUNK]>>,
    /// One past the highest slot stored (on one thread, the peak number
    /// of packets alive at once).
    len: u32,
    /// The next never-used slot this arena hands out, and the step to the
    /// one after (1 but in a sharded run, where shard k of n hands out
    /// `k, k + n, k + 2n, ...`, so that a packet keeps its slot in every
    /// shard it visits: `net/shard.rs`).
    next: u32,
    stride: u32,
    free: Vec<u32>,
    /// A sharded run's bookkeeping of packets that crossed shards (None on
    /// one thread).
    sharing: Option<Box<Sharing>>,
    /// The most packets alive at once, once the arena has been sharded
    /// (`net/parallel.rs` works it out; on one thread it is `len`).
    sharded_peak: Option<usize>,
    /// The nonzero (`imm`, `compare`) of live packets, by slot. Looked up by
    /// key only, never iterated, so it cannot affect the order of anything.
    operands: HashMap<u32, (u64, u64)>,
    /// HPCC's in-band telemetry of live packets, by slot, when switches
    /// stamp it (`int_multi` > 0, its INT multiplier); empty otherwise,
    /// and then never read.
    int: Vec<IntStack>,
    int_multi: u32,
}

impl Default for Arena {
    fn default() -> Arena {
        Arena {
            chunks: Vec::new(),
            len: 0,
            next: 0,
            stride: 1,
            free: Vec::new(),
            sharing: None,
            sharded_peak: None,
            operands: HashMap::new(),
            int: Vec::new(),
            int_multi: 0,
        }
    }
}

/// The packets of a sharded run's arena that crossed shards: those of
/// its slots another shard holds now, the other shards' slots it holds,
/// and the other shards' slots it freed (handed back at the next barrier);
/// and the packets made less those ended here, with their highest count
/// since [`Arena::begin_segment`] (one node's share of a window: the peak
/// one thread's slab would reach, pieced together in `net/parallel.rs`).
#[derive(Default)]
struct Sharing {
    /// By slot: [`AWAY`], [`HELD`] or 0 (a flag a slot, where a hashed
    /// set cost a tenth of a sharded run's instructions).
    marks: Vec<u8>,
    /// Slots marked [`AWAY`], and [`HELD`].
    away: usize,
    held: usize,
    freed: Vec<u32>,
    live: i64,
    start: i64,
    high: i64,
}

/// This shard's slot, whose packet another shard holds.
const AWAY: u8 = 1;
/// Another shard's slot, whose packet this shard holds.
const HELD: u8 = 2;

impl Sharing {
    /// Marks slot `i` (AWAY, HELD or 0), keeping the counts.
    fn mark(&mut self, i: u32, m: u8) {
        let i = i as usize;
        if self.marks.len() <= i {
            self.marks.resize(i + 1, 0);
        }
        for (flag, n) in [(AWAY, &mut self.away), (HELD, &mut self.held)] {
            if self.marks[i] == flag {
                *n -= 1;
            }
            if m == flag {
                *n += 1;
            }
        }
        self.marks[i] = m;
    }

    fn marked(&self, i: u32, m: u8) -> bool {
        self.marks.get(i as usize) == Some(&m)
    }
}

/// A packet leaving its shard's arena for another's: its slot, its rare
/// operands and its telemetry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parcel {
    slot: Slot,
    operands: (u64, u64),
    int: Option<IntStack>,
}

impl Arena {
    /// Bytes the slab holds per packet.
    pub const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

    /// An arena whose packets carry in-band telemetry that switches
    /// stamp with INT multiplier `multi` (0: none).
    pub fn with_int(multi: u32) -> Arena {
        Arena {
            int_multi: multi,
            ..Arena::default()
        }
    }

    /// The INT multiplier of the telemetry switches stamp (0: none).
    #[inline(always)]
    pub fn int_multi(&self) -> u32 {
        self.int_multi
    }

    /// Pushes a hop record onto packet `i`'s telemetry.
    pub fn push_int(&mut self, i: u32, hop: IntHop) {
        self.int[i as usize].push(hop);
    }

    /// Stores a packet; its header, which goes where the packet goes, holds
    /// the rest of it. Inlined wherever called: the NIC's send path keeps
    /// its copy whatever else allocates (a load balancer's control
    /// packets).
    #[inline(always)]
    pub fn alloc(&mut self, pkt: Packet) -> Hdr {
        let (slot, operands) = split(pkt);
        if self.sharing.is_some() {
            self.count_sharded();
        }
        let i = match self.free.pop() {
            Some(i) => i,
            None => self.fresh(),
        };
        *self.slot_mut(i) = slot;
        if operands != (0, 0) {
            self.operands.insert(i, operands);
        }
        if self.int_multi != 0 {
            self.set_int(i, IntStack::default());
        }
        Hdr::new(i, &pkt)
    }

    /// Packet `i`'s telemetry (the arena must carry it: `int_multi` > 0).
    pub fn int_of(&self, i: u32) -> IntStack {
        self.int[i as usize]
    }

    /// Sets packet `i`'s telemetry (an ACK's echo).
    #[cold]
    pub fn set_int(&mut self, i: u32, int: IntStack) {
        let i = i as usize;
        if self.int.len() <= i {
            self.int.resize(i + 1, IntStack::default());
        }
        self.int[i] = int;
    }

    /// A slot never used: the next this arena hands out (out of line:
    /// the slab grows only to its peak).
    #[cold]
    #[inline(never)]
    fn fresh(&mut self) -> u32 {
        let i = self.next;
        self.next += self.stride;
        self.reserve(i);
        i
    }

    /// A packet made in a sharded run: counted for the peak.
    #[cold]
    #[inline(never)]
    fn count_sharded(&mut self) {
        let s = self.sharing.as_mut().expect("sharded");
        s.live += 1;
        s.high = s.high.max(s.live);
    }

    /// Makes room for slot `i` (growing the slab by whole chunks).
    fn reserve(&mut self, i: u32) {
        while i as usize >= self.chunks.len() * CHUNK {
            let chunk = vec![Slot::default(); CHUNK].into_boxed_slice();
            self.chunks
                .push(chunk.try_into().expect("a chunk has CHUNK slots"));
        }
        self.len = self.len.max(i + 1);
    }

    #[inline]
    pub fn free(&mut self, i: u32) {
        if !self.operands.is_empty() {
            self.operands.remove(&i);
        }
        if self.sharing.is_some() {
            return self.free_sharded(i);
        }
        self.free.push(i);
    }

    /// A packet ends in a sharded run: another shard's slot goes back to
    /// it at the next barrier.
    #[cold]
    #[inline(never)]
    fn free_sharded(&mut self, i: u32) {
        let own = i % self.stride == self.next % self.stride;
        let s = self.sharing.as_mut().expect("sharded");
        s.live -= 1;
        if own {
            self.free.push(i);
        } else {
            s.mark(i, 0);
            s.freed.push(i);
        }
    }

    /// Starts counting a segment of the run (sharded).
    #[cold]
    #[inline(never)]
    pub(crate) fn begin_segment(&mut self) {
        let s = self.sharing.as_mut().expect("sharded");
        s.start = s.live;
        s.high = s.live;
    }

    /// The segment's change in packets alive, and its highest rise.
    pub(crate) fn end_segment(&self) -> (i64, i64) {
        let s = self.sharing.as_ref().expect("sharded");
        (s.live - s.start, s.high - s.start)
    }

    /// Packets made here less those ended here (sharded).
    pub(crate) fn made_less_ended(&self) -> i64 {
        self.sharing.as_ref().expect("sharded").live
    }

    /// Makes this the arena of shard `k` of `n` (before any packet).
    pub(crate) fn shard(&mut self, k: u32, n: u32) {
        debug_assert_eq!(self.len, 0);
        self.next = k;
        self.stride = n;
        self.sharing = Some(Box::default());
    }

    /// Takes packet `i` out for another shard, which will hold it in the
    /// same slot.
    pub(crate) fn export(&mut self, i: u32) -> Parcel {
        let parcel = self.parcel(i);
        self.operands.remove(&i);
        let own = i % self.stride == self.next % self.stride;
        let s = self.sharing.as_mut().expect("sharded");
        s.mark(i, if own { AWAY } else { 0 });
        parcel
    }

    /// Packet `i` as a parcel, left in place.
    fn parcel(&self, i: u32) -> Parcel {
        Parcel {
            slot: *self.slot(i),
            operands: self.operands.get(&i).copied().unwrap_or_default(),
            int: (self.int_multi != 0).then(|| self.int_of(i)),
        }
    }

    /// Stores a parcel in slot `i`.
    fn import_slot(&mut self, i: u32, p: Parcel) {
        self.reserve(i);
        *self.slot_mut(i) = p.slot;
        if p.operands != (0, 0) {
            self.operands.insert(i, p.operands);
        }
        if let Some(int) = p.int {
            self.set_int(i, int);
        }
    }

    /// Takes in packet `i` from another shard.
    pub(crate) fn import(&mut self, i: u32, p: Parcel) {
        self.import_slot(i, p);
        let own = i % self.stride == self.next % self.stride;
        let s = self.sharing.as_mut().expect("sharded");
        s.mark(i, if own { 0 } else { HELD });
    }

    /// The other shards' slots freed here since the last call.
    pub(crate) fn take_freed(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.sharing.as_mut().expect("sharded").freed)
    }

    /// Slot `i`, of this shard, freed by the shard that held it.
    pub(crate) fn reclaim(&mut self, i: u32) {
        self.sharing.as_mut().expect("sharded").mark(i, 0);
        self.free.push(i);
    }

    /// The slots whose packets this shard holds, ascending.
    pub(crate) fn held(&self) -> Vec<u32> {
        let s = self.sharing.as_ref().expect("sharded");
        let free: std::collections::HashSet<u32> = self.free.iter().copied().collect();
        let k = self.next % self.stride;
        let mut held: Vec<u32> = (k..self.next)
            .step_by(self.stride as usize)
            .filter(|&i| !free.contains(&i) && !s.marked(i, AWAY))
            .chain((0..s.marks.len() as u32).filter(|&i| s.marked(i, HELD)))
            .collect();
        held.sort_unstable();
        held
    }

    /// Ends sharding: this arena takes every packet the shards hold
    /// (`held[k]` of `others[k]`, its own among them) and hands out every
    /// other slot from then on.
    pub(crate) fn unshard(&mut self, held: &[(Option<&Arena>, Vec<u32>)]) {
        let mut live = Vec::new();
        for (from, slots) in held {
            for &i in slots {
                if let Some(a) = from {
                    self.operands.remove(&i);
                    self.sharing.as_mut().expect("sharded").mark(i, 0);
                    self.import_slot(i, a.parcel(i));
                }
                live.push(i);
            }
        }
        live.sort_unstable();
        let len = self.len.max(live.last().map_or(0, |&i| i + 1));
        let mut free = Vec::new();
        let mut it = live.iter().peekable();
        for i in 0..len {
            if it.peek() == Some(&&i) {
                it.next();
            } else {
                free.push(i);
            }
        }
        free.reverse();
        self.free = free;
        self.len = len;
        self.next = len;
        self.stride = 1;
        self.sharing = None;
    }

    /// Notes the most packets alive at once so far (sharded).
    pub(crate) fn note_peak(&mut self, peak: usize) {
        self.sharded_peak = Some(self.sharded_peak.unwrap_or(0).max(peak));
    }

    #[inline]
    fn slot(&self, i: u32) -> &Slot {
        &self.chunks[(i >> CHUNK_SHIFT) as usize][i as usize & (CHUNK - 1)]
    }

    #[inline]
    fn slot_mut(&mut self, i: u32) -> &mut Slot {
        &mut self.chunks[(i >> CHUNK_SHIFT) as usize][i as usize & (CHUNK - 1)]
    }

    /// Hints the CPU to bring packet `i` into cache.
    #[inline]
    pub fn prefetch(&self, i: u32) {
        if i < self.len {
            engine::prefetch::prefetch(self.slot(i));
        }
    }

    /// The destination QP of packet `i`, for a cache hint (the slot should
    /// be in cache already: [`Arena::prefetch`] it first, well ahead).
    #[inline]
    pub fn dst_qp(&self, i: u32) -> Option<u32> {
        (i < self.len).then(|| self.slot(i).dst_qp)
    }

    /// Whether packet `i` is a switch's own control packet
    /// (`PacketKind::SwitchControl`: ConWeave's NOTIFY and REPLY).
    pub fn is_switch_control(&self, i: u32) -> bool {
        self.slot(i).kind == PacketKind::SwitchControl
    }

    /// Bytes of packet `i`'s message from its first byte on
    /// ([`Packet::remaining`] for NICs of `mtu`-byte packets): an SRPT
    /// switch's key.
    pub fn remaining(&self, i: u32, mtu: u32) -> u64 {
        let s = self.slot(i);
        let p = Packet {
            kind: s.kind,
            msg_len: s.msg_len,
            ipsn: s.sack_or_ipsn,
            ..Packet::default()
        };
        p.remaining(mtu)
    }

    /// Trims packet `i` to its headers: no payload, and `flag` (UET's
    /// `TRIMMED` bit) set in its flags, which its receiver reads.
    pub fn trim(&mut self, i: u32, flag: u8) {
        let s = self.slot_mut(i);
        s.payload = 0;
        s.mp_flags |= flag;
    }

    /// The packet behind a header. Inlined wherever called, as `alloc`.
    #[inline(always)]
    pub fn get(&self, hdr: &Hdr) -> Packet {
        let i = hdr.idx;
        let operands = if self.operands.is_empty() {
            (0, 0)
        } else {
            self.operands.get(&i).copied().unwrap_or_default()
        };
        join(*self.slot(i), hdr, operands)
    }

    /// Packets currently allocated (by this shard, in a sharded run:
    /// its own slots less those freed or away, and others' it holds).
    pub fn live(&self) -> usize {
        match &self.sharing {
            None => self.len as usize - self.free.len(),
            Some(s) => {
                let own = (self.next / self.stride) as usize;
                own - self.free.len() - s.away + s.held
            }
        }
    }

    /// The most packets alive at once (on one thread, the slab's slots:
    /// it grows only when every slot holds a packet).
    pub fn peak(&self) -> usize {
        self.sharded_peak.unwrap_or(self.len as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_come_back_whole_and_slots_are_smaller() {
        // One cache line a packet (the header carries `dst` and `wire`).
        assert_eq!(Arena::SLOT_BYTES, 64);
        assert_eq!(std::mem::align_of::<Slot>(), 64);
        let mut a = Arena::default();
        let plain = Packet {
            src: 3,
            dst: 9,
            wire: 1048,
            psn: 77,
            addr: 1 << 40,
            msg_len: 5000,
            sent_at: 123,
            verb: Verb::Write,
            ..Packet::default()
        };
        let atomic = Packet {
            verb: Verb::CmpSwap,
            imm: 5,
            compare: 6,
            ..plain
        };
        let (i, j) = (a.alloc(atomic), a.alloc(plain));
        assert_eq!(
            (i.dst, i.wire(), i.is_data(), i.ce()),
            (9, 1048, true, false)
        );
        assert_eq!((a.get(&i), a.get(&j)), (atomic, plain));
        // A freed slot's operands do not leak into the next packet there.
        a.free(i.idx);
        let k = a.alloc(plain);
        assert_eq!((k.idx, a.get(&k)), (i.idx, plain));
        assert_eq!(a.live(), 2);
    }

    /// A sharded run: a packet crossing shards keeps its slot and its
    /// operands, its slot goes home when it ends, and the shards' packets
    /// merge into one arena at their slots.
    #[test]
    fn packets_cross_shards_in_their_slots() {
        let (mut a, mut b) = (Arena::default(), Arena::default());
        a.shard(0, 2);
        b.shard(1, 2);
        let atomic = Packet {
            src: 3,
            dst: 9,
            wire: 1048,
            verb: Verb::CmpSwap,
            imm: 5,
            compare: 6,
            ..Packet::default()
        };
        let plain = Packet {
            psn: 8,
            ..Packet::default()
        };
        let (ha, hb) = (a.alloc(atomic), b.alloc(plain));
        assert_eq!((ha.idx, hb.idx), (0, 1), "each shard its own slots");
        let parcel = a.export(ha.idx);
        b.import(ha.idx, parcel);
        assert_eq!(b.get(&ha), atomic);
        assert_eq!((a.live(), b.live()), (0, 2));
        // It ends at b: its slot goes back to a, which hands it out again.
        b.free(ha.idx);
        assert_eq!(b.take_freed(), vec![0]);
        a.reclaim(0);
        assert_eq!(a.alloc(plain).idx, 0);
        // b's packet joins a's in one arena.
        let held = [(None, a.held()), (Some(&b), b.held())];
        let mut one = std::mem::take(&mut a);
        one.unshard(&held);
        assert_eq!((one.get(&hb), one.live()), (plain, 2));
        assert_eq!(one.alloc(plain).idx, 2, "slots 0 and 1 are taken");
    }

    /// The flow identity is the (source host, source port) pair exactly:
    /// the old `src ^ sport << 16` made host 65536 with port 1 the same
    /// flow as host 0 with port 0.
    #[test]
    fn flow_identity_is_exact() {
        let mut a = Arena::default();
        let mut ids = std::collections::HashSet::new();
        for src in [0, 1, 0xffff] {
            for sport in [0, 1, 49152, 0xffff] {
                let h = a.alloc(Packet {
                    src,
                    sport,
                    ..Packet::default()
                });
                assert_eq!((h.flow & 0xffff, h.flow >> 16), (src, sport as u32));
                assert!(ids.insert(h.flow));
            }
        }
    }

    #[test]
    fn a_header_is_16_bytes() {
        assert_eq!(std::mem::size_of::<Hdr>(), 16);
        let mut h = Hdr::of(7, Hdr::MAX_WIRE, false);
        assert_eq!(
            (h.class(), h.wire(), h.is_data(), h.ce()),
            (7, Hdr::MAX_WIRE, false, false)
        );
        h.set_ce();
        assert_eq!(
            (h.wire(), h.is_data(), h.ce()),
            (Hdr::MAX_WIRE, false, true)
        );
    }
}
