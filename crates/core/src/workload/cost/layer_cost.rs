//! What each op of one transformer layer costs on one TP rank: FLOPs from
//! Megatron's counts (model.md section 4) and HBM bytes of the memory-bound
//! kernels around them, each kernel timed by the roofline.
//!
//! Elementwise kernels are counted at fp16/bf16 (2 bytes per value) with the
//! fusions Megatron-LM had in 2021-22: fused scale-mask-softmax, fused
//! bias-GeLU, fused bias-dropout-add. Without sequence parallelism the
//! LayerNorms and dropouts run on the full [b, s, h] activation on every TP
//! rank; with it, on 1/t of it.

use crate::model::scenario::{Attention, Mlp, Mode, Recompute, Scenario, Transformer, Workload};
use crate::workload::cost::efficiency::GemmShape;
use crate::workload::cost::fp8_casts::fp8_cast_bytes;
use crate::workload::cost::params::LayerShape;
use crate::workload::cost::roofline::{times, OpCost, Roofline, SplitGemm};

/// Costs of one layer on one TP rank for one micro-batch.
pub(crate) struct LayerCost {
    pub qkv: OpCost,
    /// `qkv` in parts, for the decomposed SP AllGather: the kernels before
    /// the GEMM (closing bias-dropout-add, LayerNorm) and the GEMM, whose
    /// rows are the gathered sequence.
    pub qkv_pre: OpCost,
    pub qkv_gemm: SplitGemm,
    /// `mlp_up` in parts, likewise: kernels before, GEMM, GeLU after.
    pub mlp_up_pre: OpCost,
    pub mlp_up_gemm: SplitGemm,
    pub mlp_up_post: OpCost,
    pub attention: OpCost,
    pub proj: SplitGemm,
    pub mlp_up: OpCost,
    pub mlp_down: SplitGemm,
    pub mlp_down_backward: OpCost,
    pub mlp_up_dgrad: OpCost,
    pub mlp_up_wgrad: OpCost,
    pub attention_backward: OpCost,
    /// Part of `attention_backward` that is recomputation (selective).
    pub attention_recompute_flops: f64,
    pub qkv_dgrad: OpCost,
    pub qkv_wgrad: OpCost,
    /// One LayerNorm's forward on the rank's tokens (what `layernorm`
    /// recomputation runs again, twice per layer).
    pub layernorm: OpCost,
    /// The kernels each sublayer's backward starts with (LayerNorm and
    /// bias-dropout-add backward), on the local sequence slice with SP.
    pub backward_pre: OpCost,
    /// The attention core's backward (and its selective recomputation):
    /// `attention_backward` after the projection's two GEMMs.
    pub attention_core_backward: OpCost,
    /// The MLP activation's backward, before the up projection's input gradient.
    pub mlp_up_dgrad_pre: OpCost,
    pub logits: OpCost,
    pub logits_backward: OpCost,
    /// Bytes of the [b, s, h] activation at 2 bytes per value: what the TP
    /// collectives and pipeline sends move (s: the CP rank's share).
    pub activation_bytes: f64,
    /// Bytes of the same activation in TP's all-gathers: in fp8 with
    /// tensorwise scaling, 1 per value, the linear inputs cast before
    /// their gather and the output gradients likewise (torchao's
    /// Float8ColwiseParallel and Float8RowwiseParallel, which torchtitan
    /// applies with tensorwise fp8, `fp8_casts`); else `activation_bytes`.
    pub tp_gather_bytes: f64,
    /// With context parallelism: the attention core's forward on one K/V
    /// block (the rank's queries against seq / cp keys); `attention` is
    /// cp of them.
    pub attention_block: OpCost,
    /// The attention core's backward on one K/V block (with its selective
    /// recomputation): `attention_core_backward` is the diagonal's and cp - 1
    /// of them.
    pub attention_backward_block: OpCost,
    /// The attention core's forward on the rank's own K/V block, the
    /// diagonal of the causal mask (its lower triangle of tiles runs); with
    /// one CP rank, the whole attention core.
    pub attention_diagonal: OpCost,
    /// The diagonal block's backward (with its selective recomputation).
    pub attention_backward_diagonal: OpCost,
    /// Bytes of one CP rank's keys and values on a TP rank (b x seq/cp x
    /// 2 kv_heads x head_dim / t at 2 bytes): what a ring step passes.
    pub kv_block_bytes: f64,
    /// The bias-dropout-add after each row-parallel GEMM's reduction, inside
    /// `mlp_up`, `mlp_up_pre`, `qkv` and `qkv_pre`: what fusion moves into
    /// the collective (`fusion`).
    pub bias_dropout_add: OpCost,
}

