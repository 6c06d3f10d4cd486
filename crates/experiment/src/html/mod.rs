//! The HTML report: one self-contained file (`report.html`) made from the
//! outputs already in a directory, so `rdmalab run --report`, `rdmalab
//! sweep --report` and `rdmalab report DIR` write the same bytes. A run's
//! directory (`summary.json`, `flows.csv`, `series.csv`) gets its plots
//! (`run_page.rs`; its collective jobs', from `collectives.csv`:
//! `jobs_section.rs`); a sweep's (`plan.json` and its runs) gets slowdown
//! against flow size and each headline metric against each varied key
//! (`sweep_page.rs`). Charts are inline SVG
//! (`svg.rs`); the page has no script and a content security policy that
//! forbids every fetch, so it opens offline and shows the same anywhere.
//! Reads the directory it is given; writes only `DIR/report.html`.

mod jobs_section;
mod run_page;
pub mod svg;
mod sweep_page;

use crate::files::write_atomic;
use std::path::{Path, PathBuf};

pub use crate::out_dir::REPORT_FILE;

/// Escapes text for HTML (and SVG) content and attributes.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The page around `body`.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
<meta name=\"generator\" content=\"rdmalab {}\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title)
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}
.charts{display:flex;flex-wrap:wrap;gap:12px}
figure.chart{margin:0;border:1px solid #ddd;padding:6px;width:640px}
figcaption{font-weight:600;margin-bottom:4px}
svg.plot{font-size:11px;display:block}
svg.plot text{fill:#333}
.grid{stroke:#eee}.tick{stroke:#888}.frame{fill:none;stroke:#888}
.err{stroke-width:1.2;fill:none}
ul.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 12px;font-size:12px}
.swatch{display:inline-block;width:10px;height:10px;margin-right:4px}
p.note{font-size:12px;color:#555;margin:4px 0}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
td,th{border:1px solid #ddd;padding:2px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}
details{margin:8px 0}
.wide{overflow-x:auto}
";

/// A table: a header row and rows of cells (already formatted).
fn table(id: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("<table id=\"{}\"><thead><tr>", esc(id));
    for h in head {
        s.push_str(&format!("<th>{}</th>", esc(h)));
    }
    s.push_str("</tr></thead><tbody>\n");
    for r in rows {
        s.push_str("<tr>");
        for cell in r {
            s.push_str(&format!("<td>{}</td>", esc(cell)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table>\n");
    s
}

/// Reads a file of the directory, naming it in the error.
fn read(path: &Path) -> Result<String, String> {
    engine::input::read_text(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))
}

/// The finished flows of a run's `dir/flows.csv`: (size in bytes,
/// slowdown), in file order (an unfinished flow's slowdown is empty).
fn finished_flows(dir: &Path) -> Result<Vec<(f64, f64)>, String> {
    let path = dir.join("flows.csv");
    let mut r = csv::Reader::from_path(&path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let head = r
        .headers()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .clone();
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("{}: no {name} column", path.display()))
    };
    let (size, slowdown) = (col("size_bytes")?, col("slowdown")?);
    let mut v = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| format!("{}: {e}", path.display()))?;
        let num = |i: usize| rec.get(i).and_then(|s| s.parse::<f64>().ok());
        if let (Some(b), Some(x)) = (num(size), num(slowdown)) {
            v.push((b, x));
        }
    }
    Ok(v)
}

/// The report of the outputs in `dir`, as text: a sweep's when `dir` holds
/// a `plan.json`, else a run's when it holds a `summary.json`.
pub fn render_dir(dir: &Path) -> Result<String, String> {
    if dir.join(crate::plan::PLAN_FILE).is_file() {
        sweep_page::render(dir)
    } else if dir.join("summary.json").is_file() {
        run_page::render(dir)
    } else if !dir.is_dir() {
        Err(format!("{}: no such directory", dir.display()))
    } else {
        Err(format!(
            "{}: neither a run's outputs (no summary.json) nor a sweep's (no plan.json)",
            dir.display()
        ))
    }
}

/// Writes `dir/report.html` from the outputs in `dir`; returns its path.
pub fn write_report(dir: &Path) -> Result<PathBuf, String> {
    let html = render_dir(dir)?;
    let path = dir.join(REPORT_FILE);
    write_atomic(&path, html.as_bytes()).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}
