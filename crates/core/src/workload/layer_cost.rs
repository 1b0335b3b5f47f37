//! What each op of one transformer layer costs on one TP rank: FLOPs from
//! Megatron's counts (model.md section 4) and HBM bytes of the memory-bound
//! kernels around them, each kernel timed by the roofline.
//!
//! Elementwise kernels are counted at fp16/bf16 (2 bytes per value) with the
//! fusions Megatron-LM had in 2021-22: fused scale-mask-softmax, fused
//! bias-GeLU, fused bias-dropout-add. Without sequence parallelism the
//! LayerNorms and dropouts run on the full [b, s, h] activation on every TP
//! rank; with it, on 1/t of it.

use crate::model::hardware::{Hardware, HardwarePreset};
use crate::model::scenario::{
    Attention, Mlp, Mode, Precision, Recompute, Scenario, Transformer, Workload,
};
use crate::workload::efficiency::{
    flash_efficiency, flash_generation, gemm_generation, FlashGeneration, GemmGeneration, GemmShape,
};
use crate::workload::fp8_casts::fp8_cast_bytes;
use crate::workload::plan_memo::PlanMemo;

/// One op: seconds at full speed on an idle GPU, and its FLOPs. An op may
/// fuse several kernels; `memory_s` is the part of `time_s` spent in its
/// memory-bound kernels (the roofline's HBM side), which shares HBM with
/// collectives, while the rest runs on SMs (model.md section 3).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct OpCost {
    pub time_s: f64,
    pub flops: f64,
    pub memory_s: f64,
    /// Thread blocks (output tiles times split-K parts) of the op's longest
    /// compute-bound GEMM kernel (0: none): how its waves stretch when
    /// collectives take SMs (`interference`).
    pub tiles: f64,
}

impl OpCost {
    /// Seconds of the compute-bound kernels.
    fn compute_s(&self) -> f64 {
        self.time_s - self.memory_s
    }

    /// Two kernels run back to back, as one op.
    pub(crate) fn add(self, other: OpCost) -> OpCost {
        OpCost {
            time_s: self.time_s + other.time_s,
            flops: self.flops + other.flops,
            memory_s: self.memory_s + other.memory_s,
            tiles: if other.compute_s() > self.compute_s() {
                other.tiles
            } else {
                self.tiles
            },
        }
    }

    /// A fused op without one of the kernels it was summed from (a split
    /// backward's B is the whole backward without its weight gradients).
    pub(crate) fn without(self, part: OpCost) -> OpCost {
        OpCost {
            time_s: self.time_s - part.time_s,
            flops: self.flops - part.flops,
            memory_s: (self.memory_s - part.memory_s).max(0.0),
            tiles: self.tiles,
        }
    }

    /// A kernel of `compute_s` on SMs and `memory_s` through HBM: the
    /// roofline's slower side decides its time and which resource it needs.
    fn roofline(compute_s: f64, memory_s: f64, flops: f64, tiles: f64) -> OpCost {
        let memory_bound = memory_s > compute_s;
        OpCost {
            time_s: compute_s.max(memory_s),
            flops,
            memory_s: if memory_bound { memory_s } else { 0.0 },
            tiles: if memory_bound { 0.0 } else { tiles },
        }
    }
}

pub(crate) struct Roofline {
    pub peak_tflops: f64,
    /// HBM bandwidth a streaming kernel reaches, bytes per second.
    pub hbm_bps: f64,
    /// The peak the linear layers' GEMMs run at: the FP8 peak in fp8,
    /// else `peak_tflops` (model.md 4e).
    pub linear_peak_tflops: f64,
    /// Bytes of a linear GEMM's input values: 1 in fp8, 2 in bf16.
    pub linear_input_bytes: f64,
    /// How the GPU's generation runs a GEMM: tiles, waves, fixed cost.
    pub gemm: GemmGeneration,
    /// How it runs the linear layers' GEMMs: `gemm`, at the FP8 sustained
    /// fraction in fp8 (model.md 4e).
    pub linear_gemm: GemmGeneration,
    /// SMs per GPU: how many tiles one wave runs.
    pub sms: u32,
    /// The generation's FlashAttention kernels (model.md 4).
    pub flash: FlashGeneration,
    /// How many ranks share each linear weight's fp8 cast: FSDP's shard
    /// count when FSDP gathers fp8 weights (each rank casts its shard
    /// before the gather, `fp8_casts`), else 1.
    pub fp8_weight_shards: f64,
    /// The GEMM plans made so far, by peak and shape (`PlanMemo`).
    plans: PlanMemo,
}

impl Roofline {
    /// The roofline of `hw`, a GPU of `generation`'s preset, in bf16.
    pub fn of(hw: &Hardware, generation: HardwarePreset) -> Self {
        Self::with_precision(hw, generation, Precision::Bf16)
    }

