//! Mixtures of experts and expert parallelism (model.md section 4c): the
//! all-to-all's bytes per (source, destination) pair against a hand count,
//! DeepEP's node-limited routing, the expert gradients' reduction group,
//! EP overlap read from the timeline, active-parameter FLOPs and the
//! refusals naming their field.

use overlap_core::scenario::Moe;
use overlap_core::timeline::{Axis, Interval, OpKind};
use overlap_core::workload::cost::moe::{all_to_all_traffic, nodes_per_token, EpPlacement};
use overlap_core::{presets, simulate, simulate_report, Scenario, ScenarioInput};

fn scenario(json: &str) -> Scenario {
    ScenarioInput::from_json(json).unwrap().resolve().unwrap()
}

fn moe(s: &Scenario) -> (&overlap_core::scenario::Transformer, &Moe) {
    match &s.workload {
        overlap_core::scenario::Workload::Transformer(t) => (t, t.moe.as_ref().unwrap()),
        _ => panic!("a transformer"),
    }
}

#[test]
fn nccl_all_to_all_sends_each_peer_its_share_of_the_token_copies() {
    // moe-didactic: 16 experts over EP 16 on two nodes of 8, top-2, hidden
    // 4096, 4096 tokens per rank (micro-batch 1, TP 1): each rank sends its
    // 4096 x 2 token copies of 4096 bf16 values evenly to the 16 ranks,
    // 4096 * 2 * 4096 * 2 / 16 = 4 MiB to each, 7 peers over NVLink and 8
    // over the NIC.
    let s = presets::scenario("moe-didactic").unwrap();
    let (t, m) = moe(&s);
    let traffic = all_to_all_traffic(t, m, 16, EpPlacement::of(16, 8), 4096.0);
    assert_eq!(traffic.nvlink_peers, 7);
    assert_eq!(traffic.nic_peers, 8);
    assert_eq!(traffic.nvlink_pair_bytes, 4_194_304.0);
    assert_eq!(traffic.nic_pair_bytes, 4_194_304.0);
    // The timeline moves exactly these bytes per pair: every EP bar of the
    // GPU is one link class's share, 4 per MoE layer and micro-batch in
    // each direction of the step (dispatch and combine, forward and
    // backward, NVLink and NIC).
    let sim = simulate(&s);
    let gpu = &sim.timeline.gpus[0];
    let ep: &[Interval] = &gpu.comm[Axis::Ep.index()];
    assert!(
        ep.iter().all(|iv| iv.bytes == 4_194_304.0),
        "per-pair bytes"
    );
    let micro_batches = 128 / 16;
    assert_eq!(
        ep.len(),
        8 * micro_batches * 8,
        "bars: layers x micro-batches x 8"
    );
    let dispatches = ep.iter().filter(|iv| iv.op == OpKind::Dispatch).count();
    assert_eq!(dispatches, ep.len() / 2);
}

#[test]
fn deepep_crosses_infiniband_once_per_node_reached() {
    // The DeepSeek-V3 preset: EP 64 over 8 nodes of 8, top-8, at most 4
    // nodes per token. Drawn evenly a token's 8 experts would reach
    // 8 (1 - (7/8)^8) = 5.25 nodes; node-limited, they fall within the 4
    // nodes its router picked (DeepSeek-V3 section 2.1.2) and reach
    // 4 (1 - (3/4)^8) = 3.5995 of them, not 4; 7/8 of those are remote:
    // 3.1496 x 7168 x 2 bytes per token over the NIC, spread over the
    // same-index GPU of the 7 other nodes.
    let s = presets::scenario("deepseek-v3").unwrap();
    let (t, m) = moe(&s);
    let place = EpPlacement::of(64, 8);
    let reached = 4.0 * (1.0 - 0.75f64.powi(8));
    assert!((nodes_per_token(m, place) - reached).abs() < 1e-12);
    assert!((reached - 3.5995).abs() < 1e-4, "{reached}");
    let tokens = 4096.0;
    let traffic = all_to_all_traffic(t, m, 64, place, tokens);
    assert_eq!(traffic.nic_peers, 7);
    let per_token = reached * 7.0 / 8.0 * 7168.0 * 2.0;
    assert!((traffic.nic_bytes() - tokens * per_token).abs() < 1.0);
    // NCCL's all-to-all sends every copy: 8 x 56/64 = 7 crossings a token.
    let nccl = Moe {
        dispatcher: overlap_core::scenario::Dispatcher::Alltoall,
        ..m.clone()
    };
    let plain = all_to_all_traffic(t, &nccl, 64, place, tokens);
    assert!((plain.nic_bytes() - tokens * 7.0 * 7168.0 * 2.0).abs() < 1.0);
}

