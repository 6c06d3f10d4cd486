//! The shared-memory data path between a client and its daemon (the
//! paper's producer/consumer design): one area per session, a memfd the
//! daemon creates and passes over the session's Unix socket with
//! SCM_RIGHTS, holding two single-producer single-consumer byte rings
//! (client to daemon: requests; daemon to client: replies and events)
//! that carry `proto`'s frames, and two eventfds, one per side.
//!
//! Lock-free on the fast path: each ring is a head and a tail (byte
//! counts that only grow, each on a cache line of its own), the
//! producer publishes its tail with release and the consumer its head
//! with release, each reads the other's with acquire. A side about to
//! block sets its `parked` word (then looks at the rings once more); the
//! other side writes its eventfd only if it finds that word set, and
//! clears it, so a busy pair makes no system call per message.
//!
//! Hostility: every word and byte of the area may be written by the
//! other side at any time. Each side keeps its own head and tail
//! privately and only publishes them; an index read from the area is
//! checked (a ring never holds more than its size) and bytes are copied
//! out through raw pointers before anyone parses them, so a scribbling
//! peer yields garbage frames (which `proto` refuses) or an error here,
//! never a read outside the area.
//!
//! Layout: a 4 KB header of six words (below), then the requests' ring,
//! then the events' ring, `ring` bytes each (a power of two).
//!
//! Uses libc only; nothing else of the crate.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{fence, AtomicU64, Ordering};

/// Header words, one per cache line.
const REQ_TAIL: usize = 0;
const REQ_HEAD: usize = 1;
const EV_TAIL: usize = 2;
const EV_HEAD: usize = 3;
const PARKED_CLIENT: usize = 4;
const PARKED_DAEMON: usize = 5;
const LINE: usize = 64;
const HEADER: usize = 4096;
/// The smallest ring (a page) and the largest (1 GiB).
pub const MIN_RING: usize = 4096;
pub const MAX_RING: usize = 1 << 30;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Daemon,
}

/// The mapping of an area, unmapped on drop.
struct Map {
    base: *mut u8,
    len: usize,
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly what mmap returned; nothing
        // borrows the mapping past the `Rings` that owns this.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// One side's view of a session's rings.
pub struct Rings {
    map: Map,
    ring: u64,
    side: Side,
    /// Kept so the area lives as long as the rings (and for the client's
    /// check of its size).
    _memfd: OwnedFd,
    /// This side waits on `own`, wakes the other through `peer`.
    own: OwnedFd,
    peer: OwnedFd,
    /// This side's private indices: bytes it wrote into its outgoing
    /// ring, bytes it took from its incoming one.
    produced: u64,
    consumed: u64,
}

// SAFETY: the mapping is owned by the `Rings` (no other Rust value
// points into it); it is reached through `&self`/`&mut self` only, its
// header words atomically.
unsafe impl Send for Rings {}

fn os<T: Into<i64> + Copy>(r: T) -> io::Result<T> {
    if r.into() < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain system call; the fd it returns is ours alone.
    let fd = os(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
    // SAFETY: a fresh fd nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn map(fd: &OwnedFd, len: usize) -> io::Result<Map> {
    // SAFETY: a fresh shared mapping of `len` bytes of the memfd; the
    // kernel picks the address.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(Map {
        base: base.cast(),
        len,
    })
}

impl Rings {
    /// The daemon's side of a new session's area, rings of `ring` bytes.
    pub fn create(ring: usize) -> io::Result<Rings> {
        if !ring.is_power_of_two() || !(MIN_RING..=MAX_RING).contains(&ring) {
            return Err(io::Error::other(format!(
                "a ring of {ring} bytes: a power of two in {MIN_RING}..={MAX_RING}"
            )));
        }
        let len = HEADER + 2 * ring;
        // SAFETY: plain system calls on a fd we own.
        let memfd = unsafe {
            let fd = os(libc::memfd_create(
                c"rdmavisor-rings".as_ptr(),
                libc::MFD_CLOEXEC,
            ))?;
            let fd = OwnedFd::from_raw_fd(fd);
            os(libc::ftruncate(fd.as_raw_fd(), len as libc::off_t))?;
            fd
        };
        let map = map(&memfd, len)?;
        Ok(Rings {
            map,
            ring: ring as u64,
            side: Side::Daemon,
            _memfd: memfd,
            own: eventfd()?,
            peer: eventfd()?,
            produced: 0,
            consumed: 0,
        })
    }

