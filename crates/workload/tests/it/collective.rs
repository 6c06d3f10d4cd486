//! The collective plans: every algorithm's bytes per rank against its
//! formula (counted from the plan's transfers), its dependencies against
//! the algorithm (each waits for the receive the algorithm says, and the
//! critical path is the algorithm's step count), NCCL's double binary
//! tree, and the refusals by key.

use workload::collective::{plan, Algorithm, Collective, Plan, Spec, MAX_TRANSFERS};

fn spec(collective: Collective, algorithm: Algorithm, ranks: u32, bytes: u64) -> Spec {
    Spec {
        collective,
        algorithm,
        ranks,
        bytes,
        channels: 1,
        chunk_bytes: 0,
    }
}

/// Every (collective, algorithm) pair.
fn pairs() -> Vec<(Collective, Algorithm)> {
    Collective::ALL
        .iter()
        .flat_map(|&c| c.algorithms().iter().map(move |&a| (c, a)))
        .collect()
}

/// Length of the longest chain of dependencies (a transfer with none: 1).
fn critical_path(p: &Plan) -> u32 {
    let mut depth = vec![0u32; p.transfers.len()];
    for i in 0..p.transfers.len() {
        depth[i] = 1 + p
            .deps(i)
            .iter()
            .map(|&d| depth[d as usize])
            .max()
            .unwrap_or(0);
    }
    depth.into_iter().max().unwrap_or(0)
}

/// What rank `r` of `n` sends under each algorithm, for a buffer of `s`
/// bytes that every cut divides evenly.
fn formula(c: Collective, a: Algorithm, n: u64, r: u64, s: u64) -> u64 {
    match (c, a) {
        (Collective::AllReduce, Algorithm::Ring | Algorithm::Direct) => 2 * (n - 1) * s / n,
        (Collective::AllReduce, Algorithm::HalvingDoubling) => {
            let p = 1u64 << (63 - n.leading_zeros());
            let rem = n - p;
            let part = 2 * (p - 1) * s / p;
            match r {
                r if r < 2 * rem && r % 2 == 0 => s,
                r if r < 2 * rem => part + s,
                _ => part,
            }
        }
        (Collective::AllReduce, Algorithm::Tree) => {
            let trees = workload::collective::double_tree(n as u32);
            trees
                .iter()
                .map(|t| {
                    let links = t.children[r as usize].len() as u64
                        + u64::from(t.parent[r as usize].is_some());
                    links * s / 2
                })
                .sum()
        }
        (Collective::Broadcast, _) => {
            if r + 1 < n {
                s
            } else {
                0
            }
        }
        _ => (n - 1) * s / n,
    }
}

#[test]
fn bytes_per_rank_match_the_formulas() {
    for (c, a) in pairs() {
        for n in [2u32, 3, 5, 8, 12, 16] {
            for (channels, chunk) in [(1, 0), (2, 0), (2, 100_000), (3, 40_960)] {
                // Divisible by every cut: channels, n or p pieces, halves.
                let s = 9 * 5 * 7 * 11 * (1 << 14);
                let sp = Spec {
                    channels,
                    chunk_bytes: chunk,
                    ..spec(c, a, n, s)
                };
                let p = plan(&sp).unwrap();
                p.check().unwrap();
                for r in 0..n {
                    let want = formula(c, a, n as u64, r as u64, s);
                    assert_eq!(p.sent_by(r), want, "{sp:?}: rank {r}");
                }
                if chunk > 0 {
                    let most = p.transfers.iter().map(|t| t.bytes).max().unwrap();
                    assert!(most <= chunk, "{sp:?}: a message of {most} bytes");
                }
            }
        }
    }
}

/// Sizes no cut divides: no byte added or lost, ranks within a byte per
/// message of the formula (ring all-reduce: 2(n-1)/n of the buffer).
#[test]
fn uneven_sizes_lose_no_byte() {
    for (c, a) in pairs() {
        for n in [3u32, 7, 16] {
            let s = 1_000_003;
            let p = plan(&Spec {
                channels: 3,
                chunk_bytes: 777,
                ..spec(c, a, n, s)
            })
            .unwrap();
            let exact: f64 = (0..n)
                .map(|r| formula(c, a, n as u64, r as u64, s) as f64)
                .sum();
            let total = p.total_bytes() as f64;
            // The formula rounds down once per rank; the plan is exact.
            assert!(
                (total - exact).abs() <= 2.0 * n as f64 * 3.0,
                "{c:?} {a:?} {n}: {total} vs {exact}"
            );
            if (c, a) == (Collective::AllReduce, Algorithm::Ring) {
                assert_eq!(p.total_bytes(), 2 * (n as u64 - 1) * s);
                for r in 0..n {
                    let want = 2.0 * (n as f64 - 1.0) / n as f64 * s as f64;
                    let got = p.sent_by(r) as f64;
                    let messages = p.transfers.iter().filter(|t| t.src == r).count() as f64;
                    assert!((got - want).abs() <= messages, "rank {r}: {got} vs {want}");
                }
            }
        }
    }
}

