//! Memory per GPU (model.md section 4): the weights, gradients and optimizer
//! states of the layers a GPU holds, and the activations of every
//! micro-batch it has in flight, which the pipeline schedule sets. Reported
//! for the fullest GPU.
//!
//! Bytes per parameter follow mixed-precision Adam as ZeRO counts it
//! (Rajbhandari et al. 2020, section 3.1): 2 for the half-precision weight,
//! the gradient buffer at `overlap.grad_bytes` (2 as in ZeRO's count; 4 is
//! Megatron-LM's fp32 `main_grad` accumulation, the buffer its DP reduction
//! sends), and 12 for the fp32 master weight, momentum and variance.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::model::scenario::{
    Attention, DpSharding, GradSync, Mlp, Mode, Precision, Recompute, Scenario, Schedule,
    Transformer, Workload,
};
use crate::output::report::MemoryGb;
use crate::workload::build::schedule::{
    merged_passes, peak_alive_bytes, peak_in_flight, stage_program,
};
use crate::workload::cost::expert_folding::ExpertFolding;
use crate::workload::cost::moe;
use crate::workload::cost::params::{dense_params_at, embedding_params_whole, layer_params};
use crate::workload::cost::stage_layers;

/// Half-precision weight, bytes per parameter.
pub const WEIGHT_BYTES_PER_PARAM: f64 = 2.0;
/// Adam's fp32 master weight, momentum and variance, bytes per parameter.
pub const OPTIMIZER_BYTES_PER_PARAM: f64 = 12.0;

const BYTES_PER_GB: f64 = (1u64 << 30) as f64;

/// Bytes of activations one transformer layer keeps for its backward, per
/// micro-batch, on one TP rank: Korthikanti et al. 2022 (arXiv 2205.05198),
/// section 4 and Table 2, with s the sequence, b the micro-batch, h the
/// hidden size, a the heads and t the TP degree:
/// - no recomputation: sbh(10 + 24/t + 5as/(ht)); with sequence
///   parallelism sbh(34 + 5as/h)/t (both sbh(34 + 5as/h) at t = 1);
/// - selective recomputation (the attention core is recomputed, its
///   5as/h term goes): sbh(10 + 24/t), with sequence parallelism 34sbh/t;
/// - full recomputation keeps only the layer's input, 2sbh (2sbh/t when
///   sequence parallelism shards it).
///
/// With FlashAttention (Dao 2023) the 5as/h term is gone in every form:
/// no scores, softmax or dropout mask of s x s is kept.
///
/// The 24 is the TP-split part, which the layer's shape sets (see
/// [`tp_split_activation_terms`]); the 10 (layer inputs, LayerNorms,
/// dropout masks) and the scores' 5as/h do not change with it.
pub fn activation_bytes_per_layer(t: &Transformer, tp: u32) -> f64 {
    let (s, b, h, a) = (
        f64::from(t.seq),
        f64::from(t.micro_batch),
        f64::from(t.hidden),
        f64::from(t.heads),
    );
    let tp = f64::from(tp);
    let sbh = s * b * h;
    let sp = t.sequence_parallel;
    // FlashAttention keeps no s x s tensor for its backward (only the
    // output and fp32 row statistics, 4 bytes per head and row against
    // the terms' 2h per row: left out like the paper's small terms).
    let attention_scores = match t.attention {
        Attention::Materialized => 5.0 * a * s / h,
        Attention::Flash => 0.0,
    };
    let split = tp_split_activation_terms(t);
    match (t.attention_recompute(), sp) {
        (Recompute::None, false) => sbh * (10.0 + split / tp + attention_scores / tp),
        (Recompute::None, true) => sbh * (10.0 + split + attention_scores) / tp,
        (Recompute::Selective, false) => sbh * (10.0 + split / tp),
        (Recompute::Selective, true) => sbh * (10.0 + split) / tp,
        (Recompute::Full, false) => 2.0 * sbh,
        (Recompute::Full, true) => 2.0 * sbh / tp,
    }
}

