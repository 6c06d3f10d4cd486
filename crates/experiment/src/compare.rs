//! `rdmalab compare flows.csv fct.txt`: rdmalab's per-flow records beside
//! the HPCC ns-3 simulator's (its fct.txt: `sip dip sport dport size_bytes
//! start_ns fct_ns standalone_fct_ns`, IPs `0x0b00XX01` with XX the node
//! id). Flows are matched by source, destination and size, then by start
//! time (within 1 us: ns-3 truncates the start to a nanosecond); the
//! table gives per size bucket ([`crate::report::SIZE_BUCKETS`]) the mean
//! and p99 slowdown of each (both clamped at 1, as ns-3's analysis and our
//! summary do) and their difference, the FCTs' correlation flow by flow,
//! then the matched flows whose slowdowns differ most. Node ids are taken as host ids (true of HPCC's
//! topology files, which number hosts first). Reads only the two texts
//! it is given; the CLI reads the files.

use crate::report::{size_bucket_label, SIZE_BUCKETS};
use engine::stats::percentile;
use std::collections::HashMap;
use std::fmt::Write;

/// One flow of either side.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowRec {
    /// rdmalab's flow id, or the ns-3 line number.
    pub id: u64,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start_ns: u64,
    /// None: did not finish.
    pub fct_ns: Option<u64>,
    pub slowdown: Option<f64>,
}

fn bad(file: &str, line: usize, what: impl std::fmt::Display) -> String {
    format!("{file}:{line}: {what}")
}

/// Parses rdmalab's flows.csv (`file` names it in errors).
pub fn parse_flows_csv(text: &str, file: &str) -> Result<Vec<FlowRec>, String> {
    let mut lines = text.lines().enumerate();
    let (_, head) = lines
        .next()
        .ok_or_else(|| bad(file, 1, "empty file: expected the flows.csv header"))?;
    let cols: Vec<&str> = head.trim().split(',').collect();
    let col = |name: &str| {
        cols.iter().position(|c| *c == name).ok_or_else(|| {
            bad(
                file,
                1,
                format!("no column {name:?}: not an rdmalab flows.csv"),
            )
        })
    };
    let want = [
        "flow_id",
        "src",
        "dst",
        "size_bytes",
        "start_ns",
        "fct_ns",
        "slowdown",
    ];
    let idx: Vec<usize> = want.iter().map(|n| col(n)).collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != cols.len() {
            return Err(bad(
                file,
                n,
                format!("{} fields, the header has {}", f.len(), cols.len()),
            ));
        }
        let int = |k: usize| -> Result<u64, String> {
            f[idx[k]].parse().map_err(|_| {
                bad(
                    file,
                    n,
                    format!("{}: {:?} is not a whole number", want[k], f[idx[k]]),
                )
            })
        };
        let (fct, slow) = (f[idx[5]], f[idx[6]]);
        let fct_ns = match fct {
            "" => None,
            _ => Some(int(5)?),
        };
        let slowdown = match slow {
            "" => None,
            s => Some(
                s.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad(file, n, format!("slowdown: {s:?} is not a number >= 0")))?,
            ),
        };
        let host = |k: usize| -> Result<u32, String> {
            u32::try_from(int(k)?).map_err(|_| bad(file, n, format!("{} is too large", want[k])))
        };
        out.push(FlowRec {
            id: int(0)?,
            src: host(1)?,
            dst: host(2)?,
            bytes: int(3)?,
            start_ns: int(4)?,
            fct_ns,
            slowdown,
        });
    }
    Ok(out)
}

