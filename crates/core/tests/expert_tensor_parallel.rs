//! Expert tensor parallelism and Megatron-LM's MoE parallel folding
//! (model.md 4c, `parallel.etp`): which ranks form each expert group, the
//! bytes of the all-to-all and of the expert-TP gather and reduce-scatter
//! against a hand count, the experts' FLOPs and parameters per rank, the
//! expert-data-parallel reduction, CP ranks in the expert groups, FSDP's
//! expert shards, and the refusals naming their field.

use overlap_core::timeline::{Axis, OpKind};
use overlap_core::workload::cost::expert_folding::ExpertFolding;
use overlap_core::{simulate, simulate_report, Scenario, ScenarioInput};

fn scenario(json: &str) -> Scenario {
    ScenarioInput::from_json(json).unwrap().resolve().unwrap()
}

fn refusal(json: &str) -> String {
    ScenarioInput::from_json(json)
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string()
}

/// A small MoE on the tp x dp GPUs of one node, with sequence parallelism,
/// EP `ep` and expert TP `etp`, NCCL's all-to-all: 2048 tokens a
/// micro-batch, 8 experts of ffn 1024, top-2, hidden 2048, no overlap of
/// the expert axis.
fn small(tp: u32, dp: u32, ep: u32, etp: u32) -> String {
    let sharding = if dp > 1 { "optimizer" } else { "none" };
    format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":1,"gpus_per_node":{}}},
        "workload":{{"layers":2,"hidden":2048,"heads":16,"seq":2048,"global_batch":{},"vocab":32000,
          "sequence_parallel":true,"mlp":"swiglu","ffn_hidden":4096,"attention":"flash",
          "moe":{{"experts":8,"top_k":2,"expert_ffn_hidden":1024}}}},
        "parallel":{{"tp":{tp},"pp":1,"dp":{dp},"ep":{ep},"etp":{etp},"dp_sharding":"{sharding}"}},
        "overlap":{{"tp":false,"pp":true,"dp":true}}}}"#,
        tp * dp,
        2 * dp
    )
}

#[test]
fn the_folding_lays_expert_tp_fastest_then_ep_then_expert_dp() {
    // 16 ranks of a stage, EP 4 x ETP 2: blocks of 8 consecutive ranks;
    // rank 5's expert-TP pair is 4-5, its EP group every other rank of
    // 0-7 starting at its own parity, its expert-DP group 5 and 13.
    let f = ExpertFolding {
        ep: 4,
        etp: 2,
        stage_ranks: 16,
    };
    assert_eq!(f.etp_group(5), vec![4, 5]);
    assert_eq!(f.ep_group(5), vec![1, 3, 5, 7]);
    assert_eq!(f.tp_ep_group(5), (0..8).collect::<Vec<_>>());
    assert_eq!(f.edp(), 2);
    assert_eq!(f.edp_group(5), vec![5, 13]);
    // Qwen3-235B's TP 4 x EP 8 x DP 8 (32 ranks a stage), ETP 1: EP groups
    // of 8 consecutive ranks (one node), expert DP 4 across the nodes.
    let q = ExpertFolding {
        ep: 8,
        etp: 1,
        stage_ranks: 32,
    };
    assert_eq!(q.ep_group(9), (8..16).collect::<Vec<_>>());
    assert_eq!(q.edp(), 4);
    assert_eq!(q.edp_group(3), vec![3, 11, 19, 27]);
    assert_eq!(q.edp_per_node(8), 1);
    // TP 2 x EP 32 x DP 16: one EP group per stage, no expert DP.
    let q = ExpertFolding {
        ep: 32,
        etp: 1,
        stage_ranks: 32,
    };
    assert_eq!(q.edp(), 1);
    assert_eq!(q.edp_group(7), vec![7]);
}

#[test]
fn expert_tp_gathers_the_dispatched_copies_and_scatters_the_outputs() {
    // TP 4 x DP 2 on 8 GPUs, EP 2 x ETP 2. Each rank routes its
    // sequence-parallel shard, 2048 / 4 = 512 tokens, k = 2 copies each:
    // 1024 copies of 2048 bf16 values, 4 MiB, half to its one EP peer (2
    // MiB, NVLink). Its expert-TP pair gathers both ranks' received copies
    // (8 MiB whole) and reduce-scatters the partial outputs: a ring of 2
    // moves half the whole buffer from each rank, 4 MiB.
    let s = scenario(&small(4, 2, 2, 2));
    let sim = simulate(&s);
    let gpu = &sim.timeline.gpus[0];
    let ep = &gpu.comm[Axis::Ep.index()];
    let pairs: Vec<f64> = ep
        .iter()
        .filter(|iv| matches!(iv.op, OpKind::Dispatch | OpKind::Combine))
        .map(|iv| iv.bytes)
        .collect();
    assert!(!pairs.is_empty());
    assert!(pairs.iter().all(|&b| b == 2_097_152.0), "{pairs:?}");
    let gathers: Vec<f64> = ep
        .iter()
        .filter(|iv| matches!(iv.op, OpKind::AllGather | OpKind::ReduceScatter))
        .map(|iv| iv.bytes)
        .collect();
    // Per MoE layer and micro-batch: a gather and a reduce-scatter forward,
    // their mirrors backward; 2 layers, 2 micro-batches.
    assert_eq!(gathers.len(), 4 * 2 * 2, "{gathers:?}");
    assert!(gathers.iter().all(|&b| b == 4_194_304.0), "{gathers:?}");
    // ETP 1: no gather, the same all-to-all.
    let plain = simulate(&scenario(&small(4, 2, 2, 1)));
    let ep1 = &plain.timeline.gpus[0].comm[Axis::Ep.index()];
    assert!(ep1
        .iter()
        .all(|iv| matches!(iv.op, OpKind::Dispatch | OpKind::Combine)));
    assert!(ep1.iter().all(|iv| iv.bytes == 2_097_152.0));
}

