//! The HTML report's SVG charts: plain number formatting, round ticks,
//! the same bytes for the same data, and escaped names.

use experiment::html::svg::{line_chart, nice_ticks, num, Chart, Line, Scale};

#[test]
fn numbers_and_ticks_are_plain() {
    assert_eq!(num(0.0), "0");
    assert_eq!(num(12.0), "12");
    assert_eq!(num(1.23456), "1.235");
    assert_eq!(num(0.5), "0.5");
    assert_eq!(num(2.5e9), "2.50e9");
    assert_eq!(nice_ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
}

#[test]
fn a_chart_is_the_same_bytes_twice_and_escapes_names() {
    let ch = || Chart {
        id: "c",
        title: "t <1>",
        x_label: "x",
        y_label: "y",
        x: Scale::Log,
        y: Scale::Linear,
        lines: vec![Line {
            name: "a&b".into(),
            points: vec![(1.0, 2.0), (10.0, 3.0), (0.0, 1.0)],
            errors: vec![(1.0, 3.0), (2.0, 4.0), (0.0, 1.0)],
        }],
        note: String::new(),
    };
    let a = line_chart(&ch());
    assert_eq!(a, line_chart(&ch()));
    assert!(a.contains("a&amp;b") && a.contains("t &lt;1&gt;"), "{a}");
    assert!(!a.contains("NaN") && !a.contains("inf"), "{a}");
}

/// Values at the ends of f64's range (a tampered flows.csv) give a chart
/// of bounded size: the log axis used to span from 0 to infinity, with a
/// tick for every decade of i32 (137 GB).
#[test]
fn extreme_values_on_a_log_axis_give_a_small_chart() {
    let chart = Chart {
        id: "c",
        title: "t",
        x_label: "x",
        y_label: "y",
        x: Scale::Log,
        y: Scale::Log,
        lines: vec![Line {
            name: "a".into(),
            points: vec![(5e-324, 5e-324), (1.7e308, 1.7e308), (1.0, 2.0)],
            errors: vec![],
        }],
        note: String::new(),
    };
    let svg = line_chart(&chart);
    assert!(svg.len() < 1_000_000, "{} bytes", svg.len());
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
}
