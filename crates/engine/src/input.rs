//! Reading an input file whole, with bounds: a file a user names may be
//! anything (a device such as /dev/zero, a multi-gigabyte log), so a
//! device is refused at once, a regular file by its size before anything
//! is read, and a pipe read no further than the bound. Touches the file
//! system only.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// The most bytes of an input file read: 1 GiB (a flow file of the 10
/// million flows a scenario may have is under 400 MB).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// The bytes of the file at `path`: an error for a device, or for a file
/// of more than `MAX_INPUT_BYTES` bytes.
pub fn read_bytes(path: &Path) -> io::Result<Vec<u8>> {
    read_bytes_max(path, MAX_INPUT_BYTES)
}

/// The text of the file at `path` (as [`read_bytes`], and UTF-8).
pub fn read_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_bytes(path)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// [`read_bytes`] with a bound of `max` bytes.
pub fn read_bytes_max(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if kind.is_char_device() || kind.is_block_device() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a device, not a file",
        ));
    }
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {max} bytes, the most an input file may have"),
        )
    };
    if meta.is_file() && meta.len() > max {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_big());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_files_over_the_bound_are_refused_before_reading() {
        let e = read_bytes(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        let dir = std::env::temp_dir().join(format!("rdmalab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("f.txt");
        std::fs::write(&f, "0123456789").unwrap();
        assert_eq!(read_bytes_max(&f, 10).unwrap(), b"0123456789");
        let e = read_bytes_max(&f, 9).unwrap_err();
        assert!(e.to_string().contains("larger than 9 bytes"), "{e}");
        assert_eq!(read_text(&f).unwrap(), "0123456789");
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(read_text(&f).unwrap_err().to_string().contains("UTF-8"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
