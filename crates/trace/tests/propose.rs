//! The scenario a trace implies (issue 57): the GPU, the world and each
//! axis's size from the process groups, over the closest preset, valid as
//! `simulate` reads it, with notes saying what the trace could not.

use std::path::{Path, PathBuf};

use overlap_core::ScenarioInput;
use overlap_trace::{figures_of, import_paths, read_trace, Proposed};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

fn valid(p: &Proposed) {
    let text = p.scenario.to_string();
    let resolved = ScenarioInput::from_json(&text).and_then(|s| s.resolve());
    assert!(resolved.is_ok(), "{resolved:?}\n{text}");
    assert!(
        !p.notes.iter().any(|n| n.contains("refuses")),
        "{:?}",
        p.notes
    );
}

#[test]
fn deepseeks_profile_proposes_its_ep_64_on_h800() {
    let m = import_paths(&[data("deepseek/train_excerpt.json")]).unwrap();
    let p = m.proposed.unwrap();
    let s = &p.scenario;
    assert_eq!(s["hardware"]["preset"], "dgx-h100");
    assert_eq!(s["hardware"]["nodes"], 8);
    assert_eq!(
        (
            &s["parallel"]["tp"],
            &s["parallel"]["pp"],
            &s["parallel"]["dp"],
            &s["parallel"]["ep"]
        ),
        (&1.into(), &1.into(), &64.into(), &64.into())
    );
    // DeepSeek's own model, from its preset; the notes say so.
    assert_eq!(s["workload"]["moe"]["experts"], 256);
    assert!(p.notes[0].contains("preset deepseek-v3"), "{:?}", p.notes);
    assert!(p
        .notes
        .iter()
        .any(|n| n.contains("NVIDIA H800 read as dgx-h100")));
    assert!(p.notes.iter().any(|n| n.contains("ep taken as dp (64)")));
    valid(&p);
}

/// One rank of a world of four in TP 2 x DP 2, on a node of four A100s,
/// its groups named as Megatron-LM names them.
fn rank_trace(rank: u64) -> String {
    let tp = if rank < 2 { "[0, 1]" } else { "[2, 3]" };
    let dp = if rank.is_multiple_of(2) {
        "[0, 2]"
    } else {
        "[1, 3]"
    };
    let kernel = |ts: u64, ranks: &str, desc: &str| {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)", "pid": 0, "tid": 13, "ts": {ts}, "dur": 10, "args": {{"device": 0, "stream": 13, "Process Group Ranks": "{ranks}", "Process Group Description": "{desc}"}}}}"#
        )
    };
    let gpus = r#"{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}"#;
    format!(
        r#"{{"distributedInfo": {{"rank": {rank}, "world_size": 4}}, "deviceProperties": [{gpus}, {gpus}, {gpus}, {gpus}],
"traceEvents": [{}, {}]}}"#,
        kernel(0, tp, "TENSOR_MODEL_PARALLEL_GROUP"),
        kernel(100, dp, "DATA_PARALLEL_GROUP")
    )
}

#[test]
fn group_sizes_give_the_layout() {
    let files: Vec<_> = (0..4)
        .map(|r| read_trace(rank_trace(r).as_bytes(), &format!("rank{r}")).unwrap())
        .collect();
    let p = figures_of(&files).proposed.unwrap();
    let s = &p.scenario;
    assert_eq!(s["hardware"]["preset"], "dgx-a100");
    assert_eq!(
        (&s["hardware"]["nodes"], &s["hardware"]["gpus_per_node"]),
        (&1.into(), &4.into())
    );
    assert_eq!(
        (&s["parallel"]["tp"], &s["parallel"]["dp"]),
        (&2.into(), &2.into())
    );
    assert!(s["parallel"].get("ep").is_none());
    assert!(
        p.notes.iter().any(|n| n.contains("for pp, cp: taken as 1")),
        "{:?}",
        p.notes
    );
    valid(&p);
}