#[test]
fn node_limited_routing_sends_each_token_across_the_nic_at_most_m_times() {
    let s = presets::scenario("deepseek-v3").unwrap();
    let (t, m) = moe(&s);
    let tokens = 1000.0;
    let token_bytes = f64::from(t.hidden) * 2.0;
    for nodes in [2, 4, 8, 16] {
        for top_k in [1, 2, 4, 8, 16] {
            for limit in [1, 2, 4, 8] {
                let m = Moe {
                    top_k,
                    max_nodes_per_token: limit,
                    ..m.clone()
                };
                let ep = nodes * 8;
                let traffic = all_to_all_traffic(t, &m, ep, EpPlacement::of(ep, 8), tokens);
                let crossings = traffic.nic_bytes() / (tokens * token_bytes);
                assert!(
                    crossings <= f64::from(limit.min(top_k)) + 1e-12,
                    "{nodes} nodes, top-{top_k}, limit {limit}: {crossings} crossings a token"
                );
                // And never fewer than the remote share of the nodes it reaches.
                let reached = nodes_per_token(&m, EpPlacement::of(ep, 8));
                let remote = reached * f64::from(nodes - 1) / f64::from(nodes);
                assert!((crossings - remote).abs() < 1e-9);
            }
        }
    }
}

/// A small MoE on the tp x dp GPUs of one node, with sequence
/// parallelism and EP `ep`; the distributed optimizer where there are
/// replicas. `extra` goes into the overlap section.
fn small(tp: u32, dp: u32, ep: u32, extra: &str) -> String {
    let sharding = if dp > 1 { "optimizer" } else { "none" };
    format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":1,"gpus_per_node":{}}},
        "workload":{{"layers":4,"hidden":2048,"heads":16,"seq":2048,"global_batch":8,"vocab":32000,
          "sequence_parallel":true,"mlp":"swiglu","ffn_hidden":4096,"attention":"flash",
          "moe":{{"experts":8,"top_k":2,"expert_ffn_hidden":1024}}}},
        "parallel":{{"tp":{tp},"pp":1,"dp":{dp},"ep":{ep},"dp_sharding":"{sharding}"}},
        "overlap":{{"tp":true,"pp":true,"dp":true{extra}}}}}"#,
        tp * dp
    )
}

#[test]
fn expert_gradients_reduce_over_the_expert_data_parallel_group() {
    // TP 4 x DP 1: dense gradients have no replica to reduce with, but
    // with EP 2 each expert sits on tp x dp / ep = 2 ranks, which reduce its
    // gradients; with EP 4 on one.
    let dp_comm = |ep| {
        simulate_report(&scenario(&small(4, 1, ep, "")))
            .unwrap()
            .report
            .axes[Axis::Dp]
            .comm_ms
    };
    assert!(
        dp_comm(2) > 0.0,
        "EP 2: the expert-data-parallel pair reduces"
    );
    assert_eq!(dp_comm(4), 0.0, "EP 4: every expert on one rank");
    // Its optimizer states shard over that group too: EP 2 holds twice
    // EP 4's experts and shards their 12 bytes per parameter over the
    // pair, so the optimizer states are equal and the weights are not.
    // TP 2 x DP 2 with the distributed optimizer: EP 2 pairs the ranks.
    let memory = |ep| {
        simulate_report(&scenario(&small(2, 2, ep, "")))
            .unwrap()
            .report
            .memory_gb
    };
    let (two, four) = (memory(2), memory(4));
    let gb = (1u64 << 30) as f64;
    let expert_params_ep4 = 4.0 * 2.0 * 3.0 * 2048.0 * 1024.0;
    assert!((two.optimizer - four.optimizer).abs() < 1e-12);
    let weights = (two.weights - four.weights) * gb;
    assert!(
        (weights - expert_params_ep4 * 2.0).abs() < 1.0,
        "{weights} bytes"
    );
}

