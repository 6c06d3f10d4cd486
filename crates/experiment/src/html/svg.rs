//! Charts as inline SVG text: line charts (linear or log axes, numeric or
//! categorical x, optional error bars or bands) and grouped bar charts
//! (optional error bars), each a `<figure>` with its legend in HTML. Every
//! axis labels its ticks in one style ([`tick`]); [`Scale::auto`] picks a
//! log axis for values spanning more than a decade. Pure functions of their input: the
//! same data always gives the same bytes (fixed formatting, no clocks, no
//! hashing). Touches nothing outside this file.

use super::esc;

const W: f64 = 640.0;
const H: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 50.0;
/// The most markers (with a tooltip each) drawn on one line.
const MAX_MARKERS: usize = 80;

/// Colours of the lines and bars, in order (Tableau 10).
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// How an axis maps values to positions.
#[derive(Clone, Debug, PartialEq)]
pub enum Scale {
    Linear,
    /// Powers of ten; values <= 0 are left out.
    Log,
    /// Evenly spaced named positions; a point's x is its position's index.
    Categories(Vec<String>),
}

impl Scale {
    /// Log for values that are all positive and span more than a decade
    /// (a line at 3 beside one at 88 stays readable), linear otherwise
    /// (also for none, or any zero or negative one). Non-finite values
    /// are ignored.
    pub fn auto(values: impl IntoIterator<Item = f64>) -> Scale {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if lo > 0.0 && hi > 10.0 * lo {
            Scale::Log
        } else {
            Scale::Linear
        }
    }
}

/// One line: points in x order, and optionally an error bar (low, high)
/// per point. As a series of a bar chart, a point's x is its category's
/// index.
#[derive(Clone, Debug, Default)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub errors: Vec<(f64, f64)>,
}

/// A line chart.
pub struct Chart<'a> {
    /// The element id (what the browser check looks for).
    pub id: &'a str,
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x: Scale,
    pub y: Scale,
    pub lines: Vec<Line>,
    /// Draw each line's errors as a shaded band around it rather than as
    /// error bars (for lines of many points).
    pub band: bool,
    /// A note under the chart (what the error bars are, a sampling stride).
    pub note: String,
}

/// A grouped bar chart: one group per category, one bar per series (each
/// a [`Line`] whose points are (category index, value), with optional
/// error bars).
pub struct Bars<'a> {
    /// The element id (what the browser check looks for).
    pub id: &'a str,
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub categories: Vec<String>,
    /// Linear or log (`Scale::auto` of the values).
    pub y: Scale,
    pub series: Vec<Line>,
    pub note: String,
}

/// A number for a label: integers plainly, others with at most four
/// significant digits, large and tiny ones in exponent form.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".into();
    }
    if !(1e-3..1e7).contains(&a) {
        return format!("{v:.2e}");
    }
    if v.fract() == 0.0 {
        return format!("{v:.0}");
    }
    let digits = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{v:.digits$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// A tick label, the one style of every axis: plain numbers below a
/// thousand (`0.25`, `40`), then k, M, G and T (`2.5k`, `10M`), and
/// exponent form below a thousandth (`1e-4`).
pub fn tick(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() || a == 0.0 || (1e-3..1e3).contains(&a) {
        return num(v);
    }
    if a < 1e-3 {
        return format!("{v:e}");
    }
    let (div, unit) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|&(d, _)| a >= d)
        .unwrap_or((1e3, "k"));
    format!("{}{unit}", num(v / div))
}

/// Coordinates with one decimal.
fn c(v: f64) -> String {
    format!("{v:.1}")
}

/// Ticks at 1, 2 or 5 times a power of ten covering [lo, hi].
pub fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// A mapping from data to pixels along one axis.
struct Map {
    scale: Scale,
    lo: f64,
    hi: f64,
    a: f64,
    b: f64,
}

