//! A daemon run as a child process, for the benchmark and the tests:
//! started with its control socket and link address, waited for until
//! its socket exists, and killed, its socket removed, when dropped.
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
        let child = Command::new(bin)
            .arg("--control")
            .arg(&control)
            .args(["--bind", bind])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", bin.display()))?;
        let d = DaemonProcess { child, control };
        let t = Instant::now();
        while !d.control.exists() {
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
    }
}
