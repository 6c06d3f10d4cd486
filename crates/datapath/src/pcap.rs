//! `--pcap FILE`: every frame an endpoint sent and every frame it
//! received and parsed, whole (the IPv4 and UDP headers as the receiver
//! rebuilds them: `codec`), stamped with the endpoint's clock. Written as
//! it goes, through a buffer; the first write error stops the capture
//! and is reported when the run ends (the transfer goes on).
//!
//! Uses `wire::pcap` for the format.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use engine::Time;

pub struct Pcap {
    path: PathBuf,
    out: Option<BufWriter<File>>,
    record: Vec<u8>,
    pub frames: u64,
    error: Option<String>,
}

impl Pcap {
    /// Creates `path` and writes the file header.
    pub fn create(path: &Path) -> Result<Pcap, String> {
        let file = File::create(path).map_err(|e| format!("--pcap {}: {e}", path.display()))?;
        let mut p = Pcap {
            path: path.to_path_buf(),
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            record: Vec::new(),
            frames: 0,
            error: None,
        };
        wire::pcap::file_header(&mut p.record);
        p.write();
        Ok(p)
    }

    pub fn record(&mut self, at: Time, frame: &[u8]) {
        if self.out.is_none() {
            return;
        }
        self.record.clear();
        wire::pcap::record(&mut self.record, at / engine::time::NS, frame);
        self.frames += 1;
        self.write();
    }

    fn write(&mut self) {
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.write_all(&self.record) {
                self.error = Some(format!("--pcap {}: {e}", self.path.display()));
                self.out = None;
            }
        }
    }

    /// Flushes the file; the first error the capture met, if any.
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(mut out) = self.out.take() {
            if let Err(e) = out.flush() {
                self.error
                    .get_or_insert(format!("--pcap {}: {e}", self.path.display()));
            }
        }
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
