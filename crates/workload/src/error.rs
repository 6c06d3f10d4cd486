//! The one error type of the crate: every failure names where it came from
//! (file or builtin name, line, key) and what was expected, so a scenario
//! author can fix the input without reading this code.

use std::fmt;
use std::path::PathBuf;

/// Why a workload could not be read or generated.
#[derive(Debug)]
pub enum WorkloadError {
    /// A text input (CDF, ns-3 topology/flow/config file) is malformed at
    /// `line` (1-based; for problems with the file as a whole, the last line).
    Parse {
        origin: String,
        line: usize,
        message: String,
    },
    /// A required key is absent from an ns-3 configuration.
    MissingKey { origin: String, key: String },
    /// A file could not be read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// No builtin distribution has this name; `known` are the names there are.
    UnknownBuiltin {
        name: String,
        known: &'static [&'static str],
    },
    /// A generator was given impossible parameters.
    Config { message: String },
}

impl WorkloadError {
    pub fn parse(origin: &str, line: usize, message: impl Into<String>) -> Self {
        WorkloadError::Parse {
            origin: origin.to_string(),
            line,
            message: message.into(),
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        WorkloadError::Config {
            message: message.into(),
        }
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkloadError::Parse {
                origin,
                line,
                message,
            } => write!(f, "{origin}:{line}: {message}"),
            WorkloadError::MissingKey { origin, key } => {
                write!(f, "{origin}: missing key {key}")
            }
            WorkloadError::Io { path, source } => {
                write!(f, "{}: cannot read: {source}", path.display())
            }
            WorkloadError::UnknownBuiltin { name, known } => write!(
                f,
                "no builtin flow-size distribution named '{name}' (known: {})",
                known.join(", ")
            ),
            WorkloadError::Config { message } => write!(f, "workload: {message}"),
        }
    }
}

impl std::error::Error for WorkloadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WorkloadError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
