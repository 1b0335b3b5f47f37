//! The scenario as the simulator reads it: complete and validated, plain
//! data. How users write it (every field optional) is `input::parse`.

use serde::{Deserialize, Serialize};

use crate::model::hardware::{Hardware, HardwarePreset};

/// What is simulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    /// A GPT-style transformer step, 3D parallel.
    Transformer,
    /// The CoCoNet micro-benchmark: one GEMM and the AllReduce of its output.
    MatmulAllreduce,
    /// One collective over every GPU of the hardware, as nccl-tests runs it.
    Collective,
}

/// The collective a `workload.kind: "collective"` scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveOp {
    /// nccl-tests' all_reduce_perf.
    AllReduce,
    /// nccl-tests' all_gather_perf.
    AllGather,
    /// nccl-tests' reduce_scatter_perf.
    ReduceScatter,
    /// nccl-tests' alltoall_perf.
    AllToAll,
}

impl CollectiveOp {
    /// Every collective, in the order the field lists them.
    pub const ALL: [CollectiveOp; 4] = [
        CollectiveOp::AllReduce,
        CollectiveOp::AllGather,
        CollectiveOp::ReduceScatter,
        CollectiveOp::AllToAll,
    ];

    /// nccl-tests' bus factor: busbw = algbw x this for `ranks` ranks
    /// (doc/PERFORMANCE.md: 2(n-1)/n for AllReduce, (n-1)/n for the others).
    pub fn bus_factor(self, ranks: u32) -> f64 {
        let n = f64::from(ranks.max(1));
        match self {
            CollectiveOp::AllReduce => 2.0 * (n - 1.0) / n,
            _ => (n - 1.0) / n,
        }
    }
}

/// Training or inference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Forward, backward and the DP gradient reduction.
    Train,
    /// Forward only.
    Inference,
}

/// Activation recomputation (model.md section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recompute {
    /// Activations are kept.
    None,
    /// The attention core runs again before its backward.
    Selective,
    /// The whole forward runs again before each backward.
    Full,
}

/// The form of a layer's MLP block (model.md section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mlp {
    /// GPT: two GEMMs, h -> ffn_hidden -> h, with a GELU between.
    Gelu,
    /// Llama: three GEMMs, gate and up projections to ffn_hidden, their
    /// SiLU-gated product projected down to h.
    Swiglu,
}

/// How a layer computes its attention core (model.md section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Attention {
    /// 2021 Megatron: the s x s scores of every head written to HBM, then
    /// softmax and dropout over them, all kept for the backward.
    Materialized,
    /// FlashAttention-2 (Dao 2023): scores tiled in on-chip memory, never
    /// in HBM; the backward recomputes them from Q, K, V and the softmax
    /// statistics.
    Flash,
}

/// The number format of the linear layers' GEMMs (model.md section 4e).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// bf16 everywhere, at the GPU's dense bf16 peak.
    #[default]
    Bf16,
    /// The linear layers' GEMMs in FP8 (tensorwise scaling, as torchtitan's
    /// Float8 training), at the GPU's FP8 peak; attention stays bf16.
    Fp8,
}

impl Precision {
    /// Its name in scenarios and reports.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
        }
    }
}

/// How context parallelism moves keys and values (model.md section 4d).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CpMode {
    /// Ring attention (Megatron-LM, torchtitan): cp - 1 steps, each passing
    /// a K/V block to the next rank while a block's attention computes.
    Ring,
    /// Llama 3's: all-gather K/V before attention, reduce-scatter their
    /// gradients in the backward.
    Allgather,
}

impl CpMode {
    /// Its name in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            CpMode::Ring => "ring",
            CpMode::Allgather => "allgather",
        }
    }
}

/// Whether compute and communication of a GPU slow each other when they
/// overlap (model.md section 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interference {
    /// They share the GPU's SMs and HBM bandwidth.
    Modelled,
    /// Free overlap: neither ever slows the other.
    Off,
}

