//! The PFC record (`Network::set_pfc_log`): every PAUSE and RESUME frame
//! a port receives, with its time and class, as HPCC ns-3's pfc.txt has
//! them (the port that stops or starts sending). Off unless asked for:
//! the PFC arrival (`net/run.rs`) tests one `Option` per PFC frame, never
//! per packet, and records out of line. Written there, read by reports.

use engine::Time;

/// A PAUSE or RESUME that reached `port` (the egress port it pauses or
/// resumes) at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcEvent {
    pub at: Time,
    pub port: u32,
    pub class: u8,
    pub pause: bool,
}