/// The layer on one TP rank of one CP rank: every linear op on the rank's
/// seq / cp tokens, its attention on cp blocks of seq / cp keys each (2 x
/// cp load-balanced chunks give every rank the same share of the causal
/// mask, model.md 4d).
pub(crate) fn layer_cost(t: &Transformer, tp: u32, cp: u32, r: &Roofline) -> LayerCost {
    let local = Transformer {
        seq: t.seq / cp.max(1),
        ..t.clone()
    };
    let t = &local;
    let blocks = cp.max(1);
    let (b, s, h) = (
        f64::from(t.micro_batch),
        f64::from(t.seq),
        f64::from(t.hidden),
    );
    let tp_f = f64::from(tp);
    let v = f64::from(t.vocab);
    let tokens = b * s;
    let e = tokens * h; // activation values
    let e_rep = if t.sequence_parallel { e / tp_f } else { e };
    // Attention scores on this rank: b x heads/t x s x s.
    let scores = b * f64::from(t.heads) / tp_f * s * s;
    let head_dim = f64::from(t.head_dim);
    // The attention's width (heads x head_dim; h unless head_dim is given)
    // and its activation values: Q, the context and the projection's input.
    let width = f64::from(t.attention_width());
    let e_attn = tokens * width;
    let heads_rank = f64::from(t.heads) / tp_f;
    let shape = LayerShape::of(t);
    let ffn = f64::from(t.ffn_hidden);

    // Batched attention GEMMs: b x heads/t GEMMs of [s x d] x [d x s] and [s x s] x [s x d].
    let per_head = 2.0 * s * s * head_dim;
    let score_gemm = r.batched(
        GemmShape {
            rows: s,
            inner: head_dim,
            cols: s,
            count: b * heads_rank,
        },
        2.0 * (2.0 * e_attn / tp_f + scores),
    );
    let context_gemm = r.batched(
        GemmShape {
            rows: s,
            inner: s,
            cols: head_dim,
            count: b * heads_rank,
        },
        2.0 * (scores + 2.0 * e_attn / tp_f),
    );
    // Fused scale-mask-softmax reads and writes the scores; dropout reads
    // them, writes them and a 1-byte mask.
    let softmax = r.memory(4.0 * scores);
    let dropout = r.memory(5.0 * scores);
    // FlashAttention is causal (model.md 4): the rank's own block (the
    // diagonal) runs its lower triangle of tiles, every other CP block half
    // (`CausalShare`). The materialised form (2021 Megatron) computes every
    // score and masks them.
    let share = CausalShare::of(s);
    let flash = |share: f64| {
        (t.attention == Attention::Flash)
            .then(|| FlashAttention::cost(r, b * heads_rank, per_head, share))
    };
    let (flash_diagonal, flash) = (flash(share.diagonal), flash(share.off_diagonal));
    let materialised = score_gemm.add(softmax).add(dropout).add(context_gemm);
    let attention_block = flash.map_or(materialised, |f| f.forward);
    let attention_diagonal = flash_diagonal.map_or(materialised, |f| f.forward);
    let attention_core = attention_diagonal.add(times(attention_block, blocks - 1));

    let layernorm = r.memory(4.0 * e_rep);
    let layernorm_bwd = r.memory(6.0 * e_rep);
    let bias_dropout_add = r.memory(7.0 * e_rep);
    let bias_dropout_add_bwd = r.memory(5.0 * e_rep);

    let qkv_gemm = r.gemm(tokens, h, shape.qkv_cols / tp_f);
    let up_gemm = r.gemm(tokens, h, shape.up_cols / tp_f);
    // The activation between the MLP's GEMMs, 2 bytes per value. GELU reads
    // and writes the ffn-wide activation, and in backward reads it and its
    // gradient and writes one gradient. SwiGLU reads the gate and up halves
    // and writes their product; its backward reads both halves and the
    // product's gradient and writes both halves' gradients.
    let inner = tokens * ffn / tp_f;
    let (act_values, act_bwd_values) = match t.mlp {
        Mlp::Gelu => (2.0 * inner, 3.0 * inner),
        Mlp::Swiglu => (3.0 * inner, 5.0 * inner),
    };
    // In fp8 the casts of each linear layer's operands ride with the
    // activation's kernels, once per layer in forward and in backward.
    let (quant, quant_bwd) = fp8_cast_bytes(t, tp, r, tokens);
    let gelu = r.memory(2.0 * act_values + quant);
    let gelu_bwd = r.memory(2.0 * act_bwd_values + quant_bwd);
    let proj = SplitGemm {
        rows: tokens,
        inner: width / tp_f,
        cols: h,
    };
    let mlp_down = SplitGemm {
        rows: tokens,
        inner: ffn / tp_f,
        cols: h,
    };
    let proj_full = proj.chunk(r, 1);
    let down_full = mlp_down.chunk(r, 1);

    // Backward: input gradient and weight gradient, each as costly as the
    // forward GEMM; FlashAttention's backward recomputes the scores inside.
    let materialised_bwd = OpCost {
        time_s: 2.0 * (score_gemm.time_s + context_gemm.time_s)
            + r.memory(5.0 * scores).time_s
            + r.memory(6.0 * scores).time_s,
        flops: 2.0 * (score_gemm.flops + context_gemm.flops),
        memory_s: 2.0 * (score_gemm.memory_s + context_gemm.memory_s)
            + r.memory(5.0 * scores).memory_s
            + r.memory(6.0 * scores).memory_s,
        tiles: score_gemm.add(context_gemm).tiles,
    };
    let attention_core_bwd_block = flash.map_or(materialised_bwd, |f| f.backward);
    let attention_core_bwd_diagonal = flash_diagonal.map_or(materialised_bwd, |f| f.backward);
    let attention_core_bwd =
        attention_core_bwd_diagonal.add(times(attention_core_bwd_block, blocks - 1));
    let mut attention_backward = layernorm_bwd
        .add(bias_dropout_add_bwd)
        .add(proj_full)
        .add(proj_full)
        .add(attention_core_bwd);
    // FlashAttention's backward recomputes the scores (one of its five
    // GEMMs): executed, not model, FLOPs.
    let mut attention_recompute_flops =
        f64::from(blocks) * flash.map_or(0.0, |f| f.recomputed_flops);
    let mut attention_core_backward = attention_core_bwd;
    let mut attention_backward_block = attention_core_bwd_block;
    let mut attention_backward_diagonal = attention_core_bwd_diagonal;
    if t.attention_recompute() == Recompute::Selective {
        attention_backward = attention_backward.add(attention_core);
        attention_core_backward = attention_core_backward.add(attention_core);
        attention_backward_block = attention_backward_block.add(attention_block);
        attention_backward_diagonal = attention_backward_diagonal.add(attention_diagonal);
        attention_recompute_flops += attention_core.flops;
    }

    let logits_gemm = r.gemm_bf16(tokens, h, v / tp_f);
    // Cross-entropy reads and writes the logits a few times (softmax, loss, gradient).
    let cross_entropy = r.memory(8.0 * tokens * v / tp_f);
    let pre_gemm = bias_dropout_add.add(layernorm);
    LayerCost {
        // The previous layer's closing bias-dropout-add runs here.
        qkv: bias_dropout_add.add(layernorm).add(qkv_gemm),
        qkv_pre: pre_gemm,
        qkv_gemm: SplitGemm {
            rows: tokens,
            inner: h,
            cols: shape.qkv_cols / tp_f,
        },
        mlp_up_pre: pre_gemm,
        mlp_up_gemm: SplitGemm {
            rows: tokens,
            inner: h,
            cols: shape.up_cols / tp_f,
        },
        mlp_up_post: gelu,
        attention: attention_core,
        proj,
        mlp_up: bias_dropout_add.add(layernorm).add(up_gemm).add(gelu),
        mlp_down,
        mlp_down_backward: layernorm_bwd
            .add(bias_dropout_add_bwd)
            .add(down_full)
            .add(down_full),
        mlp_up_dgrad: gelu_bwd.add(up_gemm),
        mlp_up_wgrad: up_gemm,
        attention_backward,
        attention_recompute_flops,
        qkv_dgrad: qkv_gemm,
        qkv_wgrad: qkv_gemm,
        backward_pre: layernorm_bwd.add(bias_dropout_add_bwd),
        layernorm,
        attention_core_backward,
        mlp_up_dgrad_pre: gelu_bwd,
        logits: logits_gemm.add(cross_entropy),
        logits_backward: logits_gemm
            .add(logits_gemm)
            .add(r.memory(4.0 * tokens * v / tp_f)),
        activation_bytes: 2.0 * e,
        tp_gather_bytes: r.linear_input_bytes * e,
        bias_dropout_add,
        attention_block,
        attention_backward_block,
        attention_diagonal,
        attention_backward_diagonal,
        kv_block_bytes: 2.0 * tokens * 2.0 * f64::from(t.kv_heads) * head_dim / tp_f,
    }
}