impl Map {
    /// The axis over `values` (after dropping what the scale cannot show),
    /// drawn from pixel `a` to `b`.
    fn new(scale: &Scale, values: &[f64], a: f64, b: f64, from_zero: bool) -> Map {
        let (lo, hi) = match scale {
            Scale::Categories(names) => (-0.5, names.len().max(1) as f64 - 0.5),
            Scale::Log => {
                let pos: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
                let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if pos.is_empty() {
                    (1.0, 10.0)
                } else {
                    // Decades f64 holds as normal numbers: past them the
                    // bounds would be 0 or infinite, and the ticks between
                    // them billions (a tampered flows.csv's 5e-324 or
                    // 1.7e308 asked for 137 GB).
                    let decade = |x: f64| x.clamp(-307.0, 307.0);
                    let (l, h) = (decade(lo.log10().floor()), decade(hi.log10().ceil()));
                    (10f64.powf(l), 10f64.powf(if h > l { h } else { l + 1.0 }))
                }
            }
            Scale::Linear => {
                let mut lo = values.iter().copied().fold(f64::INFINITY, f64::min);
                let mut hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if values.is_empty() {
                    (lo, hi) = (0.0, 1.0);
                }
                if from_zero && lo > 0.0 {
                    lo = 0.0;
                }
                if from_zero && hi < 0.0 {
                    hi = 0.0;
                }
                if hi - lo <= 1e-12 * hi.abs().max(1.0) {
                    let d = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
                    (lo - if from_zero && lo == 0.0 { 0.0 } else { d }, hi + d)
                } else {
                    let pad = (hi - lo) * 0.04;
                    (if from_zero && lo == 0.0 { lo } else { lo - pad }, hi + pad)
                }
            }
        };
        Map {
            scale: scale.clone(),
            lo,
            hi,
            a,
            b,
        }
    }

    fn at(&self, v: f64) -> f64 {
        let t = match self.scale {
            Scale::Log => (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10()),
            _ => (v - self.lo) / (self.hi - self.lo),
        };
        self.a + t * (self.b - self.a)
    }

    fn shows(&self, v: f64) -> bool {
        v.is_finite() && (self.scale != Scale::Log || v > 0.0)
    }

    /// (value, label) of the ticks.
    fn ticks(&self) -> Vec<(f64, String)> {
        match &self.scale {
            Scale::Categories(names) => names
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64, n.clone()))
                .collect(),
            Scale::Log => {
                let (l, h) = (
                    self.lo.log10().round() as i32,
                    self.hi.log10().round() as i32,
                );
                (l..=h)
                    .map(|e| (10f64.powi(e), tick(10f64.powi(e))))
                    .collect()
            }
            Scale::Linear => nice_ticks(self.lo, self.hi)
                .into_iter()
                .map(|v| (v, tick(v)))
                .collect(),
        }
    }
}

/// The frame, grid and axis labels of a plot.
fn axes(svg: &mut String, x: &Map, y: &Map, x_label: &str, y_label: &str) {
    let (x0, x1, y0, y1) = (LEFT, W - RIGHT, H - BOTTOM, TOP);
    for (v, label) in y.ticks() {
        let p = y.at(v);
        svg.push_str(&format!(
            "<line class=\"grid\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            c(x0), c(p), c(x1), c(p), c(x0 - 4.0), c(p + 4.0), esc(&label)
        ));
    }
    let ticks = x.ticks();
    // Category names wider than their band alternate between two rows.
    let band = (x1 - x0) / ticks.len().max(1) as f64;
    let stagger = matches!(x.scale, Scale::Categories(_))
        && ticks
            .iter()
            .any(|t| t.1.chars().count() as f64 * 6.2 > band);
    for (i, (v, label)) in ticks.into_iter().enumerate() {
        let p = x.at(v);
        let dy = if stagger && i % 2 == 1 { 28.0 } else { 16.0 };
        svg.push_str(&format!(
            "<line class=\"tick\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            c(p), c(y0), c(p), c(y0 + 4.0), c(p), c(y0 + dy), esc(&label)
        ));
    }
    svg.push_str(&format!(
        "<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
        c(x0),
        c(y1),
        c(x1 - x0),
        c(y0 - y1)
    ));
    svg.push_str(&format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        c((x0 + x1) / 2.0),
        c(H - 4.0),
        esc(x_label)
    ));
    svg.push_str(&format!(
        "<text x=\"14\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>",
        c((y0 + y1) / 2.0),
        c((y0 + y1) / 2.0),
        esc(y_label)
    ));
}

