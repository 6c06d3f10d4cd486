//! A switch's egress queueing, behind one type: [`Queues`] holds every
//! switch port's class queues (eight classes, strict priority, FIFO within
//! a class) and the [`Discipline`] that may hold one class (the NICs' data
//! class) outside the FIFO rings: SRPT (`srpt/`) or the VOQ switch model
//! (`voq/`). Its operations (`push`, `pop`, `drain`, `queued`, `bytes`) are
//! what the pipelines call, so that `kick`, ingress, link failure and the
//! conservation check never branch on the discipline: a new discipline
//! (strict priority, payload trimming) is one variant here and its arms in
//! this file's matches. A port's backlog bits (`Port::backlogged`: what
//! its transmitter reads to know it has work) are kept by these
//! operations; the rest of the port is the link's. The scheduling a
//! scenario chooses ([`Scheduling`], by its names) and the discipline it
//! makes ([`Discipline::new`]) are here too. This file touches the queues
//! and the ports' backlog bits, nothing else.

pub(crate) mod srpt;
pub mod voq;

use crate::link::port::Port;
use crate::net::arena::{Arena, Hdr};
use crate::switch::mmu::CLASSES;
use engine::ring::Ring;
use srpt::Srpt;
use voq::Voq;

/// How a switch port orders the queued packets of the data class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scheduling {
    /// In arrival order.
    #[default]
    Fifo,
    /// Smallest remaining message first, ties in arrival order
    /// (`queues/srpt/`),
    /// the chosen packet's flow served as `dequeue` says.
    Srpt { dequeue: SrptDequeue },
}

impl Scheduling {
    /// The names scenario files use (SRPT with its default dequeue).
    pub const NAMES: [(&'static str, Scheduling); 2] = [
        ("fifo", Scheduling::Fifo),
        (
            "srpt",
            Scheduling::Srpt {
                dequeue: SrptDequeue::FlowEarliest,
            },
        ),
    ];
}

/// Which packet leaves once SRPT has found the queued packet with the
/// fewest remaining bytes (`queues/srpt/mod.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SrptDequeue {
    /// pFabric's rule: the earliest queued packet of that packet's flow,
    /// so a port never reorders a flow.
    #[default]
    FlowEarliest,
    /// That packet itself: a message's later packets (fewer bytes left)
    /// overtake its earlier ones, as in Eunomia's Fig 17.
    Packet,
}

impl SrptDequeue {
    /// The names scenario files use.
    pub const NAMES: [(&'static str, SrptDequeue); 2] = [
        ("flow_earliest", SrptDequeue::FlowEarliest),
        ("packet", SrptDequeue::Packet),
    ];
}

/// One class's egress queue and the wire bytes it holds, alone in its half
/// of a cache line, so that a hop reads one line for it. Its bytes are the
/// switch's egress accounting of the (port, class), the packets a
/// discipline holds outside the ring included: what ECN marks on, what
/// the lossy drop rule and the queue-reading load balancers read.
#[derive(Clone, Debug, Default)]
#[repr(C, align(32))]
pub(crate) struct ClassQueue {
    pub hdrs: Ring<Hdr>,
    pub bytes: u64,
}

/// One port's class queues: four cache lines, of which a hop reads its
/// class's.
#[derive(Clone, Debug, Default)]
#[repr(C, align(64))]
pub(crate) struct PortQueues {
    classes: [ClassQueue; CLASSES],
}

/// What orders the class the NICs' data goes in (the other classes are
/// always FIFO rings).
pub(crate) enum Discipline {
    /// Arrival order, in the class's ring.
    Fifo,
    /// Smallest remaining message first (`srpt/`).
    Srpt(Srpt),
    /// Virtual output queues and an output queue per port (`voq/`): the
    /// model admits its class itself, before the MMU.
    Voq(Voq),
}

impl Discipline {
    /// The discipline `scheduling` asks for, on `ports` ports whose NICs
    /// send data in class `data_class` with `mtu` payload bytes; the VOQ
    /// model (`voq`, when the switch model is it) holds the data class
    /// whatever the scheduling.
    pub fn new(
        scheduling: Scheduling,
        voq: Option<Voq>,
        data_class: u8,
        mtu: u32,
        ports: usize,
    ) -> Discipline {
        match (voq, scheduling) {
            (Some(voq), _) => Discipline::Voq(voq),
            (None, Scheduling::Fifo) => Discipline::Fifo,
            (None, Scheduling::Srpt { dequeue }) => {
                Discipline::Srpt(Srpt::new(data_class, mtu, dequeue, ports))
            }
        }
    }
}

/// A packet taken off a down link's port by [`Queues::drain`], with what
/// its buffer needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Drained {
    /// A packet of `class` the MMU buffers (a ring's or SRPT's): released
    /// there.
    Buffered(usize, Hdr),
    /// A packet in the VOQ model's output queue (its input was released
    /// when it moved there).
    Output(Hdr),
    /// A packet in one of the VOQ model's input queues toward the port:
    /// its input is to be released.
    Input(Hdr),
}

