//! Memory windows: which parts of the registered region each peer may
//! reach with one-sided verbs. The transport has no rkeys (a frame's is
//! 0), so without this a peer may READ or WRITE any address of the
//! region; an endpoint given a [`Windows`] table (`Endpoint::windows`)
//! drops, before its NIC sees it, every request packet that reads or
//! writes memory outside a window open to the packet's source host, and
//! counts it (`Drops::outside_window`). An endpoint without one (`net
//! run`, `net serve`) checks nothing.
//!
//! A packet's range: a WRITE (with or without immediate) packet writes
//! its `payload` bytes at its own `addr` (every WRITE packet carries its
//! address, first, middle or last: `transport::frame`); a READ request
//! reads `msg_len` bytes from `addr`; an atomic reads and writes 8 bytes
//! at `addr`, so it needs a window open for both. SENDs land in posted
//! receives, which the endpoint's owner chose: they are not checked.
//!
//! Uses the transport's `Packet`.

use std::collections::BTreeMap;

use transport::{Packet, PacketKind, Verb, ATOMIC_BYTES};

/// What a window lets its peer do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    ReadWrite,
}

impl Access {
    fn covers(self, need: Access) -> bool {
        self == need || self == Access::ReadWrite
    }
}

/// The windows open to each peer host: by host, then by first address.
#[derive(Debug, Default)]
pub struct Windows {
    hosts: Vec<BTreeMap<u64, (u64, Access)>>,
}

impl Windows {
    /// Opens `[addr, addr + len)` to `host` for `access` (replacing a
    /// window that started at `addr`).
    pub fn open(&mut self, host: u32, addr: u64, len: u64, access: Access) {
        let h = host as usize;
        if self.hosts.len() <= h {
            self.hosts.resize_with(h + 1, BTreeMap::new);
        }
        self.hosts[h].insert(addr, (len, access));
    }

    /// Closes `host`'s window that starts at `addr`, if any.
    pub fn close(&mut self, host: u32, addr: u64) {
        if let Some(w) = self.hosts.get_mut(host as usize) {
            w.remove(&addr);
        }
    }

    /// Closes every window of `host` (its link is gone).
    pub fn close_host(&mut self, host: u32) {
        if let Some(w) = self.hosts.get_mut(host as usize) {
            w.clear();
        }
    }

    /// Windows open to `host`.
    pub fn count(&self, host: u32) -> usize {
        self.hosts.get(host as usize).map_or(0, BTreeMap::len)
    }

    /// Whether `[addr, addr + len)` lies inside one window open to `host`
    /// for `access`.
    pub fn allows(&self, host: u32, addr: u64, len: u64, access: Access) -> bool {
        let Some(w) = self.hosts.get(host as usize) else {
            return false;
        };
        let Some((&start, &(wlen, can))) = w.range(..=addr).next_back() else {
            return false;
        };
        // `start <= addr`: the range's end, relative to the window's.
        let end = (addr - start).checked_add(len);
        can.covers(access) && end.is_some_and(|e| e <= wlen)
    }

    /// Whether the endpoint may hand `pkt` (from host `pkt.src`) to its
    /// NIC: anything but a request that touches memory passes.
    pub fn admits(&self, pkt: &Packet) -> bool {
        if pkt.kind != PacketKind::Request {
            return true;
        }
        let (len, access) = match pkt.verb {
            Verb::Send => return true,
            Verb::Write | Verb::WriteImm => (u64::from(pkt.payload), Access::Write),
            Verb::Read => (pkt.msg_len, Access::Read),
            Verb::FetchAdd | Verb::CmpSwap => (ATOMIC_BYTES as u64, Access::ReadWrite),
        };
        self.allows(pkt.src, pkt.addr, len, access)
    }
}