/// The pipeline schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// Every forward, then every backward.
    Gpipe,
    /// One forward, one backward in the steady state.
    #[serde(rename = "1f1b")]
    OneFOneB,
    /// 1F1B over `virtual_stages` chunks per GPU.
    Interleaved,
    /// Zero bubble with 1F1B's activation memory (Qi et al. 2024, ZB-H1).
    #[serde(rename = "zb-1p")]
    ZeroBubble1p,
    /// Zero bubble with twice 1F1B's activation memory (Qi et al. 2024, ZB-H2).
    #[serde(rename = "zb-2p")]
    ZeroBubble2p,
    /// Zero bubble on two chunks per GPU in a V shape (Qi et al. 2024, ZB-V).
    #[serde(rename = "zb-v")]
    ZeroBubbleV,
    /// DeepSeek's DualPipe cut in half to a V shape (DualPipe README).
    #[serde(rename = "dualpipe-v")]
    DualPipeV,
}

/// How data parallelism shards the training state (model.md section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DpSharding {
    /// Every replica holds everything and all-reduces its gradients.
    None,
    /// Megatron's distributed optimizer (ZeRO-1/2): gradients are
    /// reduce-scattered, optimizer states sharded, updated parameters
    /// all-gathered.
    Optimizer,
    /// FSDP (ZeRO-3): parameters live sharded and each layer's are gathered
    /// before its forward and its backward.
    Full,
}

/// How TP overlaps its collectives with the GEMMs beside them
/// (`overlap.tp_mode`, model.md section 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TpMode {
    /// CoCoNet: each row-parallel GEMM in `tp_chunks`, each chunk's
    /// collective running while the next chunk computes.
    Chunked,
    /// Korthikanti et al. as Megatron-LM implements it: GEMMs whole; in the
    /// backward the layer input's AllGather runs under the input-gradient
    /// GEMM and the input gradient's ReduceScatter (AllReduce without
    /// sequence parallelism) under the weight-gradient GEMM, each launched
    /// ahead of its GEMM.
    Megatron,
    /// PyTorch Async TP: with sequence parallelism each AllGather and
    /// ReduceScatter decomposed into the group's ring steps, copy-engine
    /// transfers under the GEMM pieces; without it, as `Chunked`.
    Async,
}

impl TpMode {
    /// The first version's rule, the default when a scenario names none:
    /// Async TP with sequence parallelism, else CoCoNet's chunks.
    pub fn first_version(sequence_parallel: bool) -> Self {
        if sequence_parallel {
            TpMode::Async
        } else {
            TpMode::Chunked
        }
    }
}

/// When FSDP reduce-scatters gradients under gradient accumulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GradSync {
    /// After each layer's backward on every micro-batch.
    EveryMicroBatch,
    /// Only on the last micro-batch (gradients accumulate unsharded until then).
    LastMicroBatch,
}

/// How a mixture-of-experts layer moves tokens to its experts and back
/// (model.md section 4c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dispatcher {
    /// NCCL's all-to-all: every token to each rank holding one of its
    /// experts, NVLink inside a node and the NIC across nodes.
    Alltoall,
    /// DeepEP (DeepSeek-V3 section 3.2.2): each token reaches at most
    /// `max_nodes_per_token` nodes, crossing InfiniBand once to the
    /// same-index GPU of each, then NVLink inside it.
    Deepep,
}

impl Dispatcher {
    /// Whether it may carry tokens in FP8 with their scales
    /// (`Moe::fp8_dispatch`): DeepEP's dispatch takes BF16 or an FP8 tuple
    /// (deepseek-ai/DeepEP dd758ca, README.md:177-187); Megatron-LM's
    /// all-to-all dispatcher sends BF16 (NVIDIA/Megatron-LM d98e8a6,
    /// transformer_config.py:1776-1783 refuses an FP8 wire outside its
    /// NCCL-EP backend).
    pub fn carries_fp8(self) -> bool {
        self == Dispatcher::Deepep
    }
}