/// The egress queues of every port (a host's stay empty), by port id.
pub(crate) struct Queues {
    ports: Vec<PortQueues>,
    /// The class the discipline holds outside the rings, or [`CLASSES`]
    /// (FIFO): the one compare the hot path makes.
    pub held_class: usize,
    /// The class whose packets the discipline admits itself, before the
    /// MMU (the VOQ model's), or [`CLASSES`].
    pub admits_class: usize,
    pub discipline: Discipline,
}

impl Queues {
    /// Swaps port `p`'s queues with `other`'s (a sharded run's merge,
    /// under FIFO: the one discipline it runs).
    pub fn swap_port(&mut self, other: &mut Queues, p: usize) {
        std::mem::swap(&mut self.ports[p], &mut other.ports[p]);
    }

    /// Empty queues for `ports` ports under `discipline`.
    pub fn new(ports: usize, discipline: Discipline) -> Queues {
        let (held_class, admits_class) = match &discipline {
            Discipline::Fifo => (CLASSES, CLASSES),
            Discipline::Srpt(s) => (s.class, CLASSES),
            Discipline::Voq(v) => (v.class, v.class),
        };
        Queues {
            ports: vec![PortQueues::default(); ports],
            held_class,
            admits_class,
            discipline,
        }
    }

    /// The VOQ model's state (`voq/`); only under it.
    #[inline]
    pub fn voq(&self) -> &Voq {
        match &self.discipline {
            Discipline::Voq(v) => v,
            _ => unreachable!("the VOQ model is on"),
        }
    }

    #[inline]
    pub fn voq_mut(&mut self) -> &mut Voq {
        match &mut self.discipline {
            Discipline::Voq(v) => v,
            _ => unreachable!("the VOQ model is on"),
        }
    }

    /// Bytes queued at port `p` in `class` (the frame being serialised is
    /// not counted).
    #[inline(always)]
    pub fn bytes(&self, p: u32, class: usize) -> u64 {
        self.ports[p as usize].classes[class].bytes
    }

    /// Wire bytes queued at port `p`, all classes.
    pub fn queued_bytes(&self, p: u32) -> u64 {
        self.ports[p as usize].classes.iter().map(|q| q.bytes).sum()
    }

    /// The packet a pop at port `p` (`port`) would return from a ring, in
    /// place (for a cache hint).
    #[inline]
    pub fn peek(&self, port: &Port, p: u32) -> Option<&Hdr> {
        self.ports[p as usize].classes[port.eligible_class()?]
            .hdrs
            .front()
    }

    /// Queues `hdr` at port `p` (`port`), in its class's ring or, with
    /// `HOOKS` (`Network::hooks`), the discipline's queue if it holds the
    /// class (SRPT ranks by the message's remaining bytes, read from
    /// `arena`).
    #[inline(always)]
    pub fn push<const HOOKS: bool>(&mut self, port: &mut Port, p: u32, hdr: Hdr, arena: &Arena) {
        let class = hdr.class();
        if HOOKS && class == self.held_class {
            self.push_held(p, hdr, arena);
        } else {
            let q = &mut self.ports[p as usize].classes[class];
            q.hdrs.push_back(hdr);
            q.bytes += hdr.wire() as u64;
        }
        port.backlogged |= 1 << class;
    }