    /// Passes the area and both eventfds to the client on `sock` (the
    /// daemon's first bytes on a new session).
    pub fn offer(&self, sock: RawFd) -> io::Result<()> {
        let fds = [
            self._memfd.as_raw_fd(),
            self.own.as_raw_fd(),
            self.peer.as_raw_fd(),
        ];
        send_fds(sock, &self.ring.to_le_bytes(), &fds)
    }

    /// The client's side: takes the area the daemon offers on `sock`.
    pub fn attach(sock: RawFd) -> io::Result<Rings> {
        let mut payload = [0u8; 8];
        let mut fds = recv_fds(sock, &mut payload)?;
        if fds.len() != 3 {
            return Err(io::Error::other(format!(
                "the daemon passed {} fds, expected 3",
                fds.len()
            )));
        }
        let ring = u64::from_le_bytes(payload) as usize;
        if !ring.is_power_of_two() || !(MIN_RING..=MAX_RING).contains(&ring) {
            return Err(io::Error::other(format!(
                "the daemon's rings of {ring} bytes"
            )));
        }
        let own = fds.pop().expect("3 fds");
        let peer = fds.pop().expect("3 fds");
        let memfd = fds.pop().expect("3 fds");
        let len = HEADER + 2 * ring;
        // SAFETY: fstat into a zeroed struct of the right type.
        let size = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            os(libc::fstat(memfd.as_raw_fd(), &mut st))?;
            st.st_size as usize
        };
        if size != len {
            return Err(io::Error::other(format!(
                "the daemon's area has {size} bytes, expected {len}"
            )));
        }
        Ok(Rings {
            map: map(&memfd, len)?,
            ring: ring as u64,
            side: Side::Client,
            _memfd: memfd,
            own,
            peer,
            produced: 0,
            consumed: 0,
        })
    }

    fn word(&self, w: usize) -> &AtomicU64 {
        // SAFETY: every header word lies inside the mapping (HEADER <=
        // len), 64-byte aligned (the mapping is page aligned), and any
        // bits are a valid u64; the area's words are only ever reached
        // atomically, by both sides.
        unsafe { &*self.map.base.add(w * LINE).cast::<AtomicU64>() }
    }

    /// (tail, head, data offset) of the ring this side writes, and of the
    /// one it reads.
    fn out_ring(&self) -> (usize, usize, usize) {
        match self.side {
            Side::Client => (REQ_TAIL, REQ_HEAD, HEADER),
            Side::Daemon => (EV_TAIL, EV_HEAD, HEADER + self.ring as usize),
        }
    }

    fn in_ring(&self) -> (usize, usize, usize) {
        match self.side {
            Side::Client => (EV_TAIL, EV_HEAD, HEADER + self.ring as usize),
            Side::Daemon => (REQ_TAIL, REQ_HEAD, HEADER),
        }
    }

    fn parked_words(&self) -> (usize, usize) {
        match self.side {
            Side::Client => (PARKED_CLIENT, PARKED_DAEMON),
            Side::Daemon => (PARKED_DAEMON, PARKED_CLIENT),
        }
    }

    /// Bytes the peer has taken, checked: the ring holds `produced - head`.
    fn out_used(&self) -> Result<u64, String> {
        let (_, head, _) = self.out_ring();
        let head = self.word(head).load(Ordering::Acquire);
        let used = self.produced.wrapping_sub(head);
        if used > self.ring {
            return Err(format!(
                "the ring's head {head} is not within {} bytes behind its tail {}",
                self.ring, self.produced
            ));
        }
        Ok(used)
    }

    fn in_tail(&self) -> u64 {
        let (tail, _, _) = self.in_ring();
        self.word(tail).load(Ordering::Acquire)
    }

    /// Writes as much of `bytes` as fits into the outgoing ring; how much.
    pub fn push(&mut self, bytes: &[u8]) -> Result<usize, String> {
        let free = self.ring - self.out_used()?;
        let n = (bytes.len() as u64).min(free) as usize;
        if n == 0 {
            return Ok(0);
        }
        let (tail, _, data) = self.out_ring();
        let at = (self.produced % self.ring) as usize;
        let first = n.min(self.ring as usize - at);
        // SAFETY: `data + at + first` and `data + n - first` lie within
        // the mapping (at < ring, first <= ring - at, n <= ring); the
        // source is a slice of ours. The peer may race these bytes: they
        // are plain bytes, never referenced as a Rust value here.
        unsafe {
            let base = self.map.base.add(data);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(at), first);
            std::ptr::copy_nonoverlapping(bytes.as_ptr().add(first), base, n - first);
        }
        self.produced += n as u64;
        self.word(tail).store(self.produced, Ordering::Release);
        self.wake_peer();
        Ok(n)
    }

    /// Appends up to `max` bytes from the incoming ring to `out`; how many.
    /// A tail more than a ring ahead of what was taken is an error.
    pub fn pop(&mut self, out: &mut Vec<u8>, max: usize) -> Result<usize, String> {
        let tail = self.in_tail();
        let avail = tail.wrapping_sub(self.consumed);
        if avail > self.ring {
            return Err(format!(
                "the ring's tail {tail} is not within {} bytes ahead of its head {}",
                self.ring, self.consumed
            ));
        }
        let n = avail.min(max as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        let (_, head, data) = self.in_ring();
        let at = (self.consumed % self.ring) as usize;
        let first = n.min(self.ring as usize - at);
        out.reserve(n);
        let len = out.len();
        // SAFETY: the source ranges lie within the mapping (as in push);
        // `out` has room for `n` more bytes, which are all written before
        // its length covers them. Racing writes by the peer can change
        // only the values copied, which are checked after the copy.
        unsafe {
            let base = self.map.base.add(data);
            let dst = out.as_mut_ptr().add(len);
            std::ptr::copy_nonoverlapping(base.add(at), dst, first);
            std::ptr::copy_nonoverlapping(base, dst.add(first), n - first);
            out.set_len(len + n);
        }
        self.consumed += n as u64;
        self.word(head).store(self.consumed, Ordering::Release);
        self.wake_peer();
        Ok(n)
    }

    /// Whether the incoming ring holds bytes (or a bad tail, which `pop`
    /// reports).
    pub fn pending(&self) -> bool {
        self.in_tail() != self.consumed
    }

    /// Whether the outgoing ring has room (a bad head counts as room:
    /// `push` reports it).
    pub fn writable(&self) -> bool {
        self.out_used().map_or(true, |u| u < self.ring)
    }

    /// Says this side is about to block: the peer's next push or pop
    /// writes this side's eventfd. The caller must look at the rings
    /// once more after this, before it blocks.
    pub fn park(&self) {
        let (mine, _) = self.parked_words();
        self.word(mine).store(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
    }

    pub fn unpark(&self) {
        let (mine, _) = self.parked_words();
        self.word(mine).store(0, Ordering::Relaxed);
    }

    /// After publishing an index: wakes the peer if it parked (once; it
    /// parks again before it next blocks).
    fn wake_peer(&self) {
        fence(Ordering::SeqCst);
        let (_, theirs) = self.parked_words();
        if self.word(theirs).swap(0, Ordering::SeqCst) != 0 {
            let one = 1u64.to_ne_bytes();
            // SAFETY: an 8-byte write from a local to an eventfd we own.
            // A full counter (EAGAIN) already means "wake up".
            unsafe { libc::write(self.peer.as_raw_fd(), one.as_ptr().cast(), 8) };
        }
    }

    /// The eventfd this side waits on (the daemon registers it in its poll).
    pub fn wake_fd(&self) -> RawFd {
        self.own.as_raw_fd()
    }

    /// Resets this side's eventfd after a wake-up.
    pub fn take_wakeup(&self) {
        let mut b = [0u8; 8];
        // SAFETY: an 8-byte read into a local from a non-blocking
        // eventfd we own (EAGAIN when it was not written).
        unsafe { libc::read(self.own.as_raw_fd(), b.as_mut_ptr().cast(), 8) };
    }

    /// The client's block: waits until the eventfd or `also` (the
    /// session's socket) is readable; whether `also` is. Call between
    /// [`Rings::park`] and [`Rings::unpark`].
    pub fn wait(&self, also: RawFd) -> io::Result<bool> {
        let mut fds = [
            libc::pollfd {
                fd: self.own.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: also,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        loop {
            // SAFETY: two pollfds in a local array.
            let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if r >= 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        self.take_wakeup();
        Ok(fds[1].revents != 0)
    }

    /// The area's start and length: what a hostile client may scribble
    /// on (the daemon's tests do).
    pub fn area(&self) -> (*mut u8, usize) {
        (self.map.base, self.map.len)
    }
}

fn send_fds(sock: RawFd, payload: &[u8], fds: &[RawFd]) -> io::Result<()> {
    let bytes = std::mem::size_of_val(fds) as u32;
    // SAFETY: CMSG_SPACE is arithmetic.
    let space = unsafe { libc::CMSG_SPACE(bytes) } as usize;
    let mut cbuf = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: payload.as_ptr() as *mut libc::c_void,
        iov_len: payload.len(),
    };
    // SAFETY: a zeroed msghdr is valid; it points at `iov` and `cbuf`,
    // locals that outlive the call, and CMSG_FIRSTHDR of a control buffer
    // of CMSG_SPACE(bytes) has room for the header and `bytes` of fds.
    let n = unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(bytes) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c).cast(), fds.len());
        libc::sendmsg(sock, &msg, libc::MSG_NOSIGNAL)
    };
    match n {
        n if n < 0 => Err(io::Error::last_os_error()),
        n if n as usize == payload.len() => Ok(()),
        _ => Err(io::Error::other("the fds' message was cut short")),
    }
}

