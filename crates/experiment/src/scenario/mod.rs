//! The scenario file: a TOML description of topology, switches, transport,
//! traffic and faults, parsed strictly (unknown keys are errors) with
//! errors that name the file, the key path, the line and what was
//! expected. Each section lives in its own module with its TOML types, its
//! checks and its build step; this one holds the whole file's type, parses
//! it, and runs every section's checks. `check.rs` is what they share.

pub mod check;
pub mod faults;
pub mod host;
pub mod output;
pub mod rcm;
pub mod routing;
pub mod switch;
pub mod topology;
pub mod traffic;
pub mod transport;

pub use self::transport::{CcKind, TransportCfg};
pub use ::transport::EngineKind;
pub use check::{Files, ScenarioError, Source};
pub use faults::{DirectionCfg, FaultActionCfg, FaultCfg};
pub use host::{HostCfg, NicCfg, QpSharingCfg};
pub use output::OutputCfg;
pub use routing::{PathsCfg, RoutingCfg};
pub use switch::{EcnCfg, SwitchCfg};
pub use topology::{LinkCfg, NodeCfg, NodeKindCfg, TopologyCfg};
pub use traffic::{
    DestinationsCfg, FlowCfg, MessagesCfg, PoissonCfg, Traffic, TrafficCfg, VerbCfg,
};
pub use transport::dcqcn::{DcqcnOverrides, DcqcnPreset};
pub use transport::irn::{BdpBytes, IrnOverrides};
pub use transport::mprdma::{MpRdmaOverrides, SyncModeCfg};

use check::{line_of, Check};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A name for reports; defaults to the file stem.
    pub name: Option<String>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Hard stop in simulated milliseconds; without it the run ends when
    /// every flow has finished.
    pub stop_ms: Option<f64>,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub switch: SwitchCfg,
    #[serde(default)]
    pub routing: RoutingCfg,
    #[serde(default)]
    pub transport: TransportCfg,
    #[serde(default)]
    pub nic: NicCfg,
    #[serde(default)]
    pub host: HostCfg,
    #[serde(default)]
    pub flows: Vec<FlowCfg>,
    #[serde(default)]
    pub traffic: Vec<Traffic>,
    #[serde(default)]
    pub faults: Vec<FaultCfg>,
    #[serde(default)]
    pub output: OutputCfg,
    /// The text it was parsed from, to give build errors their line.
    #[serde(skip)]
    pub text: Option<Arc<str>>,
}

