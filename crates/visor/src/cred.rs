//! The credentials of the process at the other end of a Unix socket
//! (SO_PEERCRED): the daemon records its clients' (`daemon::sessions`),
//! a client asks for its daemon's pid (`client`). Uses nothing else of
//! the crate.

use std::io;
use std::os::fd::AsRawFd;

/// The uid and pid of the process at the other end of a Unix socket.
pub fn peer_cred(s: &impl AsRawFd) -> io::Result<(u32, i32)> {
    let mut c = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a valid socket and a ucred with its length for the output.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut c as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((c.uid, c.pid))
}
