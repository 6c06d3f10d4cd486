//! The `[transport]` section: packet sizes, ACKs, RTO, priorities, the
//! congestion control, the engine and the ordering layer, with its sub-tables
//! (`dcqcn.rs`, `cc.rs` for HPCC, TIMELY and DCTCP, `irn.rs`, `mprdma.rs`,
//! `uet.rs`, `ordering.rs`); its checks, the limit on a
//! message's length, and its build step (the NIC part of the
//! [`FabricConfig`] and each scheme's [`Engine`]).

pub mod cc;
pub mod dcqcn;
pub mod irn;
pub mod mprdma;
pub mod ordering;
pub mod uet;

use super::check::{us, Check, ScenarioError};
use super::topology::TopologyCfg;
use cc::{DctcpOverrides, HpccOverrides, TimelyOverrides};
use dcqcn::{DcqcnOverrides, DcqcnPreset};
use fabric::{FabricConfig, Network};
use irn::IrnOverrides;
use mprdma::MpRdmaOverrides;
use ordering::{EunomiaOverrides, StaticBitmapOverrides};
use serde::Deserialize;
use transport::{CcConfig, Engine, EngineKind, IrnConfig, OrderingKind, RtoLow, UetCc};
use uet::UetOverrides;

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, default)]
pub struct TransportCfg {
    pub mtu: u32,
    pub header_bytes: u32,
    pub ack_bytes: u32,
    /// HPCC ns-3's NIC: its packet sizes in place of `header_bytes` and
    /// `ack_bytes`, and its ACK queue (see `ns3_nic`).
    pub ns3_nic: bool,
    pub ack_every: u32,
    /// ACK coalescing by time (go-back-N and IRN): an ACK waits this long
    /// for later ones to replace it; 0 (HPCC ns-3): none waits.
    pub ack_interval_us: f64,
    /// The notification point's CNP generation delay; 0 (HPCC ns-3, whose
    /// notification is the ACK's flag): none.
    pub cnp_delay_us: f64,
    pub rto_us: f64,
    pub data_priority: u8,
    pub ctrl_priority: u8,
    /// Congestion control of every QP: "none" (line rate), "dcqcn",
    /// "hpcc", "timely" or "dctcp".
    pub cc: CcKind,
    /// DCQCN parameter preset (data/params/dcqcn.toml): "conweave",
    /// "hpcc" or "mellanox"; `dcqcn` overrides single values.
    pub dcqcn_preset: DcqcnPreset,
    pub dcqcn: DcqcnOverrides,
    /// HPCC's preset and values (with `cc = "hpcc"`).
    pub hpcc: HpccOverrides,
    /// TIMELY's values (with `cc = "timely"`).
    pub timely: TimelyOverrides,
    /// DCTCP's values (with `cc = "dctcp"`).
    pub dctcp: DctcpOverrides,
    /// Engine of every QP: a name of `transport::EngineKind`'s table
    /// ("roce" (go-back-N), "irn", "mprdma", "uet", or an alias).
    #[serde(deserialize_with = "engine_kind")]
    pub kind: EngineKind,
    /// IRN values replacing the defaults (used with `kind = "irn"`).
    pub irn: IrnOverrides,
    /// MP-RDMA values replacing the defaults (used with `kind = "mprdma"`).
    pub mprdma: MpRdmaOverrides,
    /// UET values replacing the defaults (used with `kind = "uet"`).
    pub uet: UetOverrides,
    /// The ordering layer at every receiving NIC: "none", "ideal",
    /// "eunomia" or "static_bitmap" (`transport::OrderingKind::NAMES`);
    /// MP-RDMA runs under "none" only.
    pub ordering: String,
    /// Eunomia's values replacing the defaults (with `ordering = "eunomia"`).
    pub eunomia: EunomiaOverrides,
    /// The static bitmap's size (with `ordering = "static_bitmap"`).
    pub static_bitmap: StaticBitmapOverrides,
}

/// `kind = "..."`: a name of the transport's table of engines
/// ([`EngineKind::from_name`], whose error lists them).
fn engine_kind<'de, D: serde::Deserializer<'de>>(d: D) -> Result<EngineKind, D::Error> {
    let s = String::deserialize(d)?;
    EngineKind::from_name(&s).map_err(serde::de::Error::custom)
}