/// FlashAttention-2's block of query rows (the outer loop of its forward)
/// and of key/value columns (the outer loop of its backward): 128 for the
/// head dimensions of these models (Dao 2023, arXiv 2307.08691, section
/// 3.3: block sizes of {64, 128} x {64, 128}, chosen by head dimension).
pub(crate) const FLASH_BLOCK_ROWS: f64 = 128.0;

/// The attention core's FLOPs a causal count leaves out of Megatron's
/// model FLOPs over the whole step, every GPU counted (interface.md:
/// `causal_tflops_per_gpu`): half of the unmasked 4 seq^2 x width per layer
/// and sequence forward, and of the backward's twice that when training.
/// Recomputation is in neither count. Zero for workloads without attention.
pub fn masked_attention_flops(s: &Scenario) -> f64 {
    let Workload::Transformer(t) = &s.workload else {
        return 0.0;
    };
    let seq = f64::from(t.seq);
    let forward = 4.0 * seq * seq * f64::from(t.attention_width());
    let passes = match t.mode {
        Mode::Train => 3.0,
        Mode::Inference => 1.0,
    };
    0.5 * passes * forward * f64::from(t.layers) * f64::from(t.global_batch)
}

/// The share of a K/V block's unmasked tiles a causal FlashAttention kernel
/// runs, on a CP rank holding `local_seq` tokens as Transformer Engine's
/// load-balanced chunks (chunks i and 2cp - 1 - i of 2cp; NVIDIA/
/// TransformerEngine at d0067d0, transformer_engine/pytorch/attention/
/// dot_product_attention/context_parallel.py,
/// `get_seq_chunk_ids_for_reordering_before_attn` and `_after_attn`, lines
/// 236-265). Its ring attention's steps (lines 1796-1826 and the
/// branch after them): step 0 is the "diagonal" section, the rank's own
/// block with the causal mask (`causal_ = section == "diagonal"`, line 993);
/// a step i <= rank the "lower-triangle" section, every query against the
/// first half of the block's keys (`k_part[:, 0, ...]`, line 760);
/// a later step the "upper-triangle" section, the second half of the
/// queries against every key (`q_part[:, 1, ...]`, line 795). Both
/// run half a block. The diagonal runs, of its n x n tiles of
/// FLASH_BLOCK_ROWS, the n (n + 1) / 2 on or below the diagonal. With all
/// of a rank's blocks summed (the diagonal and cp - 1 halves) the causal
/// kernel does about half the unmasked work, as the all-gather form's
/// chunks do too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CausalShare {
    /// Of the rank's own block.
    pub diagonal: f64,
    /// Of every other block.
    pub off_diagonal: f64,
}