/// [`activation_bytes_per_layer`] for layer `layer`: an MoE layer keeps
/// its routed activations (`moe::routed_activation_bytes`) instead of the
/// dense MLP's terms, unless full recomputation keeps only its input; and
/// less where the MoE model's `recompute_modules` discard some:
/// - `layernorm`: both LayerNorms' outputs (2sbh each of Korthikanti et
///   al.'s 10sbh, the QKV's and the MLP's inputs; over t with sequence
///   parallelism) are recomputed (transformer_layer.py:475-527);
/// - `mlp`: a dense layer's MLP is checkpointed from its input, the
///   pre-MLP LayerNorm's output, which stays; its TP-split terms go
///   (transformer_layer.py:528-530, dense layers only).
pub fn activation_bytes_at(t: &Transformer, tp: u32, etp: u32, layer: u32) -> f64 {
    let dense = activation_bytes_per_layer(t, tp);
    if t.recompute == Recompute::Full {
        return dense;
    }
    let sbh = f64::from(t.seq) * f64::from(t.micro_batch) * f64::from(t.hidden);
    let modules = t.recompute_modules();
    let sp_split = if t.sequence_parallel {
        f64::from(tp)
    } else {
        1.0
    };
    let layernorm_outputs = if modules.layernorm {
        2.0 * 2.0 * sbh / sp_split
    } else {
        0.0
    };
    let mlp_terms = sbh * mlp_activation_terms(t) / f64::from(tp);
    match &t.moe {
        Some(m) if m.is_moe_layer(layer) => {
            dense - mlp_terms + moe::routed_activation_bytes(t, m, tp, etp) - layernorm_outputs
        }
        _ if modules.mlp => dense - mlp_terms - layernorm_outputs,
        _ => dense - layernorm_outputs,
    }
}

/// The MLP's part of [`tp_split_activation_terms`].
fn mlp_activation_terms(t: &Transformer) -> f64 {
    let h = f64::from(t.hidden);
    let f = f64::from(t.ffn_hidden);
    match t.mlp {
        Mlp::Gelu => 2.0 * f / h + 2.0 * f / h,
        Mlp::Swiglu => 4.0 * f / h + 2.0 * f / h,
    }
}

/// Korthikanti et al.'s TP-split activation terms, in units of sbh bytes,
/// for this layer's shape. In the paper (GPT, 24): the queries and keys
/// (4) and values (2) kept for the attention core, the projection's input
/// (2), the MLP's 4h-wide GEMM output kept for GeLU (8) and GeLU's output
/// kept for the second GEMM (8). With g = kv_heads / heads the keys and
/// values shrink to 2g each; with an MLP of width f the two MLP terms are
/// 2f/h each for GELU, and for SwiGLU 4f/h (the gate and up outputs it
/// keeps) plus 2f/h (their product, the down projection's input).
pub fn tp_split_activation_terms(t: &Transformer) -> f64 {
    let h = f64::from(t.hidden);
    let f = f64::from(t.ffn_hidden);
    let g = f64::from(t.kv_heads) / f64::from(t.heads);
    let _ = f;
    // The attention's width (heads x head_dim) over h scales its terms.
    let w = f64::from(t.attention_width()) / h;
    let attention = 2.0 * w + 2.0 * g * w + 2.0 * g * w + 2.0 * w;
    attention + mlp_activation_terms(t)
}

/// What one pipeline stage's GPU holds, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageMemory {
    /// Parameters on the GPU (per TP rank) that DP reduces.
    pub params: f64,
    /// The routed experts' parameters on the GPU, which the
    /// expert-data-parallel group (tp x dp / ep) reduces and shards.
    pub expert_params: f64,
    /// The part of `params` in embedding matrices: the input embedding on
    /// the first virtual stage, the output layer on the last.
    pub embedding_params: f64,
    /// Micro-batches whose activations are alive at the peak, in whole-GPU units.
    pub in_flight: f64,
    /// Bytes of activations at that peak.
    pub activation_bytes: f64,
}

/// What decides a stage's peak of forwards in flight: the schedule, the
/// stage, the stages, the micro-batches, the chunks, and whether EP
/// overlap merges its passes (`merged_passes::merged_order`).
type InFlightKey = (Schedule, u32, u32, u32, u32, bool);

/// Stages' peaks of forwards in flight, remembered by what decides them
/// ([`memory_gb_with`]). Building a stage's program is linear in its
/// micro-batches, and a caller that sizes many scenarios sharing a
/// pipeline (the layout search screens thousands: on 1T's 4,096 GPUs,
/// most of its time) builds each once. The answer is the same as without.
#[derive(Default)]
pub struct InFlightMemo(Mutex<HashMap<InFlightKey, f64>>);

impl InFlightMemo {
    /// Entries kept at most: past this the memo starts afresh, so that its
    /// memory stays under a few MB whatever it is asked.
    const MAX_ENTRIES: usize = 100_000;

