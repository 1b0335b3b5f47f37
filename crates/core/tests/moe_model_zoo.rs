//! Qwen3-235B-A22B as NVIDIA's Megatron-MoE-ModelZoo ran it on 256 H100
//! (yanring/Megatron-MoE-ModelZoo at e865051, best_practice/qwen3/readme.md:
//! the H100 table and its "Long Context" table), each row rebuilt from the
//! zoo's own flags: model_configs/benchmarking/Qwen3-235B-A22B.yaml
//! (distributed optimizer, grad-reduce and param-gather overlap, sequence
//! parallelism, embedding and loss counted in the pipeline split, ETP 1),
//! sbatch_benchmarking.sh:94-96 (bf16 runs add `--tp-comm-overlap`) and
//! :109-119 (`A2A_OVERLAP` adds Megatron's combined 1F1B). No constant is
//! fitted to these rows.
//!
//! Every row is a known gap, pinned in a narrow band so that a change that
//! moves one says so (docs/validation.md, "Megatron-MoE-ModelZoo"): the
//! model runs the zoo's MoE layers faster than measured, and its combined
//! 1F1B hides more than the zoo's 12%. The long-context rows ran with
//! forced load balancing, as the model routes, and there the error falls
//! as the sequence grows and attention takes more of the step: what the
//! model misses is in the MoE layer, not in attention.

use overlap_core::{simulate_report, Report, ScenarioInput};

/// One zoo row's layout and settings.
struct Row {
    seq: u32,
    tp: u32,
    cp: u32,
    ep: u32,
    pp: u32,
    vpp: u32,
    dp: u32,
    global_batch: u32,
    micro_batch: u32,
    dispatcher: &'static str,
    /// `A2A_OVERLAP=1`: combined 1F1B.
    ep_overlap: bool,
    /// `recompute` and `moe.recompute` as the row's recompute column reads.
    recompute: &'static str,
    modules: &'static str,
    /// `dp_sharding`: the distributed optimizer, or FSDP.
    fsdp: bool,
}