/// The longest chain of waits is the algorithm's number of steps, with
/// or without chunks.
#[test]
fn critical_paths_are_the_step_counts() {
    for n in [2u32, 5, 8, 13, 16] {
        let log = 31 - n.leading_zeros();
        let fold = if n.is_power_of_two() { 0 } else { 2 };
        let depth = |c, a| {
            let t = workload::collective::double_tree(n);
            let d = |tr: &workload::collective::Tree| {
                (0..n)
                    .map(|mut r| {
                        let mut k = 0;
                        while let Some(p) = tr.parent[r as usize] {
                            r = p;
                            k += 1;
                        }
                        k
                    })
                    .max()
                    .unwrap()
            };
            match (c, a) {
                (Collective::AllReduce, Algorithm::Ring) => 2 * (n - 1),
                (Collective::AllReduce, Algorithm::Tree) => 2 * d(&t[0]).max(d(&t[1])),
                (Collective::AllReduce, Algorithm::HalvingDoubling) => 2 * log + fold,
                (Collective::AllReduce, Algorithm::Direct) => 2,
                (Collective::AllToAll, Algorithm::Direct) => 1,
                _ => n - 1,
            }
        };
        for (c, a) in pairs() {
            for chunk in [0, 100] {
                let p = plan(&Spec {
                    chunk_bytes: chunk,
                    ..spec(c, a, n, 64 * 1024)
                })
                .unwrap();
                assert_eq!(
                    critical_path(&p),
                    depth(c, a),
                    "{c:?} {a:?} n={n} chunk={chunk}"
                );
            }
        }
    }
}

/// Each algorithm's sends wait for what it says: the ring's for chunk j of
/// the step before from the left neighbour; halving-doubling's for its
/// partner of the step before (r ^ 2^k); the direct all-gather's for
/// every other rank's piece; pairwise's for rank r - s + 1.
#[test]
fn dependencies_follow_the_algorithm() {
    let n = 8;
    let p = plan(&Spec {
        chunk_bytes: 1000,
        ..spec(Collective::AllReduce, Algorithm::Ring, n, 64_000)
    })
    .unwrap();
    for (i, t) in p.transfers.iter().enumerate() {
        assert_eq!(t.dst, (t.src + 1) % n);
        let deps = p.deps(i);
        if t.step == 0 {
            assert!(deps.is_empty());
        } else {
            let d = p.transfers[deps[0] as usize];
            assert_eq!(deps.len(), 1);
            assert_eq!(
                (d.src, d.step, d.bytes),
                ((t.src + n - 1) % n, t.step - 1, t.bytes)
            );
        }
    }
    let p = plan(&spec(
        Collective::AllReduce,
        Algorithm::HalvingDoubling,
        n,
        64_000,
    ))
    .unwrap();
    for (i, t) in p.transfers.iter().enumerate() {
        let k = if t.step < 3 { t.step } else { 5 - t.step };
        assert_eq!(t.dst, t.src ^ (1 << k), "{t:?}");
        let bytes = if t.step < 3 {
            32_000 >> t.step
        } else {
            8_000 << (t.step - 3)
        };
        assert_eq!(t.bytes, bytes);
        if t.step > 0 {
            let d = p.transfers[p.deps(i)[0] as usize];
            assert_eq!((d.dst, d.step), (t.src, t.step - 1));
        }
    }
    let p = plan(&spec(Collective::AllReduce, Algorithm::Direct, n, 64_000)).unwrap();
    for (i, t) in p.transfers.iter().enumerate() {
        let mut from: Vec<u32> = p
            .deps(i)
            .iter()
            .map(|&d| p.transfers[d as usize].src)
            .collect();
        from.sort();
        let others: Vec<u32> = (0..n).filter(|&r| r != t.src).collect();
        assert_eq!(from, if t.step == 0 { vec![] } else { others });
    }
    let p = plan(&spec(Collective::AllToAll, Algorithm::Pairwise, n, 64_000)).unwrap();
    for (i, t) in p.transfers.iter().enumerate() {
        let s = t.step + 1;
        assert_eq!(t.dst, (t.src + s) % n);
        for &d in p.deps(i) {
            assert_eq!(p.transfers[d as usize].src, (t.src + n - (s - 1)) % n);
        }
    }
    // The tree: up to the parent after every child's chunk, down after
    // the parent's (the root: after its children's).
    let p = plan(&spec(Collective::AllReduce, Algorithm::Tree, n, 64_000)).unwrap();
    let trees = workload::collective::double_tree(n);
    for (i, t) in p.transfers.iter().enumerate() {
        let tree = &trees[t.lane as usize % 2];
        let from: Vec<u32> = p
            .deps(i)
            .iter()
            .map(|&d| p.transfers[d as usize].src)
            .collect();
        if tree.parent[t.src as usize] == Some(t.dst) {
            assert_eq!(from, tree.children[t.src as usize]);
        } else {
            assert!(tree.children[t.src as usize].contains(&t.dst));
            match tree.parent[t.src as usize] {
                Some(up) => assert_eq!(from, [up]),
                None => assert_eq!(from, tree.children[t.src as usize]),
            }
        }
    }
}

