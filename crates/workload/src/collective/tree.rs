//! NCCL's double binary tree all-reduce (`ncclGetDtree`): two binary
//! trees over the ranks, the second the mirror of the first (even `n`) or
//! the first shifted by one rank (odd `n`), so that a rank that is a leaf
//! in one is inside the other. Each channel cuts its share in two halves,
//! one per tree, each tree on a lane of its own. In each tree, chunk by
//! chunk, the reduction goes up (a rank sends chunk `j` to its parent once
//! chunk `j` came from all its children) and the result comes down (the
//! root sends chunk `j` to its children once it has all of chunk `j`;
//! every other rank forwards chunk `j` to its children once its parent
//! sent it). Every tree edge carries its half up and down, so the ranks
//! send `2(n-1)` buffers together; a rank with two children in one tree
//! sends twice its buffer.

use super::{Builder, Cut};

/// One binary tree: each rank's parent and children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tree {
    pub parent: Vec<Option<u32>>,
    pub children: Vec<Vec<u32>>,
}

/// NCCL's `ncclGetBtree`: the binary tree over `n` ranks rooted at 0 (its
/// one child the largest power of two below `n`), rank `r`'s parent
/// found by its lowest set bit.
fn btree(n: u32, r: u32) -> (Option<u32>, Vec<u32>) {
    let mut bit = 1;
    while bit < n && bit & r == 0 {
        bit <<= 1;
    }
    if r == 0 {
        return (None, vec![bit >> 1]);
    }
    let mut up = (r ^ bit) | (bit << 1);
    if up >= n {
        up = r ^ bit;
    }
    let mut low = bit >> 1;
    let mut children = Vec::new();
    if low > 0 {
        children.push(r - low);
        while low > 0 && r + low >= n {
            low >>= 1;
        }
        if low > 0 {
            children.push(r + low);
        }
    }
    (Some(up), children)
}

/// NCCL's double binary tree over `n >= 2` ranks.
pub fn double_tree(n: u32) -> [Tree; 2] {
    let first = |map: &dyn Fn(u32) -> u32, unmap: &dyn Fn(u32) -> u32| {
        let mut t = Tree {
            parent: vec![None; n as usize],
            children: vec![Vec::new(); n as usize],
        };
        for r in 0..n {
            let (p, c) = btree(n, unmap(r));
            t.parent[r as usize] = p.map(map);
            t.children[r as usize] = c.into_iter().map(map).collect();
        }
        t
    };
    let second = if n % 2 == 1 {
        first(&|x| (x + 1) % n, &|r| (r + n - 1) % n)
    } else {
        first(&|x| n - 1 - x, &|r| n - 1 - r)
    };
    [first(&|x| x, &|r| r), second]
}

/// The ranks from the leaves up (deeper ones first), with their depths.
fn bottom_up(t: &Tree) -> Vec<(u32, u32)> {
    let depth = |mut r: u32| {
        let mut d = 0;
        while let Some(p) = t.parent[r as usize] {
            r = p;
            d += 1;
        }
        d
    };
    let mut order: Vec<(u32, u32)> = (0..t.parent.len() as u32).map(|r| (r, depth(r))).collect();
    order.sort_by_key(|&(_, d)| std::cmp::Reverse(d));
    order
}

pub(super) fn all_reduce(cut: &Cut, b: &mut Builder) {
    let n = cut.n();
    let trees = double_tree(n);
    for (c, ch) in cut.channels.iter().enumerate() {
        for (t, tree) in trees.iter().enumerate() {
            let lane = 2 * c as u32 + t as u32;
            let order = bottom_up(tree);
            // Steps: up from depth d at `deepest - d`, down from depth d
            // at `deepest + d`.
            let deepest = order[0].1;
            let (mut up, mut down) = (vec![0u32; n as usize], vec![0u32; n as usize]);
            for bytes in ch.chunks_of(t as u32) {
                for &(r, d) in &order {
                    let kids = &tree.children[r as usize];
                    let from: Vec<u32> = kids.iter().map(|&k| up[k as usize]).collect();
                    match tree.parent[r as usize] {
                        Some(p) => up[r as usize] = b.send(r, p, lane, deepest - d, bytes, &from),
                        // The root: the reduction is whole once every
                        // child's chunk came.
                        None => {
                            let deps = b.deps(&from);
                            for &k in kids {
                                down[k as usize] = b.send_after(r, k, lane, deepest, bytes, deps);
                            }
                        }
                    }
                }
                for &(r, d) in order.iter().rev() {
                    let kids = &tree.children[r as usize];
                    if tree.parent[r as usize].is_some() && !kids.is_empty() {
                        let deps = b.deps(&[down[r as usize]]);
                        for &k in kids {
                            down[k as usize] = b.send_after(r, k, lane, deepest + d, bytes, deps);
                        }
                    }
                }
            }
        }
    }
}
