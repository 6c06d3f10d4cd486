//! What a node's pipeline may touch while its events run: a switch's
//! ([`AtSwitch`]: the switches, the links, i.e. its ports and the wires it
//! puts frames on, the event core and the configuration; never a host) and
//! a host's ([`AtHost`]: the hosts, the links, the event core and the
//! capture; never a switch). Each view is the network itself, seen through
//! a type that hands out only those parts (its field is private to this
//! file), so a node's pipeline compiles as code on one base pointer would.
//! Tried first: a view of a pointer per part (+6.5% instructions per hop
//! on WS128, each part's address kept live across the inlined hop), and a
//! view holding one pointer (+4.8%, that pointer reloaded from memory
//! after every call).

use crate::config::FabricConfig;
use crate::host::Hosts;
use crate::link::Links;
use crate::net::core::Core;
use crate::net::Network;
use crate::observe::Observe;
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

/// The network seen through this view: the same address as the
/// `Network` (`repr(transparent)`, cast by `ref_cast`), so a `&mut` of the
/// view is one pointer, as `&mut Network` was.
#[derive(RefCast)]
#[repr(transparent)]
pub(crate) struct AtHost {
    net: Network,
}

impl AtHost {
    #[inline(always)]
    pub(crate) fn of(net: &mut Network) -> &mut AtHost {
        AtHost::ref_cast_mut(net)
    }

    #[inline(always)]
    pub(crate) fn hosts(&mut self) -> &mut Hosts {
        &mut self.net.hosts
    }

    #[inline(always)]
    pub(crate) fn read_hosts(&self) -> &Hosts {
        &self.net.hosts
    }

    #[inline(always)]
    pub(crate) fn core(&mut self) -> &mut Core {
        &mut self.net.core
    }

    #[inline(always)]
    pub(crate) fn observe(&mut self) -> &mut Observe {
        &mut self.net.observe
    }

    /// The parts at once, for what uses several together.
    #[inline(always)]
    pub(crate) fn parts(&mut self) -> (&mut Hosts, &mut Links, &mut Core, &mut Observe) {
        let net = &mut self.net;
        (
            &mut net.hosts,
            &mut net.links,
            &mut net.core,
            &mut net.observe,
        )
    }
}