/// The mixture-of-experts layers of a transformer (model.md section 4c).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Moe {
    /// Routed experts per MoE layer.
    pub experts: u32,
    /// Experts each token is routed to.
    pub top_k: u32,
    /// Each expert's SwiGLU inner width.
    pub expert_ffn_hidden: u32,
    /// Shared experts, run on every token beside the routed ones.
    pub shared_experts: u32,
    /// The first layers keep a dense MLP.
    pub dense_layers: u32,
    /// How tokens reach their experts.
    pub dispatcher: Dispatcher,
    /// DeepEP's node-limited routing: nodes each token may reach.
    pub max_nodes_per_token: u32,
    /// Tokens of the busiest expert over the mean (1: balanced).
    pub imbalance: f64,
    /// SMs DeepEP's kernels hold while they run.
    pub deepep_sms: u32,
    /// Megatron-LM's `recompute_modules`: what the backward recomputes
    /// instead of keeping.
    pub recompute: crate::model::recompute_modules::RecomputeModules,
    /// The dispatched token copies kept for the backward in FP8 with one
    /// fp32 scale per 128 values instead of BF16 (DeepSeek-V3 section 3.3).
    pub fp8_dispatch_cache: bool,
    /// The experts' SwiGLU inputs (routed and shared) kept for the backward
    /// in FP8 with one fp32 scale per 128 values instead of BF16
    /// (DeepSeek-V3 section 3.3.2).
    pub fp8_swiglu_cache: bool,
    /// What travels towards the experts (the forward dispatch and the
    /// backward's mirror of the combine) goes in FP8 with one fp32 scale
    /// per 128 values instead of BF16 (DeepSeek-V3 section 3.3.2).
    pub fp8_dispatch: bool,
}

impl Moe {
    /// Whether layer `layer` (0-based) is an MoE layer.
    pub fn is_moe_layer(&self, layer: u32) -> bool {
        layer >= self.dense_layers
    }
}

/// A GPT-style transformer (model.md section 4).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transformer {
    /// Training or inference.
    pub mode: Mode,
    /// Transformer layers L.
    pub layers: u32,
    /// Hidden size h.
    pub hidden: u32,
    /// Attention heads a.
    pub heads: u32,
    /// Sequence length s, tokens.
    pub seq: u32,
    /// Vocabulary size V.
    pub vocab: u32,
    /// Micro-batch size b, sequences.
    pub micro_batch: u32,
    /// Global batch size B, sequences per step.
    pub global_batch: u32,
    /// Activation recomputation.
    pub recompute: Recompute,
    /// Sequence parallelism (TP's AllReduce becomes ReduceScatter + AllGather).
    pub sequence_parallel: bool,
    /// Key/value heads: `heads` for multi-head attention, fewer for
    /// grouped-query attention (the K and V projections shrink to
    /// kv_heads x head_dim). Divides `heads`.
    pub kv_heads: u32,
    /// The MLP's inner width (4 x hidden for GPT).
    pub ffn_hidden: u32,
    /// The MLP's form: GELU (two GEMMs) or SwiGLU (three).
    pub mlp: Mlp,
    /// Whether the input embedding and the output layer share one matrix.
    pub tied_embeddings: bool,
    /// The attention core's kernels: materialised scores or FlashAttention.
    pub attention: Attention,
    /// The linear layers' number format.
    pub precision: Precision,
    /// Width of one attention head (hidden / heads unless given): Q is
    /// heads x head_dim wide, K and V kv_heads x head_dim each.
    pub head_dim: u32,
    /// The mixture of experts, if the model has one (dense otherwise).
    pub moe: Option<Moe>,
}