fn scenario(r: &Row) -> String {
    let (sharding, param_gather) = if r.fsdp {
        ("full", false)
    } else {
        ("optimizer", true)
    };
    let virtual_stages = if r.vpp > 1 {
        format!(r#","schedule":"interleaved","virtual_stages":{}"#, r.vpp)
    } else {
        String::new()
    };
    // 94 layers with the embedding and the loss counted as layers
    // (`--account-for-embedding-in-pipeline-split`, `...-loss-...`): on
    // 96 virtual stages the first holds the embedding alone and the last
    // the loss alone.
    let layout = if r.pp * r.vpp == 96 {
        let mut stages = vec![r#""E""#.to_string()];
        stages.extend((0..94).map(|_| r#""t""#.to_string()));
        stages.push(r#""L""#.to_string());
        format!(r#","pipeline_layout":[{}]"#, stages.join(","))
    } else {
        String::new()
    };
    let modules = if r.modules.is_empty() {
        String::new()
    } else {
        format!(r#","recompute":{}"#, r.modules)
    };
    format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":32}},
        "workload":{{"layers":94,"hidden":4096,"heads":64,"kv_heads":4,"head_dim":128,"ffn_hidden":12288,
          "mlp":"swiglu","tied_embeddings":false,"seq":{seq},"vocab":151936,"attention":"flash",
          "micro_batch":{mbs},"global_batch":{gbs},"recompute":"{recompute}","sequence_parallel":true,
          "moe":{{"experts":128,"top_k":8,"expert_ffn_hidden":1536,"dispatcher":"{dispatcher}"{modules}}}}},
        "parallel":{{"tp":{tp},"cp":{cp},"pp":{pp},"dp":{dp},"ep":{ep},"dp_sharding":"{sharding}"{virtual_stages}{layout}}},
        "overlap":{{"tp":true,"pp":true,"dp":true,"ep":{ep_overlap},"cp":{cp_overlap},"grad_bytes":4,
          "param_gather":{param_gather}}}}}"#,
        seq = r.seq,
        mbs = r.micro_batch,
        gbs = r.global_batch,
        recompute = r.recompute,
        dispatcher = r.dispatcher,
        tp = r.tp,
        cp = r.cp,
        pp = r.pp,
        dp = r.dp,
        ep = r.ep,
        ep_overlap = r.ep_overlap,
        cp_overlap = r.cp > 1,
    )
}

fn report(r: &Row) -> Report {
    let json = scenario(r);
    let s = ScenarioInput::from_json(&json)
        .unwrap()
        .resolve()
        .unwrap_or_else(|e| panic!("{e}\n{json}"));
    simulate_report(&s).unwrap().report
}

/// The cross-node layout of the zoo's H100 table: TP 2 x PP 8 x VPP 4 x EP
/// 32 x DP 16, DeepEP, micro-batch 1 of 4,096 tokens, 2,048 a step, the
/// norms and the experts' activation recomputed.
const CROSS_NODE: Row = Row {
    seq: 4096,
    tp: 2,
    cp: 1,
    ep: 32,
    pp: 8,
    vpp: 4,
    dp: 16,
    global_batch: 2048,
    micro_batch: 1,
    dispatcher: "deepep",
    ep_overlap: false,
    recompute: "none",
    modules: r#"["layernorm","moe_act"]"#,
    fsdp: false,
};

/// The zoo's H100 table: each row, its published step time in seconds,
/// and the simulated step over it, pinned (the known gap).
fn four_k_rows() -> Vec<(&'static str, Row, f64, f64)> {
    vec![
        ("TP 2 x EP 32, DeepEP", CROSS_NODE, 19.7, 0.774),
        (
            "TP 2 x EP 32, DeepEP, combined 1F1B",
            Row {
                ep_overlap: true,
                ..CROSS_NODE
            },
            17.6,
            0.664,
        ),
        (
            "TP 2 x EP 8 x DP 128, FSDP, micro-batch 4, full recomputation",
            Row {
                ep: 8,
                pp: 1,
                vpp: 1,
                dp: 128,
                micro_batch: 4,
                recompute: "full",
                modules: "",
                fsdp: true,
                ..CROSS_NODE
            },
            17.6,
            1.116,
        ),
        (
            "TP 2 x EP 8 x PP 32 x VPP 3, NCCL all-to-all",
            Row {
                ep: 8,
                pp: 32,
                vpp: 3,
                dp: 4,
                dispatcher: "alltoall",
                ..CROSS_NODE
            },
            24.2,
            0.521,
        ),
        (
            "TP 4 x EP 8 x DP 8, no recomputation",
            Row {
                tp: 4,
                ep: 8,
                dp: 8,
                modules: "",
                ..CROSS_NODE
            },
            29.0,
            0.373,
        ),
    ]
}

/// The preset `qwen3-235b` is the zoo's combined-1F1B row, field for field.
#[test]
fn the_preset_is_the_zoos_combined_1f1b_row() {
    let (_, row, _, _) = four_k_rows().swap_remove(1);
    let zoo = ScenarioInput::from_json(&scenario(&row))
        .unwrap()
        .resolve()
        .unwrap();
    let preset = overlap_core::presets::scenario("qwen3-235b").unwrap();
    assert_eq!(preset, zoo);
}

#[test]
fn the_zoos_h100_rows_run_and_fit_with_their_gaps_pinned() {
    for (name, row, published_s, pinned) in four_k_rows() {
        let r = report(&row);
        let ratio = r.step_time_ms / 1e3 / published_s;
        eprintln!(
            "{name}: simulated {:.2} s against {published_s} s: {ratio:.3}",
            r.step_time_ms / 1e3
        );
        assert!(
            (ratio - pinned).abs() <= 0.01,
            "{name}: {ratio:.3}, pinned at {pinned}"
        );
        // Each ran: it fits the H100's 80 GB.
        assert!(r.memory_gb.fits, "{name}: {:?}", r.memory_gb);
    }
}

/// The zoo's long-context rows: TP 4 x PP 8 x VPP 4 x EP 8 with CP growing
/// with the sequence, 32 nodes, 256 sequences a step, DeepEP without
/// combined 1F1B, the norms and the whole MoE layer recomputed, routing
/// forced to balance; published TFLOP/s per GPU (counted causal, as
/// `causal_tflops_per_gpu` is: the H100 table's 245 TFLOP/s at 19.7 s is
/// 4,827 TFLOP per GPU a step, the model's count of the same step 4,861).
fn long_context_rows() -> Vec<(Row, f64, f64)> {
    let row = |seq: u32, cp: u32| Row {
        seq,
        tp: 4,
        cp,
        ep: 8,
        pp: 8,
        vpp: 4,
        dp: 8 / cp,
        global_batch: 256,
        micro_batch: 1,
        dispatcher: "deepep",
        ep_overlap: false,
        recompute: "none",
        modules: r#"["layernorm","moe"]"#,
        fsdp: false,
    };
    vec![
        (row(16_384, 1), 295.0, 0.751),
        (row(32_768, 2), 335.0, 0.790),
        (row(65_536, 4), 368.0, 0.827),
        (row(131_072, 8), 389.0, 0.847),
    ]
}

#[test]
fn the_zoos_long_context_rows_miss_less_as_attention_grows() {
    let mut last = 0.0;
    for (row, published_tflops, pinned) in long_context_rows() {
        let r = report(&row);
        // Simulated step over the published one: the published TFLOP/s
        // over the simulated, the FLOPs counted alike.
        let ratio = published_tflops / r.causal_tflops_per_gpu;
        eprintln!(
            "seq {} cp {}: simulated {:.1} TFLOP/s against {published_tflops}: {ratio:.3}",
            row.seq, row.cp, r.causal_tflops_per_gpu
        );
        assert!(
            (ratio - pinned).abs() <= 0.01,
            "seq {}: {ratio:.3}, pinned at {pinned}",
            row.seq
        );
        assert!(ratio > last, "seq {}: {ratio:.3} after {last:.3}", row.seq);
        last = ratio;
        assert!(r.memory_gb.fits, "seq {}: {:?}", row.seq, r.memory_gb);
    }
}

/// The 128K row runs DP 1 x CP 8: Megatron-LM's distributed optimizer
/// shards over the DP x CP group (megatron/core/optimizer/__init__.py:1204
/// at d98e8a6), so the scenario is accepted, and its optimizer states are
/// an eighth of what one rank would hold alone.
#[test]
fn the_distributed_optimizer_shards_over_dp_times_cp() {
    let (row, _, _) = long_context_rows().pop().unwrap();
    assert_eq!((row.dp, row.cp), (1, 8));
    let sharded = report(&row).memory_gb;
    let json = scenario(&row)
        .replace(r#""dp_sharding":"optimizer""#, r#""dp_sharding":"none""#)
        .replace(r#""param_gather":true"#, r#""param_gather":false"#);
    let s = ScenarioInput::from_json(&json).unwrap().resolve().unwrap();
    let whole = simulate_report(&s).unwrap().report.memory_gb;
    assert!(sharded.fits && !whole.fits, "{sharded:?} {whole:?}");
    assert!(
        sharded.optimizer < whole.optimizer / 3.0,
        "{sharded:?} {whole:?}"
    );
}