fn open(id: &str, title: &str) -> String {
    format!(
        "<figure class=\"chart\" id=\"{}\"><figcaption>{}</figcaption><svg class=\"plot\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">",
        esc(id),
        esc(title),
        esc(title)
    )
}

fn legend(names: &[&str]) -> String {
    if names.len() < 2 {
        return String::new();
    }
    let mut s = String::from("<ul class=\"legend\">");
    for (i, n) in names.iter().enumerate() {
        s.push_str(&format!(
            "<li><span class=\"swatch\" style=\"background:{}\"></span>{}</li>",
            colour(i),
            esc(n)
        ));
    }
    s.push_str("</ul>");
    s
}

fn close(svg: &mut String, names: &[&str], note: &str) {
    svg.push_str("</svg>");
    svg.push_str(&legend(names));
    if !note.is_empty() {
        svg.push_str(&format!("<p class=\"note\">{}</p>", esc(note)));
    }
    svg.push_str("</figure>\n");
}

/// A line chart as a `<figure>`.
pub fn line_chart(ch: &Chart) -> String {
    let xs: Vec<f64> = ch
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .collect();
    let mut ys: Vec<f64> = ch
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .collect();
    ys.extend(
        ch.lines
            .iter()
            .flat_map(|l| l.errors.iter().flat_map(|e| [e.0, e.1])),
    );
    let xs: Vec<f64> = xs.into_iter().filter(|v| v.is_finite()).collect();
    let ys: Vec<f64> = ys.into_iter().filter(|v| v.is_finite()).collect();
    let x = Map::new(&ch.x, &xs, LEFT, W - RIGHT, false);
    let y = Map::new(&ch.y, &ys, H - BOTTOM, TOP, true);
    let mut svg = open(ch.id, ch.title);
    axes(&mut svg, &x, &y, ch.x_label, ch.y_label);
    for (i, l) in ch.lines.iter().enumerate() {
        let col = colour(i);
        let pts: Vec<(f64, f64)> = l
            .points
            .iter()
            .copied()
            .filter(|&(a, b)| x.shows(a) && y.shows(b))
            .collect();
        if ch.band {
            let spread: Vec<(f64, f64, f64)> = l
                .points
                .iter()
                .zip(&l.errors)
                .map(|(&(a, _), &(lo, hi))| (a, lo, hi))
                .filter(|&(a, lo, hi)| x.shows(a) && y.shows(lo) && y.shows(hi))
                .collect();
            if !spread.is_empty() {
                let edge: Vec<String> = spread
                    .iter()
                    .map(|&(a, _, hi)| format!("{},{}", c(x.at(a)), c(y.at(hi))))
                    .chain(
                        spread
                            .iter()
                            .rev()
                            .map(|&(a, lo, _)| format!("{},{}", c(x.at(a)), c(y.at(lo)))),
                    )
                    .collect();
                svg.push_str(&format!(
                    "<polygon class=\"band\" fill=\"{col}\" fill-opacity=\"0.18\" stroke=\"none\" points=\"{}\"/>",
                    edge.join(" ")
                ));
            }
        }
        let path: Vec<String> = pts
            .iter()
            .map(|&(a, b)| format!("{},{}", c(x.at(a)), c(y.at(b))))
            .collect();
        svg.push_str(&format!(
            "<polyline class=\"series\" fill=\"none\" stroke=\"{col}\" stroke-width=\"1.5\" points=\"{}\"><title>{}</title></polyline>",
            path.join(" "),
            esc(&l.name)
        ));
        for (j, &(a, _)) in l.points.iter().enumerate() {
            let Some(&(lo, hi)) = l.errors.get(j) else {
                continue;
            };
            if !ch.band && x.shows(a) && y.shows(lo) && y.shows(hi) {
                svg.push_str(&error_bar(col, x.at(a), y.at(lo), y.at(hi)));
            }
        }
        if pts.len() <= MAX_MARKERS {
            for &(a, b) in &pts {
                let xl = match &ch.x {
                    Scale::Categories(n) => n.get(a as usize).cloned().unwrap_or_default(),
                    _ => num(a),
                };
                svg.push_str(&format!(
                    "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{col}\"><title>{}: {} = {}, {} = {}</title></circle>",
                    c(x.at(a)),
                    c(y.at(b)),
                    esc(&l.name),
                    esc(ch.x_label),
                    esc(&xl),
                    esc(ch.y_label),
                    num(b)
                ));
            }
        }
    }
    let names: Vec<&str> = ch.lines.iter().map(|l| l.name.as_str()).collect();
    close(&mut svg, &names, &ch.note);
    svg
}

