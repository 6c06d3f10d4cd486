//! The HTML report's SVG charts: plain number formatting, round ticks in
//! one style, log axes where values span a decade, bars and bands,
//! the same bytes for the same data, and escaped names.

use experiment::html::svg::{
    bar_chart, line_chart, nice_ticks, num, tick, Bars, Chart, Line, Scale,
};

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
        band: false,
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
        band: false,
        note: String::new(),
    };
    let svg = line_chart(&chart);
    assert!(svg.len() < 1_000_000, "{} bytes", svg.len());
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
}

/// Every axis labels its ticks in one style: plain below a thousand, then
/// k, M, G, exponent form below a thousandth; log and linear axes alike.
#[test]
fn ticks_have_one_style() {
    assert_eq!(tick(0.0), "0");
    assert_eq!(tick(0.25), "0.25");
    assert_eq!(tick(40.0), "40");
    assert_eq!(tick(2500.0), "2.5k");
    assert_eq!(tick(1e6), "1M");
    assert_eq!(tick(1.5e9), "1.5G");
    assert_eq!(tick(1e-4), "1e-4");
    assert_eq!(tick(-2e4), "-20k");
    let chart = |y: Scale| {
        line_chart(&Chart {
            id: "c",
            title: "t",
            x_label: "x",
            y_label: "y",
            x: Scale::Log,
            y,
            lines: vec![Line {
                name: "a".into(),
                points: vec![(1e3, 1e4), (1e7, 5e6)],
                errors: vec![],
            }],
            band: false,
            note: String::new(),
        })
    };
    for svg in [chart(Scale::Log), chart(Scale::Linear)] {
        assert!(svg.contains(">10M</text>"), "{svg}");
        assert!(!svg.contains("e7<") && !svg.contains("10000000<"), "{svg}");
    }
}

/// A log axis where the values span more than a decade, all positive;
/// linear otherwise.
#[test]
fn log_axes_where_values_span_more_than_a_decade() {
    assert_eq!(Scale::auto([2.7, 4.2, 88.0]), Scale::Log);
    assert_eq!(Scale::auto([2.7, 4.2, 20.0]), Scale::Linear);
    assert_eq!(Scale::auto([0.0, 4.2, 88.0]), Scale::Linear);
    assert_eq!(Scale::auto([f64::NAN, 1.0, 100.0]), Scale::Log);
    assert_eq!(Scale::auto(std::iter::empty()), Scale::Linear);
}

/// Bars on a log axis rise from its bottom (a zero draws none), with the
/// seeds' range as error bars; a band replaces a line's error bars.
#[test]
fn log_bars_and_bands() {
    let svg = bar_chart(&Bars {
        id: "b",
        title: "t",
        x_label: "lb",
        y_label: "y",
        categories: vec!["ecmp".into(), "drill".into(), "none".into()],
        y: Scale::Log,
        series: vec![Line {
            name: "s".into(),
            points: vec![(0.0, 3.0), (1.0, 88.0), (2.0, 0.0)],
            errors: vec![(2.0, 4.0), (80.0, 95.0), (0.0, 0.0)],
        }],
        note: String::new(),
    });
    assert_eq!(svg.matches("class=\"bar\"").count(), 2, "{svg}");
    assert_eq!(svg.matches("class=\"err\"").count(), 2, "{svg}");
    // Both bars end at the axis' bottom (y + height = 250).
    for rect in svg.split("<rect class=\"bar\"").skip(1) {
        let attr = |name: &str| -> f64 {
            let at = rect.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            rect[at..at + rect[at..].find('"').unwrap()]
                .parse()
                .unwrap()
        };
        assert!((attr("y") + attr("height") - 250.0).abs() < 0.11, "{rect}");
    }
    let line = |band| {
        line_chart(&Chart {
            id: "c",
            title: "t",
            x_label: "x",
            y_label: "y",
            x: Scale::Log,
            y: Scale::Linear,
            lines: vec![Line {
                name: "a".into(),
                points: vec![(1e3, 2.0), (1e4, 3.0)],
                errors: vec![(1.5, 2.5), (2.0, 4.0)],
            }],
            band,
            note: String::new(),
        })
    };
    let (banded, barred) = (line(true), line(false));
    assert!(banded.contains("<polygon class=\"band\"") && !banded.contains("class=\"err\""));
    assert!(!barred.contains("<polygon") && barred.matches("class=\"err\"").count() == 2);
}
