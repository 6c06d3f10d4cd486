//! Experiments: a scenario file becomes a built fabric, a run, metrics and
//! outputs. The CLI is a thin layer over this crate.

pub mod bench;
pub mod build;
pub mod compare;
pub mod files;
pub mod html;
pub mod jobs;
pub mod lb_summary;
pub mod measured;
pub mod nic_memory;
pub mod ns3;
pub mod out_dir;
pub mod pfc_record;
pub mod plan;
pub mod ran;
pub mod rcm_summary;
pub mod reorder;
pub mod report;
pub mod run;
pub mod scenario;
pub mod summary_text;
pub mod sweep;
pub mod sweep_csv;

pub use build::{build, Built};
pub use run::{run, Outcome, Progress};
pub use scenario::{Scenario, ScenarioError};

/// The built-in example: a small leaf-spine with a 16-to-1 incast beside a
/// permutation, under PFC. `rdmalab run` with no file runs it.
pub const EXAMPLE: &str = include_str!("../../../scenarios/example.toml");