    /// The roofline of `hw` with the linear layers in `precision`.
    pub fn with_precision(hw: &Hardware, generation: HardwarePreset, precision: Precision) -> Self {
        let gemm = gemm_generation(generation);
        let (linear_peak_tflops, linear_input_bytes, linear_gemm) = match precision {
            Precision::Bf16 => (hw.peak_tflops, 2.0, gemm),
            Precision::Fp8 => (hw.fp8_tflops, 1.0, gemm.fp8()),
        };
        Self {
            peak_tflops: hw.peak_tflops,
            hbm_bps: hw.hbm_achievable_bps(),
            linear_peak_tflops,
            linear_input_bytes,
            gemm,
            linear_gemm,
            sms: hw.sms,
            flash: flash_generation(generation),
            fp8_weight_shards: 1.0,
            plans: PlanMemo::default(),
        }
    }

    /// A kernel that only streams `bytes` through HBM.
    pub fn memory(&self, bytes: f64) -> OpCost {
        let memory_s = bytes / self.hbm_bps;
        OpCost {
            time_s: memory_s,
            flops: 0.0,
            memory_s,
            tiles: 0.0,
        }
    }

    /// A cuBLAS GEMM kernel of `shape` at `peak_tflops`, moving `bytes`
    /// through HBM: its tiles' waves over every SM, or its bytes, whichever
    /// is slower.
    fn tiled(
        &self,
        gemm: &GemmGeneration,
        peak_tflops: f64,
        shape: GemmShape,
        bytes: f64,
    ) -> OpCost {
        // The plan once: its time on every SM and its blocks, which the
        // engine stretches into waves beside collectives.
        let inputs = [
            gemm.sustained_fraction,
            gemm.tile_rows,
            gemm.tile_cols,
            gemm.tile_depth,
            peak_tflops,
            self.hbm_bps,
            f64::from(self.sms),
            shape.rows,
            shape.inner,
            shape.cols,
            shape.count,
        ];
        let plan = self.plans.get_or(inputs, || {
            gemm.plan(shape, peak_tflops, self.hbm_bps, self.sms)
        });
        let compute_s = gemm.planned_s(shape, &plan, self.sms);
        OpCost::roofline(compute_s, bytes / self.hbm_bps, shape.flops(), plan.blocks)
    }

    /// `shape.count` GEMMs in one batched cuBLAS kernel (heads x sequences
    /// of the attention scores, or one per expert of a grouped GEMM), in
    /// bf16.
    pub fn batched(&self, shape: GemmShape, bytes: f64) -> OpCost {
        self.tiled(&self.gemm, self.peak_tflops, shape, bytes)
    }

    /// `count` GEMMs of `flops_each` (unmasked) inside a FlashAttention
    /// kernel that runs `share` of them (the causal mask skips the rest):
    /// not cuBLAS tiles, so at the kernel family's own `peak_fraction`. Its
    /// FLOPs stay the unmasked count (Megatron's model FLOPs).
    pub fn flash(&self, count: f64, flops_each: f64, share: f64, peak_fraction: f64) -> OpCost {
        let flops = count * flops_each;
        let efficiency = flash_efficiency(peak_fraction, flops_each);
        let compute_s = share * flops / (self.peak_tflops * 1e12 * efficiency);
        // Compute-bound, at the measured fraction (see `FlashAttention`).
        OpCost::roofline(compute_s, 0.0, flops, 0.0)
    }

    /// A linear layer's GEMM [rows x inner] x [inner x cols]: in bf16 at 2
    /// bytes per value; in fp8 its inputs at 1 byte and its bf16 output at
    /// 2, at the FP8 peak (torch._scaled_mm, as torchtitan's Float8Linear)
    /// and the FP8 sustained fraction measured with that call
    /// (`efficiency::HOPPER_FP8_SUSTAINED_FRACTION`), not the bf16 one.
    pub fn gemm(&self, rows: f64, inner: f64, cols: f64) -> OpCost {
        let bytes = self.linear_input_bytes * (rows * inner + inner * cols) + 2.0 * rows * cols;
        self.tiled(
            &self.linear_gemm,
            self.linear_peak_tflops,
            GemmShape::single(rows, inner, cols),
            bytes,
        )
    }

    /// A GEMM that stays in bf16 whatever the precision (the output layer,
    /// which torchtitan's Float8 conversion leaves out).
    pub fn gemm_bf16(&self, rows: f64, inner: f64, cols: f64) -> OpCost {
        let bytes = 2.0 * (rows * inner + inner * cols + rows * cols);
        self.tiled(
            &self.gemm,
            self.peak_tflops,
            GemmShape::single(rows, inner, cols),
            bytes,
        )
    }

