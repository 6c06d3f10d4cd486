//! Which reliability (loss recovery and ordering) engine a QP runs; chosen
//! per QP like the congestion control ([`crate::cc`]).

use crate::mprdma::MpRdmaConfig;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Reliability {
    /// RoCEv2 RC: one path, in-order receive, go-back-N.
    #[default]
    GoBackN,
    /// MP-RDMA: many virtual paths, one window, out-of-order placement
    /// tracked by a 2-bit bitmap (see [`crate::mprdma`]).
    MpRdma(MpRdmaConfig),
}

impl Reliability {
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Reliability::GoBackN => Ok(()),
            Reliability::MpRdma(c) => c.validate().map_err(|e| format!("mprdma: {e}")),
        }
    }
}