#[test]
fn expert_tp_splits_each_experts_gemms_and_parameters() {
    // A rank's experts run on etp times the copies, each ffn / etp wide:
    // 6 x copies x h x ffn, with 1024 received copies a rank:
    // 6 x 1024 x 2048 x 1024 FLOPs forward, whatever etp.
    let flops = |etp| {
        let sim = simulate(&scenario(&small(4, 2, 2, etp)));
        sim.timeline.gpus[0]
            .compute
            .iter()
            .find(|c| c.op == OpKind::Experts)
            .map(|c| c.flops)
            .unwrap()
    };
    let hand = 6.0 * 1024.0 * 2048.0 * 1024.0;
    assert_eq!(flops(1), hand);
    assert_eq!(flops(2), hand);
    // Weights: 4 experts of 3 x 2048 x 1024 per rank and layer at EP 2,
    // half of each at ETP 2; bf16, 2 layers.
    let weights = |etp| {
        simulate_report(&scenario(&small(4, 2, 2, etp)))
            .unwrap()
            .report
            .memory_gb
            .weights
    };
    let gb = (1u64 << 30) as f64;
    let halved = (weights(1) - weights(2)) * gb;
    let hand = 2.0 * 2.0 * 4.0 * 3.0 * 2048.0 * 1024.0 / 2.0;
    assert!((halved - hand).abs() < 1.0, "{halved} against {hand}");
}

#[test]
fn expert_gradients_reduce_over_tp_dp_over_ep_etp_ranks() {
    // TP 4 x DP 1: no dense replica; EP 2 x ETP 1 leaves expert DP 2,
    // EP 2 x ETP 2 expert DP 1 (each shard on one rank).
    let dp_comm = |ep, etp| {
        simulate_report(&scenario(&small(4, 1, ep, etp)))
            .unwrap()
            .report
            .axes[Axis::Dp]
            .comm_ms
    };
    assert!(dp_comm(2, 1) > 0.0);
    assert_eq!(dp_comm(2, 2), 0.0);
}

