//! Collectives matched across ranks (issue 57): transfer and wait against a
//! hand computation, the late ranks, matching by process group (stated on
//! the kernel, or by name with `pg_config`) and by stream, name and size,
//! missing, duplicate and mismatched ranks, and rank lists held once.
//! Every trace here is written by the test, a few events each.

use std::path::PathBuf;

use overlap_trace::read::read_trace_in;
use overlap_trace::{import_paths, GpuFigures, Imported, RankLists};

/// A new folder for one test's traces.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "overlap-trace-matching-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A kernel event: (name, stream, start µs, duration µs, extra args JSON).
type K<'a> = (&'a str, i64, u64, u64, &'a str);

const AR: &str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64";

/// One rank's trace: `distributedInfo` (with `extra_dist` inside), its
/// kernels on device `rank`.
fn trace(rank: u64, world: u64, extra_dist: &str, kernels: &[K]) -> String {
    let events: Vec<String> = kernels
        .iter()
        .map(|(name, stream, ts, dur, args)| {
            let sep = if args.is_empty() { "" } else { ", " };
            format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "{name}", "pid": {rank}, "tid": {stream}, "ts": {ts}, "dur": {dur}, "args": {{"device": {rank}, "stream": {stream}{sep}{args}}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"distributedInfo": {{"rank": {rank}, "world_size": {world}{extra_dist}}}, "deviceProperties": [{{"id": 0, "name": "NVIDIA H100 80GB HBM3"}}],
"traceEvents": [
{}
]}}"#,
        events.join(",\n")
    )
}

