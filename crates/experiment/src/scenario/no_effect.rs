//! Settings that have no effect in the combination a scenario chose: the
//! table of a congestion control, engine, ordering layer, load balancer
//! or switch feature that does not run, or a key of a mechanism that is
//! off. Their values are checked whatever runs (a sweep may turn them
//! on), so they are warnings, not errors: `rdmalab run` prints them
//! before the run. Reads the scenario and the text it was parsed from;
//! touches nothing.

use super::transport::CcKind;
use super::Scenario;
use fabric::{Deflection, Scheduling, SwitchModel};

/// One line per setting given that does not act, saying what would
/// make it act; empty when every setting given acts (or the scenario
/// was not parsed from text).
pub(super) fn no_effect(sc: &Scenario) -> Vec<String> {
    let Some(text) = &sc.text else {
        return Vec::new();
    };
    let Ok(raw) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let given = |section: &str, key: &str| {
        raw.get(section)
            .and_then(|s| s.as_table())
            .is_some_and(|t| t.contains_key(key))
    };
    let mut out = Vec::new();
    let mut unless = |section: &str, key: &str, acts: bool, what: String| {
        if given(section, key) && !acts {
            out.push(format!("{section}.{key} has no effect: {what}"));
        }
    };
    let t = &sc.transport;
    let cc = |k: CcKind| t.cc == k;
    let cc_is = format!("transport.cc is {:?}", format!("{:?}", t.cc).to_lowercase());
    unless("transport", "dcqcn", cc(CcKind::Dcqcn), cc_is.clone());
    unless(
        "transport",
        "dcqcn_preset",
        cc(CcKind::Dcqcn),
        cc_is.clone(),
    );
    unless("transport", "hpcc", cc(CcKind::Hpcc), cc_is.clone());
    unless("transport", "timely", cc(CcKind::Timely), cc_is.clone());
    unless("transport", "dctcp", cc(CcKind::Dctcp), cc_is);
    // The engines in use: the section's, and those flows and traffic
    // entries name for themselves.
    let kinds: Vec<&str> = std::iter::once(t.kind)
        .chain(sc.traffic.iter().filter_map(|e| e.transport))
        .chain(sc.flows.iter().filter_map(|f| f.transport))
        .map(|k| k.name())
        .collect();
    for engine in ["irn", "mprdma", "uet"] {
        let what = format!(
            "no flow runs {engine:?} (transport.kind is {:?})",
            t.kind.name()
        );
        unless("transport", engine, kinds.contains(&engine), what);
    }
    for layer in ["eunomia", "static_bitmap"] {
        let what = format!("transport.ordering is {:?}", t.ordering);
        unless("transport", layer, t.ordering == layer, what);
    }
    let s = &sc.switch;
    let lb = s.load_balancer.name();
    for balancer in ["drill", "letflow", "conga", "conweave"] {
        let what = format!("switch.load_balancer is {lb:?}");
        unless("switch", balancer, lb == balancer, what);
    }
    let srpt = matches!(s.scheduling, Scheduling::Srpt { .. });
    unless(
        "switch",
        "srpt",
        srpt,
        "switch.scheduling is not \"srpt\"".into(),
    );
    let dibs = matches!(s.deflection, Deflection::Dibs { .. });
    unless(
        "switch",
        "dibs",
        dibs,
        "switch.deflection is not \"dibs\"".into(),
    );
    let voq = matches!(s.model, SwitchModel::Voq { .. });
    unless("switch", "voq", voq, "switch.model is not \"voq\"".into());
    unless(
        "switch",
        "rcm",
        s.rcm.enabled,
        "switch.rcm.enabled is false".into(),
    );
    for key in ["headroom_bytes", "pfc_alpha", "resume_offset_bytes"] {
        unless("switch", key, s.pfc, "switch.pfc is false".into());
    }
    out
}