    fn get(&self, key: InFlightKey, compute: impl FnOnce() -> f64) -> f64 {
        let known = self.0.lock().ok().and_then(|m| m.get(&key).copied());
        if let Some(v) = known {
            return v;
        }
        let v = compute();
        if let Ok(mut m) = self.0.lock() {
            if m.len() >= Self::MAX_ENTRIES {
                m.clear();
            }
            m.insert(key, v);
        }
        v
    }
}

/// Parameters and peak activations of every pipeline stage's GPU.
pub fn stage_memory(s: &Scenario, t: &Transformer) -> Vec<StageMemory> {
    stage_memory_with(s, t, &InFlightMemo::default())
}

/// As [`stage_memory`], the peaks of forwards in flight from `memo`.
fn stage_memory_with(s: &Scenario, t: &Transformer, memo: &InFlightMemo) -> Vec<StageMemory> {
    let p = &s.parallel;
    let chunks = p.virtual_stages;
    let virtual_stages = p.pp * chunks;
    let embedding = embedding_params_whole(t) / f64::from(p.tp);
    // A CP rank keeps the activations of its seq / cp tokens, and its
    // all-to-all buffers hold those tokens only (model.md 4d).
    let local = Transformer {
        seq: t.seq / p.cp.max(1),
        ..t.clone()
    };
    let t_local = &local;
    let train = t.mode == Mode::Train;
    // Inference's working set: a layer's whole forward (see below).
    let forward_working_set = (!train).then(|| {
        let forward = Transformer {
            recompute: Recompute::None,
            ..t_local.clone()
        };
        activation_bytes_per_layer(&forward, p.tp)
    });
    let m = s.micro_batches();
    let split = stage_layers::split(p, t.layers);
    (0..p.pp)
        .map(|stage| {
            let layers: Vec<u32> = (0..chunks)
                .flat_map(|chunk| {
                    let vs = p.schedule.virtual_stage(stage, chunk, p.pp);
                    split[vs as usize].clone()
                })
                .collect();
            // Every layer's activations (a dense model's as one product, as
            // they always were counted).
            let count = layers.len() as f64;
            let moe_layers: Option<f64> = t.moe.as_ref().map(|_| {
                layers
                    .iter()
                    .map(|&l| activation_bytes_at(t_local, p.tp, p.etp, l))
                    .sum()
            });
            let one_layer = activation_bytes_per_layer(t_local, p.tp);
            let expert_params: f64 = match &t.moe {
                Some(m) => layers
                    .iter()
                    .filter(|&&l| m.is_moe_layer(l))
                    .map(|_| moe::expert_params_per_rank(t, m, &ExpertFolding::of(s)))
                    .sum(),
                None => 0.0,
            };
            // The input embedding on the first virtual stage, the output layer
            // (the tied embedding's copy, or its own matrix) on the last, as
            // the builder counts them.
            let mut embedding_params = 0.0;
            if p.schedule.stage_and_chunk(0, p.pp).0 == stage {
                embedding_params += embedding;
            }
            let last = virtual_stages - 1;
            let separate_output = last > 0 || !t.tied_embeddings;
            if separate_output && p.schedule.stage_and_chunk(last, p.pp).0 == stage {
                embedding_params += embedding;
            }
            let params = match &t.moe {
                None => count * layer_params(t, p.tp),
                Some(_) => layers.iter().map(|&l| dense_params_at(t, p.tp, l)).sum(),
            } + embedding_params;
            // The all-to-alls' send and receive buffers.
            let buffers = match &t.moe {
                Some(m) if p.ep > 1 => moe::dispatch_buffer_bytes(t_local, m, p.tp),
                _ => 0.0,
            };
            // Inference keeps no activations for a backward: one layer's
            // worth of one micro-batch is the working set, every tensor the
            // forward makes (recomputation, which only chooses what a
            // backward finds kept, does not apply).
            // Merged passes (EP overlap) keep more forwards in flight.
            let (in_flight, activation_bytes) = if train {
                let key = (
                    p.schedule,
                    stage,
                    p.pp,
                    m,
                    chunks,
                    merged_passes::merges_passes(s),
                );
                let in_flight = memo.get(key, || {
                    let program = stage_program(p.schedule, stage, p.pp, m, chunks, true);
                    let program = merged_passes::merged_order(s, program);
                    peak_in_flight(&program, chunks)
                });
                let kept = match (moe_layers, &p.pipeline_layout) {
                    // A layout's chunks may hold unequal layers (the first
                    // and last none but the embedding or the loss): each
                    // chunk's micro-batches weigh their own layers.
                    (_, Some(_)) => {
                        let per_chunk: Vec<f64> = (0..chunks)
                            .map(|chunk| {
                                let vs = p.schedule.virtual_stage(stage, chunk, p.pp);
                                split[vs as usize]
                                    .clone()
                                    .map(|l| match &t.moe {
                                        Some(_) => activation_bytes_at(t_local, p.tp, p.etp, l),
                                        None => one_layer,
                                    })
                                    .sum()
                            })
                            .collect();
                        let program = stage_program(p.schedule, stage, p.pp, m, chunks, true);
                        peak_alive_bytes(&merged_passes::merged_order(s, program), &per_chunk)
                    }
                    (None, None) => in_flight * count * one_layer,
                    (Some(all), None) => in_flight * all,
                };
                (in_flight, kept + buffers)
            } else {
                (1.0, forward_working_set.unwrap_or(one_layer) + buffers)
            };
            StageMemory {
                params,
                expert_params,
                embedding_params,
                in_flight,
                activation_bytes,
            }
        })
        .collect()
}

