//! Flow-size distributions given as an empirical CDF (the text format of
//! `data/workloads/*.cdf`), sampled by inverse transform with linear
//! interpolation between rows, exactly as HPCC's and ConWeave's
//! `traffic_gen.py` (`custom_rand.py`) do, so that our flows have the sizes
//! theirs have.

use std::path::Path;

use engine::Rng;

use crate::error::WorkloadError;

/// How far the last probability may be from 1 and still count as 1: the
/// files are decimal-shifted percentages, exact to far better than this.
const LAST_P_TOLERANCE: f64 = 1e-9;

/// An empirical flow-size distribution: rows `(size_bytes, P(size <= x))`,
/// non-decreasing in both columns, the last probability exactly 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    name: String,
    rows: Vec<(f64, f64)>,
}

impl Cdf {
    /// Parses the text format: `#` comment lines, blank lines, and rows
    /// `size_bytes cumulative_probability`. `origin` names the input in
    /// errors (a path or a builtin name).
    pub fn parse(text: &str, origin: &str) -> Result<Cdf, WorkloadError> {
        let mut rows: Vec<(f64, f64)> = Vec::new();
        let mut last_line = 0;
        let mut last_row_line = 0;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            last_line = line_no;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() != 2 {
                return Err(WorkloadError::parse(
                    origin,
                    line_no,
                    format!(
                        "expected 2 columns 'size_bytes cumulative_probability', found {}",
                        fields.len()
                    ),
                ));
            }
            let size = number(fields[0], "size", origin, line_no)?;
            let p = number(fields[1], "probability", origin, line_no)?;
            if size < 0.0 {
                return Err(WorkloadError::parse(
                    origin,
                    line_no,
                    format!("size {size} is negative"),
                ));
            }
            if !(0.0..=1.0 + LAST_P_TOLERANCE).contains(&p) {
                return Err(WorkloadError::parse(
                    origin,
                    line_no,
                    format!("probability {p} is outside [0, 1]"),
                ));
            }
            if let Some(&(prev_size, prev_p)) = rows.last() {
                if size < prev_size {
                    return Err(WorkloadError::parse(
                        origin,
                        line_no,
                        format!("size {size} is smaller than the previous row's {prev_size}"),
                    ));
                }
                if p < prev_p {
                    return Err(WorkloadError::parse(
                        origin,
                        line_no,
                        format!("probability {p} is smaller than the previous row's {prev_p}"),
                    ));
                }
            }
            // Clamp a tolerated 1 + epsilon so the column stays monotone
            // once the last row is pinned to exactly 1 below.
            rows.push((size, p.min(1.0)));
            last_row_line = line_no;
        }
        let Some(last) = rows.last_mut() else {
            return Err(WorkloadError::parse(
                origin,
                last_line.max(1),
                "no 'size_bytes cumulative_probability' rows",
            ));
        };
        if (last.1 - 1.0).abs() > LAST_P_TOLERANCE {
            return Err(WorkloadError::parse(
                origin,
                last_row_line,
                format!("the last probability is {}, must be 1", last.1),
            ));
        }
        // Exactly 1, so that a uniform draw in [0, 1) always finds a row.
        last.1 = 1.0;
        Ok(Cdf {
            name: origin.to_string(),
            rows,
        })
    }

    /// Reads and parses a CDF file; errors name the path.
    pub fn load(path: impl AsRef<Path>) -> Result<Cdf, WorkloadError> {
        let path = path.as_ref();
        let text = engine::input::read_text(path).map_err(|source| WorkloadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Cdf::parse(&text, &path.display().to_string())
    }

    /// The origin given to `parse` (path, or `builtin:NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The rows `(size_bytes, cumulative_probability)` as parsed.
    pub fn rows(&self) -> &[(f64, f64)] {
        &self.rows
    }

    /// The largest size the distribution can produce.
    pub fn max(&self) -> f64 {
        self.rows[self.rows.len() - 1].0
    }

    /// The size at cumulative probability `y` (clamped to [0, 1]): the first
    /// row with probability >= y, interpolated linearly from the row before
    /// (custom_rand.py `getValueFromPercentile`). Probability at or below the
    /// first row's is a point mass at the first size (e.g. enterprise.cdf,
    /// whose first row is `52 0.01`).
    pub fn quantile(&self, y: f64) -> f64 {
        let y = y.clamp(0.0, 1.0);
        let i = self.rows.partition_point(|&(_, p)| p < y);
        if i == 0 {
            return self.rows[0].0;
        }
        let i = i.min(self.rows.len() - 1);
        let (x0, y0) = self.rows[i - 1];
        let (x1, y1) = self.rows[i];
        // y0 < y <= y1 here, so the division is safe.
        x0 + (x1 - x0) / (y1 - y0) * (y - y0)
    }

    /// One flow size in bytes: inverse transform of a uniform draw, rounded
    /// to whole bytes; 0 becomes 1, as traffic_gen.py does (a flow must carry
    /// something). traffic_gen.py truncates with `int()`; we round, which
    /// does not bias the mean by half a byte.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let bytes = self.quantile(rng.uniform()).round() as u64;
        bytes.max(1)
    }

    /// The mean of the linearly interpolated distribution: each segment is
    /// uniform, so it contributes its midpoint times its probability
    /// (custom_rand.py `getAvg`), plus the point mass below the first row.
    pub fn mean(&self) -> f64 {
        let (x0, p0) = self.rows[0];
        let mut sum = x0 * p0;
        for w in self.rows.windows(2) {
            let ((a, pa), (b, pb)) = (w[0], w[1]);
            sum += (a + b) / 2.0 * (pb - pa);
        }
        sum
    }
}

fn number(field: &str, what: &str, origin: &str, line: usize) -> Result<f64, WorkloadError> {
    match field.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(WorkloadError::parse(
            origin,
            line,
            format!("{what} '{field}' is not a finite number"),
        )),
    }
}
