//! Parameter counts: one layer's, its dense MLP's, the embedding's and the
//! whole model's (active and total), on one TP rank or whole; and the
//! bytes the optimizer step moves per parameter.

use crate::model::scenario::{Mlp, Transformer};

/// The widths of a layer's GEMMs (model.md section 4), for the whole layer
/// before the TP split.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LayerShape {
    /// Output columns of the fused QKV projection: heads x head_dim (h by
    /// default) for the queries and kv_heads x head_dim each for keys and
    /// values (3h without GQA).
    pub qkv_cols: f64,
    /// Output columns of the MLP's first GEMM: ffn_hidden, or twice that
    /// for SwiGLU's fused gate and up projections.
    pub up_cols: f64,
}

impl LayerShape {
    pub fn of(t: &Transformer) -> Self {
        let kv_width = f64::from(t.kv_heads) * f64::from(t.head_dim);
        let ffn = f64::from(t.ffn_hidden);
        LayerShape {
            qkv_cols: f64::from(t.attention_width()) + 2.0 * kv_width,
            up_cols: match t.mlp {
                Mlp::Gelu => ffn,
                Mlp::Swiglu => 2.0 * ffn,
            },
        }
    }
}

/// Parameters of one layer, whole (before the TP split). The weights: QKV
/// (h x qkv_cols), the attention projection (h^2) and the MLP (h x up_cols
/// in, ffn_hidden x h out). A GELU (GPT) layer adds its linear biases and
/// two LayerNorms of a weight and a bias each: 12h^2 + 13h without GQA at
/// 4h. A SwiGLU (Llama) layer has no linear biases and two RMSNorms of a
/// weight each: Llama-3-8B's 218,112,000.
pub fn layer_params_whole(t: &Transformer) -> f64 {
    let h = f64::from(t.hidden);
    let ffn = f64::from(t.ffn_hidden);
    let shape = LayerShape::of(t);
    let width = f64::from(t.attention_width());
    let weights = h * shape.qkv_cols + width * h + h * shape.up_cols + ffn * h;
    let rest = match t.mlp {
        Mlp::Gelu => shape.qkv_cols + h + ffn + h + 4.0 * h,
        Mlp::Swiglu => 2.0 * h,
    };
    weights + rest
}

/// Parameters of one layer on one TP rank: [`layer_params_whole`] / t
/// (the norms' few counted as split too, as they always were here).
pub(crate) fn layer_params(t: &Transformer, tp: u32) -> f64 {
    layer_params_whole(t) / f64::from(tp)
}

/// Parameters of the dense MLP of a layer, whole: its weights and, for
/// GELU, its two biases.
fn mlp_params_whole(t: &Transformer) -> f64 {
    let h = f64::from(t.hidden);
    let ffn = f64::from(t.ffn_hidden);
    let biases = match t.mlp {
        Mlp::Gelu => ffn + h,
        Mlp::Swiglu => 0.0,
    };
    h * LayerShape::of(t).up_cols + ffn * h + biases
}

/// Parameters of layer `layer` that data parallelism reduces, whole: the
/// whole layer when dense; an MoE layer's attention, norms, router and
/// shared experts (its routed experts reduce over the expert-data-parallel
/// group instead, `moe::expert_params_per_rank`).
pub fn dense_params_whole_at(t: &Transformer, layer: u32) -> f64 {
    match &t.moe {
        Some(m) if m.is_moe_layer(layer) => {
            layer_params_whole(t) - mlp_params_whole(t)
                + crate::workload::cost::moe::moe_dense_params_whole(t, m)
        }
        _ => layer_params_whole(t),
    }
}

/// [`dense_params_whole_at`] on one TP rank.
pub(crate) fn dense_params_at(t: &Transformer, tp: u32, layer: u32) -> f64 {
    match &t.moe {
        Some(m) if m.is_moe_layer(layer) => dense_params_whole_at(t, layer) / f64::from(tp),
        _ => layer_params(t, tp),
    }
}

/// Parameters of the embedding matrix (and of the output layer, its tied
/// copy or its own matrix), whole.
pub fn embedding_params_whole(t: &Transformer) -> f64 {
    f64::from(t.vocab) * f64::from(t.hidden)
}

/// Every parameter of the model, each counted once: the layers, the input
/// embedding and, untied, the output layer (final norm left out).
pub fn model_params(t: &Transformer) -> f64 {
    let output = if t.tied_embeddings { 0.0 } else { 1.0 };
    let embeddings = (1.0 + output) * embedding_params_whole(t);
    match &t.moe {
        None => f64::from(t.layers) * layer_params_whole(t) + embeddings,
        Some(m) => {
            let routed = crate::workload::cost::moe::routed_params_whole(t, m);
            (0..t.layers)
                .map(|l| dense_params_whole_at(t, l) + if m.is_moe_layer(l) { routed } else { 0.0 })
                .sum::<f64>()
                + embeddings
        }
    }
}

/// The parameters one token's forward uses: [`model_params`] with each MoE
/// layer's routed experts counted k times over instead of all of them
/// (the active parameters).
pub fn active_params(t: &Transformer) -> f64 {
    match &t.moe {
        None => model_params(t),
        Some(m) => {
            let moe_layers = f64::from(t.layers - m.dense_layers.min(t.layers));
            let routed = crate::workload::cost::moe::routed_params_whole(t, m);
            let active = f64::from(m.top_k) * routed / f64::from(m.experts);
            model_params(t) - moe_layers * (routed - active)
        }
    }
}

/// Bytes the optimizer step moves per parameter: mixed-precision Adam reads
/// and writes the fp32 master weight and both moments (24 bytes), reads the
/// gradient and writes the fp16 weight (4 bytes).
pub(crate) const OPTIMIZER_BYTES_PER_PARAM: f64 = 28.0;
