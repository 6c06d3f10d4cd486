//! `docs/eunomia/memory.py`, the script behind docs/eunomia.md's §4 table
//! (NIC memory, Figs 9-10), run on a tiny input (20 KB connections, three
//! shares of reordered connections, one degree) so that it cannot rot:
//! the table comes out whole, and its numbers behave as the memory of the
//! two layers must.

use crate::scripts;

#[test]
fn the_memory_script_prints_the_table_and_eunomia_pays_only_for_reordering() {
    let text = scripts::run(
        "eunomia/memory.py",
        &["--shares", "0,50,100", "--degrees", "1", "--bytes", "20000"],
    );
    // The rows' cells: degree, reordered, OOO %, Eunomia and static
    // bitmap bytes, total bytes, peak bytes, packets not tracked.
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| l.starts_with("| 1 |"))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    let num = |row: &[String], i: usize| -> f64 { row[i].parse().unwrap() };
    let (none, half, all) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!((none[2].as_str(), num(none, 3)), ("0%", 0.0), "{text}");
    // No reordering: Eunomia holds nothing; the static bitmap 41 B for
    // each of the 20 connections (32 B of it bitmap) at its peak, and on
    // average less, as a connection holds one only from its first packet
    // until it completes.
    assert_eq!(
        [num(none, 4), num(none, 6), num(none, 8)],
        [0.0; 3],
        "{text}"
    );
    assert_eq!(num(none, 9), 820.0, "{text}");
    assert!(num(none, 5) > 0.0 && num(none, 5) < 640.0, "{text}");
    assert!(
        num(none, 7) > num(none, 5) && num(none, 7) < 820.0,
        "{text}"
    );
    // Eunomia's bitmap bytes grow with the reordered share and stay below
    // the static bitmap's; its peak total (48 B of metadata a connection)
    // passes the static one's when every connection is reordered.
    assert!(num(half, 3) > 0.0 && num(all, 3) > num(half, 3), "{text}");
    assert!(num(half, 4) > 0.0 && num(all, 4) > num(half, 4), "{text}");
    for row in [half, all] {
        assert!(num(row, 4) < num(row, 5), "{text}");
        assert_eq!(num(row, 10), 0.0, "{text}");
    }
    assert!(num(all, 8) > num(all, 9), "{text}");
}