/// Parses ns-3's fct.txt (`file` names it in errors). Slowdown is fct /
/// standalone fct.
pub fn parse_fct_txt(text: &str, file: &str) -> Result<Vec<FlowRec>, String> {
    const LAYOUT: &str = "sip dip sport dport size_bytes start_ns fct_ns standalone_fct_ns";
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        if f.len() != 8 {
            return Err(bad(
                file,
                n,
                format!("{} fields, expected 8 ({LAYOUT})", f.len()),
            ));
        }
        let ip = |k: usize, name: &str| -> Result<u32, String> {
            let v = u32::from_str_radix(f[k].trim_start_matches("0x"), 16)
                .map_err(|_| bad(file, n, format!("{name}: {:?} is not a hex IP", f[k])))?;
            if v >> 24 != 0x0b || v & 0xff != 0x01 {
                return Err(bad(
                    file,
                    n,
                    format!("{name}: {:?} is not an ns-3 host IP (0x0bXXXX01)", f[k]),
                ));
            }
            Ok((v >> 8) & 0xffff)
        };
        let int = |k: usize, name: &str| -> Result<u64, String> {
            f[k].parse()
                .map_err(|_| bad(file, n, format!("{name}: {:?} is not a whole number", f[k])))
        };
        let (fct, ideal) = (int(6, "fct_ns")?, int(7, "standalone_fct_ns")?);
        if ideal == 0 {
            return Err(bad(file, n, "standalone_fct_ns is 0"));
        }
        out.push(FlowRec {
            id: n as u64,
            src: ip(0, "sip")?,
            dst: ip(1, "dip")?,
            bytes: int(4, "size_bytes")?,
            start_ns: int(5, "start_ns")?,
            fct_ns: Some(fct),
            slowdown: Some(fct as f64 / ideal as f64),
        });
    }
    Ok(out)
}

/// Flows matched across the two sides, and those left over.
pub struct Matched {
    /// (ours, ns-3), in our flow order.
    pub pairs: Vec<(FlowRec, FlowRec)>,
    pub only_ours: usize,
    pub only_ns3: usize,
}

/// Start times further apart than this are different flows.
const START_TOLERANCE_NS: u64 = 1000;

/// Pairs flows with the same source, destination and size, in start order,
/// each with a start within [`START_TOLERANCE_NS`].
pub fn match_flows(ours: &[FlowRec], ns3: &[FlowRec]) -> Matched {
    type Key = (u32, u32, u64);
    let mut groups: HashMap<Key, (Vec<FlowRec>, Vec<FlowRec>)> = HashMap::new();
    for f in ours {
        groups
            .entry((f.src, f.dst, f.bytes))
            .or_default()
            .0
            .push(*f);
    }
    for f in ns3 {
        groups
            .entry((f.src, f.dst, f.bytes))
            .or_default()
            .1
            .push(*f);
    }
    let mut pairs = Vec::new();
    let (mut only_ours, mut only_ns3) = (0, 0);
    for (_, (mut a, mut b)) in groups {
        a.sort_by_key(|f| (f.start_ns, f.id));
        b.sort_by_key(|f| (f.start_ns, f.id));
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let (x, y) = (a[i].start_ns, b[j].start_ns);
            if x.abs_diff(y) <= START_TOLERANCE_NS {
                pairs.push((a[i], b[j]));
                i += 1;
                j += 1;
            } else if x < y {
                only_ours += 1;
                i += 1;
            } else {
                only_ns3 += 1;
                j += 1;
            }
        }
        only_ours += a.len() - i;
        only_ns3 += b.len() - j;
    }
    pairs.sort_by_key(|(a, _)| a.id);
    Matched {
        pairs,
        only_ours,
        only_ns3,
    }
}

/// Mean and p99 of slowdowns clamped at 1.
fn stats(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (mean, percentile(v, 99.0).unwrap_or(f64::NAN))
}

