//! The scenario file: a TOML description of topology, switches, transport,
//! traffic, collective jobs and faults, parsed strictly (unknown keys are errors) with
//! errors that name the file, the key path, the line and what was
//! expected. Each section lives in its own module with its TOML types, its
//! checks and its build step; this one holds the whole file's type, parses
//! it, and runs every section's checks. `check.rs` is what they share.

pub mod check;
pub mod faults;
pub mod host;
pub mod jobs;
mod no_effect;
pub mod output;
pub mod port_select;
pub mod rcm;
pub mod routing;
pub mod run_cfg;
pub mod switch;
pub mod topology;
pub mod traffic;
pub mod transport;

pub use self::transport::{CcKind, TransportCfg};
pub use ::transport::EngineKind;
pub use check::{Files, ScenarioError, Source};
pub use faults::{DirectionCfg, FaultActionCfg, FaultCfg};
pub use host::{HostCfg, NicCfg, QpSharingCfg};
pub use jobs::{JobCfg, PlacementCfg, RanksCfg};
pub use output::OutputCfg;
pub use routing::{PathsCfg, RoutingCfg};
pub use switch::{EcnCfg, SwitchCfg};
pub use topology::{LinkCfg, NodeCfg, NodeKindCfg, TopologyCfg};
pub use traffic::{
    DestinationsCfg, FlowCfg, MessagesCfg, PoissonCfg, Traffic, TrafficCfg, VerbCfg,
};
pub use transport::dcqcn::{DcqcnOverrides, DcqcnPreset};
pub use transport::irn::{BdpBytes, IrnOverrides};
pub use transport::mprdma::{MpRdmaOverrides, SenderCfg, SyncModeCfg};

use check::{key_at, line_of, Check};
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
    /// Collective jobs, beside the traffic.
    #[serde(default)]
    pub jobs: Vec<JobCfg>,
    #[serde(default)]
    pub faults: Vec<FaultCfg>,
    #[serde(default)]
    pub output: OutputCfg,
    /// How the run runs (threads): changes no output.
    #[serde(default)]
    pub run: run_cfg::RunCfg,
    /// The file's text, to give build errors their line.
    #[serde(skip)]
    pub text: Option<Arc<str>>,
    /// The overrides applied on top of `text` (`--set`, `--vary`): an
    /// error in a key they set names the override instead of a line.
    #[serde(skip)]
    pub overrides: Vec<(String, String)>,
}

fn default_seed() -> u64 {
    1
}
impl Scenario {
    pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse_over(text, text, &[], file)
    }

    /// Parses `edited`, the file's `text` with `overrides` applied
    /// (`crate::sweep::with_overrides`): an error's line is that of its
    /// key in `text`, or for a key an override set, the override.
    pub fn parse_over(
        edited: &str,
        text: &str,
        overrides: &[(String, String)],
        file: &str,
    ) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::parse(edited).map_err(|e| {
            let at = e
                .span()
                .map(|s| format!(" (line {})", line_of(edited, s.start)));
            ScenarioError::new(
                file,
                "",
                format!("{}{}", e.message().trim(), at.unwrap_or_default()),
            )
        })?;
        // The key path comes from where toml says the error is: a wrapping
        // deserializer (serde_path_to_error, used before) names it too, but
        // wraps every section's deserializer in its own, a quarter of this
        // crate's compiled code and compile time.
        let mut sc: Scenario = Scenario::deserialize(de).map_err(|e| {
            let span = e.span();
            let key = span.clone().map(|s| key_at(edited, s.start));
            // The place in the text parsed is the file's only without
            // overrides (the edited text is the table written out again).
            let at = span
                .filter(|_| overrides.is_empty())
                .map(|s| format!(" (line {})", line_of(text, s.start)));
            ScenarioError::new(
                file,
                key.unwrap_or_default(),
                format!("{}{}", e.message().trim(), at.unwrap_or_default()),
            )
            .locate(text, overrides)
        })?;
        sc.validate(file).map_err(|e| e.locate(text, overrides))?;
        sc.text = Some(Arc::from(text));
        sc.overrides = overrides.to_vec();
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
        self.run.validate(c)?;
        self.switch.validate(c)?;
        self.routing.validate(c, self.switch.load_balancer.name())?;
        self.transport.validate(c)?;
        self.nic.validate(c)?;
        // The sub-tables of the transport in use, as they will be built,
        // then every other sub-table's values.
        self.transport
            .build(&mut fabric::FabricConfig::default(), &self.topology, c)?;
        self.transport.validate_tables(&self.topology, c)?;
        self.check_trimming(c)?;
        // A VOQ queue must hold two frames, or nothing moves: one that
        // rounded to 0 bytes ended in "no progress".
        if matches!(self.switch.model, fabric::SwitchModel::Voq { .. }) {
            let queue = (self.switch.voq.queue_kb * 1000.0).round() as u64;
            let frame = self.transport.mtu as u64 + self.transport.header_bytes as u64;
            if queue < 2 * frame {
                return Err(c.err(
                    "switch.voq.queue_kb",
                    format!(
                        "{queue} bytes hold less than two frames of {frame} bytes \
                         (transport.mtu + transport.header_bytes)"
                    ),
                ));
            }
        }
        traffic::validate(&self.flows, &self.traffic, c)?;
        jobs::validate(&self.jobs, c)?;
        faults::validate(&self.faults, c)?;
        self.output.validate(c, self.stop_ms)
    }

    /// Trimming acts only on connections that understand a trimmed packet
    /// (UET's): every engine in use (the section's, and those flows and
    /// traffic entries name) must be UET.
    fn check_trimming(&self, c: Check) -> Result<(), ScenarioError> {
        if !self.switch.trimming {
            return Ok(());
        }
        let kinds = std::iter::once(self.transport.kind)
            .chain(self.traffic.iter().filter_map(|e| e.transport))
            .chain(self.flows.iter().filter_map(|f| f.transport));
        for k in kinds {
            if !matches!(k.engine(), ::transport::Engine::Uet(_)) {
                return Err(c.err(
                    "switch.trimming",
                    format!(
                        "only UET connections answer a trimmed packet; {:?} would place its headers as data (use transport.kind = \"uet\")",
                        k.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The settings given that do not act in the combination chosen (a
    /// table of a control that does not run, say), a line each: warnings
    /// (`no_effect.rs`).
    pub fn no_effect(&self) -> Vec<String> {
        no_effect::no_effect(self)
    }

    /// Adds where the error's key is written (its line, or the override
    /// that set it), when the text is known.
    pub fn locate(&self, e: ScenarioError) -> ScenarioError {
        match &self.text {
            Some(t) => e.locate(t, &self.overrides),
            None => e,
        }
    }

    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = engine::input::read_text(path)
            .map_err(|e| ScenarioError::new(&file, "", format!("cannot read: {e}")))?;
        let mut sc = Scenario::parse(&text, &file)?;
        if sc.name.is_none() {
            sc.name = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        }
        Ok(sc)
    }
}