    #[inline(never)]
    fn push_held(&mut self, p: u32, hdr: Hdr, arena: &Arena) {
        match &mut self.discipline {
            Discipline::Srpt(s) => {
                let remaining = arena.remaining(hdr.idx, s.mtu);
                s.push(p, remaining, hdr);
            }
            Discipline::Voq(_) | Discipline::Fifo => {
                unreachable!("the VOQ model admits its class itself (voq/pipeline.rs)")
            }
        }
        self.ports[p as usize].classes[hdr.class()].bytes += hdr.wire() as u64;
    }

    /// Takes the next packet of `class` from port `p`'s ring (None: the
    /// ring is empty; if the class is backlogged, the discipline holds
    /// it), with the bytes its class still queues after it.
    #[inline(always)]
    pub fn pop(&mut self, port: &mut Port, p: u32, class: usize) -> Option<(Hdr, u64)> {
        let q = &mut self.ports[p as usize].classes[class];
        let hdr = q.hdrs.pop_front()?;
        q.bytes -= hdr.wire() as u64;
        // Arithmetic, not a branch: whether a busy queue just emptied is a
        // coin toss (6 M mispredictions on A2A128 as a branch).
        port.backlogged &= !((q.hdrs.is_empty() as u8) << class);
        Some((hdr, q.bytes))
    }

    /// Takes the packet the discipline sends next at port `p` from its
    /// held class (backlogged there), with the bytes the queue it counts
    /// for marking holds after it: the class's (SRPT), the output
    /// queue's (VOQ: the VOQs are the inputs').
    #[inline(never)]
    pub fn pop_held(&mut self, port: &mut Port, p: u32) -> (Hdr, u64) {
        let class = self.held_class;
        let (hdr, empty, qlen) = match &mut self.discipline {
            Discipline::Srpt(s) => {
                let (hdr, empty) = s.pop(p).expect("a backlogged class holds a packet");
                let q = &mut self.ports[p as usize].classes[class];
                q.bytes -= hdr.wire() as u64;
                (hdr, empty, q.bytes)
            }
            Discipline::Voq(v) => {
                let pi = p as usize;
                let hdr = v.oq[pi].pop_front().expect("backlogged");
                v.oq_bytes[pi] -= hdr.wire() as u64;
                self.ports[pi].classes[class].bytes -= hdr.wire() as u64;
                (hdr, v.oq[pi].is_empty(), v.oq_bytes[pi])
            }
            Discipline::Fifo => unreachable!("FIFO holds no class"),
        };
        if empty {
            port.backlogged &= !(1 << class);
        }
        (hdr, qlen)
    }

    /// Takes the next packet off port `p` (`port`), whose link went down:
    /// the rings class by class, then the discipline's queues; None once
    /// all are empty.
    #[cold]
    pub fn drain(&mut self, port: &mut Port, p: u32) -> Option<Drained> {
        let pi = p as usize;
        for class in 0..CLASSES {
            if let Some((hdr, _)) = self.pop(port, p, class) {
                return Some(Drained::Buffered(class, hdr));
            }
        }
        let class = self.held_class;
        let hdr = match &mut self.discipline {
            Discipline::Fifo => return None,
            Discipline::Srpt(s) => {
                let (hdr, empty) = s.pop(pi as u32)?;
                if empty {
                    port.backlogged &= !(1 << class);
                }
                Drained::Buffered(class, hdr)
            }
            Discipline::Voq(v) => {
                if let Some(hdr) = v.oq[pi].pop_front() {
                    v.oq_bytes[pi] -= hdr.wire() as u64;
                    Drained::Output(hdr)
                } else {
                    port.backlogged &= !(1 << class);
                    let mut inputs = v.voqs[pi].iter_mut();
                    Drained::Input(inputs.find_map(|q| q.pop_front())?)
                }
            }
        };
        let (Drained::Buffered(_, h) | Drained::Output(h) | Drained::Input(h)) = hdr;
        self.ports[pi].classes[class].bytes -= h.wire() as u64;
        Some(hdr)
    }

