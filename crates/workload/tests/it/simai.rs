//! SimAI workload files (`workload::simai`): a pass's collectives in
//! order with their groups and the compute before each, and every
//! malformed file refused naming its line.

use workload::collective::Collective;
use workload::simai::{parse, Program};

const HEADER: &str = "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 2 pp: 1 \
                      vpp: 1 ga: 1 all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0";

fn program(layers: &[&str], ranks: u32) -> Result<Program, String> {
    let text = format!("{HEADER}\n{}\n{}\n", layers.len(), layers.join("\n"));
    let w = parse(&text, "w.txt").map_err(|e| e.to_string())?;
    w.program(ranks, 1, 0).map_err(|e| e.to_string())
}

/// The forward pass in layer order, then the backward from the last
/// layer (no input-gradient communication for the first); tensor-parallel
/// groups are consecutive ranks, data-parallel ones `tp` apart, expert
/// ones `ep` consecutive members of a data-parallel group; compute adds
/// up into the delay before the next collective; a 1-rank group's or an
/// empty one's communication moves nothing.
#[test]
fn a_pass_runs_the_collectives_in_order_in_their_groups() {
    let p = program(
        &[
            "emb -1 100 ALLREDUCE 4096 7 ALLGATHER 4096 10 ALLREDUCE 8192 1",
            "moe -1 200 ALLTOALL_EP 2048 20 REDUCESCATTER 4096 30 ALLGATHER_DP_EP 1024 1",
            "last -1 5 NONE 0 6 ALLGATHER 0 1 NONE 0 1",
        ],
        8,
    )
    .unwrap();
    let segs = &p.plan.segments;
    let got: Vec<(Collective, u32, u64, u64)> = segs
        .iter()
        .map(|s| (s.collective, s.ranks, s.bytes, s.delay_ns))
        .collect();
    use Collective::*;
    assert_eq!(
        got,
        [
            (AllReduce, 2, 4096, 100),
            (AllToAll, 2, 2048, 200),
            // Backward: last (6 + 1 of compute, its empty all-gather
            // left out), then moe's input and weight gradients, then emb's
            // weight gradient (its input gradient's is not sent).
            (ReduceScatter, 2, 4096, 5 + 6 + 1 + 20),
            (AllGather, 2, 1024, 30),
            (AllReduce, 4, 8192, 7 + 10),
        ]
    );
    assert_eq!(p.tail_ns, 0);
    // Who talks to whom in each segment: tp groups {0,1}, {2,3}, ...; dp
    // groups {0,2,4,6}, {1,3,5,7}; ep groups {0,2}, {4,6}, {1,3}, {5,7};
    // dp_ep groups {0,4}, {2,6}, {1,5}, {3,7}.
    let pairs = |k: usize| {
        let from = if k == 0 { 0 } else { segs[k - 1].end } as usize;
        let mut v: Vec<(u32, u32)> = p.plan.transfers[from..segs[k].end as usize]
            .iter()
            .map(|t| (t.src.min(t.dst), t.src.max(t.dst)))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(pairs(0), [(0, 1), (2, 3), (4, 5), (6, 7)]);
    assert_eq!(pairs(1), [(0, 2), (1, 3), (4, 6), (5, 7)]);
    assert_eq!(pairs(3), [(0, 4), (1, 5), (2, 6), (3, 7)]);
    let dp = pairs(4);
    assert!(
        dp.iter().all(|&(a, b)| (a + b) % 2 == 0) && dp.len() == 8,
        "{dp:?}"
    );
    // Every rank sends in every segment.
    for k in 0..segs.len() {
        let from = if k == 0 { 0 } else { segs[k - 1].end } as usize;
        let mut senders: Vec<u32> = p.plan.transfers[from..segs[k].end as usize]
            .iter()
            .map(|t| t.src)
            .collect();
        senders.sort();
        senders.dedup();
        assert_eq!(senders, (0..8).collect::<Vec<_>>(), "segment {k}");
    }
    // Compute after the last collective is the tail.
    let p = program(&["a -1 0 NONE 0 0 NONE 0 40 ALLREDUCE 800 1"], 8).unwrap();
    assert_eq!((p.plan.segments.len(), p.tail_ns), (1, 0));
    let p = program(&["a -1 3 ALLREDUCE 800 4 NONE 0 40 NONE 0 1"], 8).unwrap();
    assert_eq!((p.plan.segments[0].delay_ns, p.tail_ns), (3, 44));
}

/// Each malformed file is refused with its name and the line at fault.
#[test]
fn bad_files_are_refused_naming_the_line() {
    let good = "a -1 1 ALLREDUCE 800 1 NONE 0 1 NONE 0 1";
    let cases: [(&str, &str); 10] = [
        (
            "DLRM_THING x\n1\na",
            "w.txt:1: unknown parallelism policy \"DLRM_THING\"",
        ),
        (
            "DATA colour: 3\n1\na",
            "w.txt:1: unknown header key \"colour:\"",
        ),
        (
            "DATA pp: 2\n1\na",
            "w.txt:1: pp: other than 1 is not supported",
        ),
        (
            "DATA checkpoints: 1 3\n1\na",
            "w.txt:1: checkpoints: activation",
        ),
        (
            "DATA\nmany\na",
            "w.txt:2: \"many\": expected the number of layers",
        ),
        ("DATA\n2\nGOOD", "w.txt:3: 1 layers, but line 2 gives 2"),
        (
            "DATA\n1\nGOOD\nGOOD",
            "w.txt:4: more layers than the 1 line 2 gives",
        ),
        (
            "DATA\n1\na -1 1 ALLREDUCE 800",
            "w.txt:3: 5 fields; a layer has 12",
        ),
        (
            "DATA\n1\n\na -1 1 NONE 0 1 NONE 0 1 ALLREDUCEALLTOALL 64 1",
            "w.txt:4: unknown operator \"ALLREDUCEALLTOALL\" in the weight gradient",
        ),
        (
            "DATA\n1\na -1 x NONE 0 1 NONE 0 1 NONE 0 1",
            "w.txt:3: forward pass compute time \"x\"",
        ),
    ];
    for (text, want) in cases {
        let text = text.replace("GOOD", good);
        let got = parse(&text, "w.txt").map(|_| ()).unwrap_err().to_string();
        assert!(got.starts_with(want), "{text:?}: {got}");
    }
    // Against the job: its GPUs, its groups, its sizes.
    let w = |h: &str| parse(&format!("{h}\n1\n{good}\n"), "w.txt").unwrap();
    let err = |h: &str, n: u32| w(h).program(n, 1, 0).map(|_| ()).unwrap_err().to_string();
    assert!(err("DATA all_gpus: 8", 6).starts_with("w.txt:1: all_gpus: 8 GPUs, but the job has 6"));
    assert!(
        err("DATA model_parallel_NPU_group: 4", 6).starts_with("w.txt:1: 6 ranks do not divide")
    );
    let dp_only = parse(
        "DATA model_parallel_NPU_group: 8\n1\na -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 64 1",
        "w.txt",
    );
    let e = dp_only.unwrap().program(8, 1, 0).unwrap_err().to_string();
    assert!(e.starts_with("w.txt:3: no communication"), "{e}");
    let tiny = parse("DATA\n1\na -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 3 1\n", "w.txt").unwrap();
    let e = tiny.program(8, 1, 0).unwrap_err().to_string();
    assert!(
        e.starts_with("w.txt:3: weight gradient: bytes: 3 bytes cannot be cut"),
        "{e}"
    );
}
