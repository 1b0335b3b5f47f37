//! Process groups inferred from the matching (issue 57), for traces that
//! state none (PyTorch before its `Process Group Ranks` records): an
//! 8-rank TP 4 x DP 2 job on two nodes of four GPUs, written by this test
//! with its process groups stated, is imported as written and again with
//! every process-group record stripped. The axes, the transfer and the
//! wait are the same; what could not be inferred is said.

use std::path::PathBuf;

use overlap_trace::{import_paths, Imported};

const AR: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64";

/// Rank `r`'s trace: for k in 0..6, a GEMM, a TP all-reduce of its node's
/// group (ending at 1000k + 300 on node 0, + 600 on node 1) and a DP
/// all-reduce of ranks {r % 4, r % 4 + 4} (ending at 1000k + 800 + 80 x
/// (r % 4), each DP group apart). Each rank arrives at its own time, so
/// every rank waits a different while. `groups` writes the process groups.
fn trace(r: u64, groups: bool) -> String {
    let mut events = Vec::new();
    let tp: Vec<u64> = (0..4).map(|i| r / 4 * 4 + i).collect();
    let dp = [r % 4, r % 4 + 4];
    let pg = |ranks: &[u64], name: &str| {
        if groups {
            format!(r#", "Process Group Ranks": "{ranks:?}", "Process Group Name": "{name}""#)
        } else {
            String::new()
        }
    };
    for k in 0..6u64 {
        let base = 1000 * k;
        events.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{GEMM}", "pid": 0, "tid": 7, "ts": {base}, "dur": 150, "args": {{"device": 0, "stream": 7}}}}"#
        ));
        let tp_end = base + if r < 4 { 300 } else { 600 };
        let tp_start = tp_end - 40 - (r * 7 + k * 3) % 25;
        events.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{AR}", "pid": 0, "tid": 13, "ts": {tp_start}, "dur": {}, "args": {{"device": 0, "stream": 13, "In msg nelems": 4096{}}}}}"#,
            tp_end - tp_start,
            pg(&tp, if r < 4 { "1" } else { "2" })
        ));
        let dp_end = base + 800 + 80 * (r % 4);
        let dp_start = dp_end - 30 - (r * 11 + k * 5) % 40;
        events.push(format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "{AR}", "pid": 0, "tid": 21, "ts": {dp_start}, "dur": {}, "args": {{"device": 0, "stream": 21, "In msg nelems": 65536{}}}}}"#,
            dp_end - dp_start,
            pg(&dp, &format!("{}", 3 + r % 4))
        ));
    }
    format!(
        r#"{{"distributedInfo": {{"rank": {r}, "world_size": 8}}, "deviceProperties": [{{"id": 0, "name": "NVIDIA H100 80GB HBM3"}}, {{"id": 1}}, {{"id": 2}}, {{"id": 3}}],
"traceEvents": [
{}
]}}"#,
        events.join(",\n")
    )
}

fn import(name: &str, ranks: std::ops::Range<u64>, groups: bool) -> Imported {
    let dir: PathBuf = std::env::temp_dir().join(format!(
        "overlap-trace-inferred-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for r in ranks {
        std::fs::write(dir.join(format!("rank{r}.json")), trace(r, groups)).unwrap();
    }
    import_paths(&[dir]).unwrap()
}

#[test]
fn stripped_groups_are_inferred_to_the_same_axes_transfer_and_wait() {
    let stated = import("stated", 0..8, true);
    let stripped = import("stripped", 0..8, false);
    assert_eq!(stated.gpus.len(), 8);
    for (a, b) in stated.gpus.iter().zip(&stripped.gpus) {
        let rank = a.rank.unwrap();
        // TP 4 within a node of four (stride 1), DP across (stride 4).
        assert_eq!(
            a.axes.keys().collect::<Vec<_>>(),
            ["dp", "tp"],
            "rank {rank}, stated"
        );
        assert_eq!(
            b.axes.keys().collect::<Vec<_>>(),
            ["dp", "tp"],
            "rank {rank}, stripped: {:?}",
            stripped.messages
        );
        for axis in ["dp", "tp"] {
            let (x, y) = (&a.axes[axis], &b.axes[axis]);
            assert_eq!(x.comm_ms, y.comm_ms, "rank {rank} {axis}");
            assert_eq!(x.transfer, y.transfer, "rank {rank} {axis}");
        }
        assert_eq!(a.transfer, b.transfer, "rank {rank}");
        assert!(a.transfer.wait_ms.unwrap() > 0.0, "rank {rank} waits");
        assert_eq!(
            (a.collectives_matched, a.collectives_unmatched),
            (b.collectives_matched, b.collectives_unmatched)
        );
    }
    assert_eq!(stated.over_ranks.late_ranks, stripped.over_ranks.late_ranks);
    let said = stripped.messages.join(" | ");
    assert!(
        said.contains("groups inferred")
            && said.contains("stream 13 AllReduce: 2 groups of 4 ([0, 1, 2, 3], ...), read as TP")
            && said.contains("stream 21 AllReduce: 4 groups of 2 ([0, 4], ...), read as DP"),
        "{said}"
    );
    // The proposal sizes TP and DP from the inferred groups as from the stated.
    let p = |m: &Imported| m.proposed.as_ref().unwrap().scenario["parallel"].clone();
    assert_eq!(p(&stated), p(&stripped));
    assert_eq!(p(&stripped)["tp"], 4, "{}", p(&stripped));
}

#[test]
fn groups_are_not_inferred_from_part_of_the_world() {
    // Six of eight ranks: a group's size cannot be known.
    let m = import("partial", 0..6, false);
    assert!(m.gpus.iter().all(|g| g.axes.keys().all(|a| a == "unknown")));
    assert!(
        m.messages
            .iter()
            .any(|s| s.contains("6 of the world's 8 ranks were read: groups are inferred only when every rank's trace is read")),
        "{:?}",
        m.messages
    );
}
