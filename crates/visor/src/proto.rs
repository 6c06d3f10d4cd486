//! The socket-like API's wire between an application and its daemon: one
//! frame per request, reply or event over the daemon's Unix socket, a
//! 4-byte little-endian length, an op byte and the op's fields
//! (integers little-endian, bytes as they are). The daemon treats every
//! byte from a client as hostile: [`decode`] rejects a frame that is too
//! long, has an unknown op, or whose fields do not fill it exactly, with
//! the reason, and never panics.
//!
//! Plain data: uses nothing else of the crate.

/// Messages from this size are copied between a ring and a buffer of
/// their own directly (the frame's head apart); smaller ones travel
/// inside frames built and read in batches, since each ring write costs
/// its indices' atomics and a wake-up check.
pub const DIRECT: usize = 4096;

/// The longest frame: a message of [`MAX_MESSAGE`] bytes and its header.
pub const MAX_MESSAGE: usize = 1 << 20;
pub const MAX_FRAME: usize = MAX_MESSAGE + 64;

/// How a message travels (the paper's FLAGS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flags {
    /// The daemon chooses: SEND below a size threshold, WRITE from it
    /// (the threshold moves with the daemon's measured CPU load).
    Auto,
    /// RC SEND with the connection's vQPN as immediate.
    Send,
    /// RC WRITE into a buffer the other daemon lent this one, then a
    /// notice to it naming the connection and the buffer.
    Write,
    /// The other daemon RC READs the message from this one's buffer.
    Read,
}

/// Which QP a new connection's messages take (the bench's `--mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// RDMAvisor: the link's QPs, shared by every connection between
    /// the two hosts.
    Peer,
    /// One QP per session and remote host, shared by the session's
    /// connections there (lock-based sharing: the threads that share a
    /// session take turns under its lock).
    Session,
    /// One QP per connection (naive RDMA).
    Connection,
}

/// Application to daemon.
#[derive(Clone, Debug, PartialEq, Eq)]
/// A send's bytes are borrowed: the client encodes from the caller's
/// buffer, and the daemon decodes in place from what it read, so neither
/// copies a message to build or parse its frame.
pub enum Request<'a> {
    /// Open a connection to `addr` ("ip:port": the daemon on `ip`, the
    /// listener on `port` there).
    Connect {
        addr: String,
        sharing: Sharing,
    },
    Listen {
        port: u16,
    },
    Send {
        fd: u32,
        flags: Flags,
        data: &'a [u8],
    },
    Close {
        fd: u32,
    },
}

/// Daemon to application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The request succeeded: a new fd (connect, listen, accept) or a
    /// length (send).
    Ok {
        value: u64,
    },
    Err {
        message: String,
    },
    /// A message arrived on connection `fd`.
    Deliver {
        fd: u32,
        data: Vec<u8>,
    },
    /// The peer closed connection `fd` (or its daemon or link went away).
    Closed {
        fd: u32,
    },
    /// A connection arrived on listener `listener`: it is `fd`.
    Incoming {
        listener: u32,
        fd: u32,
    },
}

const CONNECT: u8 = 1;
const LISTEN: u8 = 2;
const SEND: u8 = 4;
const CLOSE: u8 = 5;
const OK: u8 = 0x81;
const ERR: u8 = 0x82;
const DELIVER: u8 = 0x83;
const CLOSED: u8 = 0x84;
const INCOMING: u8 = 0x85;

fn frame(op: u8, body: &[&[u8]], out: &mut Vec<u8>) {
    let len: usize = 1 + body.iter().map(|b| b.len()).sum::<usize>();
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.push(op);
    for b in body {
        out.extend_from_slice(b);
    }
}

impl Request<'_> {
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Request::Connect { addr, sharing } => {
                let s = match sharing {
                    Sharing::Peer => 0u8,
                    Sharing::Session => 1,
                    Sharing::Connection => 2,
                };
                frame(CONNECT, &[&[s], addr.as_bytes()], out)
            }
            Request::Listen { port } => frame(LISTEN, &[&port.to_le_bytes()], out),
            Request::Send { fd, flags, data } => {
                out.extend_from_slice(&send_head(*fd, *flags, data.len()));
                out.extend_from_slice(data);
            }
            Request::Close { fd } => frame(CLOSE, &[&fd.to_le_bytes()], out),
        }
    }
}

impl Reply {
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Ok { value } => frame(OK, &[&value.to_le_bytes()], out),
            Reply::Err { message } => frame(ERR, &[message.as_bytes()], out),
            Reply::Deliver { fd, data } => encode_deliver(*fd, data, out),
            Reply::Closed { fd } => frame(CLOSED, &[&fd.to_le_bytes()], out),
            Reply::Incoming { listener, fd } => {
                frame(INCOMING, &[&listener.to_le_bytes(), &fd.to_le_bytes()], out)
            }
        }
    }
}