/// Pearson's correlation of the pairs (NaN when either side is constant).
pub fn pearson(v: &[(f64, f64)]) -> f64 {
    let n = v.len() as f64;
    let (ma, mb) = (
        v.iter().map(|p| p.0).sum::<f64>() / n,
        v.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let (mut cov, mut va, mut vb) = (0.0, 0.0, 0.0);
    for (a, b) in v {
        cov += (a - ma) * (b - mb);
        va += (a - ma) * (a - ma);
        vb += (b - mb) * (b - mb);
    }
    cov / (va * vb).sqrt()
}

fn pct(ours: f64, ns3: f64) -> String {
    format!("{:+.1}%", (ours / ns3 - 1.0) * 100.0)
}

/// The comparison as text: counts, the per-bucket table, the `top` flows
/// whose slowdowns differ most (by the ratio, either way).
pub fn render(ours: &[FlowRec], ns3: &[FlowRec], names: [&str; 2], top: usize) -> String {
    let m = match_flows(ours, ns3);
    // Both finished: ns-3 lists only finished flows.
    let done: Vec<(FlowRec, f64, f64)> = m
        .pairs
        .iter()
        .filter_map(|&(a, b)| Some((a, a.slowdown?.max(1.0), b.slowdown?.max(1.0))))
        .collect();
    let unfinished = m.pairs.len() - done.len();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "ours: {} ({} flows), ns-3: {} ({} flows)\nmatched {} (by src, dst, size, start within 1 us); \
         {} matched but unfinished in ours; {} only in ours, {} only in ns-3",
        names[0],
        ours.len(),
        names[1],
        ns3.len(),
        m.pairs.len(),
        unfinished,
        m.only_ours,
        m.only_ns3
    );
    let _ = writeln!(
        s,
        "\nslowdown (fct / ideal, at least 1) by flow size\n{:<16} {:>6} {:>10} {:>10} {:>8} {:>10} {:>10} {:>8}",
        "size", "flows", "mean ours", "mean ns-3", "diff", "p99 ours", "p99 ns-3", "diff"
    );
    let mut row = |label: String, keep: &dyn Fn(u64) -> bool| {
        let (mut a, mut b): (Vec<f64>, Vec<f64>) = done
            .iter()
            .filter(|(f, _, _)| keep(f.bytes))
            .map(|&(_, x, y)| (x, y))
            .unzip();
        if a.is_empty() {
            return;
        }
        let n = a.len();
        let ((ma, pa), (mb, pb)) = (stats(&mut a), stats(&mut b));
        let _ = writeln!(
            s,
            "{label:<16} {n:>6} {ma:>10.3} {mb:>10.3} {:>8} {pa:>10.3} {pb:>10.3} {:>8}",
            pct(ma, mb),
            pct(pa, pb)
        );
    };
    for w in SIZE_BUCKETS.windows(2) {
        row(size_bucket_label(w[0], Some(w[1])), &|b| {
            b >= w[0] && b < w[1]
        });
    }
    row("all".into(), &|_| true);
    // How alike flow by flow: FCTs' correlation and their median ratio.
    let fcts: Vec<(f64, f64)> = m
        .pairs
        .iter()
        .filter_map(|(a, b)| Some((a.fct_ns? as f64, b.fct_ns? as f64)))
        .collect();
    if fcts.len() >= 2 {
        let mut ratio: Vec<f64> = fcts.iter().map(|(a, b)| a / b.max(1.0)).collect();
        ratio.sort_by(f64::total_cmp);
        let _ = writeln!(
            s,
            "\nper flow: fct correlation {:.3} (Pearson, {} flows), median fct ours / ns-3 {:.3}",
            pearson(&fcts),
            fcts.len(),
            percentile(&ratio, 50.0).unwrap_or(f64::NAN)
        );
    }
    let mut by_diff: Vec<&(FlowRec, f64, f64)> = done.iter().collect();
    by_diff.sort_by(|x, y| {
        let d = |p: &(FlowRec, f64, f64)| (p.1 / p.2).ln().abs();
        d(y).total_cmp(&d(x)).then(x.0.id.cmp(&y.0.id))
    });
    if top > 0 && !by_diff.is_empty() {
        let _ = writeln!(
            s,
            "\nflows whose slowdowns differ most\n{:>8} {:>5} {:>5} {:>10} {:>13} {:>11} {:>11} {:>9} {:>9} {:>7}",
            "flow_id", "src", "dst", "bytes", "start_ns", "fct ours", "fct ns-3", "sd ours", "sd ns-3", "ratio"
        );
        for (f, a, b) in by_diff.into_iter().take(top) {
            let ns3_fct = m
                .pairs
                .iter()
                .find(|(x, _)| x.id == f.id)
                .and_then(|(_, y)| y.fct_ns)
                .unwrap_or(0);
            let _ = writeln!(
                s,
                "{:>8} {:>5} {:>5} {:>10} {:>13} {:>11} {:>11} {a:>9.3} {b:>9.3} {:>7.3}",
                f.id,
                f.src,
                f.dst,
                f.bytes,
                f.start_ns,
                f.fct_ns.unwrap_or(0),
                ns3_fct,
                a / b
            );
        }
    }
    s
}
