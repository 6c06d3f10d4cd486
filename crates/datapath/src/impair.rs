//! The impairment layer: what a lossy, reordering network would do to
//! the datagrams an endpoint receives, for tests and experiments on one
//! machine (`--impair loss=0.01,reorder=0.01`). Applied on receipt,
//! before decoding, with a seeded random stream: each datagram is
//! dropped (`loss`), or kept and also delivered a second time (`dup`),
//! or held back a random time up to `reorder_us` so later ones overtake
//! it (`reorder`); every datagram is also held `delay_us` (0: none).
//! Held datagrams wait, copied, in a map by release time.
//!
//! Uses `engine::Rng` and `engine::Time` only.

use std::collections::BTreeMap;
use std::net::SocketAddrV4;

use engine::{Rng, StreamKind, Time};

/// What to do to received datagrams.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImpairSpec {
    pub loss: f64,
    pub dup: f64,
    pub reorder: f64,
    pub reorder_us: f64,
    pub delay_us: f64,
    pub seed: u64,
}

impl Default for ImpairSpec {
    fn default() -> Self {
        ImpairSpec {
            loss: 0.0,
            dup: 0.0,
            reorder: 0.0,
            reorder_us: 50.0,
            delay_us: 0.0,
            seed: 1,
        }
    }
}

impl ImpairSpec {
    /// Parses `key=value` pairs separated by commas (`loss`, `dup`,
    /// `reorder`: fractions in 0..=1; `reorder_us`, `delay_us`: at most
    /// one second; `seed`). Errors name the key.
    pub fn parse(s: &str) -> Result<ImpairSpec, String> {
        let mut spec = ImpairSpec::default();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("impairment `{part}`: expected key=value"))?;
            let (key, value) = (key.trim(), value.trim());
            if key == "seed" {
                spec.seed = value
                    .parse()
                    .map_err(|_| format!("impairment seed: `{value}` is not an integer"))?;
                continue;
            }
            let v: f64 = value
                .parse()
                .map_err(|_| format!("impairment {key}: `{value}` is not a number"))?;
            let (slot, max) = match key {
                "loss" => (&mut spec.loss, 1.0),
                "dup" => (&mut spec.dup, 1.0),
                "reorder" => (&mut spec.reorder, 1.0),
                "reorder_us" => (&mut spec.reorder_us, 1e6),
                "delay_us" => (&mut spec.delay_us, 1e6),
                _ => {
                    return Err(format!(
                    "impairment `{key}`: unknown (loss, dup, reorder, reorder_us, delay_us, seed)"
                ))
                }
            };
            if !(v.is_finite() && (0.0..=max).contains(&v)) {
                return Err(format!(
                    "impairment {key}: must be in 0..={max}, got {value}"
                ));
            }
            *slot = v;
        }
        Ok(spec)
    }

    /// Whether it changes anything.
    pub fn is_active(&self) -> bool {
        self.loss > 0.0 || self.dup > 0.0 || self.reorder > 0.0 || self.delay_us > 0.0
    }
}

/// What happened to the datagrams, by the layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImpairCounts {
    pub dropped: u64,
    pub duplicated: u64,
    pub reordered: u64,
}

/// A datagram held back, with its bytes.
struct Held {
    from: SocketAddrV4,
    to: SocketAddrV4,
    tos: u8,
    bytes: Vec<u8>,
}

/// The layer of one endpoint.
pub struct Impair {
    spec: ImpairSpec,
    rng: Rng,
    /// By release time, then arrival.
    held: BTreeMap<(Time, u64), Held>,
    seq: u64,
    pub counts: ImpairCounts,
}

/// One received datagram, as the layer hands it on.
pub struct Datagram<'a> {
    pub from: SocketAddrV4,
    pub to: SocketAddrV4,
    pub tos: u8,
    pub bytes: &'a [u8],
}

impl Impair {
    pub fn new(spec: ImpairSpec, endpoint: u64) -> Impair {
        Impair {
            spec,
            rng: Rng::new(spec.seed, StreamKind::Impair, endpoint),
            held: BTreeMap::new(),
            seq: 0,
            counts: ImpairCounts::default(),
        }
    }

    /// A datagram arrived at `now`: how many times to deliver it now (0,
    /// 1 or 2); a held one is copied and comes out of [`Impair::release`].
    pub fn arrive(&mut self, now: Time, d: &Datagram) -> u8 {
        let s = self.spec;
        if self.rng.bernoulli(s.loss) {
            self.counts.dropped += 1;
            return 0;
        }
        let copies = if self.rng.bernoulli(s.dup) {
            self.counts.duplicated += 1;
            2
        } else {
            1
        };
        let mut hold = s.delay_us;
        if self.rng.bernoulli(s.reorder) {
            self.counts.reordered += 1;
            hold += s.reorder_us * self.rng.uniform();
        }
        if hold <= 0.0 {
            return copies;
        }
        let at = now + engine::time::from_secs_f64(hold * 1e-6);
        for _ in 0..copies {
            self.seq += 1;
            self.held.insert(
                (at, self.seq),
                Held {
                    from: d.from,
                    to: d.to,
                    tos: d.tos,
                    bytes: d.bytes.to_vec(),
                },
            );
        }
        0
    }

    /// When the next held datagram is due.
    pub fn next_release(&self) -> Option<Time> {
        self.held.first_key_value().map(|(&(t, _), _)| t)
    }

    /// Hands every held datagram due at `now` to `f`, in the order due.
    pub fn release(&mut self, now: Time, mut f: impl FnMut(&Datagram)) {
        while let Some(entry) = self.held.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let h = entry.remove();
            f(&Datagram {
                from: h.from,
                to: h.to,
                tos: h.tos,
                bytes: &h.bytes,
            });
        }
    }
}