/// Appends a [`Reply::Deliver`] frame of `data`, without making the
/// reply (the daemon writes a message straight from its buffer slot).
pub fn encode_deliver(fd: u32, data: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&deliver_head(fd, data.len()));
    out.extend_from_slice(data);
}

/// The bytes of a `Send` request before its message of `len` bytes.
pub fn send_head(fd: u32, flags: Flags, len: usize) -> [u8; 10] {
    let mut h = [0u8; 10];
    h[..4].copy_from_slice(&(len as u32 + 6).to_le_bytes());
    h[4] = SEND;
    h[5..9].copy_from_slice(&fd.to_le_bytes());
    h[9] = match flags {
        Flags::Auto => 0,
        Flags::Send => 1,
        Flags::Write => 2,
        Flags::Read => 3,
    };
    h
}

/// `buf` is exactly the head of a `Deliver` frame (`deliver_head`) of a
/// message of at least `min` bytes: its fd and the message's length.
pub fn deliver_alone(buf: &[u8], min: usize) -> Option<(u32, usize)> {
    if buf.len() != 9 || buf[4] != DELIVER {
        return None;
    }
    let len = (u32_at(buf).ok()? as usize).checked_sub(5)?;
    let fd = u32_at(&buf[5..]).ok()?;
    (min..=MAX_MESSAGE).contains(&len).then_some((fd, len))
}

/// The bytes of a `Deliver` frame before its message of `len` bytes.
pub fn deliver_head(fd: u32, len: usize) -> [u8; 9] {
    let mut h = [0u8; 9];
    h[..4].copy_from_slice(&(len as u32 + 5).to_le_bytes());
    h[4] = DELIVER;
    h[5..].copy_from_slice(&fd.to_le_bytes());
    h
}

/// A frame cut from a buffer: its op, its body, and the bytes it took.
pub type Cut<'a> = (u8, &'a [u8], usize);

/// One frame cut from the front of `buf`; `Ok(None)` while the frame is
/// incomplete.
pub fn split(buf: &[u8]) -> Result<Option<Cut<'_>>, String> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let len = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    if len == 0 || len > MAX_FRAME {
        return Err(format!("a frame of {len} bytes (1..={MAX_FRAME})"));
    }
    if buf.len() < 4 + len {
        return Ok(None);
    }
    Ok(Some((buf[4], &buf[5..4 + len], 4 + len)))
}

/// The length a frame at the start of `buf` announces, and whether it is
/// a `Send` request, once its first five bytes have arrived.
pub fn announced(buf: &[u8]) -> Option<(usize, bool)> {
    let len = u32_at(buf.get(..5)?).ok()? as usize;
    Some((len, buf[4] == SEND))
}

fn u32_at(b: &[u8]) -> Result<u32, String> {
    b.get(..4)
        .map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
        .ok_or_else(|| "a field is cut short".to_string())
}

fn exact(b: &[u8], n: usize, what: &str) -> Result<(), String> {
    if b.len() == n {
        Ok(())
    } else {
        Err(format!("{what}: {} bytes, expected {n}", b.len()))
    }
}

/// A request from its op and body.
pub fn decode_request(op: u8, b: &[u8]) -> Result<Request<'_>, String> {
    Ok(match op {
        CONNECT => {
            let sharing = match b.first() {
                Some(0) => Sharing::Peer,
                Some(1) => Sharing::Session,
                Some(2) => Sharing::Connection,
                Some(s) => return Err(format!("connect: unknown sharing {s}")),
                None => return Err("connect: no sharing byte".into()),
            };
            let addr =
                std::str::from_utf8(&b[1..]).map_err(|_| "connect: the address is not UTF-8")?;
            if addr.len() > 256 {
                return Err("connect: an address over 256 bytes".into());
            }
            Request::Connect {
                addr: addr.into(),
                sharing,
            }
        }
        LISTEN => {
            exact(b, 2, "listen")?;
            Request::Listen {
                port: u16::from_le_bytes([b[0], b[1]]),
            }
        }
        SEND => {
            if b.len() < 5 {
                return Err("send: shorter than its fd and flags".into());
            }
            let flags = match b[4] {
                0 => Flags::Auto,
                1 => Flags::Send,
                2 => Flags::Write,
                3 => Flags::Read,
                f => return Err(format!("send: unknown flags {f}")),
            };
            Request::Send {
                fd: u32_at(b)?,
                flags,
                data: &b[5..],
            }
        }
        CLOSE => {
            exact(b, 4, "close")?;
            Request::Close { fd: u32_at(b)? }
        }
        _ => return Err(format!("unknown request op {op:#04x}")),
    })
}

