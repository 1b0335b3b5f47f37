//! MoE memory as production runs keep it (model.md section 4c):
//! Megatron-LM's `recompute_modules` and DeepSeek-V3's FP8 caching of the
//! dispatched activations, each against a hand count of what it stops
//! keeping, the recomputed forward's time and FLOPs in the backward, and
//! the refusals naming the module.

use overlap_core::memory::activation_bytes_at;
use overlap_core::scenario::{Transformer, Workload};
use overlap_core::{simulate_report, Scenario, ScenarioInput};

/// A DeepSeek-V3-shaped layer on one node (hidden 7168, 256 experts of
/// 2048, top-8, one shared expert, seq 4096, micro-batch 1, TP 1, EP 8),
/// four layers of which the first is dense.
fn scenario(moe_extra: &str, overlap: &str) -> Result<Scenario, String> {
    let json = format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":1}},
        "workload":{{"layers":4,"hidden":7168,"heads":56,"kv_heads":8,"head_dim":128,"seq":4096,
          "global_batch":16,"micro_batch":1,"vocab":32000,"mlp":"swiglu","ffn_hidden":18432,
          "attention":"flash","sequence_parallel":false,
          "moe":{{"experts":256,"top_k":8,"expert_ffn_hidden":2048,"shared_experts":1,
                  "dense_layers":1{moe_extra}}}}},
        "parallel":{{"tp":1,"pp":1,"dp":8,"ep":8,"dp_sharding":"optimizer"}},
        "overlap":{{"tp":false,"pp":true,"dp":true,"ep":{overlap}}}}}"#
    );
    ScenarioInput::from_json(&json)
        .map_err(|e| e.to_string())?
        .resolve()
        .map_err(|e| e.to_string())
}

fn transformer(s: &Scenario) -> &Transformer {
    match &s.workload {
        Workload::Transformer(t) => t,
        _ => panic!("a transformer"),
    }
}

/// Per-layer bytes of the MoE layer (1) and the dense one (0).
fn layer_bytes(moe_extra: &str) -> (f64, f64) {
    let s = scenario(moe_extra, "false").unwrap();
    let t = transformer(&s);
    (
        activation_bytes_at(t, 1, 1, 1),
        activation_bytes_at(t, 1, 1, 0),
    )
}

/// Equal up to floating-point rounding.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

// The hand count: 4096 tokens per rank, 8 copies each = 32768 copies.
const COPIES: f64 = 4096.0 * 8.0;
const H: f64 = 7168.0;
const F: f64 = 2048.0;
const SBH: f64 = 4096.0 * 7168.0;