/// Shards of (weights, gradients, optimizer states) across the DP replicas.
/// Megatron-LM's distributed optimizer (docs/source/api-guide/dist_optimizer.md,
/// its table of bytes per parameter: 6 + 12/d for bf16 weights with fp32
/// gradients) shards the fp32 master weights and Adam's moments and keeps the
/// whole gradient buffer, which the reduce-scatter writes into. FSDP (Zhao et
/// al. 2023, ZeRO-3) shards all three; gradients accumulated without
/// synchronisation (`grad_sync` "last_micro_batch", PyTorch's `no_sync`)
/// stay unsharded until the last micro-batch.
pub fn dp_shards(s: &Scenario) -> (f64, f64, f64) {
    // CP ranks hold the same weights and reduce with the replicas (model.md 4d).
    let d = f64::from(s.parallel.dp_group());
    match s.parallel.dp_sharding {
        DpSharding::None => (1.0, 1.0, 1.0),
        DpSharding::Optimizer => (1.0, 1.0, d),
        DpSharding::Full => match s.overlap.grad_sync {
            GradSync::EveryMicroBatch => (d, d, d),
            GradSync::LastMicroBatch => (d, 1.0, d),
        },
    }
}

/// Bytes of unsharded parameters FSDP holds on a stage's GPU at its peak,
/// besides the shards: the layer being computed and, with prefetch (DP
/// overlap on), the next one gathered under it; and the embedding matrices
/// the stage holds (FSDP's root unit), gathered with the stage's first
/// layer and kept whole for the rest of the step, as the builder gathers
/// them once (PyTorch's `fully_shard` documentation, `reshard_after_forward`:
/// the root unit is not resharded after forward, since backward would
/// gather it again at once). Zero for the other shardings.
pub fn gathered_weight_bytes(s: &Scenario, t: &Transformer, stage: &StageMemory) -> f64 {
    if s.parallel.dp_sharding != DpSharding::Full {
        return 0.0;
    }
    let layers = if s.overlap.dp { 2.0 } else { 1.0 };
    // The largest layer gathered: with experts, an MoE layer's dense part
    // and its routed experts' shard on this rank.
    let tp = s.parallel.tp;
    let largest = match &t.moe {
        None => layer_params(t, tp),
        Some(m) => (0..t.layers)
            .map(|layer| {
                let experts = if m.is_moe_layer(layer) {
                    moe::expert_params_per_rank(t, m, &ExpertFolding::of(s))
                } else {
                    0.0
                };
                dense_params_at(t, tp, layer) + experts
            })
            .fold(0.0, f64::max),
    };
    let layer_params = layers * largest;
    // In fp8 the gathered layers are read by the GEMMs as fp8: gathered so
    // (`fp8_all_gather`), or cast from the bf16 ones, a copy beside them.
    let layer_bytes = match (t.precision, s.overlap.fp8_all_gather) {
        (Precision::Bf16, _) => WEIGHT_BYTES_PER_PARAM,
        (Precision::Fp8, true) => FP8_WEIGHT_BYTES_PER_PARAM,
        (Precision::Fp8, false) => WEIGHT_BYTES_PER_PARAM + FP8_WEIGHT_BYTES_PER_PARAM,
    };
    layer_params * layer_bytes + stage.embedding_params * WEIGHT_BYTES_PER_PARAM
}

