//! Standard output for the commands: `say` writes and notices a reader
//! that went away (`| head`), and `prepare_out` makes a run's `--out`
//! directory before any work. Touches standard output and the directory
//! it is given.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Set when standard output's reader went away (`rdmalab bench | head`).
/// The program then finishes its work, files included, without printing,
/// and exits with the status a shell gives a process that SIGPIPE ended,
/// as other Unix tools do, instead of panicking in `println!`.
pub static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
pub const SIGPIPE_STATUS: u8 = 128 + 13;

/// Writes to standard output (see [`STDOUT_CLOSED`]).
pub fn say(args: std::fmt::Arguments) -> Result<(), String> {
    use std::io::Write;
    if STDOUT_CLOSED.load(Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Relaxed);
            Ok(())
        }
        Err(e) => Err(format!("writing to standard output: {e}")),
    }
}

/// Creates a run's `--out` directory before the work, so that a path
/// that cannot be one (or a sweep's folder) fails at once rather than
/// after a long run (`experiment::out_dir`).
pub fn prepare_out(dir: Option<&Path>) -> Result<(), String> {
    dir.map_or(Ok(()), experiment::out_dir::open_run)
}