/// A flow's or traffic entry's `transport = "..."`, as [`engine_kind`].
pub(crate) fn some_engine_kind<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<EngineKind>, D::Error> {
    engine_kind(d).map(Some)
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum CcKind {
    #[default]
    None,
    Dcqcn,
    Hpcc,
    Timely,
    Dctcp,
}

impl Default for TransportCfg {
    fn default() -> Self {
        TransportCfg {
            mtu: 1000,
            header_bytes: 48,
            ack_bytes: 60,
            ns3_nic: false,
            ack_every: 1,
            ack_interval_us: 0.0,
            cnp_delay_us: 0.0,
            rto_us: 4000.0,
            data_priority: 3,
            ctrl_priority: 0,
            cc: CcKind::None,
            dcqcn_preset: DcqcnPreset::Conweave,
            dcqcn: DcqcnOverrides::default(),
            hpcc: HpccOverrides::default(),
            timely: TimelyOverrides::default(),
            dctcp: DctcpOverrides::default(),
            kind: EngineKind::default(),
            irn: IrnOverrides::default(),
            mprdma: MpRdmaOverrides::default(),
            uet: UetOverrides::default(),
            ordering: OrderingKind::None.name().to_string(),
            eunomia: EunomiaOverrides::default(),
            static_bitmap: StaticBitmapOverrides::default(),
        }
    }
}

impl TransportCfg {
    /// Checks the section's own numbers (sub-tables are checked as they
    /// are built, in [`TransportCfg::build`]).
    pub fn validate(&self, c: Check) -> Result<(), ScenarioError> {
        c.at_least("transport.mtu", self.mtu, 1)?;
        let max = fabric::MAX_FRAME_BYTES;
        if self.mtu as u64 + self.header_bytes as u64 > max as u64 {
            return Err(c.err(
                "transport.mtu",
                format!(
                    "{} payload + {} header bytes make frames larger than the fabric carries ({max} bytes)",
                    self.mtu, self.header_bytes
                ),
            ));
        }
        c.at_least("transport.ack_bytes", self.ack_bytes, 1)?;
        if self.ack_bytes > max {
            return Err(c.err("transport.ack_bytes", format!("at most {max} bytes")));
        }
        if self.ns3_nic && (self.header_bytes, self.ack_bytes) != (48, 60) {
            return Err(c.err(
                "transport.ns3_nic",
                "sets ns-3's packet sizes: leave transport.header_bytes and transport.ack_bytes out",
            ));
        }
        c.at_least("transport.ack_every", self.ack_every, 1)?;
        for (key, v) in [
            ("transport.ack_interval_us", self.ack_interval_us),
            ("transport.cnp_delay_us", self.cnp_delay_us),
        ] {
            if c.us(key, v)? > transport::api::MAX_RTO {
                return Err(c.err(key, "at most one hour (3.6e9 us)"));
            }
        }
        if self.ack_interval_us > 0.0 && !self.kind.engine().acks_each_packet() {
            return Err(c.err(
                "transport.ack_interval_us",
                format!(
                    "coalesces the ACKs of the kinds {}; {} acknowledges by its own rule",
                    EngineKind::names_where(Engine::acks_each_packet).join(", "),
                    self.kind.name()
                ),
            ));
        }
        c.us_positive("transport.rto_us", self.rto_us)?;
        self.ordering(c)?;
        if us(self.rto_us) > transport::api::MAX_RTO {
            return Err(c.err("transport.rto_us", "at most one hour (3.6e9 us)"));
        }
        for (k, p) in [
            ("data_priority", self.data_priority),
            ("ctrl_priority", self.ctrl_priority),
        ] {
            if p > 7 {
                return Err(c.err(
                    format!("transport.{k}"),
                    format!("priorities are 0..=7, got {p}"),
                ));
            }
        }
        Ok(())
    }

    /// Every sub-table's values, whether or not its control, engine or
    /// layer runs: a sweep may vary which one does, and a mistake in a
    /// table that is off today is one when it is on (the rule CONGA's
    /// keys follow). Before, `[transport.hpcc] eta = -1` under DCQCN
    /// passed unnoticed.
    pub fn validate_tables(&self, topo: &TopologyCfg, c: Check) -> Result<(), ScenarioError> {
        let mut p = self.dcqcn_preset.params(topo.host_bps());
        self.dcqcn.apply(&mut p, c)?;
        p.validate().map_err(|m| c.err("transport.dcqcn", m))?;
        self.hpcc.params(c)?;
        self.timely.params(topo.host_bps(), c)?;
        self.dctcp.params(c)?;
        self.irn.config(self.mtu, c)?;
        self.mprdma.config(c)?;
        self.uet.config(self.mtu, c)?;
        for layer in ["eunomia", "static_bitmap"] {
            let kind = OrderingKind::from_name(layer).expect("a layer with a table");
            ordering::with_parameters(kind, &self.eunomia, &self.static_bitmap, c)?;
        }
        Ok(())
    }

    /// The ordering layer `ordering` names, with its table's parameters.
    pub fn ordering(&self, c: Check) -> Result<OrderingKind, ScenarioError> {
        let kind = OrderingKind::from_name(&self.ordering).ok_or_else(|| {
            c.err(
                "transport.ordering",
                format!(
                    "unknown ordering layer \"{}\"; accepted: {}",
                    self.ordering,
                    OrderingKind::NAMES.join(", ")
                ),
            )
        })?;
        ordering::with_parameters(kind, &self.eunomia, &self.static_bitmap, c)
    }

    /// The largest RTO any scheme of this section uses (for the run's
    /// no-progress limit).
    pub fn max_rto(&self) -> engine::Time {
        let irn = IrnConfig::default();
        [
            Some(us(self.rto_us)),
            Some(irn.rto_high),
            self.irn.rto_high_us.map(us),
            self.irn.rto_low_us.map(us),
            self.uet.rto_us.map(us),
        ]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0)
    }

    /// Writes the NIC part of the fabric configuration (the engine is set
    /// by the caller, from [`TransportCfg::engine`]).
    pub fn build(
        &self,
        cfg: &mut FabricConfig,
        topo: &TopologyCfg,
        c: Check,
    ) -> Result<(), ScenarioError> {
        cfg.nic.mtu = self.mtu;
        cfg.nic.header_bytes = self.header_bytes;
        cfg.nic.ctrl_bytes = self.ack_bytes;
        cfg.nic.ack_every = self.ack_every;
        cfg.nic.ack_interval = us(self.ack_interval_us);
        cfg.nic.cnp_delay = us(self.cnp_delay_us);
        cfg.nic.rto = us(self.rto_us);
        cfg.nic.data_priority = self.data_priority;
        cfg.nic.ctrl_priority = self.ctrl_priority;
        cfg.nic.ordering = self.ordering(c)?;
        cfg.nic.nscc = self.uet.nscc_params(c)?;
        if self.eunomia.irn_timeouts(c)? && matches!(cfg.nic.ordering, OrderingKind::Eunomia(_)) {
            let irn = self.irn.config(self.mtu, c)?;
            cfg.nic.rto = irn.rto_high;
            cfg.nic.rto_low = Some(RtoLow {
                rto: irn.rto_low,
                below_packets: irn.n_packets,
            });
        }
        cfg.nic.cc = match self.cc {
            CcKind::None => CcConfig::None,
            CcKind::Dcqcn => {
                let mut p = self.dcqcn_preset.params(topo.host_bps());
                self.dcqcn.apply(&mut p, c)?;
                p.validate().map_err(|m| c.err("transport.dcqcn", m))?;
                if self.cnp_delay_us > 0.0 && p.notification == transport::Notification::AckEcho {
                    return Err(c.err(
                        "transport.cnp_delay_us",
                        "delays CNP packets, and DCQCN here sends none (ns-3's notification: a flag on the ACK): set transport.dcqcn.cnp_interval_us or dcqcn_preset = \"mellanox\"",
                    ));
                }
                CcConfig::Dcqcn(p)
            }
            CcKind::Hpcc => CcConfig::Hpcc(self.hpcc.params(c)?),
            CcKind::Timely => CcConfig::Timely(self.timely.params(topo.host_bps(), c)?),
            CcKind::Dctcp => CcConfig::Dctcp(self.dctcp.params(c)?),
        };
        if cfg.nic.cc.wire_bytes() > 0 {
            let max = fabric::MAX_FRAME_BYTES as u64;
            let frame = self.mtu as u64 + self.header_bytes as u64 + cfg.nic.cc.wire_bytes() as u64;
            if frame > max {
                return Err(c.err(
                    "transport.cc",
                    format!(
                        "{} adds {} header bytes: {frame}-byte frames exceed the fabric's {max}",
                        cfg.nic.cc.name(),
                        cfg.nic.cc.wire_bytes()
                    ),
                ));
            }
            cfg.nic.header_bytes += cfg.nic.cc.wire_bytes();
            cfg.nic.ctrl_bytes += cfg.nic.cc.wire_bytes();
        }
        if self.ns3_nic {
            ns3_nic(cfg);
        }
        // Checked here so that a mistake is found before any topology is
        // built; `engine` builds them again for every kind in use.
        self.with_parameters(self.kind, c)?;
        // What the section's own checks did not see, in the NIC's words.
        cfg.nic
            .validate()
            .map_err(|e| c.err("transport", e.to_string()))
    }

    /// Fills in what the congestion control takes from the topology
    /// ([`cc::measure`]).
    pub fn measure_cc(
        &self,
        cc: &mut CcConfig,
        probe: impl FnOnce() -> Result<Network, ScenarioError>,
    ) -> Result<(), ScenarioError> {
        cc::measure(cc, &self.hpcc, &self.dctcp, probe)
    }

    /// The engine of `kind`. `probe` builds the network once
    /// to measure IRN's and UET's automatic BDP caps (routes decide the base RTT).
    pub fn engine(
        &self,
        kind: EngineKind,
        c: Check,
        probe: impl FnOnce() -> Result<Network, ScenarioError>,
    ) -> Result<Engine, ScenarioError> {
        let mut engine = self.with_parameters(kind, c)?;
        match &mut engine {
            Engine::Irn(cfg) if self.irn.auto_bdp() => {
                IrnOverrides::set_auto_bdp(cfg, &probe()?, self.mtu, c)?;
            }
            Engine::Uet(cfg) if self.uet.auto_bdp() => {
                UetOverrides::set_auto_bdp(cfg, &probe()?, self.mtu, c)?;
            }
            _ => {}
        }
        Ok(engine)
    }

    /// The engine of `kind` with the values of its table
    /// (`[transport.irn]`, `[transport.mprdma]`, `[transport.uet]`) over
    /// its defaults; an
    /// engine without a table of its own runs its defaults.
    fn with_parameters(&self, kind: EngineKind, c: Check) -> Result<Engine, ScenarioError> {
        Ok(match kind.engine() {
            Engine::Irn(_) => Engine::Irn(self.irn.config(self.mtu, c)?),
            Engine::MpRdma(_) => Engine::MpRdma(self.mprdma.config(c)?),
            Engine::Uet(_) => {
                let cfg = self.uet.config(self.mtu, c)?;
                // NSCC is UET's window; a NIC-wide control on top would
                // make two controls answer the same marks.
                if cfg.cc == UetCc::Nscc && self.cc != CcKind::None {
                    return Err(c.err(
                        "transport.uet.cc",
                        format!(
                            "NSCC (the default) runs beside transport.cc = \"{}\": \
                             set transport.uet.cc = \"none\" or transport.cc = \"none\"",
                            format!("{:?}", self.cc).to_lowercase()
                        ),
                    ));
                }
                Engine::Uet(cfg)
            }
            e => e,
        })
    }
}