/// Writes the traces into a fresh folder and imports it.
fn import(name: &str, traces: &[String]) -> Result<Imported, String> {
    let dir = fresh_dir(name);
    for (i, t) in traces.iter().enumerate() {
        std::fs::write(dir.join(format!("rank{i}.json")), t).unwrap();
    }
    import_paths(&[dir]).map_err(|e| e.to_string())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn gpu(m: &Imported, rank: u64) -> &GpuFigures {
    m.gpus.iter().find(|g| g.rank == Some(rank)).unwrap()
}

const G3: &str = r#""Process Group Ranks": "[0, 1, 2]", "Process Group Name": "0""#;

/// Three ranks, two all-reduces of group [0, 1, 2], and some compute.
///
/// | collective | rank 0 | rank 1 | rank 2 | transfer | last |
/// |---|---|---|---|---|---|
/// | 1 | 100..200 (100) | 150..200 (50) | 180..200 (20) | 20 | rank 2 |
/// | 2 | 300..310 (10) | 270..310 (40) | 285..310 (25) | 10 | rank 0 |
///
/// Waits: collective 1 80, 30, 0 (110 caused by rank 2); collective 2 0,
/// 30, 15 (45 caused by rank 0).
fn three_ranks() -> Vec<String> {
    vec![
        trace(
            0,
            3,
            "",
            &[
                (GEMM, 7, 0, 150, ""),
                (AR, 13, 100, 100, G3),
                (AR, 13, 300, 10, G3),
            ],
        ),
        trace(
            1,
            3,
            "",
            &[
                (GEMM, 7, 185, 10, ""),
                (AR, 13, 150, 50, G3),
                (AR, 13, 270, 40, G3),
            ],
        ),
        trace(2, 3, "", &[(AR, 13, 180, 20, G3), (AR, 13, 285, 25, G3)]),
    ]
}

#[test]
fn transfer_and_wait_are_the_hand_computation() {
    let m = import("hand", &three_ranks()).unwrap();
    // Per rank (ms; one step, the kernels' span): comm, transfer, wait,
    // transfer exposed.
    //   rank 0: comm 110; transfer 20 (180..200) + 10 (300..310); wait 80;
    //           compute 0..150 covers none of the transfer: exposed 30.
    //   rank 1: comm 90; transfer 20 + 10; wait 60; compute 185..195 under
    //           the first transfer: exposed 10 + 10.
    //   rank 2: comm 45; transfer 30; wait 15; no compute: exposed 30.
    for (rank, comm, transfer, wait, exposed) in [
        (0, 110.0, 30.0, 80.0, 30.0),
        (1, 90.0, 30.0, 60.0, 20.0),
        (2, 45.0, 30.0, 15.0, 30.0),
    ] {
        let g = gpu(&m, rank);
        let t = &g.transfer;
        assert!(close(g.comm_ms, comm / 1e3), "rank {rank}: {}", g.comm_ms);
        assert!(
            close(t.transfer_ms.unwrap(), transfer / 1e3),
            "rank {rank}: {t:?}"
        );
        assert!(close(t.wait_ms.unwrap(), wait / 1e3), "rank {rank}: {t:?}");
        assert!(
            close(t.transfer_exposed_ms.unwrap(), exposed / 1e3),
            "rank {rank}: {t:?}"
        );
        assert!(close(
            t.transfer_ms.unwrap() + t.wait_ms.unwrap(),
            g.comm_ms
        ));
        assert_eq!((g.collectives_matched, g.collectives_unmatched), (2, 0));
        // The group [0, 1, 2] of a world of 3 is the whole world: DP.
        let dp = &g.axes["dp"].transfer;
        assert_eq!(dp, t, "rank {rank}: one axis holds it all");
    }
    // Rank 2 arrived last once and cost the others 110 µs; rank 0 once,
    // 45 µs; rank 1 never.
    let late: Vec<_> = m
        .over_ranks
        .late_ranks
        .iter()
        .map(|l| (l.rank.unwrap(), l.last, l.collectives, l.idle_caused_ms))
        .collect();
    assert_eq!(late.len(), 3);
    assert_eq!((late[0].0, late[0].1, late[0].2), (2, 1, 2));
    assert!(close(late[0].3, 0.110));
    assert_eq!((late[1].0, late[1].1), (0, 1));
    assert!(close(late[1].3, 0.045));
    assert_eq!((late[2].0, late[2].1, late[2].3), (1, 0, 0.0));
    assert_eq!(m.over_ranks.collectives_matched, 2);
    // Every rank of the group read: nothing to say.
    assert!(m.messages.is_empty(), "{:?}", m.messages);
}

#[test]
fn groups_named_in_pg_config_and_streams_match_too() {
    // The kernels name their group only; pg_config gives its ranks and
    // its Megatron-LM description, which names the axis.
    let cfg = r#", "pg_config": [{"pg_name": "7", "pg_desc": "TENSOR_MODEL_PARALLEL_GROUP", "ranks": [0, 1]}]"#;
    let named = r#""Process Group Name": "7""#;
    let m = import(
        "pg-config",
        &[
            trace(0, 2, cfg, &[(AR, 13, 100, 30, named)]),
            trace(1, 2, cfg, &[(AR, 13, 110, 20, named)]),
        ],
    )
    .unwrap();
    for g in &m.gpus {
        assert!(
            close(g.transfer.transfer_ms.unwrap(), 0.020),
            "{:?}",
            g.transfer
        );
        assert!(g.axes.contains_key("tp"), "{:?}", g.axes.keys());
    }
    assert!(close(gpu(&m, 0).transfer.wait_ms.unwrap(), 0.010));

    // No group anywhere: the k-th kernel of a stream with the same name
    // and size. Two sizes interleave differently on the two ranks' streams
    // yet each is matched with its own.
    let size = |n: u64| format!(r#""In msg nelems": {n}"#);
    let (s1, s2) = (size(1000), size(2000));
    let m = import(
        "by-stream",
        &[
            trace(0, 2, "", &[(AR, 13, 0, 10, &s1), (AR, 13, 20, 30, &s2)]),
            trace(1, 2, "", &[(AR, 13, 0, 40, &s2), (AR, 13, 50, 4, &s1)]),
        ],
    )
    .unwrap();
    // Size 1000: 10 and 4, transfer 4; size 2000: 30 and 40, transfer 30.
    assert!(close(gpu(&m, 0).transfer.transfer_ms.unwrap(), 0.034));
    assert!(close(gpu(&m, 1).transfer.transfer_ms.unwrap(), 0.034));
    assert!(
        m.messages
            .iter()
            .any(|s| s.contains("by stream, kernel name and size")),
        "{:?}",
        m.messages
    );
}

#[test]
fn missing_single_duplicate_and_mismatched_ranks_are_said() {
    // Rank 2 of the group not read: matched over ranks 0 and 1, said so.
    let all = three_ranks();
    let m = import("missing", &all[..2]).unwrap();
    assert!(close(
        gpu(&m, 0).transfer.transfer_ms.unwrap(),
        (50.0 + 10.0) / 1e3
    ));
    assert!(
        m.messages
            .iter()
            .any(|s| s.contains("group [0, 1, 2] on 2 of 3")),
        "{:?}",
        m.messages
    );
    // One rank alone: no transfer, a sentence why.
    let m = import("single", &all[..1]).unwrap();
    assert_eq!(m.gpus[0].transfer.transfer_ms, None);
    assert!(
        m.messages[0].contains("one GPU read (rank 0 of 3)"),
        "{:?}",
        m.messages
    );
    // A collective found on one rank only counts whole as transfer.
    let m = import(
        "alone",
        &[
            trace(0, 2, "", &[(AR, 13, 0, 10, ""), (AR, 13, 20, 10, "")]),
            trace(1, 2, "", &[(AR, 13, 0, 4, "")]),
        ],
    )
    .unwrap();
    let g = gpu(&m, 0);
    assert_eq!((g.collectives_matched, g.collectives_unmatched), (1, 1));
    assert!(close(g.transfer.transfer_ms.unwrap(), 0.014));
    assert!(m
        .messages
        .iter()
        .any(|s| s.contains("1 of 2 collectives were found on one rank only")));
    // Two files of one rank: refused, naming both.
    let e = import("duplicate", &[all[0].clone(), all[0].clone()]).unwrap_err();
    assert!(
        e.contains("rank0.json and") && e.contains("both say rank 0") && !e.contains('\n'),
        "{e}"
    );
    // Files of two jobs: read, not matched, said so.
    let m = import(
        "worlds",
        &[all[0].clone(), trace(1, 8, "", &[(AR, 13, 0, 5, G3)])],
    )
    .unwrap();
    assert!(m.gpus.iter().all(|g| g.transfer.transfer_ms.is_none()));
    assert!(
        m.messages[0].contains("disagree on world_size (3, 8)"),
        "{:?}",
        m.messages
    );
    // A rank outside its world: its collectives left out, said so.
    let m = import(
        "outside",
        &[all[0].clone(), trace(5, 3, "", &[(AR, 13, 150, 50, G3)])],
    )
    .unwrap();
    assert!(
        m.messages
            .iter()
            .any(|s| s.contains("says rank 5 of a world of 3")),
        "{:?}",
        m.messages
    );
}

#[test]
fn a_repeated_huge_rank_list_is_held_once_over_the_files() {
    // Every kernel of both files states the same 100 000-rank group.
    let ranks: Vec<String> = (0..100_000).map(|r| r.to_string()).collect();
    let group = format!(r#""Process Group Ranks": "[{}]""#, ranks.join(", "));
    let kernels: Vec<K> = (0..20)
        .map(|i| (AR, 13, i * 10, 5, group.as_str()))
        .collect();
    let mut lists = RankLists::default();
    let a = read_trace_in(
        trace(0, 100_000, "", &kernels).as_bytes(),
        "a",
        1 << 30,
        1000,
        &mut lists,
    )
    .unwrap();
    let b = read_trace_in(
        trace(1, 100_000, "", &kernels).as_bytes(),
        "b",
        1 << 30,
        1000,
        &mut lists,
    )
    .unwrap();
    assert_eq!(lists.len(), 1);
    let (ga, gb) = (
        a.groups[0].ranks.as_ref().unwrap(),
        b.groups[0].ranks.as_ref().unwrap(),
    );
    assert!(std::sync::Arc::ptr_eq(ga, gb));
    assert_eq!(ga.len(), 100_000);
    let m = overlap_trace::figures_of(&[a, b]);
    assert_eq!(m.over_ranks.collectives_matched, 20);
    assert!(
        m.messages.iter().any(|s| s.contains("on 2 of 100000")),
        "{:?}",
        m.messages
    );
}

#[test]
fn many_devices_in_one_file_are_one_gpu_each() {
    // 2000 devices of three kernels each in one file (the figures find each
    // device's kernels in one sort, not a pass over the file per device).
    let mut events = Vec::new();
    for d in 0..2000 {
        for i in 0..3 {
            events.push(format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "{GEMM}", "pid": {d}, "tid": 7, "ts": {}, "dur": 5, "args": {{"device": {d}, "stream": 7}}}}"#,
                i * 10
            ));
        }
    }
    let text = format!(r#"{{"traceEvents": [{}]}}"#, events.join(","));
    let t = overlap_trace::read_trace(text.as_bytes(), "many").unwrap();
    let m = overlap_trace::figures_of(&[t]);
    assert_eq!(m.gpus.len(), 2000);
    assert!(m
        .gpus
        .iter()
        .all(|g| g.kernels == 3 && close(g.compute_ms, 0.015)));
}

#[test]
fn sends_in_groups_of_more_than_two_are_left_unmatched() {
    // A pipeline group of three: rank 1 receives from 0 and sends to 2; the
    // k-th send/recv of two ranks need not be one exchange.
    const SR: &str = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
    let pp = r#""Process Group Ranks": "[0, 1, 2]""#;
    let m = import(
        "peers",
        &[
            trace(0, 3, "", &[(SR, 17, 0, 10, pp)]),
            trace(1, 3, "", &[(SR, 17, 0, 30, pp), (SR, 17, 40, 10, pp)]),
            trace(2, 3, "", &[(SR, 17, 40, 5, pp)]),
        ],
    )
    .unwrap();
    for g in &m.gpus {
        assert_eq!(g.collectives_matched, 0);
        assert_eq!(g.transfer.transfer_ms, None);
    }
    assert!(
        m.messages[0].starts_with("4 sends and receives in groups of more than two ranks"),
        "{:?}",
        m.messages
    );
}

/// `pg_config` entries of `groups` distinct lists of `ranks` ranks each
/// (list `g` is `g..g + ranks`), as `distributedInfo`'s extra fields.
fn pg_config(groups: u64, ranks: u64) -> String {
    let entries: Vec<String> = (0..groups)
        .map(|g| {
            let list: Vec<String> = (g..g + ranks).map(|r| r.to_string()).collect();
            format!(
                r#"{{"pg_name": "{g}", "pg_desc": "undefined", "ranks": [{}]}}"#,
                list.join(",")
            )
        })
        .collect();
    format!(r#", "pg_config": [{}]"#, entries.join(","))
}

#[test]
fn distinct_rank_lists_are_held_within_their_bound_over_the_files() {
    // The import's bound, lowered to 500 000 ranks so that the traces
    // passing it stay small (the product's is MAX_HELD_RANKS).
    let mut lists = RankLists::with_max_ranks(500_000);
    assert!(lists.max_ranks() <= overlap_trace::MAX_HELD_RANKS);
    // Two files of the same 40 distinct 10 000-rank lists: 400 000 ranks
    // held, the second file adding none.
    let dist = pg_config(40, 10_000);
    let kernels: Vec<K> = vec![(AR, 13, 0, 5, r#""Process Group Name": "3""#)];
    for (rank, name) in [(0, "a"), (1, "b")] {
        let t = read_trace_in(
            trace(rank, 2, &dist, &kernels).as_bytes(),
            name,
            1 << 30,
            1000,
            &mut lists,
        )
        .unwrap();
        assert_eq!(t.pg_config.len(), 40);
        // The kernel's group, named alone, took its ranks from pg_config.
        assert_eq!(t.groups[0].ranks.as_ref().unwrap()[0], 3);
    }
    assert_eq!(lists.len(), 40);
    assert_eq!(lists.ranks_held(), 400_000);
    // A third file of 20 lists more (200 020 ranks) goes past the bound:
    // refused, naming it, and nothing past it is held.
    let more = pg_config(20, 10_000).replace(r#""ranks": ["#, r#""ranks": [7000000,"#);
    let e = read_trace_in(
        trace(2, 3, &more, &kernels).as_bytes(),
        "c",
        1 << 30,
        1000,
        &mut lists,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("rank lists") && e.contains("500000"), "{e}");
    assert!(lists.ranks_held() <= 500_000);
}

#[test]
fn groups_named_alone_find_their_ranks_among_many() {
    // 20 000 groups in pg_config, each named by one kernel: every kernel's
    // group takes its ranks by name (looked up, not scanned per group).
    let n = 20_000u64;
    let dist = pg_config(n, 2);
    let args: Vec<String> = (0..n)
        .map(|g| format!(r#""Process Group Name": "{g}""#))
        .collect();
    let kernels: Vec<K> = args
        .iter()
        .enumerate()
        .map(|(i, a)| (AR, 13, i as u64 * 10, 5, a.as_str()))
        .collect();
    let mut lists = RankLists::default();
    let t = read_trace_in(
        trace(0, n + 1, &dist, &kernels).as_bytes(),
        "a",
        1 << 30,
        100_000,
        &mut lists,
    )
    .unwrap();
    assert_eq!(t.groups.len(), n as usize);
    for (g, group) in t.groups.iter().enumerate() {
        let g = g as u64;
        assert_eq!(group.ranks.as_deref(), Some(&[g, g + 1][..]));
    }
    // Each distinct list once: two ranks per group.
    assert_eq!(lists.ranks_held(), 2 * n as usize);
}

#[test]
fn the_bars_carry_each_ranks_wait_before_its_transfer() {
    // Rank 0's two all-reduces: 100..200 µs (transfer 20: waits until 180)
    // and 300..310 (transfer 10: no wait). Its window starts at its first
    // kernel, 0 µs.
    let sources: Vec<_> = three_ranks()
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let b = t.into_bytes();
            (
                format!("rank{i}.json"),
                b.len() as u64,
                std::io::Cursor::new(b),
            )
        })
        .collect();
    let (_, bars) = overlap_trace::import_sources(sources).unwrap();
    let row = bars
        .rows
        .iter()
        .position(|r| r.rank == Some(0) && r.stream == 13)
        .unwrap() as u32;
    let ar: Vec<_> = bars.bars.iter().filter(|b| b.row == row).collect();
    assert_eq!(ar.len(), 2);
    assert!(
        close(ar[0].start_s, 100e-6) && close(ar[0].wait_until_s, 180e-6),
        "{:?}",
        ar[0]
    );
    assert!(close(ar[1].wait_until_s, ar[1].start_s), "{:?}", ar[1]);
    // Compute never waits.
    assert!(bars
        .bars
        .iter()
        .filter(|b| b.class == overlap_trace::bars::BarClass::Compute)
        .all(|b| b.wait_until_s == b.start_s));
}