#[test]
fn each_recomputed_module_stops_keeping_its_own_tensors() {
    let (moe, dense) = layer_bytes("");
    // moe_act: the activation's output, f bf16 values per routed copy.
    let (with, _) = layer_bytes(r#","recompute":["moe_act"]"#);
    assert!(
        close(moe - with, COPIES * F * 2.0),
        "{} against {}",
        moe - with,
        COPIES * F * 2.0
    );
    // shared_experts: the shared expert's gate, up and product on every
    // token, 3f values each.
    let (with, _) = layer_bytes(r#","recompute":["shared_experts"]"#);
    assert!(
        close(moe - with, 4096.0 * 3.0 * F * 2.0),
        "{} against {}",
        moe - with,
        4096.0 * 3.0 * F * 2.0
    );
    // layernorm: both LayerNorms' outputs, 2sbh each (no sequence
    // parallelism), in MoE and dense layers alike.
    let (with, with_dense) = layer_bytes(r#","recompute":["layernorm"]"#);
    assert!(
        close(moe - with, 4.0 * SBH),
        "{} against {}",
        moe - with,
        4.0 * SBH
    );
    assert!(
        close(dense - with_dense, 4.0 * SBH),
        "{} against {}",
        dense - with_dense,
        4.0 * SBH
    );
    // moe: every routed and shared tensor: copies x (h + 2f + f), the
    // dispatched copy, the activation's input and its output, and the
    // shared expert's 3f per token, at 2 bytes. The experts' outputs are
    // not among them: Megatron-LM weighs the copies inside the activation,
    // and the combine that follows keeps nothing.
    let (with, _) = layer_bytes(r#","recompute":["moe"]"#);
    let routed = 2.0 * COPIES * (H + 3.0 * F) + 2.0 * 4096.0 * 3.0 * F;
    assert!(
        close(moe - with, routed),
        "{} against {}",
        moe - with,
        routed
    );
    // mlp: a dense layer's SwiGLU terms (gate and up 4f/h, product 2f/h
    // of sbh, f = 18432); the MoE layer has no dense MLP.
    let (with, with_dense) = layer_bytes(r#","recompute":["mlp"]"#);
    assert!(close(with, moe), "{} against {}", with, moe);
    assert!(
        close(dense - with_dense, SBH * 6.0 * 18432.0 / H),
        "{} against {}",
        dense - with_dense,
        SBH * 6.0 * 18432.0 / H
    );
    // core_attn with FlashAttention keeps nothing less (no s x s scores).
    let (with, _) = layer_bytes(r#","recompute":["core_attn"]"#);
    assert!(close(with, moe), "{} against {}", with, moe);
}

#[test]
fn fp8_caching_keeps_the_dispatched_copies_at_one_byte_and_a_scale() {
    let (moe, _) = layer_bytes("");
    let (fp8, _) = layer_bytes(r#","fp8_dispatch_cache":true"#);
    // h values per copy at 2 bytes, against 1 + 4/128 (one fp32 scale
    // per 128 values, DeepSeek-V3 section 3.3.1).
    assert!(
        close(moe - fp8, COPIES * H * (2.0 - (1.0 + 4.0 / 128.0))),
        "{} against {}",
        moe - fp8,
        COPIES * H * (2.0 - (1.0 + 4.0 / 128.0))
    );
    // With the whole layer recomputed nothing is cached to shrink.
    let (moe_only, _) = layer_bytes(r#","recompute":["moe"]"#);
    let (both, _) = layer_bytes(r#","recompute":["moe"],"fp8_dispatch_cache":true"#);
    assert!(close(moe_only, both), "{} against {}", moe_only, both);
}

#[test]
fn fp8_swiglu_caching_keeps_the_activation_inputs_at_one_byte_and_a_scale() {
    let (moe, dense) = layer_bytes("");
    let (fp8, fp8_dense) = layer_bytes(r#","fp8_swiglu_cache":true"#);
    // The gate and up outputs, 2f values per routed copy and per token for
    // the shared expert, at 2 bytes against 1 + 4/128.
    let want = (COPIES + 4096.0) * 2.0 * F * (2.0 - (1.0 + 4.0 / 128.0));
    assert!(close(moe - fp8, want), "{} against {}", moe - fp8, want);
    // A dense layer's MLP is not the experts'.
    assert!(close(dense, fp8_dense), "{dense} against {fp8_dense}");
    // The shared experts recomputed, only the routed copies' inputs shrink.
    let (shared, _) = layer_bytes(r#","recompute":["shared_experts"]"#);
    let (both, _) = layer_bytes(r#","recompute":["shared_experts"],"fp8_swiglu_cache":true"#);
    let want = COPIES * 2.0 * F * (2.0 - (1.0 + 4.0 / 128.0));
    assert!(
        close(shared - both, want),
        "{} against {}",
        shared - both,
        want
    );
    // Both caches at once shrink by the sum of each.
    let (dispatch, _) = layer_bytes(r#","fp8_dispatch_cache":true"#);
    let (all, _) = layer_bytes(r#","fp8_dispatch_cache":true,"fp8_swiglu_cache":true"#);
    assert!(close(moe - all, (moe - dispatch) + (moe - fp8)));
}

#[test]
fn recomputed_modules_run_again_in_the_backward_as_executed_flops() {
    let report = |extra: &str| {
        simulate_report(&scenario(extra, "false").unwrap())
            .unwrap()
            .report
    };
    let none = report("");
    for modules in [
        r#"["moe_act"]"#,
        r#"["shared_experts"]"#,
        r#"["layernorm","mlp"]"#,
    ] {
        let with = report(&format!(r#","recompute":{modules}"#));
        assert!(
            with.step_time_ms > none.step_time_ms,
            "{modules}: {} against {}",
            with.step_time_ms,
            none.step_time_ms
        );
        assert!(
            close(
                with.model_tflops_per_gpu * with.step_time_ms,
                none.model_tflops_per_gpu * none.step_time_ms
            ),
            "{modules}: model FLOPs count no recomputation"
        );
        // The activation and the LayerNorms are elementwise: only GEMMs
        // count FLOPs.
        let executed = |r: &overlap_core::Report| r.hardware_tflops_per_gpu * r.step_time_ms;
        if modules != r#"["moe_act"]"# {
            assert!(
                executed(&with) > executed(&none),
                "{modules}: executed FLOPs count it"
            );
        }
    }
    // The whole MoE layer again runs its all-to-alls again: the EP axis
    // moves half as much more (the forward's two of four per layer).
    let moe = report(r#","recompute":["moe"]"#);
    let ratio =
        moe.axes[overlap_core::Axis::Ep].comm_ms / none.axes[overlap_core::Axis::Ep].comm_ms;
    assert!((ratio - 1.5).abs() < 0.05, "EP traffic x{ratio}");
}

#[test]
fn modules_megatron_refuses_are_refused_naming_the_module() {
    let e = scenario(r#","recompute":["moe_layer"]"#, "false").unwrap_err();
    assert!(
        e.contains("workload.moe.recompute") && e.contains("shared_experts"),
        "{e}"
    );
    let e = scenario(r#","recompute":["mla_up_proj"]"#, "false").unwrap_err();
    assert!(
        e.contains("workload.moe.recompute") && e.contains("mla_up_proj") && e.contains("valid"),
        "{e}"
    );
    let e = scenario(r#","recompute":["shared_experts"]"#, r#"["shared_expert"]"#).unwrap_err();
    assert!(
        e.contains("workload.moe.recompute") && e.contains("shared_expert"),
        "{e}"
    );
    let e = scenario(r#","recompute":true"#, "false").unwrap_err();
    assert!(e.contains("workload.moe.recompute"), "{e}");
    // Full recomputation recomputes every module already.
    let full = r#","recompute":["moe_act"]"#;
    let json_full = |s: &str| {
        s.replace(
            r#""sequence_parallel":false"#,
            r#""sequence_parallel":false,"recompute":"full""#,
        )
    };
    let json = format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":1}},
        "workload":{{"layers":4,"hidden":1024,"heads":8,"seq":1024,"global_batch":16,"vocab":32000,
          "sequence_parallel":false,"moe":{{"experts":8,"top_k":2{full}}}}},
        "parallel":{{"tp":1,"pp":1,"dp":8,"ep":8}}}}"#
    );
    let e = ScenarioInput::from_json(&json_full(&json))
        .unwrap()
        .resolve()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("workload.moe.recompute") && e.contains("full"),
        "{e}"
    );
}