/// What HPCC ns-3's NIC does that ours does not by default
/// (`transport.ns3_nic`), as its `rdma-hw.cc` and `qbb-net-device.cc` do it:
/// - packet sizes: a data packet carries 36 header bytes on the wire (PPP
///   2, IPv4 20, UDP 8, `SeqTsHeader` 6) and its congestion control's
///   (TIMELY's timestamp, HPCC's INT stack); an ACK or NACK is its 12-byte
///   `qbbHeader` with that control header, padded to 26 bytes, behind IPv4
///   and PPP: max(48, 34 + control header). Its ideal FCT counts 48 header
///   bytes per packet whatever they carry. (Ours: 48 and 60, plus the
///   control's header.)
/// - its ACK queue (`ACK_HIGH_PRIO 1`: index 0) is stopped by a PAUSE of
///   class 0 only, so ACKs leave while the class the switches queue them
///   in is paused.
///
/// Set once the control's header is known. On WS128 under TIMELY the two
/// move small flows' mean slowdown from 14% below ns-3's to within 5%
/// (docs/ns3_validation.md, "TIMELY").
fn ns3_nic(cfg: &mut FabricConfig) {
    let cc = cfg.nic.cc.wire_bytes();
    cfg.nic.header_bytes = 36 + cc;
    cfg.nic.ctrl_bytes = (34 + cc).max(48);
    cfg.ideal_header_bytes = Some(48);
    cfg.nic.ctrl_ignores_pause = true;
}
