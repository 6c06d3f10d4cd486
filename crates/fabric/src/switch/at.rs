//! What a switch's pipeline may touch while a switch's events run
//! ([`AtSwitch`]): the switches, the links (its ports and the wires it
//! puts frames on), the event core and the configuration; never a host.
//! The view is the network itself, seen through a type that hands out
//! only those parts (its field is private to this file), so the pipeline
//! compiles as code on one base pointer would. Tried first: a view of a
//! pointer per part (+6.5% instructions per hop on WS128, each part's
//! address kept live across the inlined hop), and a view holding one
//! pointer (+4.8%, that pointer reloaded from memory after every call).

use crate::config::FabricConfig;
use crate::link::Links;
use crate::net::core::Core;
use crate::net::Network;
use crate::switch::Switches;
use ref_cast::RefCast;

/// The network seen through this view: the same address as the
/// `Network` (`repr(transparent)`, cast by `ref_cast`), so a `&mut` of the
/// view is one pointer, as `&mut Network` was.
#[derive(RefCast)]
#[repr(transparent)]
pub(crate) struct AtSwitch {
    net: Network,
}

impl AtSwitch {
    #[inline(always)]
    pub(crate) fn of(net: &mut Network) -> &mut AtSwitch {
        AtSwitch::ref_cast_mut(net)
    }

    #[inline(always)]
    pub(crate) fn sw(&mut self) -> &mut Switches {
        &mut self.net.sw
    }

    #[inline(always)]
    pub(crate) fn links(&mut self) -> &mut Links {
        &mut self.net.links
    }

    #[inline(always)]
    pub(crate) fn core(&mut self) -> &mut Core {
        &mut self.net.core
    }

    #[inline(always)]
    pub(crate) fn cfg(&self) -> &FabricConfig {
        &self.net.cfg
    }

    /// The parts at once, for what uses several together.
    #[inline(always)]
    pub(crate) fn parts(&mut self) -> (&mut Switches, &mut Links, &mut Core) {
        let net = &mut self.net;
        (&mut net.sw, &mut net.links, &mut net.core)
    }
}