    /// Whether the linear layers run in fp8.
    pub fn fp8(&self) -> bool {
        self.linear_input_bytes < 2.0
    }
}

/// A row-parallel GEMM that may be split into chunks along its rows; its
/// output is what the TP collective reduces.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SplitGemm {
    pub rows: f64,
    pub inner: f64,
    pub cols: f64,
}

impl SplitGemm {
    pub fn chunk(&self, r: &Roofline, chunks: u32) -> OpCost {
        r.gemm(self.rows / f64::from(chunks), self.inner, self.cols)
    }

    /// The input gradient's GEMM of this forward GEMM: [rows x cols] x
    /// [cols x inner], split along the same rows (tokens).
    pub fn input_grad(&self) -> SplitGemm {
        SplitGemm {
            rows: self.rows,
            inner: self.cols,
            cols: self.inner,
        }
    }

    /// One of `chunks` pieces of the weight gradient's GEMM, [inner x rows]
    /// x [rows x cols], split along the rows (tokens) it sums over: what a
    /// decomposed AllGather feeds it slice by slice.
    pub fn weight_grad_chunk(&self, r: &Roofline, chunks: u32) -> OpCost {
        r.gemm(self.inner, self.rows / f64::from(chunks), self.cols)
    }
}

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

/// `op` run `n` times back to back, as one op.
pub(crate) fn times(op: OpCost, n: u32) -> OpCost {
    let n = f64::from(n);
    OpCost {
        time_s: op.time_s * n,
        flops: op.flops * n,
        memory_s: op.memory_s * n,
        tiles: op.tiles,
    }
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
/// kernel ([`crate::workload::efficiency::FlashGeneration`]), times its
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
                + crate::workload::moe::moe_dense_params_whole(t, m)
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
            let routed = crate::workload::moe::routed_params_whole(t, m);
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
            let routed = crate::workload::moe::routed_params_whole(t, m);
            let active = f64::from(m.top_k) * routed / f64::from(m.experts);
            model_params(t) - moe_layers * (routed - active)
        }
    }
}

/// Bytes the optimizer step moves per parameter: mixed-precision Adam reads
/// and writes the fp32 master weight and both moments (24 bytes), reads the
/// gradient and writes the fp16 weight (4 bytes).
pub(crate) const OPTIMIZER_BYTES_PER_PARAM: f64 = 28.0;

#[cfg(test)]
mod fp8_tests {
    use super::*;
    use crate::model::hardware::HardwarePreset;

    fn rooflines() -> (Roofline, Roofline) {
        let hw = HardwarePreset::DgxH100.hardware();
        (
            Roofline::with_precision(&hw, HardwarePreset::DgxH100, Precision::Bf16),
            Roofline::with_precision(&hw, HardwarePreset::DgxH100, Precision::Fp8),
        )
    }

    #[test]
    fn an_fp8_gemm_that_is_compute_bound_runs_at_its_own_sustained_fraction_of_the_fp8_peak() {
        let (bf16, fp8) = rooflines();
        // Llama-3-8B's MLP up projection on 8192 tokens: compute-bound in both.
        let (a, b) = (
            bf16.gemm(8192.0, 4096.0, 28672.0),
            fp8.gemm(8192.0, 4096.0, 28672.0),
        );
        assert_eq!((a.memory_s, b.memory_s), (0.0, 0.0));
        assert_eq!(a.flops, b.flops);
        // H100: 989 bf16 and 1979 fp8 dense TFLOP/s, the same tiles, each
        // at its own measured sustained fraction (MAMF: 80.1% bf16, 70.9%
        // fp8), so an fp8 GEMM takes 0.565 of the bf16 time, not half; the
        // kernel's fixed cost does not shrink.
        let fixed_s = bf16.gemm.fixed_us * 1e-6;
        let want = (989.0 * (792.1 / 989.0)) / (1979.0 * (1402.6 / 1979.0));
        let ratio = (b.time_s - fixed_s) / (a.time_s - fixed_s);
        assert!((ratio - want).abs() < 1e-12, "{ratio} {a:?} {b:?}");
        assert!((0.56..0.57).contains(&ratio), "{ratio}");
    }

    #[test]
    fn a_memory_bound_kernel_takes_the_same_time_in_fp8() {
        let (bf16, fp8) = rooflines();
        let bytes = 64.0 * 1024.0 * 1024.0;
        assert_eq!(bf16.memory(bytes), fp8.memory(bytes));
        assert!(bf16.memory(bytes).memory_s > 0.0);
        // Attention's batched GEMMs stay bf16.
        let scores = GemmShape {
            rows: 8192.0,
            inner: 128.0,
            cols: 8192.0,
            count: 32.0,
        };
        assert_eq!(bf16.batched(scores, bytes), fp8.batched(scores, bytes));
    }

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
