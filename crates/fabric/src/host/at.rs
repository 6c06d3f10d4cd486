//! What a host's driver and applications may touch while a host's
//! events run ([`AtHost`]): the hosts, the links (its port and the wire it
//! puts frames on), the event core and the capture; never a switch. One
//! pointer to the network, handing out only those parts (its field is
//! private to this file): see `switch/at.rs` for why.

use crate::host::Hosts;
use crate::link::Links;
use crate::net::core::Core;
use crate::net::Network;
use crate::observe::Observe;
use ref_cast::RefCast;

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