    /// Every packet queued at port `p`: its rings', then the
    /// discipline's.
    pub fn queued(&self, p: u32) -> impl Iterator<Item = &Hdr> + '_ {
        let rings = self.ports[p as usize]
            .classes
            .iter()
            .flat_map(|q| q.hdrs.iter());
        let (srpt, voq) = match &self.discipline {
            Discipline::Fifo => (None, None),
            Discipline::Srpt(s) => (Some(s.queued(p)), None),
            Discipline::Voq(v) => (None, Some(v.queued(p))),
        };
        let held = srpt.into_iter().flatten().chain(voq.into_iter().flatten());
        rings.chain(held)
    }

    /// Counts `wire` more bytes in port `p`'s `class` (the VOQ model's,
    /// for a packet joining a VOQ toward the port).
    #[inline]
    pub fn add_bytes(&mut self, p: u32, class: usize, wire: u64) {
        self.ports[p as usize].classes[class].bytes += wire;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::port::{End, PortEnds};
    use crate::switch::SrptDequeue;
    use std::collections::VecDeque;
    use transport::{Packet, PacketKind};

    /// The layout the hot path was measured with: each class queue within
    /// one line, a port's queues on lines of their own.
    #[test]
    fn class_queues_fill_half_lines() {
        assert_eq!(std::mem::size_of::<ClassQueue>(), 32);
        assert_eq!(std::mem::align_of::<PortQueues>(), 64);
        assert_eq!(std::mem::size_of::<PortQueues>(), 32 * CLASSES);
    }

    fn port() -> Port {
        let ends = PortEnds {
            node: 0,
            owner: End::Switch(0, 0),
            peer: End::Host(0),
        };
        Port::new(ends, 100_000_000_000, 1_000_000, 1, 0)
    }

    /// A data packet of `class` from host `src`, `left` bytes of its
    /// message still to go (1000-byte packets), in `arena`.
    fn data(arena: &mut Arena, class: u8, src: u32, left: u64) -> Hdr {
        arena.alloc(Packet {
            src,
            dst: 9,
            kind: PacketKind::Request,
            wire: 1000,
            priority: class,
            msg_len: left,
            ..Packet::default()
        })
    }

    fn all(q: &mut Queues, port: &mut Port, p: u32) -> Vec<Drained> {
        std::iter::from_fn(|| q.drain(port, p)).collect()
    }

    /// FIFO: each class's ring in arrival order, bytes and backlog bits
    /// following the packets in and out, drained class by class.
    #[test]
    fn fifo_pushes_pops_drains_and_counts() {
        let mut arena = Arena::with_int(0);
        let (mut q, mut port) = (Queues::new(2, Discipline::Fifo), port());
        let a = data(&mut arena, 3, 0, 0);
        let b = data(&mut arena, 3, 1, 0);
        let c = data(&mut arena, 0, 2, 0);
        for h in [a, b, c] {
            q.push::<true>(&mut port, 1, h, &arena);
        }
        assert_eq!(
            (q.bytes(1, 3), q.bytes(1, 0), q.queued_bytes(1)),
            (2000, 1000, 3000)
        );
        assert_eq!(q.queued_bytes(0), 0);
        assert_eq!(port.backlogged, 1 << 3 | 1);
        assert_eq!(port.eligible_class(), Some(0));
        assert_eq!(q.peek(&port, 1), Some(&c));
        assert_eq!(q.pop(&mut port, 1, 0), Some((c, 0)));
        assert_eq!(port.backlogged, 1 << 3);
        assert_eq!(q.queued(1).copied().collect::<Vec<_>>(), [a, b]);
        assert_eq!(q.pop(&mut port, 1, 3), Some((a, 1000)));
        assert_eq!(all(&mut q, &mut port, 1), [Drained::Buffered(3, b)]);
        assert_eq!((q.queued_bytes(1), port.backlogged), (0, 0));
        assert_eq!(q.pop(&mut port, 1, 3), None);
    }

    /// SRPT holds its class outside the ring: the fewest remaining bytes
    /// leave first (the flow's earliest packet under pFabric's rule),
    /// with the class's bytes and backlog bit as a ring's; other classes
    /// stay FIFO. Without the hooks, the class goes to its ring.
    #[test]
    fn srpt_serves_the_shortest_and_drains_what_it_holds() {
        let mut arena = Arena::with_int(0);
        let srpt = Srpt::new(3, 1000, SrptDequeue::FlowEarliest, 2);
        let (mut q, mut port) = (Queues::new(2, Discipline::Srpt(srpt)), port());
        assert_eq!((q.held_class, q.admits_class), (3, CLASSES));
        let long = data(&mut arena, 3, 0, 50_000);
        let short = data(&mut arena, 3, 1, 2_000);
        let ack = data(&mut arena, 1, 2, 0);
        for h in [long, short, ack] {
            q.push::<true>(&mut port, 0, h, &arena);
        }
        assert_eq!((q.bytes(0, 3), q.bytes(0, 1)), (2000, 1000));
        // SRPT's packets are not in the ring: nothing to peek at there.
        port.paused = 1 << 1;
        assert_eq!(port.eligible_class(), Some(3));
        assert_eq!(q.peek(&port, 0), None);
        assert_eq!(q.queued(0).count(), 3);
        assert_eq!(q.pop_held(&mut port, 0), (short, 1000));
        assert_eq!(port.backlogged, 1 << 3 | 1 << 1);
        assert_eq!(q.pop_held(&mut port, 0), (long, 0));
        assert_eq!(port.backlogged, 1 << 1);
        let again = data(&mut arena, 3, 0, 9_000);
        q.push::<true>(&mut port, 0, again, &arena);
        assert_eq!(
            all(&mut q, &mut port, 0),
            [Drained::Buffered(1, ack), Drained::Buffered(3, again)]
        );
        assert_eq!((q.queued_bytes(0), port.backlogged), (0, 0));
        q.push::<false>(&mut port, 1, again, &arena);
        assert_eq!(q.pop(&mut port, 1, 3), Some((again, 0)));
    }

    /// The VOQ model admits its class itself (`voq/pipeline.rs` fills its
    /// queues): a pop takes its output queue's head, with the output
    /// queue's bytes after it; a drain the output queue, then the VOQs
    /// input by input.
    #[test]
    fn voq_pops_its_output_queue_and_drains_inputs_last() {
        let mut arena = Arena::with_int(0);
        let voq = Voq {
            class: 3,
            queue: 100_000,
            voqs: vec![vec![VecDeque::new(); 2]],
            oq: vec![VecDeque::new()],
            oq_bytes: vec![0],
            in_bytes: vec![0],
            in_paused: vec![false],
            xoff: vec![0],
            resume_offset: 0,
            pfc: false,
            rr: vec![0],
        };
        let (mut q, mut port) = (Queues::new(1, Discipline::Voq(voq)), port());
        assert_eq!((q.held_class, q.admits_class), (3, 3));
        let [a, b, c, d] = [0, 1, 2, 3].map(|s| data(&mut arena, 3, s, 0));
        let v = q.voq_mut();
        v.oq[0].extend([a, b]);
        v.oq_bytes[0] = 2000;
        v.voqs[0][1].push_back(c);
        v.voqs[0][0].push_back(d);
        q.add_bytes(0, 3, 4000);
        port.backlogged = 1 << 3;
        assert_eq!(q.queued(0).copied().collect::<Vec<_>>(), [a, b, d, c]);
        assert_eq!(q.pop_held(&mut port, 0), (a, 1000));
        assert_eq!((q.bytes(0, 3), port.backlogged), (3000, 1 << 3));
        assert_eq!(
            all(&mut q, &mut port, 0),
            [Drained::Output(b), Drained::Input(d), Drained::Input(c)]
        );
        assert_eq!((q.queued_bytes(0), port.backlogged), (0, 0));
    }
}