/// A reply from its op and body.
pub fn decode_reply(op: u8, b: &[u8]) -> Result<Reply, String> {
    Ok(match op {
        OK => {
            exact(b, 8, "ok")?;
            let mut v = [0u8; 8];
            v.copy_from_slice(b);
            Reply::Ok {
                value: u64::from_le_bytes(v),
            }
        }
        ERR => Reply::Err {
            message: String::from_utf8_lossy(b).into_owned(),
        },
        DELIVER => Reply::Deliver {
            fd: u32_at(b)?,
            data: b[4..].to_vec(),
        },
        CLOSED => {
            exact(b, 4, "closed")?;
            Reply::Closed { fd: u32_at(b)? }
        }
        INCOMING => {
            exact(b, 8, "incoming")?;
            Reply::Incoming {
                listener: u32_at(b)?,
                fd: u32_at(&b[4..])?,
            }
        }
        _ => return Err(format!("unknown reply op {op:#04x}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_round_trip() {
        let reqs = [
            Request::Connect {
                addr: "127.0.0.2:80".into(),
                sharing: Sharing::Session,
            },
            Request::Listen { port: 80 },
            Request::Send {
                fd: 9,
                flags: Flags::Send,
                data: &[1, 2, 3],
            },
            Request::Close { fd: 4 },
        ];
        for r in reqs {
            let mut b = Vec::new();
            r.encode(&mut b);
            let (op, body, used) = split(&b).unwrap().unwrap();
            assert_eq!(used, b.len());
            assert_eq!(decode_request(op, body).unwrap(), r);
            assert_eq!(split(&b[..b.len() - 1]).unwrap(), None, "incomplete");
        }
        let reps = [
            Reply::Ok { value: 7 },
            Reply::Err {
                message: "no".into(),
            },
            Reply::Deliver {
                fd: 2,
                data: vec![5; 10],
            },
            Reply::Closed { fd: 2 },
            Reply::Incoming { listener: 1, fd: 9 },
        ];
        for r in reps {
            let mut b = Vec::new();
            r.encode(&mut b);
            let (op, body, _) = split(&b).unwrap().unwrap();
            assert_eq!(decode_reply(op, body).unwrap(), r);
        }
    }

    #[test]
    fn a_deliver_head_alone_names_its_message() {
        let h = deliver_head(3, 5000);
        assert_eq!(deliver_alone(&h, 4096), Some((3, 5000)));
        assert_eq!(deliver_alone(&h, 8000), None, "smaller than asked");
        let mut b = Vec::new();
        encode_deliver(3, &[7; 5000], &mut b);
        assert_eq!(deliver_alone(&b, 4096), None, "not the head alone");
        assert_eq!(deliver_alone(&b[..9], 4096), Some((3, 5000)));
        let mut short = h;
        short[..4].copy_from_slice(&4u32.to_le_bytes());
        assert_eq!(deliver_alone(&short, 0), None, "a length under its head");
        let mut ok = h;
        ok[4] = OK;
        assert_eq!(deliver_alone(&ok, 0), None, "another op");
    }

    #[test]
    fn hostile_frames_are_refused_never_panic() {
        assert!(split(&[0, 0, 0, 0, 1]).is_err(), "length 0");
        assert!(split(&u32::MAX.to_le_bytes()).is_err(), "too long");
        assert!(decode_request(0x7f, &[]).is_err());
        assert!(decode_request(LISTEN, &[1]).is_err());
        assert!(
            decode_request(3, &[0; 4]).is_err(),
            "no accept op on the wire"
        );
        assert!(decode_request(SEND, &[1, 2, 3]).is_err());
        assert!(decode_request(SEND, &[1, 0, 0, 0, 4]).is_err(), "flags");
        assert!(decode_request(CONNECT, &[0, 0xff, 0xfe]).is_err());
        assert!(decode_request(CONNECT, &[3, b'a']).is_err(), "sharing");
        assert!(decode_request(CONNECT, &[]).is_err());
        let mut rng = engine::Rng::new(3, engine::StreamKind::Host, 0);
        for _ in 0..100_000 {
            let n = rng.below(40) as usize;
            let b: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            if let Ok(Some((op, body, _))) = split(&b) {
                let _ = decode_request(op, body);
                let _ = decode_reply(op, body);
            }
        }
    }
}
