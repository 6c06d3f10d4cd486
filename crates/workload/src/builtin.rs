//! The flow-size distributions shipped in `data/workloads/`, embedded in the
//! binary so that a scenario can say `websearch` and run anywhere, with the
//! exact rows the reference simulators use.

use crate::cdf::Cdf;
use crate::error::WorkloadError;

/// (name, file text) of every file in `data/workloads/`, sorted by name.
pub const FILES: &[(&str, &str)] = &[
    (
        "alistorage",
        include_str!("../../../data/workloads/alistorage.cdf"),
    ),
    (
        "datamining",
        include_str!("../../../data/workloads/datamining.cdf"),
    ),
    (
        "datamining_opera",
        include_str!("../../../data/workloads/datamining_opera.cdf"),
    ),
    (
        "datamining_tlt",
        include_str!("../../../data/workloads/datamining_tlt.cdf"),
    ),
    (
        "enterprise",
        include_str!("../../../data/workloads/enterprise.cdf"),
    ),
    (
        "fb_cachefollower",
        include_str!("../../../data/workloads/fb_cachefollower.cdf"),
    ),
    (
        "fb_webserver",
        include_str!("../../../data/workloads/fb_webserver.cdf"),
    ),
    ("fbhdp", include_str!("../../../data/workloads/fbhdp.cdf")),
    (
        "fbhdp2015_conweave",
        include_str!("../../../data/workloads/fbhdp2015_conweave.cdf"),
    ),
    (
        "googlerpc",
        include_str!("../../../data/workloads/googlerpc.cdf"),
    ),
    (
        "googlerpc_conweave",
        include_str!("../../../data/workloads/googlerpc_conweave.cdf"),
    ),
    (
        "solar2022",
        include_str!("../../../data/workloads/solar2022.cdf"),
    ),
    (
        "websearch",
        include_str!("../../../data/workloads/websearch.cdf"),
    ),
    (
        "websearch_pias",
        include_str!("../../../data/workloads/websearch_pias.cdf"),
    ),
];

/// The builtin names, in the same order as `FILES`.
pub const NAMES: &[&str] = &[
    "alistorage",
    "datamining",
    "datamining_opera",
    "datamining_tlt",
    "enterprise",
    "fb_cachefollower",
    "fb_webserver",
    "fbhdp",
    "fbhdp2015_conweave",
    "googlerpc",
    "googlerpc_conweave",
    "solar2022",
    "websearch",
    "websearch_pias",
];

/// The raw text of a builtin distribution file, header line included.
pub fn builtin_text(name: &str) -> Option<&'static str> {
    FILES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

impl Cdf {
    /// A distribution from `data/workloads/NAME.cdf` (name without the
    /// extension, e.g. `websearch`, `fbhdp`, `alistorage`).
    pub fn builtin(name: &str) -> Result<Cdf, WorkloadError> {
        let text = builtin_text(name).ok_or_else(|| WorkloadError::UnknownBuiltin {
            name: name.to_string(),
            known: NAMES,
        })?;
        Cdf::parse(text, &format!("builtin:{name}"))
    }

    /// Every name `builtin` accepts, sorted.
    pub fn builtin_names() -> &'static [&'static str] {
        NAMES
    }
}
