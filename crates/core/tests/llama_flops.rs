//! Llama-shaped layers (grouped-query attention, SwiGLU, untied
//! embeddings): the step's FLOPs equal a hand count, and the parameter
//! count equals Llama 3's published sizes.

use overlap_core::scenario::{Scenario, Workload};
use overlap_core::workload::cost::params::model_params;
use overlap_core::{simulate, ScenarioInput};

fn scenario(json: &str) -> Scenario {
    ScenarioInput::from_json(json).unwrap().resolve().unwrap()
}

/// Llama-3-8B's shape (Meta's model card and config: 32 layers, hidden
/// 4096, 32 heads, 8 key/value heads, MLP 14336, vocabulary 128256).
const LLAMA3_8B: &str = r#""layers":32,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,
    "mlp":"swiglu","vocab":128256,"tied_embeddings":false"#;
/// Llama-3-70B's: 80 layers, hidden 8192, 64 heads, 8 key/value heads, MLP 28672.
const LLAMA3_70B: &str = r#""layers":80,"hidden":8192,"heads":64,"kv_heads":8,"ffn_hidden":28672,
    "mlp":"swiglu","vocab":128256,"tied_embeddings":false"#;

/// FLOPs of one step counted by hand for a Llama layer: per token, forward,
/// the query and output projections 2h^2 each, keys and values 2h x kv
/// width each, three MLP GEMMs of 2h x ffn, attention scores and context
/// 4sh, and 2hV for the logits; backward twice the forward; full
/// recomputation one more forward of the layers.
#[allow(clippy::too_many_arguments)]
fn hand_count(
    batch: f64,
    seq: f64,
    layers: f64,
    h: f64,
    heads: f64,
    kv_heads: f64,
    ffn: f64,
    vocab: f64,
    recompute: bool,
) -> (f64, f64) {
    let kv_width = kv_heads * h / heads;
    let layer =
        2.0 * h * h + 2.0 * 2.0 * h * kv_width + 2.0 * h * h + 3.0 * 2.0 * h * ffn + 4.0 * seq * h;
    let logits = 2.0 * h * vocab;
    let tokens = batch * seq;
    let model = tokens * (3.0 * layers * layer + 3.0 * logits);
    let executed = model
        + if recompute {
            tokens * layers * layer
        } else {
            0.0
        };
    (model, executed)
}

fn step_flops(s: &Scenario) -> (f64, f64) {
    let r = simulate(s).report;
    let gpus = s.hardware.gpus() as f64;
    let total = |tflops: f64| tflops * 1e12 * r.step_time_ms / 1e3 * gpus;
    (
        total(r.model_tflops_per_gpu),
        total(r.hardware_tflops_per_gpu),
    )
}

fn check(json: &str, shape: (f64, f64, f64, f64, f64, f64, f64), batch: f64) {
    let s = scenario(json);
    let Workload::Transformer(t) = &s.workload else {
        unreachable!()
    };
    let (layers, h, heads, kv, ffn, vocab, seq) = shape;
    let recompute = t.recompute == overlap_core::scenario::Recompute::Full;
    let (model, executed) = hand_count(batch, seq, layers, h, heads, kv, ffn, vocab, recompute);
    let (got_model, got_executed) = step_flops(&s);
    assert!(
        (got_executed - executed).abs() / executed < 1e-9,
        "executed {got_executed} vs {executed}: {json}"
    );
    assert!(
        (got_model - model).abs() / model < 1e-9,
        "model {got_model} vs {model}: {json}"
    );
}

#[test]
fn llama3_8b_step_flops_equal_the_hand_count() {
    let shape = (32.0, 4096.0, 32.0, 8.0, 14336.0, 128256.0, 8192.0);
    for recompute in ["none", "full"] {
        check(
            &format!(
                r#"{{"hardware":{{"preset":"dgx-h100","nodes":1}},
                "workload":{{{LLAMA3_8B},"seq":8192,"micro_batch":1,"global_batch":2,"recompute":"{recompute}"}},
                "parallel":{{"tp":8,"pp":1,"dp":1}}}}"#
            ),
            shape,
            2.0,
        );
    }
}

#[test]
fn llama3_70b_step_flops_equal_the_hand_count_even_and_uneven_stages() {
    let shape = (80.0, 8192.0, 64.0, 8.0, 28672.0, 128256.0, 4096.0);
    // Four stages of 20 layers, and three of 27, 27 and 26.
    for (nodes, pp) in [(4, 4), (3, 3)] {
        check(
            &format!(
                r#"{{"hardware":{{"preset":"dgx-h100","nodes":{nodes}}},
                "workload":{{{LLAMA3_70B},"seq":4096,"micro_batch":1,"global_batch":4,"recompute":"full",
                  "sequence_parallel":true}},
                "parallel":{{"tp":8,"pp":{pp},"dp":1}}}}"#
            ),
            shape,
            4.0,
        );
    }
}

#[test]
fn parameter_counts_are_llama3s() {
    // Published totals (Hugging Face's safetensors metadata of
    // Meta-Llama-3-8B and -70B) less the final RMSNorm's h weights, which
    // the model leaves out.
    let params = |json: &str| {
        let s = scenario(&format!(
            r#"{{"hardware":{{"preset":"dgx-h100","nodes":1}},"workload":{{{json}}},"parallel":{{"tp":8,"pp":1,"dp":1}}}}"#
        ));
        let Workload::Transformer(t) = &s.workload else {
            unreachable!()
        };
        model_params(t)
    };
    assert_eq!(params(LLAMA3_8B), 8_030_261_248.0 - 4096.0);
    assert_eq!(params(LLAMA3_70B), 70_553_706_496.0 - 8192.0);
}

#[test]
fn gpt_shapes_keep_12h2_plus_13h_per_layer() {
    let s = scenario(r#"{"workload":{"layers":24,"hidden":2048,"heads":16,"vocab":51200}}"#);
    let Workload::Transformer(t) = &s.workload else {
        unreachable!()
    };
    let h = 2048.0;
    assert_eq!(
        model_params(t),
        24.0 * (12.0 * h * h + 13.0 * h) + 51200.0 * h
    );
}
