//! The one table of engine names: [`EngineKind`], a handle on a row of
//! it (the name scenario files, the CLI, the datapath's control messages
//! and summaries spell, the other spellings accepted for it, a line of
//! help, and its [`Engine`] with default parameters). Every user parses a
//! name through [`EngineKind::from_name`], whose error lists the table,
//! and [`Engine::name`] reads it here.
//!
//! Plain data, as `config.rs`: uses only the engines' configuration files.

use std::fmt;

use crate::engine::config::Engine;
use crate::engine::irn::config::IrnConfig;
use crate::engine::mprdma::config::MpRdmaConfig;
use crate::engine::uet::config::UetConfig;

/// One row of the table.
struct Row {
    name: &'static str,
    aliases: &'static [&'static str],
    about: &'static str,
    default: fn() -> Engine,
}

/// Every engine, the default ([`Engine::default`]) first. A new engine is
/// one row here.
static ROWS: [Row; 4] = [
    Row {
        name: "roce",
        aliases: &["gbn", "go-back-n"],
        about: "RoCEv2 RC: in-order reception, go-back-N, one RTO",
        default: || Engine::GoBackN,
    },
    Row {
        name: "irn",
        aliases: &[],
        about: "IRN: selective repeat, BDP flow control, out-of-order placement",
        default: || Engine::Irn(IrnConfig::default()),
    },
    Row {
        name: "mprdma",
        aliases: &["mp-rdma"],
        about: "MP-RDMA: many virtual paths, one ECN window, WRITE and SEND only",
        default: || Engine::MpRdma(MpRdmaConfig::default()),
    },
    Row {
        name: "uet",
        aliases: &["ultra-ethernet"],
        about: "Ultra Ethernet PDS: RUD or ROD, coalesced ACKs with a SACK bitmap",
        default: || Engine::Uet(UetConfig::default()),
    },
];

/// An engine as named by the table: cheap to copy and compare; its
/// [`EngineKind::engine`] is the configuration with default parameters,
/// which a caller may then adjust.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EngineKind(u8);

impl EngineKind {
    /// Every engine, in the table's order (the default first).
    pub fn all() -> impl Iterator<Item = EngineKind> {
        (0..ROWS.len() as u8).map(EngineKind)
    }

    fn row(self) -> &'static Row {
        &ROWS[self.0 as usize]
    }

    /// The name scenario files, the CLI and summaries spell.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Other spellings [`EngineKind::from_name`] accepts for it.
    pub fn aliases(self) -> &'static [&'static str] {
        self.row().aliases
    }

    /// One line saying what it is (for `--help`).
    pub fn about(self) -> &'static str {
        self.row().about
    }

    /// Its configuration with default parameters.
    pub fn engine(self) -> Engine {
        (self.row().default)()
    }

    /// The engine named `s` (its name or an alias); the error names `s`
    /// and lists every accepted name.
    pub fn from_name(s: &str) -> Result<EngineKind, String> {
        EngineKind::all()
            .find(|k| k.name() == s || k.aliases().contains(&s))
            .ok_or_else(|| {
                format!(
                    "unknown transport \"{s}\": accepted values are {}",
                    Self::list()
                )
            })
    }

    /// The accepted names for an error message: `"roce" (or "gbn",
    /// "go-back-n"), "irn", ...`.
    pub fn list() -> String {
        let quote = |v: &[&str]| {
            v.iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        EngineKind::all()
            .map(|k| match k.aliases() {
                [] => quote(&[k.name()]),
                a => format!("{} (or {})", quote(&[k.name()]), quote(a)),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The names, without aliases, of the engines `keep` accepts, for a
    /// suggestion.
    pub fn names_where(keep: impl Fn(&Engine) -> bool) -> Vec<&'static str> {
        EngineKind::all()
            .filter(|k| keep(&k.engine()))
            .map(EngineKind::name)
            .collect()
    }

    /// [`EngineKind::names_where`] as a scenario file spells them:
    /// `"roce" or "irn"`.
    pub fn quoted_where(keep: impl Fn(&Engine) -> bool) -> String {
        let names: Vec<String> = Self::names_where(keep)
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect();
        names.join(" or ")
    }
}

impl Default for EngineKind {
    fn default() -> EngineKind {
        Engine::default().kind()
    }
}

impl fmt::Debug for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for EngineKind {
    type Err = String;
    fn from_str(s: &str) -> Result<EngineKind, String> {
        EngineKind::from_name(s)
    }
}

impl Engine {
    /// Its row of the table: the row whose default is the same engine
    /// (whatever the parameters).
    pub fn kind(&self) -> EngineKind {
        let same =
            |k: &EngineKind| std::mem::discriminant(&k.engine()) == std::mem::discriminant(self);
        EngineKind::all()
            .find(same)
            .expect("every engine has a row in engine/names.rs")
    }

    /// Short name, as scenario files and summaries spell it.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name and alias parses to its own row, whose default engine
    /// names it back; no spelling names two rows.
    #[test]
    fn every_name_and_alias_round_trips() {
        let mut seen = Vec::new();
        for k in EngineKind::all() {
            assert_eq!(k.engine().kind(), k);
            assert_eq!(k.engine().name(), k.name());
            assert!(k.engine().validate().is_ok(), "{k}: default invalid");
            for s in std::iter::once(k.name()).chain(k.aliases().iter().copied()) {
                assert_eq!(EngineKind::from_name(s), Ok(k), "{s}");
                assert_eq!(s.parse::<EngineKind>(), Ok(k));
                assert!(!seen.contains(&s), "{s} twice");
                seen.push(s);
            }
        }
        assert_eq!(EngineKind::default().engine(), Engine::default());
        assert_eq!(EngineKind::all().count(), ROWS.len());
    }

    /// Parameters do not change which row an engine is.
    #[test]
    fn an_engine_with_other_parameters_keeps_its_name() {
        let irn = Engine::Irn(IrnConfig {
            bdp_packets: 7,
            ..IrnConfig::default()
        });
        assert_eq!(irn.name(), "irn");
    }

    /// An unknown name's error names it and lists every accepted one.
    #[test]
    fn an_unknown_name_lists_the_table() {
        let e = EngineKind::from_name("tcp").unwrap_err();
        assert!(e.contains("\"tcp\""), "{e}");
        for k in EngineKind::all() {
            assert!(e.contains(&format!("\"{}\"", k.name())), "{e}");
            for a in k.aliases() {
                assert!(e.contains(&format!("\"{a}\"")), "{e}");
            }
        }
        assert_eq!(
            EngineKind::list(),
            "\"roce\" (or \"gbn\", \"go-back-n\"), \"irn\", \"mprdma\" (or \"mp-rdma\"), \"uet\" (or \"ultra-ethernet\")"
        );
        assert_eq!(
            EngineKind::quoted_where(|e| !e.keeps_own_window()),
            "\"roce\" or \"irn\" or \"uet\""
        );
    }
}
