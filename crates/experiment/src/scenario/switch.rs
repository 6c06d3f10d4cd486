//! The `[switch]` section: shared buffer and PFC admission, ECN (RED)
//! marking per link speed, rerouting on failures, the load balancer
//! and ECMP's hash (`ecmp_hash`), with their parameters (`[switch.drill]`, `[switch.letflow]`,
//! `[switch.conga]`, `[switch.conweave]`), the egress scheduling
//! (`scheduling = "fifo" | "srpt"`, `[switch.srpt]`) and deflection (`deflection = "none" |
//! "dibs"`, `[switch.dibs]`), packet trimming (`trimming`,
//! `trim_threshold_bytes`), the switch model and RCM (`model`,
//! `[switch.voq]`, `[switch.rcm]`: `rcm.rs`); its checks
//! and its build step (the switch part of the
//! [`FabricConfig`]). RED settings are also what an `ecn` fault sets, so
//! [`red`] lives here.

use super::check::{gbps, Check, ScenarioError};
use super::rcm::{RcmCfg, VoqCfg};
use engine::time::US;
use fabric::{
    CongaParams, ConweaveParams, Deflection, DrillParams, EcmpHash, EcnSetting, FabricConfig,
    LetflowParams, LoadBalancer, Scheduling, SrptDequeue, SwitchModel, Trimming,
};
use serde::Deserialize;

/// The largest shared buffer per switch, in MiB (1 TiB).
pub const MAX_BUFFER_MB: f64 = 1024.0 * 1024.0;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchCfg {
    pub buffer_mb: f64,
    pub pfc: bool,
    pub pfc_alpha: f64,
    pub reserve_bytes: u64,
    pub resume_offset_bytes: u64,
    /// PFC headroom per port; omitted: 2 x link BDP + 3 frames.
    pub headroom_bytes: Option<u64>,
    pub egress_alpha: f64,
    pub ecn: bool,
    pub ecn_table: Vec<EcnCfg>,
    pub reroute_on_failure: bool,
    /// How a switch picks among equal-cost next hops.
    #[serde(deserialize_with = "load_balancer")]
    pub load_balancer: LoadBalancer,
    /// ECMP's hash: "rdmalab" (default) or "ns3" (the HPCC ns-3
    /// simulator's, for `topology.kind = "ns3"`).
    #[serde(deserialize_with = "ecmp_hash")]
    pub ecmp_hash: EcmpHash,
    /// DRILL's parameters, used when `load_balancer = "drill"`.
    pub drill: DrillCfg,
    /// LetFlow's parameters, used when `load_balancer = "letflow"`.
    pub letflow: LetflowCfg,
    /// CONGA's parameters, used when `load_balancer = "conga"`.
    pub conga: CongaCfg,
    /// ConWeave's parameters, used when `load_balancer = "conweave"`.
    pub conweave: ConweaveCfg,
    /// How ports order the queued packets of the data class.
    #[serde(deserialize_with = "scheduling")]
    pub scheduling: Scheduling,
    /// SRPT's parameters, used when `scheduling = "srpt"`.
    pub srpt: SrptCfg,
    /// What a lossy switch does with a packet a full queue refuses.
    #[serde(deserialize_with = "deflection")]
    pub deflection: Deflection,
    /// DIBS's parameters, used when `deflection = "dibs"`.
    pub dibs: DibsCfg,
    /// Packet trimming (lossy switches, UET): a data packet its queue or
    /// the buffer cannot take is cut to its headers and sent ahead of data.
    pub trimming: bool,
    /// A port's data-queue bytes past which arriving data packets are
    /// trimmed (with `trimming`).
    pub trim_threshold_bytes: u64,
    /// The switch architecture of the data class.
    #[serde(deserialize_with = "super::rcm::model")]
    pub model: SwitchModel,
    /// The VOQ model's queues, used when `model = "voq"`.
    pub voq: VoqCfg,
    /// RCM (needs `model = "voq"`).
    pub rcm: RcmCfg,
}

