//! Packet spraying: each packet a switch forwards with two next hops or
//! more goes to the next one in turn, one turn per switch (whatever the
//! destination: a switch's packets share its rotation, so the switch's
//! load is even across its next hops, and a lone flow's packets cover them
//! all in order). Touches only its turns.

pub(crate) struct Spray {
    /// Each switch's next turn, by switch index (an index into the next
    /// hops, wrapped when the hops of the packet are fewer).
    turn: Vec<u32>,
}

impl Spray {
    pub fn new(switches: u32) -> Spray {
        Spray {
            turn: vec![0; switches as usize],
        }
    }

    /// Swaps switch `s`'s state with `other`'s.
    pub fn swap_switch(&mut self, other: &mut Spray, s: usize) {
        std::mem::swap(&mut self.turn[s], &mut other.turn[s]);
    }

    #[inline(always)]
    pub fn pick(&mut self, s: u32, hops: &[u32]) -> u32 {
        let t = &mut self.turn[s as usize];
        let i = if (*t as usize) < hops.len() { *t } else { 0 };
        *t = i + 1;
        hops[i as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_cover_every_hop_in_order_per_switch() {
        let mut sp = Spray::new(2);
        let hops = [10, 11, 12];
        let a: Vec<u32> = (0..6).map(|_| sp.pick(0, &hops)).collect();
        assert_eq!(a, [10, 11, 12, 10, 11, 12]);
        // Switch 1 has its own turn; a shorter set wraps at its length.
        assert_eq!(sp.pick(1, &hops[..2]), 10);
        assert_eq!(sp.pick(1, &hops[..2]), 11);
        assert_eq!(sp.pick(1, &hops[..2]), 10);
    }
}