/// The share of the GPU's EP time during which its compute stream runs.
fn ep_under_compute(sim: &overlap_core::Simulation) -> f64 {
    let gpu = &sim.timeline.gpus[0];
    let busy: Vec<(f64, f64)> = gpu.compute.iter().map(|c| (c.start_s, c.end_s)).collect();
    let (mut under, mut total) = (0.0, 0.0);
    for iv in &gpu.comm[Axis::Ep.index()] {
        total += iv.end_s - iv.start_s;
        for &(a, b) in &busy {
            under += (b.min(iv.end_s) - a.max(iv.start_s)).max(0.0);
        }
    }
    under / total
}

#[test]
fn with_ep_overlap_the_all_to_alls_run_beside_compute() {
    // Off, the compute stream waits for each all-to-all where it is
    // launched; on, the other micro-batch's pass computes under it.
    let off = presets::scenario("moe-didactic").unwrap();
    let mut on = off.clone();
    on.overlap.ep = true.into();
    let (off_sim, on_sim) = (simulate(&off), simulate(&on));
    let (off_share, on_share) = (ep_under_compute(&off_sim), ep_under_compute(&on_sim));
    println!("EP time under compute: off {off_share:.3}, on {on_share:.3}");
    assert!(off_share < 0.02, "off: {off_share}");
    assert!(on_share > 0.4, "on: {on_share}");
    assert!(on_sim.report.step_time_ms < off_sim.report.step_time_ms);
    assert!(on_sim.report.axes.reported(Axis::Ep).unwrap().hidden > 0.4);
}

#[test]
fn model_flops_count_the_active_experts_only() {
    // Twice the experts at the same top-k: twice the routed parameters,
    // the same model FLOPs but for the router's wider GEMM.
    let flops = |experts: u32| {
        let json = small(1, 8, 8, "").replace(r#""experts":8"#, &format!(r#""experts":{experts}"#));
        let r = simulate_report(&scenario(&json)).unwrap().report;
        r.model_tflops_per_gpu * r.step_time_ms
    };
    let (a, b) = (flops(8), flops(16));
    assert!((b / a - 1.0).abs() < 0.01, "{a} against {b}");
}

fn refusal(json: &str) -> String {
    ScenarioInput::from_json(json)
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string()
}

#[test]
fn impossible_expert_layouts_are_refused_naming_the_field() {
    let e = refusal(&small(1, 8, 3, ""));
    assert!(e.contains("parallel.ep") && e.contains("valid"), "{e}");
    let e = refusal(&small(1, 8, 8, "").replace(r#""experts":8"#, r#""experts":12"#));
    assert!(
        e.contains("workload.moe.experts") && e.contains("multiples of 8"),
        "{e}"
    );
    let e = refusal(&small(1, 8, 8, "").replace(r#""top_k":2"#, r#""top_k":9"#));
    assert!(
        e.contains("workload.moe.top_k") && e.contains("1 to 8"),
        "{e}"
    );
    let deepep = small(1, 8, 8, "").replace(
        r#""top_k":2"#,
        r#""top_k":2,"dispatcher":"deepep","deepep_sms":100"#,
    );
    let e = refusal(&deepep);
    assert!(
        e.contains("workload.moe.deepep_sms") && e.contains("1 to 66"),
        "{e}"
    );
    let dense = small(1, 8, 8, "").replace(
        r#""moe":{"experts":8,"top_k":2,"expert_ffn_hidden":1024}"#,
        r#""kv_heads":16"#,
    );
    let e = refusal(&dense);
    assert!(e.contains("parallel.ep") && e.contains("valid is 1"), "{e}");
    let e = refusal(&small(4, 2, 8, "").replace(
        r#""sequence_parallel":true"#,
        r#""sequence_parallel":false"#,
    ));
    assert!(e.contains("workload.sequence_parallel"), "{e}");
}