/// `[switch.conweave]`: ConWeave's times, in microseconds (defaults: the
/// artifact's leaf-spine values; docs/load_balancing.md gives its
/// fat-tree ones).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct ConweaveCfg {
    /// Added to the ToR-to-ToR base RTT: the reply deadline.
    pub extra_reply_deadline_us: f64,
    /// How long an uplink whose data was ECN-marked is avoided.
    pub path_pause_us: f64,
    /// Added to the TAIL's expected arrival: a held queue's deadline.
    pub extra_voq_flush_us: f64,
    /// A held queue's wait when no old-path packet was seen.
    pub default_voq_wait_us: f64,
    /// A flow idle this long starts a new epoch on a new uplink.
    pub tx_expiry_us: f64,
}

impl Default for ConweaveCfg {
    fn default() -> Self {
        let p = ConweaveParams::DEFAULT;
        let us = |t: engine::Time| t as f64 / US as f64;
        ConweaveCfg {
            extra_reply_deadline_us: us(p.extra_reply_deadline),
            path_pause_us: us(p.path_pause),
            extra_voq_flush_us: us(p.extra_voq_flush),
            default_voq_wait_us: us(p.default_voq_wait),
            tx_expiry_us: us(p.tx_expiry),
        }
    }
}

/// `[switch.srpt]`: which packet leaves once SRPT has found the one with
/// the fewest remaining bytes.
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SrptCfg {
    #[serde(deserialize_with = "dequeue")]
    pub dequeue: SrptDequeue,
}

/// `[switch.dibs]`: the bound on a packet's deflections.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct DibsCfg {
    pub max_deflections: u32,
}

impl Default for DibsCfg {
    fn default() -> Self {
        DibsCfg {
            max_deflections: Deflection::MAX_DEFLECTIONS as u32,
        }
    }
}

/// `[switch.drill]`: DRILL(d, m).
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct DrillCfg {
    /// Next hops drawn at random per packet.
    pub d: u32,
    /// Best next hops remembered per switch.
    pub m: u32,
}

impl Default for DrillCfg {
    fn default() -> Self {
        let p = DrillParams::DEFAULT;
        DrillCfg { d: p.d, m: p.m }
    }
}

/// `[switch.letflow]`: the flowlet gap and table.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct LetflowCfg {
    /// The idle gap that ends a flowlet, in microseconds.
    pub gap_us: f64,
    /// Flowlet table entries per switch (rounded up to a power of two).
    pub table_entries: u32,
}

impl Default for LetflowCfg {
    fn default() -> Self {
        let p = LetflowParams::DEFAULT;
        LetflowCfg {
            gap_us: p.gap as f64 / US as f64,
            table_entries: p.table,
        }
    }
}

/// `[switch.conga]`: the DREs, the flowlets, the aging of the congestion
/// tables.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct CongaCfg {
    /// The DRE's decay period, in microseconds.
    pub dre_period_us: f64,
    /// The DRE's decay per period, in (0, 1].
    pub alpha: f64,
    /// Bits of the congestion metric.
    pub quantization_bits: u32,
    /// The idle gap that ends a flowlet, in microseconds.
    pub gap_us: f64,
    /// Congestion table entries older than this count as 0, in
    /// microseconds.
    pub aging_us: f64,
    /// Flowlet table entries per leaf (rounded up to a power of two).
    pub table_entries: u32,
}

impl Default for CongaCfg {
    fn default() -> Self {
        let p = CongaParams::DEFAULT;
        CongaCfg {
            dre_period_us: p.dre_period as f64 / US as f64,
            alpha: p.alpha_ppm as f64 / CongaParams::ALPHA_UNIT as f64,
            quantization_bits: p.quantization_bits,
            gap_us: p.gap as f64 / US as f64,
            aging_us: p.aging as f64 / US as f64,
            table_entries: p.table,
        }
    }
}

