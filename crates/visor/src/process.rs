//! A daemon run as a child process, for the benchmark and the tests:
//! started with its control socket and link address, waited for until
//! its socket exists (or it exits, its error returned), and killed, its
//! socket removed, when dropped, or, on Linux, when the thread that
//! started it dies without dropping it (a benchmark killed by a signal
//! left its daemons running, one of them busy).
//!
//! Uses nothing else of the crate.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct DaemonProcess {
    pub child: Child,
    pub control: PathBuf,
}

impl DaemonProcess {
    /// Starts `bin` (an `rdmavisord`) on `control` and `bind`, with
    /// `extra` options.
    pub fn start(
        bin: &Path,
        control: PathBuf,
        bind: &str,
        extra: &[&str],
    ) -> Result<DaemonProcess, String> {
        let _ = std::fs::remove_file(&control);
        // Its error messages, for when it fails to start (a file: a pipe
        // nobody reads would block it once full).
        let log = log_of(&control);
        let err = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut cmd = Command::new(bin);
        end_with_parent(&mut cmd);
        let child = cmd
            .arg("--control")
            .arg(&control)
            .args(["--bind", bind])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", bin.display()))?;
        let mut d = DaemonProcess { child, control };
        let t = Instant::now();
        // The daemon's socket appears once it listens (renamed into
        // place); a daemon that fails (a port in use) exits instead.
        while !d.control.exists() {
            if let Ok(Some(status)) = d.child.try_wait() {
                let why = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!(
                    "{} on {bind} exited ({status}): {}",
                    bin.display(),
                    why.trim()
                ));
            }
            if t.elapsed() > Duration::from_secs(10) {
                return Err(format!("{} did not start on {bind}", bin.display()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(d)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for DaemonProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.control);
        let _ = std::fs::remove_file(log_of(&self.control));
    }
}

/// Asks the kernel to send the child SIGKILL when the thread that
/// starts it dies (`PR_SET_PDEATHSIG`), and makes the child exit at once
/// if that already happened between the fork and the request.
#[cfg(target_os = "linux")]
fn end_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (prctl, getppid) and nothing is allocated.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::other(
                    "the parent exited before the daemon started",
                ));
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn end_with_parent(_: &mut Command) {}

/// Where a daemon started here writes its errors: beside its socket.
fn log_of(control: &Path) -> PathBuf {
    let mut p = control.as_os_str().to_owned();
    p.push(".log");
    PathBuf::from(p)
}