/// An error bar at pixel column `px` from `lo` to `hi` (pixels).
fn error_bar(col: &str, px: f64, lo: f64, hi: f64) -> String {
    format!(
        "<path class=\"err\" stroke=\"{col}\" d=\"M{} {}V{}M{} {}H{}M{} {}H{}\"/>",
        c(px),
        c(lo),
        c(hi),
        c(px - 4.0),
        c(lo),
        c(px + 4.0),
        c(px - 4.0),
        c(hi),
        c(px + 4.0)
    )
}

/// A grouped bar chart as a `<figure>`. On a log axis a bar rises from
/// the axis' bottom, and values of 0 or less draw no bar.
pub fn bar_chart(ch: &Bars) -> String {
    let values: Vec<f64> = ch
        .series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.errors.iter().flat_map(|e| [e.0, e.1]))
        })
        .filter(|v| v.is_finite())
        .collect();
    let x = Map::new(
        &Scale::Categories(ch.categories.clone()),
        &[],
        LEFT,
        W - RIGHT,
        false,
    );
    let y = Map::new(&ch.y, &values, H - BOTTOM, TOP, true);
    let mut svg = open(ch.id, ch.title);
    axes(&mut svg, &x, &y, ch.x_label, ch.y_label);
    let band = (W - RIGHT - LEFT) / ch.categories.len().max(1) as f64;
    let bar = band * 0.8 / ch.series.len().max(1) as f64;
    for (k, s) in ch.series.iter().enumerate() {
        for (j, &(i, v)) in s.points.iter().enumerate() {
            if !y.shows(v) {
                continue;
            }
            let left = x.at(i) - band * 0.4 + k as f64 * bar;
            let (top, base) = match ch.y {
                Scale::Log => (y.at(v), H - BOTTOM),
                _ => (y.at(v.max(0.0)), y.at(v.min(0.0))),
            };
            let category = ch.categories.get(i as usize).map_or("", |s| s.as_str());
            svg.push_str(&format!(
                "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{} {}: {}</title></rect>",
                c(left),
                c(top),
                c(bar),
                c(base - top),
                colour(k),
                esc(&s.name),
                esc(category),
                num(v)
            ));
            if let Some(&(lo, hi)) = s.errors.get(j) {
                if y.shows(lo) && y.shows(hi) {
                    svg.push_str(&error_bar("#333", left + bar / 2.0, y.at(lo), y.at(hi)));
                }
            }
        }
    }
    let names: Vec<&str> = ch.series.iter().map(|s| s.name.as_str()).collect();
    close(&mut svg, &names, &ch.note);
    svg
}