impl CausalShare {
    pub fn of(local_seq: f64) -> Self {
        let n = (local_seq / FLASH_BLOCK_ROWS).ceil().max(1.0);
        CausalShare {
            diagonal: (n + 1.0) / (2.0 * n),
            off_diagonal: 0.5,
        }
    }
}

/// The FlashAttention kernels of one layer on one TP rank (FlashAttention-2,
/// Dao 2023, arXiv 2307.08691; FlashAttention-3 on H100), counted as that
/// paper counts them.
///
/// FLOPs: the forward is two GEMMs per head, 4 s^2 d (4bs^2h/t on the
/// rank), the model's convention for the attention core; the paper halves
/// it for a causal mask, and so does the kernel's time here
/// ([`CausalShare`]), but the FLOP counts keep Megatron's unmasked count
/// like the materialised form, so `mfu` stays comparable (the report's
/// `causal_mfu` counts the causal half). The backward is five GEMMs, 2.5
/// times the forward: the scores QK^T recomputed, dV, dP, dQ and dK.
///
/// Time: the kernel family's sustained fraction, measured on the whole
/// kernel ([`crate::workload::cost::efficiency::FlashGeneration`]), times its
/// FLOPs. Its HBM bytes do not bound it: FlashAttention-2's Algorithm 2
/// count, which assumes no reuse in L2 (every query block and dQ in fp32
/// read once per key block), puts FlashAttention-3's measured backward at
/// sequence 16k, head dimension 128, 16 heads above 17 ms of HBM time at
/// H100's achievable bandwidth, where the paper measures it at 561
/// TFLOPs/s, under 10 ms. So the kernels are compute-bound ops here, like
/// the GEMMs; no s x s tensor touches HBM, and none is kept for the
/// backward.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FlashAttention;

