//! The allocation bitmap of Eunomia's memory controller (`mc`): one bit
//! per unit, and over its 64-unit words a segment tree whose every node
//! knows the free units at its low end, at its high end and in its
//! longest free run. The first fit from the head and the highest fit from
//! the tail descend the tree, so one search costs O(log units) and one
//! (de)allocation O(log units + units/64) however full the controller is;
//! a unit-by-unit search walks every used unit, which made a 16 MB
//! controller 13-50x slower. The placements are exactly those of the
//! unit-by-unit searches (the tests compare them).
//!
//! Imports nothing of the crate.

/// Units of one word of the bitmap, a leaf of the tree.
const WORD: u32 = 64;

/// Free units of a span of the bitmap: at its low end, at its high end,
/// and in its longest run.
#[derive(Clone, Copy, Debug)]
struct Span {
    low: u32,
    high: u32,
    best: u32,
}

impl Span {
    /// The span of one word whose set bits are its free units.
    fn of_word(free: u64) -> Span {
        Span {
            low: free.trailing_ones(),
            high: free.leading_ones(),
            best: longest_run(free),
        }
    }

    /// `left` followed by `right`, each of `len` units.
    fn join(left: Span, right: Span, len: u32) -> Span {
        Span {
            low: if left.low == len {
                len + right.low
            } else {
                left.low
            },
            high: if right.high == len {
                len + left.high
            } else {
                right.high
            },
            best: left.best.max(right.best).max(left.high + right.low),
        }
    }
}

/// The longest run of set bits: each step shortens every run by one.
fn longest_run(mut bits: u64) -> u32 {
    let mut n = 0;
    while bits != 0 {
        bits &= bits << 1;
        n += 1;
    }
    n
}

/// Bit `s` set when bits `s..s + n` of `free` (`n` <= 64) are all set.
fn fits(free: u64, n: u32) -> u64 {
    (1..n).fold(free, |m, k| m & free >> k)
}

/// Which units are allocated, and where runs of free ones are.
#[derive(Debug)]
pub(crate) struct FreeRuns {
    /// One bit per unit: allocated. Padded to `leaves` words, the padding
    /// allocated for good so that no run reaches past the last unit.
    used: Vec<u64>,
    /// The tree in heap order (node `i`'s children are `2i` and `2i + 1`,
    /// word `w`'s leaf is `leaves + w`), each node's `Span` stored as its
    /// shortfall from the node's length (low, high, best): a free tree is
    /// all zeros, so it is allocated zeroed and its pages are touched only
    /// where units get used (a 16 MB controller's tree is 3 MB per NIC).
    tree: Vec<[u32; 3]>,
    /// Leaves of the tree (a power of two).
    leaves: usize,
}

impl FreeRuns {
    /// `units` free units.
    pub fn new(units: u32) -> FreeRuns {
        let leaves = (units.div_ceil(WORD) as usize).next_power_of_two();
        let mut runs = FreeRuns {
            used: vec![0; leaves],
            tree: vec![[0; 3]; 2 * leaves],
            leaves,
        };
        runs.mark(units, leaves as u32 * WORD - units, true);
        runs
    }

    fn span(&self, node: usize, len: u32) -> Span {
        let [low, high, best] = self.tree[node];
        Span {
            low: len - low,
            high: len - high,
            best: len - best,
        }
    }

    fn put(&mut self, node: usize, len: u32, s: Span) {
        self.tree[node] = [len - s.low, len - s.high, len - s.best];
    }

    /// Marks units `start..start + n` allocated (`on`) or free.
    pub fn mark(&mut self, start: u32, n: u32, on: bool) {
        if n == 0 {
            return;
        }
        let end = start + n;
        let (first, last) = ((start / WORD) as usize, ((end - 1) / WORD) as usize);
        for w in first..=last {
            let lo = if w == first { start % WORD } else { 0 };
            let hi = if w == last {
                (end - 1) % WORD + 1
            } else {
                WORD
            };
            let mask = (u64::MAX >> (WORD - (hi - lo))) << lo;
            if on {
                self.used[w] |= mask;
            } else {
                self.used[w] &= !mask;
            }
            self.put(self.leaves + w, WORD, Span::of_word(!self.used[w]));
        }
        let (mut a, mut b, mut len) = (self.leaves + first, self.leaves + last, WORD);
        while a > 1 {
            (a, b) = (a / 2, b / 2);
            for node in a..=b {
                let s = Span::join(self.span(2 * node, len), self.span(2 * node + 1, len), len);
                self.put(node, 2 * len, s);
            }
            len *= 2;
        }
    }