impl Transformer {
    /// The attention's width, heads x head_dim (hidden by default).
    pub fn attention_width(&self) -> u32 {
        self.heads * self.head_dim
    }

    /// Whether layer `layer` replaces its MLP by experts.
    pub fn is_moe_layer(&self, layer: u32) -> bool {
        self.moe.as_ref().is_some_and(|m| m.is_moe_layer(layer))
    }

    /// The recomputation the attention core's activations follow:
    /// `workload.recompute`, or selective where the MoE model's
    /// `recompute_modules` names `core_attn` (Megatron-LM's selective
    /// granularity recomputes the attention core then, attention.py:394).
    pub fn attention_recompute(&self) -> Recompute {
        let core_attn = self.moe.as_ref().is_some_and(|m| m.recompute.core_attn);
        if self.recompute == Recompute::None && core_attn {
            Recompute::Selective
        } else {
            self.recompute
        }
    }

    /// Megatron-LM's `recompute_modules` of the MoE model (none for a dense one).
    pub fn recompute_modules(&self) -> crate::model::recompute_modules::RecomputeModules {
        self.moe.as_ref().map(|m| m.recompute).unwrap_or_default()
    }
}

/// The CoCoNet micro-benchmark: one GEMM [m x k] x [k x n], then an AllReduce
/// of its [m x n] output over the TP group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatmulAllreduce {
    /// Rows of the GEMM's output.
    pub m: u32,
    /// Columns of the GEMM's output.
    pub n: u32,
    /// The inner dimension.
    pub k: u32,
}

/// One collective of `bytes` over every GPU of the hardware
/// (`workload.kind: "collective"`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CollectiveBench {
    /// Which collective.
    pub collective: CollectiveOp,
    /// The buffer's bytes (nccl-tests' "size").
    pub bytes: f64,
}

/// What one step computes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Workload {
    /// A transformer step.
    Transformer(Transformer),
    /// The MatMul + AllReduce micro-benchmark.
    MatmulAllreduce(MatmulAllreduce),
    /// One collective over every GPU.
    Collective(CollectiveBench),
}

/// How the GPUs split the work: tp x cp x pp x dp = GPUs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Parallel {
    /// Tensor-parallel degree, inside a node.
    pub tp: u32,
    /// Pipeline-parallel degree (stages).
    pub pp: u32,
    /// Data-parallel degree (replicas).
    pub dp: u32,
    /// The pipeline schedule.
    pub schedule: Schedule,
    /// Model chunks per GPU for the interleaved schedule (1 otherwise).
    pub virtual_stages: u32,
    /// Each TP rank sends 1/tp of a stage boundary over its own NIC.
    pub scatter_gather: bool,
    /// How the DP replicas shard weights, gradients and optimizer states.
    pub dp_sharding: DpSharding,
    /// Expert-parallel degree: the experts spread over this many ranks of
    /// each stage's tp x dp (Megatron-LM's MoE parallel folding), every
    /// etp-th one.
    pub ep: u32,
    /// Expert tensor-parallel degree: each routed expert's GEMMs split over
    /// this many consecutive ranks, inside a TP group (model.md 4c).
    pub etp: u32,
    /// Context-parallel degree: ranks that split each sequence (1: none).
    pub cp: u32,
    /// How the CP ranks exchange keys and values.
    pub cp_mode: CpMode,
    /// What each virtual stage holds, when not the even split
    /// (`workload::cost::stage_layers`).
    pub pipeline_layout: Option<crate::model::pipeline_layout::PipelineLayout>,
}

impl Parallel {
    /// Ranks that reduce each gradient: the DP replicas times the CP ranks,
    /// which hold the same weights (model.md 4d).
    pub fn dp_group(&self) -> u32 {
        self.dp * self.cp
    }
}