/// Receives `payload` and the fds passed with it (blocking).
fn recv_fds(sock: RawFd, payload: &mut [u8]) -> io::Result<Vec<OwnedFd>> {
    let mut cbuf = [0u64; 16];
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: payload.len(),
    };
    let mut fds = Vec::new();
    // SAFETY: as in send_fds; the kernel writes at most `msg_controllen`
    // bytes of control data, and every SCM_RIGHTS fd it passed (made
    // close-on-exec) is taken into an OwnedFd exactly once.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&cbuf) as _;
        let n = loop {
            let n = libc::recvmsg(sock, &mut msg, libc::MSG_CMSG_CLOEXEC);
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break n;
            }
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c).cast::<RawFd>();
                let count = ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
                for k in 0..count {
                    fds.push(OwnedFd::from_raw_fd(data.add(k).read_unaligned()));
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        if (n as usize) < payload.len() {
            return Err(io::Error::other(
                "the daemon closed the session before offering its rings",
            ));
        }
    }
    Ok(fds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A daemon's and a client's side of one area, over a socket pair.
    fn pair(ring: usize) -> (Rings, Rings) {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let d = Rings::create(ring).unwrap();
        d.offer(a.as_raw_fd()).unwrap();
        let c = Rings::attach(b.as_raw_fd()).unwrap();
        (d, c)
    }

    #[test]
    fn bytes_cross_both_ways_and_wrap() {
        let (mut d, mut c) = pair(MIN_RING);
        let mut got = Vec::new();
        let mut rng = engine::Rng::new(5, engine::StreamKind::Host, 0);
        for round in 0..200u32 {
            let n = rng.below(3 * MIN_RING as u64) as usize;
            let msg: Vec<u8> = (0..n).map(|k| (k as u32 ^ round) as u8).collect();
            let mut sent = 0;
            got.clear();
            while got.len() < n {
                sent += c.push(&msg[sent..]).unwrap();
                d.pop(&mut got, 1000).unwrap();
            }
            assert_eq!(got, msg);
            let back = d.push(&msg[..n.min(100)]).unwrap();
            let mut echo = Vec::new();
            c.pop(&mut echo, usize::MAX).unwrap();
            assert_eq!(echo.len(), back);
        }
        assert!(!d.pending() && !c.pending());
    }

    #[test]
    fn a_parked_side_is_woken_once() {
        let (mut d, mut c) = pair(MIN_RING);
        d.park();
        c.push(b"a").unwrap();
        c.push(b"b").unwrap();
        let mut b = [0u8; 8];
        // SAFETY: an 8-byte read into a local.
        let n = unsafe { libc::read(d.wake_fd(), b.as_mut_ptr().cast(), 8) };
        assert_eq!(
            (n, u64::from_ne_bytes(b)),
            (8, 1),
            "one write for two pushes"
        );
        d.unpark();
        c.push(b"c").unwrap();
        // SAFETY: as above.
        let n = unsafe { libc::read(d.wake_fd(), b.as_mut_ptr().cast(), 8) };
        assert_eq!(n, -1, "no write while the daemon runs");
        let mut got = Vec::new();
        d.pop(&mut got, 10).unwrap();
        assert_eq!(got, b"abc");
    }

    #[test]
    fn hostile_indices_are_errors_not_reads_outside() {
        let (mut d, c) = pair(MIN_RING);
        let (base, _) = c.area();
        let tail = base.cast::<AtomicU64>();
        let head = base.wrapping_add(EV_HEAD * LINE).cast::<AtomicU64>();
        // SAFETY: header words of the client's mapping of the area.
        unsafe { (*tail).store(MIN_RING as u64 + 1, Ordering::SeqCst) };
        let mut out = Vec::new();
        assert!(d.pop(&mut out, usize::MAX).is_err());
        // SAFETY: as above.
        unsafe { (*tail).store(u64::MAX, Ordering::SeqCst) };
        assert!(d.pop(&mut out, usize::MAX).is_err(), "behind the head");
        // SAFETY: as above.
        unsafe { (*head).store(12345, Ordering::SeqCst) };
        assert!(d.push(b"x").is_err());
        assert!(out.is_empty());
    }
}