impl Default for SwitchCfg {
    fn default() -> Self {
        SwitchCfg {
            buffer_mb: 9.0,
            pfc: true,
            pfc_alpha: 0.125,
            reserve_bytes: 4096,
            resume_offset_bytes: 3072,
            headroom_bytes: None,
            egress_alpha: 1.0,
            ecn: true,
            ecn_table: vec![EcnCfg {
                gbps: 0.0,
                kmin_kb: 100.0,
                kmax_kb: 400.0,
                pmax: 0.2,
            }],
            reroute_on_failure: true,
            load_balancer: LoadBalancer::default(),
            ecmp_hash: EcmpHash::default(),
            drill: DrillCfg::default(),
            letflow: LetflowCfg::default(),
            conweave: ConweaveCfg::default(),
            conga: CongaCfg::default(),
            scheduling: Scheduling::default(),
            srpt: SrptCfg::default(),
            deflection: Deflection::default(),
            dibs: DibsCfg::default(),
            trimming: false,
            trim_threshold_bytes: Trimming::DEFAULT_THRESHOLD_BYTES,
            model: SwitchModel::default(),
            voq: VoqCfg::default(),
            rcm: RcmCfg::default(),
        }
    }
}

/// `load_balancer = "..."`: one of [`LoadBalancer::NAMES`] (the fabric's
/// `switch/lb/` owns the schemes and their names).
fn load_balancer<'de, D: serde::Deserializer<'de>>(d: D) -> Result<LoadBalancer, D::Error> {
    let s = String::deserialize(d)?;
    LoadBalancer::NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<String> = LoadBalancer::NAMES
                .iter()
                .map(|(n, _)| format!("\"{n}\""))
                .collect();
            serde::de::Error::custom(format!(
                "unknown load balancer \"{s}\": accepted values are {}",
                names.join(", ")
            ))
        })
}

/// `ecmp_hash = "rdmalab" | "ns3"` (see [`EcmpHash::NAMES`]).
fn ecmp_hash<'de, D: serde::Deserializer<'de>>(d: D) -> Result<EcmpHash, D::Error> {
    let s = String::deserialize(d)?;
    EcmpHash::NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown ECMP hash \"{s}\": accepted values are \"rdmalab\", \"ns3\""
            ))
        })
}

/// `scheduling = "fifo" | "srpt"` (see [`Scheduling::NAMES`]).
fn scheduling<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Scheduling, D::Error> {
    let s = String::deserialize(d)?;
    Scheduling::NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown scheduling \"{s}\": accepted values are \"fifo\", \"srpt\""
            ))
        })
}

/// `dequeue = "flow_earliest" | "packet"` (see [`SrptDequeue::NAMES`]).
fn dequeue<'de, D: serde::Deserializer<'de>>(d: D) -> Result<SrptDequeue, D::Error> {
    let s = String::deserialize(d)?;
    SrptDequeue::NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown dequeue \"{s}\": accepted values are \"flow_earliest\", \"packet\""
            ))
        })
}

/// `deflection = "none" | "dibs"` (see [`Deflection::NAMES`]).
fn deflection<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Deflection, D::Error> {
    let s = String::deserialize(d)?;
    Deflection::NAMES
        .iter()
        .find(|(n, _)| *n == s)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown deflection \"{s}\": accepted values are \"none\", \"dibs\""
            ))
        })
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct EcnCfg {
    /// Ports of this rate or faster use this row (until the next row).
    pub gbps: f64,
    pub kmin_kb: f64,
    pub kmax_kb: f64,
    pub pmax: f64,
}

pub const RED_RULE: &str = "needs finite kmin_kb <= kmax_kb and 0 <= pmax <= 1";

/// A RED marking setting (for any rate), if the values make one.
pub fn red(kmin_kb: f64, kmax_kb: f64, pmax: f64) -> Option<EcnSetting> {
    let valid = kmin_kb.is_finite()
        && kmax_kb.is_finite()
        && 0.0 <= kmin_kb
        && kmin_kb <= kmax_kb
        && kmax_kb <= 1e12
        && (0.0..=1.0).contains(&pmax);
    valid.then_some(EcnSetting {
        rate_bps: 0,
        kmin: (kmin_kb * 1000.0) as u64,
        kmax: (kmax_kb * 1000.0) as u64,
        pmax,
    })
}

