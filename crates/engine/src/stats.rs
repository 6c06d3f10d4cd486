//! Statistics primitives: exact percentiles, fixed-bucket histograms, time
//! series sampled at an interval, and Jain's fairness index.

use crate::time::Time;

/// Exact percentile of a sample (nearest-rank on the sorted values).
/// `p` is in [0, 100]; returns None for an empty sample.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Summary of a sample: count, mean and the percentiles papers report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Summary {
    pub fn of(values: &[f64]) -> Summary {
        if values.is_empty() {
            return Summary::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let pct = |p| percentile(&v, p).unwrap_or(0.0);
        Summary {
            count: v.len(),
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: pct(50.0),
            p95: pct(95.0),
            p99: pct(99.0),
            p999: pct(99.9),
            max: v[v.len() - 1],
        }
    }
}

/// A histogram over fixed, caller-chosen bucket upper bounds; values above
/// the last bound land in an overflow bucket.
#[derive(Clone, Debug)]
pub struct Histogram {
    bounds: Vec<f64>,
    counts: Vec<u64>,
}

impl Histogram {
    pub fn new(bounds: Vec<f64>) -> Self {
        assert!(
            bounds.windows(2).all(|w| w[0] < w[1]),
            "bounds must increase"
        );
        let n = bounds.len() + 1;
        Histogram {
            bounds,
            counts: vec![0; n],
        }
    }

    pub fn add(&mut self, x: f64) {
        let i = self.bounds.partition_point(|&b| b < x);
        self.counts[i] += 1;
    }

    /// (upper bound, count) per bucket; the overflow bucket's bound is +inf.
    pub fn buckets(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.bounds
            .iter()
            .copied()
            .chain(std::iter::once(f64::INFINITY))
            .zip(self.counts.iter().copied())
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// Samples of a quantity at a fixed interval.
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    pub name: String,
    pub points: Vec<(Time, f64)>,
}

impl TimeSeries {
    pub fn new(name: impl Into<String>) -> Self {
        TimeSeries {
            name: name.into(),
            points: Vec::new(),
        }
    }

    pub fn push(&mut self, t: Time, v: f64) {
        debug_assert!(self.points.last().is_none_or(|&(l, _)| l <= t));
        self.points.push((t, v));
    }
}

/// Jain's fairness index of a set of allocations: 1 when all are equal,
/// 1/n when one takes everything.
pub fn jain_index(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (x.len() as f64 * s2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_exact_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), Some(50.0));
        assert_eq!(percentile(&v, 99.0), Some(99.0));
        assert_eq!(percentile(&v, 100.0), Some(100.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&[], 50.0), None);
        let s = Summary::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.count, s.mean, s.p50, s.max), (3, 2.0, 2.0, 3.0));
    }

    #[test]
    fn histogram_buckets() {
        let mut h = Histogram::new(vec![1.0, 10.0]);
        for x in [0.5, 1.0, 5.0, 10.0, 11.0, 100.0] {
            h.add(x);
        }
        let b: Vec<u64> = h.buckets().map(|(_, c)| c).collect();
        assert_eq!(b, vec![2, 2, 2]);
        assert_eq!(h.total(), 6);
    }

    #[test]
    fn jain() {
        assert!((jain_index(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
