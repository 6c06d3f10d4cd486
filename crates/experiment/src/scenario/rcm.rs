//! The switch model and RCM keys of the `[switch]` section: `model =
//! "shared_buffer" | "voq"`, `[switch.voq]` (the queue size) and
//! `[switch.rcm]` (regional congestion mitigation: its parameters, their
//! checks and the fabric's [`RcmParams`]); what the VOQ model cannot run
//! with. Used by `switch.rs`; touches nothing else.

use super::check::{Check, ScenarioError};
use engine::time::US;
use fabric::{Deflection, LoadBalancer, RcmParams, Scheduling, SwitchModel};
use serde::Deserialize;

/// `model = "..."`: one of [`SwitchModel::NAMES`].
pub fn model<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SwitchModel, D::Error> {
    let s = String::deserialize(d)?;
    SwitchModel::NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown switch model \"{s}\": accepted values are \"shared_buffer\", \"voq\""
            ))
        })
}

/// `[switch.voq]`: the size of every input's VOQs together and of every
/// output queue.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct VoqCfg {
    pub queue_kb: f64,
}

impl Default for VoqCfg {
    fn default() -> Self {
        VoqCfg {
            queue_kb: SwitchModel::QUEUE_BYTES as f64 / 1000.0,
        }
    }
}

/// `[switch.rcm]`: RCM's switch and parameters (docs/rcm.md).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct RcmCfg {
    pub enabled: bool,
    pub qeq_kb: f64,
    pub wq: f64,
    pub w: f64,
    pub gd: f64,
    pub sample_kb: f64,
    pub cam_depth: u32,
    pub cam_period: u32,
    pub window_kb: f64,
    pub cn_interval_us: f64,
    pub remote_timeout_us: f64,
    pub sar_notifications: u32,
    pub rcc: bool,
    pub sar: bool,
}

impl Default for RcmCfg {
    fn default() -> Self {
        let p = RcmParams::DEFAULT;
        RcmCfg {
            enabled: false,
            qeq_kb: p.qeq as f64 / 1000.0,
            wq: p.wq,
            w: p.w,
            gd: p.gd,
            sample_kb: p.sample_bytes as f64 / 1000.0,
            cam_depth: p.cam_depth,
            cam_period: p.cam_period,
            window_kb: p.window as f64 / 1000.0,
            cn_interval_us: p.cn_interval as f64 / US as f64,
            remote_timeout_us: p.remote_timeout as f64 / US as f64,
            sar_notifications: p.sar_notifications,
            rcc: p.rcc,
            sar: p.sar,
        }
    }
}

/// The largest VOQ queue, KB (1 GB).
const MAX_QUEUE_KB: f64 = 1e6;

/// What `[switch]` sets that the model and RCM depend on.
pub struct Context {
    pub model: SwitchModel,
    pub load_balancer: LoadBalancer,
    pub scheduling: Scheduling,
    pub deflection: Deflection,
}

/// Checks `[switch.voq]` and `[switch.rcm]` (whichever model runs, so a
/// sweep may vary it), and what the VOQ model cannot run with.
pub fn validate(voq: &VoqCfg, r: &RcmCfg, x: &Context, c: Check) -> Result<(), ScenarioError> {
    let q = c.positive("switch.voq.queue_kb", voq.queue_kb)?;
    if q > MAX_QUEUE_KB {
        return Err(c.err(
            "switch.voq.queue_kb",
            format!("{q} KB is above the {MAX_QUEUE_KB} KB limit"),
        ));
    }
    c.positive("switch.rcm.qeq_kb", r.qeq_kb)?;
    if r.qeq_kb > MAX_QUEUE_KB {
        return Err(c.err("switch.rcm.qeq_kb", "above the 1e6 KB limit"));
    }
    c.non_negative("switch.rcm.wq", r.wq)?;
    if r.wq > 1e6 {
        return Err(c.err("switch.rcm.wq", "above the 1e6 limit"));
    }
    if !(0.0..=1.0).contains(&r.w) {
        return Err(c.err(
            "switch.rcm.w",
            format!("a weight must be in [0, 1], got {}", r.w),
        ));
    }
    let gd = c.positive("switch.rcm.gd", r.gd)?;
    let fb_max = fabric::switch::rcm::FB_MAX as f64;
    if gd * fb_max > 1.0 {
        return Err(c.err(
            "switch.rcm.gd",
            format!(
                "Gd x Fbmax must be at most 1 (a cut of at most 100%), got {gd} x {fb_max} = {}",
                gd * fb_max
            ),
        ));
    }
    c.positive("switch.rcm.sample_kb", r.sample_kb)?;
    if r.sample_kb > MAX_QUEUE_KB {
        return Err(c.err("switch.rcm.sample_kb", "above the 1e6 KB limit"));
    }
    let within = |key: &str, v: u32, lo: u32, hi: u32| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(c.err(key, format!("must be in {lo}..={hi}, got {v}")))
        }
    };
    within("switch.rcm.cam_depth", r.cam_depth, 1, 1024)?;
    within("switch.rcm.cam_period", r.cam_period, 1, 1 << 20)?;
    within(
        "switch.rcm.sar_notifications",
        r.sar_notifications,
        1,
        1 << 20,
    )?;
    let w = c.positive("switch.rcm.window_kb", r.window_kb)?;
    if w > MAX_QUEUE_KB {
        return Err(c.err("switch.rcm.window_kb", "above the 1e6 KB limit"));
    }
    c.us("switch.rcm.cn_interval_us", r.cn_interval_us)?;
    c.us_positive("switch.rcm.remote_timeout_us", r.remote_timeout_us)?;
    if x.model == SwitchModel::SharedBuffer {
        if r.enabled {
            return Err(c.err(
                "switch.rcm.enabled",
                "RCM runs on the VOQ switch: needs switch.model = \"voq\"",
            ));
        }
        return Ok(());
    }
    let refuse = |key: &str, what: &str| {
        Err(c.err(
            key,
            format!("{what} cannot run with switch.model = \"voq\""),
        ))
    };
    if x.scheduling != Scheduling::Fifo {
        return refuse("switch.scheduling", "SRPT");
    }
    if x.deflection != Deflection::None {
        return refuse("switch.deflection", "DIBS");
    }
    if matches!(x.load_balancer, LoadBalancer::Conweave(_)) {
        return refuse(
            "switch.load_balancer",
            "ConWeave (which holds packets at ToRs)",
        );
    }
    Ok(())
}

/// The fabric's switch model and RCM parameters.
pub fn build(voq: &VoqCfg, r: &RcmCfg, model: SwitchModel) -> (SwitchModel, Option<RcmParams>) {
    let model = match model {
        SwitchModel::Voq { .. } => SwitchModel::Voq {
            queue: (voq.queue_kb * 1000.0).round() as u64,
        },
        m => m,
    };
    let kb = |x: f64| (x * 1000.0).round() as u64;
    let rcm = r.enabled.then(|| RcmParams {
        qeq: kb(r.qeq_kb).max(1),
        wq: r.wq,
        w: r.w,
        gd: r.gd,
        sample_bytes: kb(r.sample_kb).max(1),
        cam_depth: r.cam_depth,
        cam_period: r.cam_period,
        window: kb(r.window_kb).max(1),
        cn_interval: super::check::us(r.cn_interval_us),
        remote_timeout: super::check::us(r.remote_timeout_us),
        sar_notifications: r.sar_notifications,
        rcc: r.rcc,
        sar: r.sar,
    });
    (model, rcm)
}