/// The overlap switches and their knobs (model.md section 5).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overlap {
    /// TP collectives overlapped with chunked GEMMs.
    pub tp: bool,
    /// Asynchronous pipeline sends.
    pub pp: bool,
    /// DP buckets reduced during backward.
    pub dp: bool,
    /// Chunks each TP GEMM is split into when TP overlap is on.
    pub tp_chunks: u32,
    /// How TP overlap runs (chunked, Megatron's, Async TP).
    pub tp_mode: TpMode,
    /// DP gradient bucket size, MB.
    pub bucket_mb: f64,
    /// Bytes per gradient value in the DP reduction.
    pub grad_bytes: u32,
    /// Chunks of CoCoNet's sliced pipeline boundary (ReduceScatter, slice
    /// sends, AllGather pipelined with each other); 1 keeps Megatron's
    /// scatter/gather, one step after another.
    pub pp_chunks: u32,
    /// TP collectives fused with the bias, dropout and residual add after
    /// them (CoCoNet).
    pub fuse: bool,
    /// With the distributed optimizer: the parameter all-gather runs bucket
    /// by bucket under the step's forward instead of after the optimizer.
    pub param_gather: bool,
    /// With FSDP: which micro-batches reduce-scatter their gradients.
    pub grad_sync: GradSync,
    /// The experts' all-to-alls run under other compute: another
    /// micro-batch's (combined 1F1B's layer pairs, DualPipe's chunk pairs)
    /// or the shared experts' and delayed weight gradients' (`ep_overlap`;
    /// what each schedule runs: `workload::build::schedule::merged_passes::ep_form`).
    pub ep: crate::model::ep_overlap::EpOverlap,
    /// CP's K/V transfers under attention (ring: the next block's under
    /// this block's; allgather: the next layer's gather under this layer).
    pub cp: bool,
    /// With FSDP and fp8: the parameter all-gathers move fp8 weights
    /// (torchtitan's `enable_fsdp_float8_all_gather`).
    pub fp8_all_gather: bool,
}

/// A complete, validated scenario: what the simulator runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    /// The datasheet the hardware started from.
    pub hardware_preset: HardwarePreset,
    /// The cluster, preset fields overridden by the input's.
    pub hardware: Hardware,
    /// What one step computes.
    pub workload: Workload,
    /// The parallel layout.
    pub parallel: Parallel,
    /// The overlap switches and knobs.
    pub overlap: Overlap,
    /// v1: a fixed compute slowdown while a collective runs, when given;
    /// it then replaces the modelled interference.
    pub sm_tax: Option<f64>,
    /// Whether compute and communication slow each other.
    pub interference: Interference,
}

impl Scenario {
    /// Pieces of each forward pipeline boundary of transformer `t` when
    /// CoCoNet's sliced boundary cuts it (model.md section 5):
    /// `overlap.pp_chunks` above 1 with scatter/gather across a TP group
    /// (validation refuses the other combinations); `None` keeps
    /// scatter/gather whole.
    pub fn sliced_boundary_pieces(&self, t: &Transformer) -> Option<u32> {
        let p = &self.parallel;
        (self.overlap.pp_chunks > 1
            && p.scatter_gather
            && p.tp > 1
            && p.pp > 1
            && !t.sequence_parallel)
            .then_some(self.overlap.pp_chunks)
    }

    /// Whether FSDP gathers the layers' weights in fp8, their scales
    /// computed once per step on the shards (`overlap.fp8_all_gather`,
    /// torchtitan's `enable_fsdp_float8_all_gather` with
    /// `precompute_float8_dynamic_scale_for_fsdp`): then no weight is cast,
    /// nor its scale agreed, at each use.
    pub fn fsdp_gathers_fp8_weights(&self) -> bool {
        self.parallel.dp_sharding == DpSharding::Full && self.overlap.fp8_all_gather
    }

    /// Micro-batches per pipeline per step (m = B / (b * d)); 1 for the micro-benchmark.
    pub fn micro_batches(&self) -> u32 {
        match &self.workload {
            Workload::Transformer(t) => t.global_batch / (t.micro_batch * self.parallel.dp),
            Workload::MatmulAllreduce(_) | Workload::Collective(_) => 1,
        }
    }

