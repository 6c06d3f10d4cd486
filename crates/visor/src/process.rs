//! A daemon run as a child process, for the benchmark and the tests:
//! started with its control socket and link address, waited for until
//! its socket exists (or it exits, its error returned), and killed, its
//! socket removed, when dropped.
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
        let child = Command::new(bin)
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

/// Where a daemon started here writes its errors: beside its socket.
fn log_of(control: &Path) -> PathBuf {
    let mut p = control.as_os_str().to_owned();
    p.push(".log");
    PathBuf::from(p)
}