#[test]
fn impossible_expert_tp_is_refused_naming_the_field() {
    // ep x etp must divide tp x dp (Megatron's folding).
    let e = refusal(&small(4, 2, 8, 2));
    assert!(
        e.contains("parallel.ep") && e.contains("etp 2") && e.contains("valid"),
        "{e}"
    );
    // etp must divide tp (its group is laid out inside one).
    let e = refusal(&small(2, 4, 2, 4));
    assert!(
        e.contains("parallel.etp") && e.contains("valid are 1, 2"),
        "{e}"
    );
    // etp must divide the experts' ffn.
    let e = refusal(
        &small(4, 2, 2, 4).replace(r#""expert_ffn_hidden":1024"#, r#""expert_ffn_hidden":1022"#),
    );
    assert!(
        e.contains("parallel.etp") && e.contains("expert_ffn_hidden"),
        "{e}"
    );
    // etp without experts, and without EP.
    let dense = small(4, 2, 1, 2).replace(
        r#""moe":{"experts":8,"top_k":2,"expert_ffn_hidden":1024}"#,
        r#""kv_heads":16"#,
    );
    let e = refusal(&dense);
    assert!(
        e.contains("parallel.etp") && e.contains("without experts"),
        "{e}"
    );
    let e = refusal(&small(4, 2, 1, 2));
    assert!(e.contains("parallel.etp") && e.contains("ep 1"), "{e}");
}

#[test]
fn cp_ranks_join_the_expert_groups_and_route_their_own_tokens() {
    // TP 2 x CP 2 x DP 4 on two nodes of 8, EP 8: a stage's 16 ranks fold
    // into two EP groups of 8 consecutive ranks, one per node (TP 0-1 of
    // CP 0 and CP 1, of two replicas), and expert DP 16 / 8 = 2, a rank
    // and its twin in the other node.
    let json = r#"{"hardware":{"preset":"dgx-h100","nodes":2},
        "workload":{"layers":2,"hidden":2048,"heads":16,"seq":4096,"global_batch":8,"vocab":32000,
          "sequence_parallel":true,"mlp":"swiglu","ffn_hidden":4096,"attention":"flash",
          "moe":{"experts":8,"top_k":2,"expert_ffn_hidden":1024}},
        "parallel":{"tp":2,"cp":2,"pp":1,"dp":4,"ep":8,"dp_sharding":"optimizer"},
        "overlap":{"tp":false,"pp":true,"dp":true}}"#;
    let s = scenario(json);
    let f = ExpertFolding::of(&s);
    assert_eq!(f.stage_ranks, 16);
    assert_eq!(f.ep_group(3), (0..8).collect::<Vec<_>>());
    assert_eq!(f.edp(), 2);
    assert_eq!(f.edp_group(3), vec![3, 11]);
    // Each rank routes its own 4096 / (cp 2 x tp 2) = 1024 tokens, 2
    // copies each of 2048 bf16 values: 8 MiB, 1 MiB to each of its 7 NVLink
    // peers, none across the NIC. Per MoE layer and micro-batch, four
    // all-to-alls of one link class each.
    let sim = simulate(&s);
    let ep = &sim.timeline.gpus[0].comm[Axis::Ep.index()];
    assert!(ep.iter().all(|iv| iv.bytes == 1_048_576.0), "{ep:?}");
    let micro_batches = 8 / 4;
    assert_eq!(ep.len(), 4 * 2 * micro_batches);
    // The expert gradients reduce over the expert-DP pair (across the
    // nodes); the dense ones over dp x cp = 8.
    let report = simulate_report(&s).unwrap().report;
    assert!(report.axes[Axis::Dp].comm_ms > 0.0);
    // Without CP the same 16 GPUs route twice the tokens a rank.
    let no_cp = json.replace(r#""cp":2,"pp":1,"dp":4"#, r#""cp":1,"pp":1,"dp":8"#);
    let sim = simulate(&scenario(&no_cp));
    let ep = &sim.timeline.gpus[0].comm[Axis::Ep.index()];
    assert!(ep.iter().all(|iv| iv.bytes == 2_097_152.0));
}

#[test]
fn fsdp_shards_the_experts_over_their_expert_dp_group() {
    // TP 2 x DP 8 on two nodes of 8, EP 4, FSDP: the dense parts shard
    // over the 8 replicas, the experts over tp x dp / ep = 4 ranks, every
    // 4th of the stage (0, 4, 8, 12: two in each node). Each MoE layer's
    // forward and backward gather twice (dense and experts) and its
    // gradients reduce-scatter twice.
    let json = r#"{"hardware":{"preset":"dgx-h100","nodes":2},
        "workload":{"layers":2,"hidden":2048,"heads":16,"seq":2048,"global_batch":16,"vocab":32000,
          "sequence_parallel":true,"mlp":"swiglu","ffn_hidden":4096,"attention":"flash",
          "moe":{"experts":8,"top_k":2,"expert_ffn_hidden":1024}},
        "parallel":{"tp":2,"pp":1,"dp":8,"ep":4,"dp_sharding":"full"},
        "overlap":{"tp":false,"pp":true,"dp":true}}"#;
    let s = scenario(json);
    let f = ExpertFolding::of(&s);
    assert_eq!(f.edp(), 4);
    assert_eq!(f.edp_group(0), vec![0, 4, 8, 12]);
    assert_eq!(f.edp_per_node(8), 2);
    let sim = simulate(&s);
    let dp = &sim.timeline.gpus[0].comm[Axis::Dp.index()];
    let count = |op| dp.iter().filter(|iv| iv.op == op).count();
    // 2 micro-batches x 2 layers x (forward + backward) gathers, each two.
    assert_eq!(count(OpKind::AllGather), 2 * 2 * 2 * 2);
    // Every micro-batch's gradients of each layer, each two, and the
    // embeddings' bucket (FSDP's root unit).
    assert_eq!(count(OpKind::ReduceScatter), 2 * 2 * 2 + 1);
    // The experts' weights shard over 4 ranks: 2 experts of 3 x 2048 x
    // 1024 a layer on a rank, a quarter held, in bf16, 2 layers; the
    // dense parts over 8 (the same with EP 8, where each rank holds 1
    // expert over 2 ranks: the held shards are equal, the gathered layer
    // one expert smaller).
    let weights = |ep: u32| {
        let json = json.replace(r#""ep":4"#, &format!(r#""ep":{ep}"#));
        simulate_report(&scenario(&json))
            .unwrap()
            .report
            .memory_gb
            .weights
    };
    let gb = (1u64 << 30) as f64;
    let gathered_expert = 2.0 * 3.0 * 2048.0 * 1024.0 * 2.0; // 2 layers in flight, bf16
    let diff = (weights(4) - weights(8)) * gb;
    assert!(
        (diff - gathered_expert).abs() < 1.0,
        "{diff} against {gathered_expert}"
    );
    // Combined 1F1B's merged passes with FSDP are refused, naming the option.
    let merged = json.replace(
        r#""overlap":{"tp":false"#,
        r#""overlap":{"ep":["combined_1f1b"],"tp":false"#,
    );
    let e = refusal(&merged);
    assert!(e.contains("overlap.ep") && e.contains("\"full\""), "{e}");
}