/// Bytes of an fp8 weight copy per parameter.
pub const FP8_WEIGHT_BYTES_PER_PARAM: f64 = 1.0;

/// Bytes of the fp8 copies of the layers' weights a GPU keeps besides its
/// bf16 ones when the linear layers run in fp8 and the weights are not
/// FSDP's (whose gathered copies `gathered_weight_bytes` counts): one per
/// layer parameter of the stage, cast once and read by every micro-batch.
fn fp8_weight_copy_bytes(s: &Scenario, t: &Transformer, stage: &StageMemory) -> f64 {
    if t.precision != Precision::Fp8 || s.parallel.dp_sharding == DpSharding::Full {
        return 0.0;
    }
    (stage.params - stage.embedding_params + stage.expert_params) * FP8_WEIGHT_BYTES_PER_PARAM
}

/// The memory report of the fullest GPU.
pub fn memory_gb(s: &Scenario) -> MemoryGb {
    memory_gb_with(s, &InFlightMemo::default())
}

/// As [`memory_gb`], the stages' peaks of forwards in flight from `memo`.
pub fn memory_gb_with(s: &Scenario, memo: &InFlightMemo) -> MemoryGb {
    let capacity = s.hardware.hbm_gb;
    let (weights_b, grads_b, optimizer_b, activations_b) = match &s.workload {
        Workload::Transformer(t) => {
            let train = t.mode == Mode::Train;
            let (weight_shards, grad_shards, optimizer_shards) = dp_shards(s);
            let grad_bytes = f64::from(s.overlap.grad_bytes);
            // The routed experts' optimizer states shard over the ranks
            // holding the same expert shard, as the distributed optimizer
            // shards the rest over DP; the CP ranks are among them.
            let expert_optimizer_shards = match s.parallel.dp_sharding {
                DpSharding::None => 1.0,
                _ => f64::from(ExpertFolding::of(s).edp()),
            };
            // FSDP shards the experts' weights and gradients over the same
            // group (torchtitan's expert-DP mesh), as `dp_shards` does the
            // rest over DP.
            let (expert_weight_shards, expert_grad_shards) = match s.parallel.dp_sharding {
                DpSharding::Full => {
                    let edp = f64::from(ExpertFolding::of(s).edp());
                    match s.overlap.grad_sync {
                        GradSync::EveryMicroBatch => (edp, edp),
                        GradSync::LastMicroBatch => (edp, 1.0),
                    }
                }
                _ => (1.0, 1.0),
            };
            stage_memory_with(s, t, memo)
                .into_iter()
                .map(|m| {
                    let e = m.expert_params;
                    let (grads, optimizer) = if train {
                        (
                            m.params * grad_bytes / grad_shards
                                + e * grad_bytes / expert_grad_shards,
                            m.params * OPTIMIZER_BYTES_PER_PARAM / optimizer_shards
                                + e * OPTIMIZER_BYTES_PER_PARAM / expert_optimizer_shards,
                        )
                    } else {
                        (0.0, 0.0)
                    };
                    (
                        m.params * WEIGHT_BYTES_PER_PARAM / weight_shards
                            + e * WEIGHT_BYTES_PER_PARAM / expert_weight_shards
                            + gathered_weight_bytes(s, t, &m)
                            + fp8_weight_copy_bytes(s, t, &m),
                        grads,
                        optimizer,
                        m.activation_bytes,
                    )
                })
                .max_by(|a, b| (a.0 + a.1 + a.2 + a.3).total_cmp(&(b.0 + b.1 + b.2 + b.3)))
                .unwrap_or_default()
        }
        // A collective holds its send and receive buffers.
        Workload::Collective(c) => (0.0, 0.0, 0.0, 2.0 * c.bytes),
        // The micro-benchmark holds its GEMM's operands and output.
        Workload::MatmulAllreduce(mm) => {
            let (m, n, k) = (f64::from(mm.m), f64::from(mm.n), f64::from(mm.k));
            (2.0 * k * n, 0.0, 0.0, 2.0 * (m * k + m * n))
        }
    };
    let gb = |bytes: f64| bytes / BYTES_PER_GB;
    let (weights, gradients, optimizer, activations) = (
        gb(weights_b),
        gb(grads_b),
        gb(optimizer_b),
        gb(activations_b),
    );
    MemoryGb::from_parts(weights, gradients, optimizer, activations, capacity)
}
