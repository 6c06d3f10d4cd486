//! Unit tests of `flow.rs` (moved from the file: the library has
//! `test = false`, so `cargo test` does not compile it twice).

use engine::Time;
use workload::flow::*;

fn flow(id: u32, start: Time, class: u16) -> FlowSpec {
    FlowSpec {
        id,
        src: 0,
        dst: 1,
        bytes: 1,
        start,
        class,
    }
}

#[test]
fn merge_sorts_by_start_then_part_and_renumbers() {
    let a = vec![flow(0, 5, 0), flow(1, 10, 0)];
    let b = vec![flow(0, 5, 1), flow(1, 7, 1)];
    let m = merge(vec![a, b]);
    let got: Vec<(u32, Time, u16)> = m.iter().map(|f| (f.id, f.start, f.class)).collect();
    assert_eq!(got, vec![(0, 5, 0), (1, 5, 1), (2, 7, 1), (3, 10, 0)]);
}
