//! `rdmalab compare`: our flows.csv matched with ns-3's fct.txt, the
//! per-bucket table and the correlation, and malformed files named with
//! their line.

use experiment::compare::{match_flows, parse_fct_txt, parse_flows_csv, pearson, render};

const CSV: &str = "flow_id,src,dst,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown,goodput_gbps,verb,class,ooo_packets,ood_max,reorder_retx
0,26,23,54831,2000001492,12817,12917,0.9923,34.2,write,t,0,0,0
1,44,89,2144,2000002695,25000,12663,2.0,0.7,write,t,0,0,0
2,1,2,5000000,0,,100000,,,write,t,0,0,0
3,5,6,700,9,100,50,2.0,1,write,t,0,0,0
";
const FCT: &str = "0b001a01 0b001701 10000 100 54831 2000001491 12817 12917
0b002c01 0b005901 10000 100 2144 2000002695 12620 12663
0b000101 0b000201 10000 100 5000000 0 900000 100000
0b000901 0b000a01 10000 100 5 0 10 10
";

#[test]
fn parses_and_matches() {
    let a = parse_flows_csv(CSV, "flows.csv").unwrap();
    let b = parse_fct_txt(FCT, "fct.txt").unwrap();
    assert_eq!(a.len(), 4);
    assert_eq!((b[0].src, b[0].dst, b[0].start_ns), (26, 23, 2000001491));
    assert_eq!(a[2].fct_ns, None);
    let m = match_flows(&a, &b);
    assert_eq!((m.pairs.len(), m.only_ours, m.only_ns3), (3, 1, 1));
    let t = render(&a, &b, ["flows.csv", "fct.txt"], 5);
    assert!(t.contains("matched 3"), "{t}");
    assert!(t.contains("1 matched but unfinished in ours"), "{t}");
    // 0-10KB: flow 1, ours 2.0, ns-3 12620 / 12663 clamped to 1.
    let row = t.lines().find(|l| l.starts_with("0-10KB ")).unwrap();
    let v: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        &v[1..],
        ["1", "2.000", "1.000", "+100.0%", "2.000", "1.000", "+100.0%"],
        "{row}"
    );
    let all = t.lines().find(|l| l.starts_with("all")).unwrap();
    assert!(all.contains(" 2 ") && all.contains("1.500"), "{all}");
    assert!(t.contains("\n10KB-100KB "), "{t}");
    assert!(t.contains("fct correlation "), "{t}");
    assert!((pearson(&[(1.0, 2.0), (2.0, 4.0), (3.0, 6.5)]) - 0.9986).abs() < 1e-3);
    assert!((pearson(&[(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)]) + 1.0).abs() < 1e-12);
    // The flow that differs most comes first.
    let first = t
        .lines()
        .skip_while(|l| !l.contains("flow_id"))
        .nth(1)
        .unwrap();
    assert!(first.trim_start().starts_with("1 "), "{first}");
}

#[test]
fn malformed_files_name_file_and_line() {
    let e = parse_fct_txt(
        "0b001a01 0b001701 10000 100 54831 2000001491 12817\n",
        "fct.txt",
    )
    .unwrap_err();
    assert!(e.starts_with("fct.txt:1: 7 fields, expected 8"), "{e}");
    let e = parse_fct_txt("\n0b001a01 zz 1 1 1 1 1 1\n", "fct.txt").unwrap_err();
    assert!(e.starts_with("fct.txt:2: dip: \"zz\""), "{e}");
    let e = parse_fct_txt("0b001a01 0b001701 1 1 1 1 x 1\n", "f").unwrap_err();
    assert!(
        e.starts_with("f:1: fct_ns: \"x\" is not a whole number"),
        "{e}"
    );
    let e = parse_fct_txt("0b001a01 0b001701 1 1 1 1 1 0\n", "f").unwrap_err();
    assert!(e.contains("standalone_fct_ns is 0"), "{e}");
    let e = parse_fct_txt("0a001a01 0b001701 1 1 1 1 1 1\n", "f").unwrap_err();
    assert!(e.contains("not an ns-3 host IP"), "{e}");
    let e = parse_flows_csv("a,b\n1,2\n", "flows.csv").unwrap_err();
    assert!(e.starts_with("flows.csv:1: no column \"flow_id\""), "{e}");
    let bad = CSV.replace("1,44,89,2144", "1,44,89,2x44");
    let e = parse_flows_csv(&bad, "flows.csv").unwrap_err();
    assert!(e.starts_with("flows.csv:3: size_bytes: \"2x44\""), "{e}");
    let bad = CSV.replace(",0.9923,", ",-1,");
    let e = parse_flows_csv(&bad, "flows.csv").unwrap_err();
    assert!(e.starts_with("flows.csv:2: slowdown"), "{e}");
    let short = CSV.replace(",write,t,0,0,0\n3", ",write\n3");
    let e = parse_flows_csv(&short, "flows.csv").unwrap_err();
    assert!(
        e.starts_with("flows.csv:4: 10 fields, the header has 14"),
        "{e}"
    );
    assert!(parse_flows_csv("", "x")
        .unwrap_err()
        .starts_with("x:1: empty"));
}