    /// The lowest `s` such that units `s..s + n` (`n` > 0) are free.
    pub fn first_fit(&self, n: u32) -> Option<u32> {
        debug_assert!(n > 0);
        let mut len = self.leaves as u32 * WORD;
        if self.span(1, len).best < n {
            return None;
        }
        let (mut node, mut at) = (1, 0);
        while node < self.leaves {
            len /= 2;
            let (l, r) = (self.span(2 * node, len), self.span(2 * node + 1, len));
            if l.best >= n {
                node *= 2;
            } else if l.high + r.low >= n {
                return Some(at + len - l.high);
            } else {
                (node, at) = (2 * node + 1, at + len);
            }
        }
        Some(at + fits(!self.used[node - self.leaves], n).trailing_zeros())
    }

    /// The highest `s` such that units `s..s + n` (`n` > 0) are free.
    pub fn last_fit(&self, n: u32) -> Option<u32> {
        debug_assert!(n > 0);
        let mut len = self.leaves as u32 * WORD;
        if self.span(1, len).best < n {
            return None;
        }
        let (mut node, mut at) = (1, 0);
        while node < self.leaves {
            len /= 2;
            let (l, r) = (self.span(2 * node, len), self.span(2 * node + 1, len));
            if r.best >= n {
                (node, at) = (2 * node + 1, at + len);
            } else if l.high + r.low >= n {
                return Some(at + len + r.low - n);
            } else {
                node *= 2;
            }
        }
        Some(at + WORD - 1 - fits(!self.used[node - self.leaves], n).leading_zeros())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The unit-by-unit searches the tree replaces.
    struct Reference(Vec<bool>);

    impl Reference {
        fn free(&self, s: u32, n: u32) -> bool {
            (s..s + n).all(|u| !self.0[u as usize])
        }

        fn first_fit(&self, n: u32) -> Option<u32> {
            let last = (self.0.len() as u32).checked_sub(n)?;
            (0..=last).find(|&s| self.free(s, n))
        }

        fn last_fit(&self, n: u32) -> Option<u32> {
            let last = (self.0.len() as u32).checked_sub(n)?;
            (0..=last).rev().find(|&s| self.free(s, n))
        }
    }

    #[test]
    fn runs_across_words_and_the_last_unit() {
        let mut r = FreeRuns::new(200); // 4 words, the last one partly
        assert_eq!((r.first_fit(200), r.last_fit(200)), (Some(0), Some(0)));
        assert_eq!(r.first_fit(201), None);
        r.mark(60, 10, true);
        assert_eq!(r.first_fit(60), Some(0));
        assert_eq!(r.first_fit(61), Some(70), "crosses into word 2");
        assert_eq!(r.last_fit(130), Some(70));
        assert_eq!(r.last_fit(131), None);
        assert_eq!(r.last_fit(3), Some(197), "ends at the last unit");
        r.mark(60, 10, false);
        assert_eq!(r.last_fit(200), Some(0), "freed");
        assert_eq!(FreeRuns::new(0).first_fit(1), None);
    }

    proptest! {
        /// Random allocations (short blocks from the head, longer runs from
        /// the tail) and frees land exactly where the unit-by-unit
        /// searches put them.
        #[test]
        fn placements_match_the_unit_by_unit_search(
            units in 1u32..700,
            ops in prop::collection::vec((0u8..3, 1u32..150, any::<u32>()), 1..200),
        ) {
            let (mut runs, mut reference) = (FreeRuns::new(units), Reference(vec![false; units as usize]));
            let mut live: Vec<(u32, u32)> = Vec::new();
            for (kind, size, pick) in ops {
                let got = match kind {
                    0 if !live.is_empty() => {
                        let (s, n) = live.swap_remove(pick as usize % live.len());
                        runs.mark(s, n, false);
                        reference.0[s as usize..(s + n) as usize].fill(false);
                        continue;
                    }
                    0 | 1 => {
                        let n = 1 + size % 4;
                        let got = runs.first_fit(n);
                        prop_assert_eq!(got, reference.first_fit(n));
                        got.map(|s| (s, n))
                    }
                    _ => {
                        let got = runs.last_fit(size);
                        prop_assert_eq!(got, reference.last_fit(size));
                        got.map(|s| (s, size))
                    }
                };
                if let Some((s, n)) = got {
                    runs.mark(s, n, true);
                    reference.0[s as usize..(s + n) as usize].fill(true);
                    live.push((s, n));
                }
            }
        }
    }
}
