//! The sweep report's shape, from a sweep written as `rdmalab sweep --out`
//! writes it: led by slowdown against flow size (a line and a band of the
//! seeds per variant), a categorical key (the load balancer) drawn as
//! grouped bars and a numeric one as lines, and metrics zero in every run
//! named instead of drawn.

use experiment::plan::Plan;
use std::path::Path;

const TEXT: &str = r#"
[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 4
[switch]
pfc = true
[[traffic]]
pattern = "permutation"
bytes = 200_000
[[traffic]]
pattern = "incast"
receiver = 0
fan_in = 6
bytes = 20_000
"#;

/// The `<figure>` of id `id` in `page` (panics when there is none).
fn figure<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<figure class=\"chart\" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no figure {id}"));
    let len = page[start..].find("</figure>").unwrap();
    &page[start..start + len]
}

#[test]
fn a_categorical_sweep_draws_bars_and_is_led_by_slowdown_against_size() {
    let dir = std::env::temp_dir().join(format!("rdmalab-report-pages-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = Path::new("t.toml");
    let vary = [
        (
            "switch.load_balancer".to_string(),
            vec!["ecmp".to_string(), "drill".to_string()],
        ),
        (
            "switch.buffer_mb".to_string(),
            vec!["1".to_string(), "4".to_string()],
        ),
    ];
    let plan = Plan::new(path, TEXT, &[1, 2], &[], &vary);
    plan.write_into(&dir).unwrap();
    experiment::sweep::run(&plan.text, path, &plan.points(), 2, Some(&dir)).unwrap();
    let page = experiment::html::render_dir(&dir).unwrap();

    // The first chart: slowdown against flow size, a line and a band per
    // variant (2 load balancers x 2 buffers), two bins (20 KB, 200 KB).
    let first = page.find("<figure").unwrap();
    assert_eq!(
        first,
        page.find("<figure class=\"chart\" id=\"sweep-slowdown-by-size\"")
            .unwrap()
    );
    let lead = figure(&page, "sweep-slowdown-by-size");
    assert_eq!(lead.matches("<polygon class=\"band\"").count(), 4, "{lead}");
    assert_eq!(lead.matches("<polyline").count(), 4, "{lead}");
    assert!(lead.contains("switch.load_balancer=drill, switch.buffer_mb=4"));

    // The load balancer, categorical: bars (2 values x 2 buffer variants),
    // error bars of the seeds, no line.
    let lb = figure(&page, "sweep-slowdown_mean-by-switch-load_balancer");
    assert_eq!(lb.matches("<rect class=\"bar\"").count(), 4, "{lb}");
    assert_eq!(lb.matches("class=\"err\"").count(), 4, "{lb}");
    assert!(!lb.contains("<polyline"), "{lb}");
    assert!(lb.contains(">ecmp</text>") && lb.contains(">drill</text>"));
    // The buffer, numeric: lines (one per load balancer), no bar.
    let buf = figure(&page, "sweep-slowdown_mean-by-switch-buffer_mb");
    assert_eq!(buf.matches("<polyline").count(), 2, "{buf}");
    assert!(!buf.contains("class=\"bar\""), "{buf}");

    // Lossless: no drop in any run, so no chart of drops, but a note.
    assert!(!page.contains("id=\"sweep-dropped_packets-by-"));
    let zero = page
        .find("id=\"zero-metrics\"")
        .expect("a note of zero metrics");
    assert!(page[zero..]
        .split("</p>")
        .next()
        .unwrap()
        .contains("dropped_packets"));

    // The table over seeds: one row per variant (4), two seeds each, each
    // metric with its range.
    let over = page.find("id=\"over-seeds\"").expect("a table over seeds");
    let over = page[over..].split("</table>").next().unwrap();
    assert_eq!(over.matches("</td><td>2</td>").count(), 4, "{over}");
    assert!(
        over.contains("switch.load_balancer=drill switch.buffer_mb=4"),
        "{over}"
    );
    assert!(over.contains(" ["), "{over}");
    std::fs::remove_dir_all(&dir).ok();
}
