//! Activation memory of Llama-shaped layers: Korthikanti et al.'s
//! per-layer formulas with the terms that grouped-query attention and
//! SwiGLU change, and the exact parameter count behind the weights.

use overlap_core::memory::{activation_bytes_per_layer, memory_gb, tp_split_activation_terms};
use overlap_core::scenario::{Scenario, Workload};
use overlap_core::ScenarioInput;

fn scenario(json: &str) -> Scenario {
    ScenarioInput::from_json(json).unwrap().resolve().unwrap()
}

/// Llama-3-8B at sequence 8192 on one node, TP 8.
fn llama_8b(recompute: &str, sp: bool) -> Scenario {
    scenario(&format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":1}},
        "workload":{{"layers":32,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
          "vocab":128256,"tied_embeddings":false,"seq":8192,"micro_batch":1,"global_batch":8,
          "recompute":"{recompute}","sequence_parallel":{sp}}},
        "parallel":{{"tp":8,"pp":1,"dp":1}}}}"#
    ))
}

fn per_layer(s: &Scenario) -> f64 {
    let Workload::Transformer(t) = &s.workload else {
        unreachable!()
    };
    activation_bytes_per_layer(t, s.parallel.tp)
}

#[test]
fn gpt_layers_keep_the_papers_24() {
    let s = scenario(r#"{"workload":{"hidden":12288,"heads":96}}"#);
    let Workload::Transformer(t) = &s.workload else {
        unreachable!()
    };
    assert_eq!(tp_split_activation_terms(t), 24.0);
}

#[test]
fn llama_3_8b_layers_follow_the_adjusted_formulas() {
    // g = 8/32: queries 2, keys and values 0.5 each, projection input 2;
    // SwiGLU with f = 14336 = 3.5h: 4f/h = 14 kept for the gate and up
    // outputs, 2f/h = 7 for their product. 26 in all, against GPT's 24.
    let split = 2.0 + 0.5 + 0.5 + 2.0 + 14.0 + 7.0;
    let Workload::Transformer(t) = &llama_8b("none", false).workload else {
        unreachable!()
    };
    assert_eq!(tp_split_activation_terms(t), split);
    let sbh = 8192.0 * 4096.0;
    let t = 8.0;
    let scores = 5.0 * 32.0 * 8192.0 / 4096.0; // 5as/h = 320
    let cases = [
        ("none", false, sbh * (10.0 + split / t + scores / t)),
        ("none", true, sbh * (10.0 + split + scores) / t),
        ("selective", false, sbh * (10.0 + split / t)),
        ("selective", true, sbh * (10.0 + split) / t),
        ("full", false, 2.0 * sbh),
        ("full", true, 2.0 * sbh / t),
    ];
    for (recompute, sp, want) in cases {
        let got = per_layer(&llama_8b(recompute, sp));
        assert!(
            (got - want).abs() < 1e-9 * want,
            "{recompute} sp {sp}: {got} vs {want}"
        );
    }
}

#[test]
fn llama_3_8b_weights_come_from_its_8_03b_parameters() {
    // One stage holds everything: 8,030,257,152 parameters (the final
    // norm's 4096 left out) over TP 8, 2 bytes each.
    let m = memory_gb(&llama_8b("full", true));
    let want = 8_030_257_152.0 / 8.0 * 2.0 / f64::from(1u32 << 30);
    assert!((m.weights - want).abs() < 1e-9, "{} vs {want}", m.weights);
    let parts = m.weights + m.gradients + m.optimizer + m.activations;
    assert!((parts - m.total).abs() < 1e-12);
}

/// Llama-3-8B at sequence 8192 with FlashAttention, no recomputation.
fn llama_8b_flash(tp: u32, sp: bool) -> Scenario {
    scenario(&format!(
        r#"{{"hardware":{{"preset":"dgx-h100","nodes":1}},
        "workload":{{"layers":32,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
          "vocab":128256,"tied_embeddings":false,"seq":8192,"micro_batch":1,"global_batch":8,
          "recompute":"none","sequence_parallel":{sp},"attention":"flash"}},
        "parallel":{{"tp":{tp},"pp":1,"dp":{dp}}}}}"#,
        dp = 8 / tp
    ))
}

#[test]
fn flash_attention_keeps_no_scores() {
    // Korthikanti's eq. 1-2 without the 5as/h term: 10 + 26/t, or (10 + 26)/t
    // with sequence parallelism, for every recomputation but full.
    let sbh = 8192.0 * 4096.0;
    let split = 26.0;
    for (tp, sp, want) in [
        (1, false, sbh * (10.0 + split)),
        (8, false, sbh * (10.0 + split / 8.0)),
        (8, true, sbh * (10.0 + split) / 8.0),
    ] {
        let got = per_layer(&llama_8b_flash(tp, sp));
        assert!(
            (got - want).abs() < 1e-9 * want,
            "tp {tp} sp {sp}: {got} vs {want}"
        );
    }
}

#[test]
fn llama_3_8b_without_recomputation_holds_tens_of_gb_with_flash() {
    // By hand: one GPU (TP 1, DP 8) holds all 32 layers of one micro-batch in
    // flight (no pipeline): 32 x 8192 x 4096 x 36 bytes = 36 GiB. The
    // materialised scores would add 32 x 8192 x 4096 x 320 bytes, 320 GiB more.
    let m = memory_gb(&llama_8b_flash(1, false));
    let want = 32.0 * 8192.0 * 4096.0 * 36.0 / f64::from(1u32 << 30);
    assert!(
        (m.activations - want).abs() < 1e-9,
        "{} vs {want}",
        m.activations
    );
    assert!((m.activations - 36.0).abs() < 1e-9);
}