    /// The v1 tax: `sm_tax` when given under the modelled interference. A
    /// scenario with it runs in the first version's model, so that a v1
    /// link keeps its figures: compute runs at (1 - tax) while a collective
    /// of its GPU runs (`workload::graph::interference`), and the mechanisms the
    /// first version lacked that would move every figure of a link (the
    /// tied embedding's gradient all-reduce) are left out.
    pub fn first_version_tax(&self) -> Option<f64> {
        match self.interference {
            Interference::Modelled => self.sm_tax,
            Interference::Off => None,
        }
    }

    /// The same scenario with every overlap switched off: the report's baseline.
    pub fn all_overlap_off(&self) -> Scenario {
        let mut s = self.clone();
        s.overlap.tp = false;
        s.overlap.pp = false;
        s.overlap.dp = false;
        s.overlap.pp_chunks = 1;
        s.overlap.fuse = false;
        s.overlap.param_gather = false;
        s.overlap.ep = crate::model::ep_overlap::EpOverlap::Off;
        s.overlap.cp = false;
        s
    }

    /// The peak MFU is measured against: the FP8 peak when the linear
    /// layers run in fp8, else the bf16 peak.
    pub fn mfu_peak_tflops(&self) -> f64 {
        match &self.workload {
            Workload::Transformer(t) if t.precision == Precision::Fp8 => self.hardware.fp8_tflops,
            _ => self.hardware.peak_tflops,
        }
    }

    /// The precision of the linear layers (bf16 for the micro-benchmarks).
    pub fn precision(&self) -> Precision {
        match &self.workload {
            Workload::Transformer(t) => t.precision,
            _ => Precision::Bf16,
        }
    }

    /// The mixture of experts, if the workload is a transformer with one.
    pub fn moe(&self) -> Option<&Moe> {
        match &self.workload {
            Workload::Transformer(t) => t.moe.as_ref(),
            _ => None,
        }
    }

    /// Whether the report carries figures of `axis`: the expert axis only
    /// for a model with experts, the context axis only with cp > 1.
    pub fn has_axis(&self, axis: crate::model::axis::Axis) -> bool {
        match axis {
            crate::model::axis::Axis::Ep => self.moe().is_some(),
            crate::model::axis::Axis::Cp => self.parallel.cp > 1,
            _ => true,
        }
    }

    /// The ranks `axis`'s communication runs among: TP's group, the
    /// pipeline's stages, the ranks that reduce each gradient (DP replicas
    /// times CP ranks: model.md 4d), the expert ranks of a model with
    /// experts, the CP ranks. At 1 the axis moves nothing between GPUs.
    pub fn axis_degree(&self, axis: crate::model::axis::Axis) -> u32 {
        use crate::model::axis::Axis;
        match axis {
            Axis::Tp => self.parallel.tp,
            Axis::Pp => self.parallel.pp,
            Axis::Dp => self.parallel.dp_group(),
            Axis::Ep if self.moe().is_some() => self.parallel.ep,
            Axis::Ep => 1,
            Axis::Cp => self.parallel.cp,
        }
    }

    /// How far apart two neighbouring ranks of one of `axis`'s groups are,
    /// in Megatron's rank order (TP fastest, then CP, then DP, then PP): an
    /// EP group is consecutive ranks of a stage, and DP's group, holding
    /// the CP ranks too, steps by TP.
    pub fn axis_stride(&self, axis: crate::model::axis::Axis) -> u32 {
        use crate::model::axis::Axis;
        let p = &self.parallel;
        match axis {
            Axis::Tp | Axis::Ep => 1,
            Axis::Cp | Axis::Dp => p.tp,
            Axis::Pp => p.tp * p.cp * p.dp,
        }
    }
}