/// NCCL's trees for 8 ranks, and the double tree's shape for many sizes:
/// two spanning binary trees; with an even count the second the mirror
/// of the first, so that for a power of two every rank is a leaf in
/// exactly one of them.
#[test]
fn nccl_double_binary_tree() {
    let [t0, t1] = workload::collective::double_tree(8);
    assert_eq!(
        t0.parent,
        [
            None,
            Some(2),
            Some(4),
            Some(2),
            Some(0),
            Some(6),
            Some(4),
            Some(6)
        ]
    );
    assert_eq!(t0.children[4], [2, 6]);
    assert_eq!(t0.children[0], [4]);
    assert_eq!(t1.parent[7], None);
    assert_eq!(t1.children[7], [3]);
    for n in 2..70u32 {
        for (i, t) in workload::collective::double_tree(n).iter().enumerate() {
            let roots: Vec<u32> = (0..n).filter(|&r| t.parent[r as usize].is_none()).collect();
            let root = if i == 0 {
                0
            } else if n % 2 == 0 {
                n - 1
            } else {
                1
            };
            assert_eq!(roots, [root], "n={n}");
            for r in 0..n {
                assert!(t.children[r as usize].len() <= 2);
                for &k in &t.children[r as usize] {
                    assert_eq!(t.parent[k as usize], Some(r), "n={n} tree {i}");
                }
                // Every rank reaches the root.
                let (mut x, mut hops) = (r, 0);
                while let Some(p) = t.parent[x as usize] {
                    x = p;
                    hops += 1;
                    assert!(hops < n);
                }
            }
        }
        if n.is_power_of_two() {
            let [a, b] = workload::collective::double_tree(n);
            for r in 0..n as usize {
                let leaves =
                    u32::from(a.children[r].is_empty()) + u32::from(b.children[r].is_empty());
                assert_eq!(leaves, 1, "n={n} rank {r}");
            }
        }
    }
}

#[test]
fn refusals_name_the_key() {
    let key = |s: Spec| plan(&s).unwrap_err().key;
    let ok = spec(Collective::AllReduce, Algorithm::Ring, 8, 1 << 20);
    assert_eq!(
        key(Spec {
            algorithm: Algorithm::Pairwise,
            ..ok
        }),
        "algorithm"
    );
    assert_eq!(
        key(Spec {
            collective: Collective::AllGather,
            algorithm: Algorithm::Tree,
            ..ok
        }),
        "algorithm"
    );
    assert_eq!(key(Spec { channels: 0, ..ok }), "channels");
    assert_eq!(key(Spec { channels: 65, ..ok }), "channels");
    assert_eq!(key(Spec { ranks: 1, ..ok }), "ranks");
    assert_eq!(
        key(Spec {
            bytes: 15,
            channels: 2,
            ..ok
        }),
        "bytes"
    );
    let e = plan(&Spec {
        bytes: 15,
        channels: 2,
        ..ok
    })
    .unwrap_err();
    assert!(e.to_string().contains("give at least 16"), "{e}");
    assert_eq!(
        key(Spec {
            bytes: 17,
            channels: 2,
            chunk_bytes: 1,
            ..ok
        }),
        "chunk_bytes"
    );
    // A plan too large is refused before it is made.
    let t = std::time::Instant::now();
    let huge = Spec {
        ranks: 4096,
        bytes: 1 << 40,
        chunk_bytes: 4096,
        ..ok
    };
    let e = plan(&huge).unwrap_err();
    assert_eq!(e.key, "chunk_bytes");
    assert!(e.to_string().contains(&MAX_TRANSFERS.to_string()));
    assert!(t.elapsed().as_secs() < 2);
}