impl SwitchCfg {
    /// Checks every number of the section.
    pub fn validate(&self, c: Check) -> Result<(), ScenarioError> {
        let mb = c.positive("switch.buffer_mb", self.buffer_mb)?;
        if mb > MAX_BUFFER_MB {
            return Err(c.err(
                "switch.buffer_mb",
                format!("{mb} MiB is above the {MAX_BUFFER_MB} MiB limit"),
            ));
        }
        // What one port or class may hold cannot exceed the whole buffer
        // (2^63 - 1 headroom bytes were accepted and overflowed the MMU's
        // sums).
        let buffer = (mb * 1024.0 * 1024.0) as u64;
        for (key, v) in [
            ("switch.reserve_bytes", Some(self.reserve_bytes)),
            ("switch.headroom_bytes", self.headroom_bytes),
        ] {
            if let Some(v) = v.filter(|&v| v > buffer) {
                return Err(c.err(
                    key,
                    format!("{v} bytes is above the buffer ({buffer} bytes, switch.buffer_mb)"),
                ));
            }
        }
        c.positive("switch.pfc_alpha", self.pfc_alpha)?;
        if self.ecmp_hash == EcmpHash::Ns3 && self.load_balancer != LoadBalancer::Ecmp {
            return Err(c.err(
                "switch.ecmp_hash",
                format!(
                    "\"ns3\" is ECMP's hash: it needs load_balancer = \"ecmp\", not \"{}\"",
                    self.load_balancer.name()
                ),
            ));
        }
        c.positive("switch.egress_alpha", self.egress_alpha)?;
        for (i, e) in self.ecn_table.iter().enumerate() {
            let key = format!("switch.ecn_table[{i}]");
            c.non_negative(&format!("{key}.gbps"), e.gbps)?;
            if e.gbps > super::check::MAX_GBPS {
                return Err(c.err(format!("{key}.gbps"), "above the 10000 Gb/s limit"));
            }
            red(e.kmin_kb, e.kmax_kb, e.pmax).ok_or_else(|| c.err(key, RED_RULE))?;
        }
        // Checked whichever balancer runs (a sweep may vary it).
        let within = |key: &str, v: u32, lo: u32, hi: u32| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(c.err(key, format!("must be in {lo}..={hi}, got {v}")))
            }
        };
        within("switch.drill.d", self.drill.d, 1, DrillParams::MAX_D)?;
        within("switch.drill.m", self.drill.m, 0, DrillParams::MAX_M)?;
        c.us_positive("switch.letflow.gap_us", self.letflow.gap_us)?;
        within(
            "switch.dibs.max_deflections",
            self.dibs.max_deflections,
            1,
            255,
        )?;
        within(
            "switch.letflow.table_entries",
            self.letflow.table_entries,
            LetflowParams::MIN_TABLE,
            LetflowParams::MAX_TABLE,
        )?;
        // ConWeave's times: the extras and the pause may be 0.
        let w = &self.conweave;
        c.us(
            "switch.conweave.extra_reply_deadline_us",
            w.extra_reply_deadline_us,
        )?;
        c.us("switch.conweave.path_pause_us", w.path_pause_us)?;
        c.us("switch.conweave.extra_voq_flush_us", w.extra_voq_flush_us)?;
        c.us_positive("switch.conweave.default_voq_wait_us", w.default_voq_wait_us)?;
        c.us_positive("switch.conweave.tx_expiry_us", w.tx_expiry_us)?;
        let g = &self.conga;
        c.us_positive("switch.conga.dre_period_us", g.dre_period_us)?;
        let alpha_unit = CongaParams::ALPHA_UNIT as f64;
        if !(g.alpha * alpha_unit >= 1.0 && g.alpha <= 1.0) {
            return Err(c.err(
                "switch.conga.alpha",
                format!("must be in [1e-6, 1], got {}", g.alpha),
            ));
        }
        within(
            "switch.conga.quantization_bits",
            g.quantization_bits,
            1,
            CongaParams::MAX_BITS,
        )?;
        c.us_positive("switch.conga.gap_us", g.gap_us)?;
        c.us_positive("switch.conga.aging_us", g.aging_us)?;
        within(
            "switch.conga.table_entries",
            g.table_entries,
            CongaParams::MIN_TABLE,
            CongaParams::MAX_TABLE,
        )?;
        c.at_least("switch.trim_threshold_bytes", self.trim_threshold_bytes, 1)?;
        if self.trimming {
            let refuse = |why: &str| Err(c.err("switch.trimming", why.to_string()));
            if self.pfc {
                return refuse(
                    "trims what a lossy switch would drop or queue past its threshold; \
                     with pfc = true nothing is dropped (set switch.pfc = false)",
                );
            }
            if self.deflection != Deflection::None {
                return refuse(
                    "and deflection both take the packets a full queue refuses: choose one",
                );
            }
            if !matches!(self.model, SwitchModel::SharedBuffer) {
                return refuse("runs on the shared-buffer switch model only (switch.model)");
            }
        }
        let x = super::rcm::Context {
            model: self.model,
            load_balancer: self.load_balancer,
            scheduling: self.scheduling,
            deflection: self.deflection,
        };
        super::rcm::validate(&self.voq, &self.rcm, &x, c)?;
        Ok(())
    }

    /// The load balancer with its section's parameters.
    fn balancer(&self) -> LoadBalancer {
        match self.load_balancer {
            LoadBalancer::Drill(_) => LoadBalancer::Drill(DrillParams {
                d: self.drill.d,
                m: self.drill.m,
            }),
            LoadBalancer::Letflow(_) => LoadBalancer::Letflow(LetflowParams {
                gap: super::check::us(self.letflow.gap_us),
                table: self.letflow.table_entries,
            }),
            LoadBalancer::Conweave(_) => {
                let (w, us) = (&self.conweave, super::check::us);
                LoadBalancer::Conweave(ConweaveParams {
                    extra_reply_deadline: us(w.extra_reply_deadline_us),
                    path_pause: us(w.path_pause_us),
                    extra_voq_flush: us(w.extra_voq_flush_us),
                    default_voq_wait: us(w.default_voq_wait_us),
                    tx_expiry: us(w.tx_expiry_us),
                })
            }
            LoadBalancer::Conga(_) => {
                let g = &self.conga;
                LoadBalancer::Conga(CongaParams {
                    dre_period: super::check::us(g.dre_period_us),
                    alpha_ppm: (g.alpha * CongaParams::ALPHA_UNIT as f64).round() as u32,
                    quantization_bits: g.quantization_bits,
                    gap: super::check::us(g.gap_us),
                    aging: super::check::us(g.aging_us),
                    table: g.table_entries,
                })
            }
            other => other,
        }
    }

    /// Writes the section into the fabric configuration.
    pub fn build(&self, cfg: &mut FabricConfig) {
        let mut ecn: Vec<EcnSetting> = self
            .ecn_table
            .iter()
            .filter_map(|e| {
                red(e.kmin_kb, e.kmax_kb, e.pmax).map(|s| EcnSetting {
                    rate_bps: gbps(e.gbps),
                    ..s
                })
            })
            .collect();
        ecn.sort_by_key(|e| e.rate_bps);
        cfg.headroom = self.headroom_bytes;
        cfg.ecn_enabled = self.ecn && !ecn.is_empty();
        cfg.ecn = ecn;
        cfg.reroute_on_failure = self.reroute_on_failure;
        cfg.mmu.buffer = (self.buffer_mb * 1024.0 * 1024.0) as u64;
        cfg.mmu.pfc = self.pfc;
        cfg.mmu.alpha = self.pfc_alpha;
        cfg.mmu.reserve = self.reserve_bytes;
        cfg.mmu.resume_offset = self.resume_offset_bytes;
        cfg.mmu.egress_alpha = self.egress_alpha;
        cfg.load_balancer = self.balancer();
        cfg.ecmp_hash = self.ecmp_hash;
        cfg.scheduling = match self.scheduling {
            Scheduling::Srpt { .. } => Scheduling::Srpt {
                dequeue: self.srpt.dequeue,
            },
            other => other,
        };
        cfg.deflection = match self.deflection {
            Deflection::Dibs { .. } => Deflection::Dibs {
                // Checked: 1..=255.
                max_deflections: self.dibs.max_deflections as u8,
            },
            Deflection::None => Deflection::None,
        };
        cfg.trimming = self.trimming.then_some(Trimming {
            threshold_bytes: self.trim_threshold_bytes,
        });
        (cfg.model, cfg.rcm) = super::rcm::build(&self.voq, &self.rcm, self.model);
    }
}