fn default_seed() -> u64 {
    1
}
impl Scenario {
    pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::parse(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| format!(" (line {})", line_of(text, s.start)));
            ScenarioError::new(
                file,
                "",
                format!("{}{}", e.message().trim(), at.unwrap_or_default()),
            )
        })?;
        let mut sc: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let inner = e.inner();
            let at = inner
                .span()
                .map(|s| format!(" (line {})", line_of(text, s.start)));
            ScenarioError::new(
                file,
                e.path().to_string(),
                format!("{}{}", inner.message().trim(), at.unwrap_or_default()),
            )
            .with_line(text)
        })?;
        sc.validate(file).map_err(|e| e.with_line(text))?;
        sc.text = Some(Arc::from(text));
        Ok(sc)
    }

    /// Every section's checks that need no built network: numbers (range,
    /// finiteness, units that overflow or round to nothing) and sizes.
    pub fn validate(&self, file: &str) -> Result<(), ScenarioError> {
        let c = Check::new(file);
        if let Some(ms) = self.stop_ms {
            c.ms_positive("stop_ms", ms)?;
        }
        self.topology.validate(c)?;
        self.switch.validate(c)?;
        self.routing.validate(c, self.switch.load_balancer.name())?;
        self.transport.validate(c)?;
        self.nic.validate(c)?;
        // The sub-tables of the transport in use, as they will be built.
        self.transport
            .build(&mut fabric::FabricConfig::default(), &self.topology, c)?;
        traffic::validate(&self.flows, &self.traffic, c)?;
        faults::validate(&self.faults, c)?;
        self.output.validate(c)
    }

    /// Adds the line of the error's key, when the text is known.
    pub fn locate(&self, e: ScenarioError) -> ScenarioError {
        match &self.text {
            Some(t) => e.with_line(t),
            None => e,
        }
    }

    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScenarioError::new(&file, "", format!("cannot read: {e}")))?;
        let mut sc = Scenario::parse(&text, &file)?;
        if sc.name.is_none() {
            sc.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        }
        Ok(sc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"
seed = 3
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
[[flows]]
src = 0
dst = 3
bytes = 1000
"#;

    #[test]
    fn parses_with_defaults() {
        let s = Scenario::parse(OK, "ok.toml").unwrap();
        assert_eq!(s.seed, 3);
        assert!(s.switch.pfc);
        assert_eq!(s.transport.mtu, 1000);
        assert_eq!(s.flows[0].verb, VerbCfg::Write);
    }

    #[test]
    fn irn_keys_parse_strictly() {
        let irn =
            |extra: &str| format!("{OK}[transport]\nkind = \"irn\"\n[transport.irn]\n{extra}\n");
        let s = Scenario::parse(&irn("bdp_bytes = 156000\nrto_low_us = 50"), "i.toml").unwrap();
        assert_eq!(s.transport.kind.name(), "irn");
        assert_eq!(s.transport.irn.bdp_bytes, Some(BdpBytes::Bytes(156_000)));
        assert_eq!(s.transport.irn.rto_low_us, Some(50.0));
        let s = Scenario::parse(&irn("bdp_bytes = \"auto\""), "i.toml").unwrap();
        assert_eq!(s.transport.irn.bdp_bytes, Some(BdpBytes::Auto));
        for bad in ["bdp_bytes = \"big\"", "bdp_bytes = -3", "bdp_bytes = 0"] {
            let e = Scenario::parse(&irn(bad), "i.toml").unwrap_err();
            assert_eq!(e.key, "transport.irn.bdp_bytes", "{e}");
            assert!(e.message.contains("\"auto\""), "{e}");
        }
        let e = Scenario::parse(&irn("rto_lo_us = 5"), "i.toml").unwrap_err();
        assert!(e.to_string().contains("rto_lo_us"), "{e}");
        let e = Scenario::parse(
            &OK.replace("[[flows]]", "[transport]\nkind = \"tcp\"\n[[flows]]"),
            "i.toml",
        )
        .unwrap_err();
        assert_eq!(e.key, "transport.kind", "{e}");
        assert!(e.message.contains(&EngineKind::list()), "{e}");
    }

    /// `kind` and a flow's `transport` parse through the transport's table
    /// of engine names: aliases too, and an unknown per-flow name is
    /// reported at its key with the list.
    #[test]
    fn engine_names_and_aliases_parse_through_the_table() {
        for k in EngineKind::all() {
            for name in std::iter::once(k.name()).chain(k.aliases().iter().copied()) {
                let text = OK.replace(
                    "[[flows]]",
                    &format!("[transport]\nkind = \"{name}\"\n[[flows]]"),
                );
                let s = Scenario::parse(&text, "k.toml").unwrap();
                assert_eq!(s.transport.kind, k, "{name}");
                let text = format!("{OK}transport = \"{name}\"\n");
                assert_eq!(
                    Scenario::parse(&text, "f.toml").unwrap().flows[0].transport,
                    Some(k)
                );
            }
        }
        let e = Scenario::parse(&format!("{OK}transport = \"udp\"\n"), "f.toml").unwrap_err();
        assert_eq!(e.key, "flows[0].transport", "{e}");
        assert!(e.message.contains(&EngineKind::list()), "{e}");
    }

    #[test]
    fn mprdma_keys_parse_strictly() {
        let mp = |extra: &str| {
            format!("{OK}[transport]\nkind = \"mprdma\"\n[transport.mprdma]\n{extra}\n")
        };
        let s =
            Scenario::parse(&mp("delta = 16\nsync_mode = \"stop_and_wait\""), "m.toml").unwrap();
        assert_eq!(s.transport.kind.name(), "mprdma");
        assert_eq!(s.transport.mprdma.delta, Some(16));
        assert_eq!(s.transport.mprdma.sync_mode, Some(SyncModeCfg::StopAndWait));
        let e = Scenario::parse(&mp("deltaa = 16"), "m.toml").unwrap_err();
        assert!(e.to_string().contains("deltaa"), "{e}");
        let e = Scenario::parse(&mp("sync_mode = \"eager\""), "m.toml").unwrap_err();
        assert!(e.to_string().contains("eager"), "{e}");
        let e = Scenario::parse(&mp("l_slots = \"many\""), "m.toml").unwrap_err();
        assert!(e.to_string().contains("l_slots"), "{e}");
    }

    #[test]
    fn unknown_key_is_named() {
        let text = OK.replace("spines = 2", "spines = 2\nspinez = 4");
        let e = Scenario::parse(&text, "bad.toml").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("bad.toml: "), "{msg}");
        assert!(msg.contains("spinez"), "{msg}");
    }

    #[test]
    fn wrong_type_names_key_and_expectation() {
        let text = OK.replace("bytes = 1000", "bytes = \"lots\"");
        let e = Scenario::parse(&text, "bad.toml").unwrap_err();
        assert_eq!(e.key, "flows[0].bytes");
        assert!(
            e.message.contains("u64") || e.message.contains("integer"),
            "{e}"
        );
        assert!(e.message.contains("line 11"), "{e}");
    }

    #[test]
    fn topology_keys_are_checked_per_kind() {
        let extra = OK.replace("spines = 2", "spines = 2\nk = 4");
        let e = Scenario::parse(&extra, "t.toml").unwrap_err();
        assert_eq!(e.key, "topology");
        assert!(
            e.message
                .contains("`k` does not apply to kind = \"leaf_spine\""),
            "{e}"
        );
        let missing = OK.replace("spines = 2\n", "");
        let e = Scenario::parse(&missing, "t.toml").unwrap_err();
        assert!(e.message.contains("needs `spines`"), "{e}");
    }

    #[test]
    fn traffic_keys_are_named_and_checked_per_pattern() {
        let poisson = |body: &str| {
            OK.replace(
                "[[flows]]",
                &format!("[[traffic]]\npattern = \"poisson\"\n{body}\n[[flows]]"),
            )
        };
        let e = Scenario::parse(&poisson("cdf = \"websearch\"\nload = \"high\""), "t.toml")
            .unwrap_err();
        assert_eq!(e.key, "traffic[0].load", "{e}");
        assert!(e.message.contains("f64"), "{e}");
        let e = Scenario::parse(
            &poisson("cdf = \"websearch\"\nload = 0.3\npairs = []"),
            "t.toml",
        )
        .unwrap_err();
        assert!(
            e.message
                .contains("`pairs` does not apply to pattern = \"poisson\""),
            "{e}"
        );
        let e = Scenario::parse(&poisson("load = 0.3"), "t.toml").unwrap_err();
        assert!(e.message.contains("needs `cdf`"), "{e}");
        let ok = Scenario::parse(
            &poisson("cdf = \"websearch\"\nload = 0.3\nflow_count = 5"),
            "t.toml",
        )
        .expect("valid poisson traffic");
        assert!(matches!(&ok.traffic[0].pattern, TrafficCfg::Poisson(p) if p.load == 0.3));
        assert_eq!(ok.traffic[0].transport, None);
    }

    #[test]
    fn syntax_error_has_a_line() {
        let e = Scenario::parse("seed = \n[topology", "x.toml").unwrap_err();
        assert!(e.to_string().contains("line"), "{e}");
    }
}