/// A FlashAttention layer's two kernels and the part of the backward that
/// recomputes the forward's scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FlashCost {
    pub forward: OpCost,
    pub backward: OpCost,
    pub recomputed_flops: f64,
}

impl FlashAttention {
    /// The two kernels on `r`, running `share` of their tiles: two batched
    /// GEMMs of `per_head` FLOPs for each of `heads` (heads x sequences on
    /// the rank) make the forward, five the backward, each at the
    /// generation's kernel's own fraction of the peak.
    pub fn cost(r: &Roofline, heads: f64, per_head: f64, share: f64) -> FlashCost {
        let f = r.flash;
        FlashCost {
            forward: r.flash(2.0 * heads, per_head, share, f.forward_fraction),
            backward: r.flash(5.0 * heads, per_head, share, f.backward_fraction),
            recomputed_flops: heads * per_head,
        }
    }
}

#[cfg(test)]
mod fp8_tests {
    use super::*;
    use crate::workload::cost::roofline::h100_rooflines as rooflines;

    #[test]
    fn fp8_adds_the_casts_to_the_layer_and_halves_its_linear_gemms() {
        let s = crate::input::presets::scenario("llama3-8b-fsdp").unwrap();
        let crate::model::scenario::Workload::Transformer(t) = &s.workload else {
            unreachable!()
        };
        let (bf16, fp8) = rooflines();
        let (a, b) = (layer_cost(t, 8, 1, &bf16), layer_cost(t, 8, 1, &fp8));
        // The casts ride with the MLP's activation kernels, memory-bound.
        let (forward, backward) = fp8_cast_bytes(t, 8, &fp8, 8192.0);
        let hbm = fp8.hbm_bps;
        assert!((b.mlp_up_post.time_s - a.mlp_up_post.time_s - forward / hbm).abs() < 1e-12);
        assert!(
            (b.mlp_up_dgrad_pre.time_s - a.mlp_up_dgrad_pre.time_s - backward / hbm).abs() < 1e-12
        );
        assert!(forward > 0.0 && backward > 0.0);
        // Attention's core is bf16 in both; the output layer too.
        assert_eq!(a.attention, b.attention);
        assert_eq!(a.logits, b.logits);
    }
}
