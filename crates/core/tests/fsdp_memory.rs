//! FSDP's memory per GPU against a hand count (model.md section 4,
//! "memory"): besides the shards of weights, gradients and optimizer
//! states, the unsharded parameters held at the peak: the layer being
//! computed and the one prefetched under it (one layer without DP
//! overlap), and the gathered embedding and output layer on the stages
//! that hold them.

use overlap_core::memory::memory_gb;
use overlap_core::report::MemoryGb;
use overlap_core::{presets, ScenarioInput};

const GIB: f64 = (1u64 << 30) as f64;

/// Llama-3-8B per TP rank (TP 8): a layer's 218,112,000 parameters, and
/// 128,256 x 4096 in each of the input embedding and the output layer.
const LAYER_8B: f64 = 218_112_000.0 / 8.0;
const EMBEDDING_8B: f64 = 128_256.0 * 4096.0 / 8.0;

/// Llama-3-70B per TP rank: QKV 8192 x (8192 + 2 x 1024), projection
/// 8192^2, gate and up 8192 x 2 x 28672, down 28672 x 8192, two RMSNorms.
const LAYER_70B: f64 =
    (8192.0 * 10240.0 + 8192.0 * 8192.0 + 8192.0 * 57344.0 + 28672.0 * 8192.0 + 2.0 * 8192.0) / 8.0;
const EMBEDDING_70B: f64 = 128_256.0 * 8192.0 / 8.0;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Weights, gradients and optimizer states of one GPU, from a hand count:
/// `layers` layers and two embedding matrices, each part sharded over `dp`,
/// plus `gathered_layers` whole layers and both embedding matrices whole,
/// at 2 bytes a weight, `grad_bytes` a gradient and 12 optimizer bytes.
fn hand_count(
    layers: f64,
    layer: f64,
    embedding: f64,
    dp: f64,
    gathered_layers: f64,
    grad_bytes: f64,
) -> (f64, f64, f64) {
    let params = layers * layer + 2.0 * embedding;
    let gathered = gathered_layers * layer + 2.0 * embedding;
    (
        (2.0 * params / dp + 2.0 * gathered) / GIB,
        grad_bytes * params / dp / GIB,
        12.0 * params / dp / GIB,
    )
}

fn check(what: &str, m: &MemoryGb, want: (f64, f64, f64)) {
    println!(
        "{what}: weights {:.3} GB, gradients {:.3}, optimizer {:.3}, activations {:.3}, total {:.3}",
        m.weights, m.gradients, m.optimizer, m.activations, m.total
    );
    assert!(
        close(m.weights, want.0),
        "{what}: weights {} vs {}",
        m.weights,
        want.0
    );
    assert!(
        close(m.gradients, want.1),
        "{what}: gradients {} vs {}",
        m.gradients,
        want.1
    );
    assert!(
        close(m.optimizer, want.2),
        "{what}: optimizer {} vs {}",
        m.optimizer,
        want.2
    );
    let parts = m.weights + m.gradients + m.optimizer + m.activations;
    assert!(
        close(parts, m.total),
        "{what}: parts {parts} vs total {}",
        m.total
    );
}

#[test]
fn llama_3_8b_fsdp_holds_two_gathered_layers_and_both_embeddings() {
    let s = presets::scenario("llama3-8b-fsdp").unwrap();
    let grad_bytes = f64::from(s.overlap.grad_bytes);
    let m = memory_gb(&s);
    check(
        "8B FSDP 8 x TP 8",
        &m,
        hand_count(32.0, LAYER_8B, EMBEDDING_8B, 8.0, 2.0, grad_bytes),
    );
    // The whole copies: 2 x 27,264,000 + 2 x 65,667,072 parameters, 2 bytes
    // each, 371,724,288 bytes; the shards of the 1,003,782,144 parameters
    // on a TP rank, 250,945,536 bytes.
    assert!(close(m.weights * GIB, 371_724_288.0 + 250_945_536.0));
}

#[test]
fn llama_3_70b_fsdp_holds_two_gathered_layers_and_both_embeddings() {
    let s = presets::scenario("llama3-70b-fsdp").unwrap();
    let grad_bytes = f64::from(s.overlap.grad_bytes);
    let m = memory_gb(&s);
    check(
        "70B FSDP 32 x TP 8",
        &m,
        hand_count(80.0, LAYER_70B, EMBEDDING_70B, 32.0, 2.0, grad_bytes),
    );
    // 70,553,698,304 parameters in all, 1/8 of them on a TP rank.
    let per_rank = 80.0 * LAYER_70B + 2.0 * EMBEDDING_70B;
    assert_eq!(per_rank * 8.0, 70_553_698_304.0);
}

#[test]
fn without_prefetch_one_gathered_layer_and_the_embeddings() {
    for (id, layers, layer, embedding, dp) in [
        ("llama3-8b-fsdp", 32.0, LAYER_8B, EMBEDDING_8B, 8.0),
        ("llama3-70b-fsdp", 80.0, LAYER_70B, EMBEDDING_70B, 32.0),
    ] {
        let mut input = presets::find(id).unwrap().input();
        input.overlap.dp = Some(false);
        let s = input.resolve().unwrap();
        let grad_bytes = f64::from(s.overlap.grad_bytes);
        check(
            &format!("{id}, DP overlap off"),
            &memory_gb(&s),
            hand_count(layers, layer, embedding, dp, 1.0, grad_bytes),
        );
    }
}

#[test]
fn the_gathered_embeddings_sit_on_the_stages_that_hold_them() {
    // Llama-3-8B in two pipeline stages: the first holds the input
    // embedding and 16 layers, the last the output layer and 16 layers;
    // each GPU holds one embedding matrix whole, not two.
    let s = ScenarioInput::from_json(
        r#"{"hardware":{"preset":"dgx-h100","nodes":8},
        "workload":{"layers":32,"hidden":4096,"heads":32,"kv_heads":8,"ffn_hidden":14336,"mlp":"swiglu",
          "tied_embeddings":false,"seq":8192,"vocab":128256,"micro_batch":1,"global_batch":16,
          "recompute":"selective","sequence_parallel":true},
        "parallel":{"tp":8,"pp":2,"dp":4,"dp_sharding":"full"},
        "overlap":{"tp":true,"pp":true,"dp":true}}"#,
    )
    .unwrap()
    .resolve()
    .unwrap();
    let m = memory_gb(&s);
    let params = 16.0 * LAYER_8B + EMBEDDING_8B;
    let gathered = 2.0 * LAYER_8B + EMBEDDING_8B;
    let want = (2.0 * params / 4.0 + 2.0 * gathered) / GIB;
    assert!(close(m.weights, want), "{} vs {want}", m.weights);
}
