//! `docs/eunomia/section5.py`, the script behind docs/eunomia.md's
//! "Section 5" tables, run on a tiny input (100 us of arrivals, one or two
//! loads per figure) so that it cannot rot: every figure runs through this
//! binary, every table comes out whole, and the rows agree where the
//! models make them agree whatever the traffic.

use crate::scripts;

/// The cells of the row of `table` whose first cells are `first`.
fn row<'a>(table: &'a str, first: &[&str]) -> Vec<&'a str> {
    table
        .lines()
        .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
        .find(|c| c.len() > first.len() && c[1..=first.len()] == *first)
        .unwrap_or_else(|| panic!("no row {first:?} in\n{table}"))
}

fn num(cell: &str) -> f64 {
    cell.trim_end_matches('%')
        .parse()
        .unwrap_or_else(|_| panic!("{cell:?} is not a number"))
}

#[test]
fn the_section5_script_prints_every_table_whole() {
    let text = scripts::run(
        "eunomia/section5.py",
        &[
            "--duration-us",
            "100",
            "--fig15-loads",
            "0.5",
            "--fig16-loads",
            "0.3",
            "--fig16-bg",
            "0.1",
            "--fig18-sample-us",
            "10",
            "--fig19-fractions",
            "0.01,0.1",
            "--fig20-loads",
            "0.8",
        ],
    );
    assert!(!text.contains("nan"), "{text}");
    // Figs 14, 15, 16(c), 16(d), 17 and 17's sizes, 18, 19, 20.
    let tables: Vec<&str> = text.split("### ").skip(1).collect();
    assert_eq!(tables.len(), 9, "{text}");
    let rows = |t: &str| t.lines().filter(|l| l.starts_with("| ")).count() - 1;
    // Fig 14: one load x 4 schemes; Fig 15: the 50% load's 4 x up to 4
    // sizes; Fig 16: one load (one background load) x 5 schemes; Fig 17:
    // 9 schemes, and their sizes; Fig 19: 2 fractions x 5 schemes.
    assert_eq!(rows(tables[0]), 4, "{}", tables[0]);
    assert!((4..=16).contains(&rows(tables[1])), "{}", tables[1]);
    assert_eq!(rows(tables[2]), 5, "{}", tables[2]);
    assert_eq!(rows(tables[3]), 5, "{}", tables[3]);
    assert_eq!(rows(tables[4]), 9, "{}", tables[4]);
    assert!((9..=36).contains(&rows(tables[5])), "{}", tables[5]);
    let titled = |title: &str| -> &str {
        tables
            .iter()
            .find(|t| t.starts_with(title))
            .unwrap_or_else(|| panic!("no table {title:?} in\n{text}"))
    };
    assert_eq!(rows(titled("Fig 19")), 10, "{text}");
    // Fig 18: 6 static bitmaps and Eunomia; Fig 20: one load x 4 schemes.
    let f18 = titled("Fig 18");
    let f20 = titled("Fig 20");
    assert_eq!(rows(f18), 7, "{f18}");
    assert_eq!(rows(f20), 4, "{f20}");

    // Fig 16: the five schemes see the same queries (the workload has its
    // own random streams), each of 50 flows grouped by destination and
    // start; IRN alone deflects nothing.
    for t in &tables[2..4] {
        let first = |scheme| row(t, &[if t == &tables[2] { "0.3" } else { "0.1" }, scheme]);
        let irn = first("IRN");
        assert!(num(irn[3]) > 0.0, "no query in\n{t}");
        for scheme in [
            "DIBS + IRN",
            "DIBS + Eunomia (go-back-N)",
            "DIBS + Eunomia (IRN)",
            "DIBS + Eunomia (go-back-N, 16 MB)",
        ] {
            assert_eq!(first(scheme)[3], irn[3], "{t}");
        }
        assert_eq!(num(irn[8]), 0.0, "{t}");
    }

    // Fig 17, lossless: with ECMP and FIFO nothing arrives out of order,
    // so Eunomia's layer is inert (the same FCTs, no bitmap); uncapped,
    // it never drops a packet, and with nothing lost go-back-N resends
    // nothing, SRPT's reordering included. SRPT reorders only when it
    // dequeues by packet: with ECMP, pFabric's rule delivers every packet
    // in order.
    let f17 = tables[4];
    let plain = row(f17, &["ECMP + FIFO, no ordering"]);
    let inert = row(f17, &["ECMP + FIFO + Eunomia"]);
    assert_eq!(plain[2..8], inert[2..8], "{f17}");
    assert_eq!(num(inert[9]), 0.0, "{f17}");
    for scheme in [
        "ECMP + FIFO + Eunomia",
        "ECMP + SRPT + Eunomia",
        "PO2 + FIFO + Eunomia",
        "PO2 + SRPT + Eunomia",
        "ECMP + SRPT (packet) + Eunomia",
        "PO2 + SRPT (packet) + Eunomia",
    ] {
        let r = row(f17, &[scheme]);
        assert_eq!(num(r[8]), 0.0, "{scheme} retransmitted\n{f17}");
        assert_eq!(num(r[13]), 0.0, "{scheme} dropped in the layer\n{f17}");
    }
    assert_eq!(
        num(row(f17, &["ECMP + SRPT, no ordering"])[14]),
        0.0,
        "{f17}"
    );
    for scheme in [
        "ECMP + SRPT (packet), no ordering",
        "ECMP + SRPT (packet) + Eunomia",
    ] {
        assert!(num(row(f17, &[scheme])[14]) > 0.0, "{scheme}\n{f17}");
    }

    // Fig 18: the same flows under every ordering (the workload has its
    // own random streams); a static bitmap is made for every connection
    // that receives, always of its size, so the largest is that size;
    // Eunomia's grows only to its 256-bit (32-byte) cap; bitmaps are part
    // of the total, and the busiest NIC holds at least the mean NIC's.
    let eunomia = row(f18, &["Eunomia (dynamic, cap 32 B)"]);
    for bytes in [2, 4, 8, 16, 32, 64] {
        let name = format!("static, {bytes} B");
        let r = row(f18, &[name.as_str()]);
        assert_eq!(r[2], eunomia[2], "{f18}");
        assert_eq!(num(r[14]), f64::from(bytes), "{f18}");
    }
    let ordering_rows = f18
        .lines()
        .filter(|l| l.starts_with("| static") || l.starts_with("| Eunomia"));
    assert_eq!(ordering_rows.clone().count(), 7, "{f18}");
    for r in ordering_rows {
        let c: Vec<&str> = r.split('|').map(str::trim).collect();
        assert!(0.0 < num(c[11]) && num(c[11]) <= num(c[12]), "{f18}");
        assert!(num(c[12]) <= num(c[13]), "{f18}");
    }
    assert!((1.0..=32.0).contains(&num(eunomia[14])), "{f18}");

    // Fig 20, all WRITEs: the same flows under every scheme; the sender
    // hold holds every multi-packet WRITE's last packet at the sender
    // (some wait) and none at the receiver; the receiver hold holds none
    // at the sender; without Eunomia's layer nothing is held.
    let ecmp = row(f20, &["0.8", "ECMP"]);
    let sender = row(f20, &["0.8", "DRILL + Eunomia, sender hold"]);
    let receiver = row(f20, &["0.8", "DRILL + Eunomia, receiver hold"]);
    for r in [&sender, &receiver, &row(f20, &["0.8", "ConWeave"])] {
        assert_eq!(r[3], ecmp[3], "{f20}");
    }
    assert!(num(sender[8]) > 0.0 && num(sender[9]) > 0.0, "{f20}");
    assert_eq!(num(sender[10]), 0.0, "{f20}");
    assert_eq!((num(receiver[8]), num(receiver[9])), (0.0, 0.0), "{f20}");
    for cell in &ecmp[8..=11] {
        assert_eq!(num(cell), 0.0, "{f20}");
    }
}
