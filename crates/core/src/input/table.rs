//! Every scenario field, declared once: its place in scenario JSON, its
//! share-link key, its type and valid range, its default, and its label,
//! unit and slider range on the page. From these declarations the
//! `fields!` macro (`input::declare`) writes the input structs serde reads
//! (`ScenarioInput` and its sections), their fill (`ScenarioInput::fill`:
//! every field as given or from its default) and the rows of [`FIELDS`],
//! which the strict parser, validation's range messages, share links and
//! the app's controls all read (in the manner of TensorFlow Playground's
//! `state.ts`).
//!
//! Adding a field: one declaration here, with the next `link` number; then
//! the model's use of it: its field in `model::scenario` (read by the row's
//! `resolved`), set from the filled value in `input::fill` (by the macro,
//! for a section declared `into` its model struct). The compiler
//! asks for the last (the model's struct literal, and a filled field never
//! read is dead code); `input::fields`'s tests fail if a row does not
//! round-trip through a share link.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::input::declare::fields;
use crate::input::kind::{choices, named_choices, Choice, DefaultFrom, FieldValue, Kind};
use crate::input::reads::*;
use crate::model::ep_overlap::EpOverlap;
use crate::model::hardware::{HardwarePreset, DEFAULT_MAX_CONNECTIONS};
use crate::model::pipeline_layout::PipelineLayout;
use crate::model::recompute_modules::{RecomputeModules, RECOMPUTE_MODULE_NAMES};
use crate::model::scenario::{
    Attention, CollectiveOp, CpMode, Dispatcher, DpSharding, GradSync, Interference, Mlp, Mode,
    Moe, Overlap, Parallel, Precision, Recompute, Scenario, Schedule, TpMode, WorkloadKind,
};

/// One scenario field: a row of the table. Rows are written by the
/// `fields!` macro from the field's declaration below.
#[derive(Clone, Copy)]
pub struct Field {
    /// Dotted path in scenario JSON (`parallel.tp`), as errors name it.
    pub path: &'static str,
    /// Share-link key. Never rename or reuse one: old links must open.
    pub key: &'static str,
    /// Type and valid range.
    pub kind: Kind,
    /// Where the value comes from when the scenario leaves it out.
    pub default: DefaultFrom,
    /// What the page calls it.
    pub label: &'static str,
    /// Shown after the number on the page; also in range messages of
    /// [`Kind::IntOf`].
    pub unit: &'static str,
    /// The page slider's (min, max, step) for numbers. Only a convenience:
    /// the number box accepts any value and validation judges it.
    pub slider: (f64, f64, f64),
    /// The value the input sets, as JSON.
    pub get: fn(&ScenarioInput) -> Option<Value>,
    /// Sets (or with `None` clears) the value from JSON; an error when the
    /// JSON is not of the field's type.
    pub set: fn(&mut ScenarioInput, Option<&Value>) -> Result<(), String>,
    /// The value a resolved scenario uses, as JSON; `None` when the field
    /// does not apply (`workload.m` of a transformer).
    pub resolved: fn(&Scenario) -> Option<Value>,
    /// Sets a number field from the page's number box (rounded for whole
    /// numbers; nothing for other kinds).
    pub set_number: fn(&mut ScenarioInput, f64),
    /// Why the field changes nothing in this scenario, when it does not
    /// (TP chunks with no TP group): the page says it beside the control.
    /// `tests/inert_fields.rs` checks that it indeed changes nothing.
    pub inert: fn(&Scenario) -> Option<String>,
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Field")
            .field("path", &self.path)
            .field("key", &self.key)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// A section's filled mirror: what `fill` gives for it, named by the
/// section that holds it.
pub(crate) trait Section {
    /// Every field of the section with its value.
    type Filled;
}

/// Whether a field (or a whole section) is left out: serde writes only
/// what is set.
fn unset<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("field values serialise")
}

fn from_json<T: FieldValue>(value: Option<&Value>) -> Result<Option<T>, String> {
    value
        .map(|v| T::deserialize(v).map_err(|e| e.to_string()))
        .transpose()
}

/// The number of rows the sections hold (sections inside them hold none).
const fn count_rows(sections: &[&[Option<(usize, Field)>]]) -> usize {
    let mut count = 0;
    let mut s = 0;
    while s < sections.len() {
        let mut r = 0;
        while r < sections[s].len() {
            if sections[s][r].is_some() {
                count += 1;
            }
            r += 1;
        }
        s += 1;
    }
    count
}

/// The sections' rows, each at its `link` place. Two rows at one place, or
/// a place left empty, stop the build: links would change meaning.
const fn in_link_order<const N: usize>(sections: &[&[Option<(usize, Field)>]]) -> [Field; N] {
    let mut placed: [Option<Field>; N] = [None; N];
    let mut s = 0;
    while s < sections.len() {
        let mut r = 0;
        while r < sections[s].len() {
            if let Some((link, row)) = sections[s][r] {
                assert!(
                    link < N && placed[link].is_none(),
                    "each field takes its own link place, 0 to one less than the number of fields"
                );
                placed[link] = Some(row);
            }
            r += 1;
        }
        s += 1;
    }
    let Some(first) = placed[0] else {
        panic!("no field takes link place 0")
    };
    let mut rows = [first; N];
    let mut i = 0;
    while i < N {
        rows[i] = match placed[i] {
            Some(row) => row,
            None => panic!("a link place is empty"),
        };
        i += 1;
    }
    rows
}

/// The hardware preset select's options, named and labelled by
/// `HardwarePreset` itself.
const HARDWARE_CHOICES: [Choice; HardwarePreset::ALL.len()] = named_choices!(HardwarePreset);

/// The schedule select's options: every schedule, named and labelled by
/// `Schedule` itself.
const SCHEDULE_CHOICES: [Choice; Schedule::ALL.len()] = named_choices!(Schedule);

const NO_SLIDER: (f64, f64, f64) = (0.0, 0.0, 0.0);

/// The collective workload's buffer when none is given: 1 GiB, where
/// nccl-tests' bus bandwidth has reached its plateau on NVLink.
const DEFAULT_COLLECTIVE_BYTES: f64 = 1_073_741_824.0;

/// DeepEP's SMs on H800 (DeepSeek-V3 section 3.2.2: 20 of the 132 SMs
/// saturate InfiniBand and NVLink together; DeepEP's `Buffer.num_sms`
/// default is 20 as well).
pub const DEEPEP_SMS: u32 = 20;

/// DeepSeek-V3's node limit (section 2.1.2: each token is sent to at most
/// M = 4 nodes).
pub const MAX_NODES_PER_TOKEN: u32 = 4;

// The defaults are the didactic scenario: two DGX A100 nodes, TP 4 x PP 2
// x DP 2, an 8-layer GPT of hidden 4096; a mixture of experts given only
// `experts` routes top-2 (GShard, Mixtral), each expert as wide as the
// dense MLP, no shared experts, no leading dense layers, NCCL's
// all-to-all, balanced; the micro-benchmark is the CoCoNet GEMM
// (published.md case 1: b*s x 4h/t times 4h/t x h).
fields! {
    /// Every field optional: what is missing comes from the preset or the default.
    ScenarioInput => Filled at [] () {
        /// The cluster.
        hardware: HardwareInput(),
        /// What one step computes.
        workload: WorkloadInput(),
        /// The parallel layout.
        parallel: ParallelInput(hardware, workload),
        /// The overlap switches and knobs.
        overlap: OverlapInput(workload),
        /// Compute slowdown while a collective runs beside it (v1 meaning).
        sm_tax: f64 {
            link: 42, key: "sm_tax", kind: Kind::Real { min: 0.0, max: 0.9 }, default: Absent,
            label: "SM tax", unit: "of compute", slider: (0.0, 0.5, 0.01),
            resolved: |s| s.sm_tax,
        },
        /// Whether compute and communication slow each other (`"modelled"` or `"off"`).
        interference: Interference {
            link: 43, key: "interference",
            kind: Kind::Enum(choices![("modelled", "Modelled (SMs and HBM shared)"), ("off", "Off (free overlap)")]),
            default: Fixed(Interference::Modelled), label: "Interference", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.interference),
        },
    }
    /// The `hardware` section: a preset and any datasheet figure overriding it.
    /// Each field's range, default and share-link key are its row in
    /// [`FIELDS`](crate::input::fields::FIELDS), as for every section.
    HardwareInput => FilledHardware at [hardware] () {
        /// Hardware preset.
        preset: HardwarePreset {
            link: 0, key: "hw",
            kind: Kind::Enum(&HARDWARE_CHOICES),
            default: Fixed(HardwarePreset::DgxA100), label: "Hardware preset", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.hardware_preset),
        },
        /// Nodes.
        nodes: u32 {
            link: 1, key: "nodes", kind: Kind::Int { min: 1, max: 8192 }, default: Fixed(2),
            label: "Nodes", unit: "", slider: (1.0, 64.0, 1.0),
            resolved: |s| Some(s.hardware.nodes),
        },
        /// GPUs per node.
        gpus_per_node: u32 {
            link: 2, key: "gpus_per_node", kind: Kind::Int { min: 1, max: 64 }, default: HardwarePreset(preset),
            label: "GPUs per node", unit: "", slider: (1.0, 16.0, 1.0),
            resolved: |s| Some(s.hardware.gpus_per_node),
        },
        /// Peak compute, TFLOP/s.
        peak_tflops: f64 {
            link: 3, key: "peak_tflops", kind: Kind::Real { min: 0.001, max: 100_000.0 }, default: HardwarePreset(preset),
            label: "Peak compute", unit: "TFLOP/s", slider: (50.0, 2000.0, 1.0),
            resolved: |s| Some(s.hardware.peak_tflops),
        },
        /// HBM bandwidth, GB/s.
        hbm_gbps: f64 {
            link: 4, key: "hbm_gbps", kind: Kind::Real { min: 0.001, max: 1_000_000.0 }, default: HardwarePreset(preset),
            label: "HBM bandwidth", unit: "GB/s", slider: (500.0, 8000.0, 10.0),
            resolved: |s| Some(s.hardware.hbm_gbps),
        },
        /// NVLink bandwidth, GB/s.
        nvlink_gbps: f64 {
            link: 5, key: "nvlink_gbps", kind: Kind::Real { min: 0.001, max: 100_000.0 }, default: HardwarePreset(preset),
            label: "NVLink bandwidth", unit: "GB/s", slider: (25.0, 900.0, 5.0),
            resolved: |s| Some(s.hardware.nvlink_gbps),
        },
        /// NIC bandwidth, GB/s.
        nic_gbps: f64 {
            link: 6, key: "nic_gbps", kind: Kind::Real { min: 0.001, max: 100_000.0 }, default: HardwarePreset(preset),
            label: "NIC bandwidth", unit: "GB/s", slider: (1.0, 100.0, 0.5),
            resolved: |s| Some(s.hardware.nic_gbps),
        },
        /// Oversubscription of the network core (1: non-blocking).
        oversubscription: f64 {
            link: 7, key: "oversubscription", kind: Kind::Real { min: 1.0, max: 64.0 }, default: HardwarePreset(preset),
            label: "Oversubscription", unit: "×", slider: (1.0, 8.0, 0.5),
            resolved: |s| Some(s.hardware.oversubscription),
        },
        /// NVLink latency, µs.
        nvlink_latency_us: f64 {
            link: 8, key: "nvlink_latency_us", kind: Kind::Real { min: 0.0, max: 10_000.0 }, default: HardwarePreset(preset),
            label: "NVLink latency", unit: "µs", slider: (0.0, 20.0, 0.5),
            resolved: |s| Some(s.hardware.nvlink_latency_us),
        },
        /// Network latency, µs.
        network_latency_us: f64 {
            link: 9, key: "network_latency_us", kind: Kind::Real { min: 0.0, max: 10_000.0 }, default: HardwarePreset(preset),
            label: "Network latency", unit: "µs", slider: (0.0, 50.0, 0.5),
            resolved: |s| Some(s.hardware.network_latency_us),
        },
        /// Streaming multiprocessors per GPU.
        sms: u32 {
            link: 10, key: "sms", kind: Kind::Int { min: 1, max: 1024 }, default: HardwarePreset(preset),
            label: "SMs per GPU", unit: "", slider: (16.0, 264.0, 1.0),
            resolved: |s| Some(s.hardware.sms),
        },
        /// 1-32 (8): `CUDA_DEVICE_MAX_CONNECTIONS`.
        max_connections: u32 {
            link: 11, key: "max_connections", kind: Kind::Int { min: 1, max: 32 }, default: Fixed(DEFAULT_MAX_CONNECTIONS),
            label: "Hardware queues (CUDA_DEVICE_MAX_CONNECTIONS)", unit: "", slider: (1.0, 32.0, 1.0),
            resolved: |s| Some(s.hardware.max_connections),
        },
        /// Memory capacity per GPU, GB.
        hbm_gb: f64 {
            link: 12, key: "hbm_gb", kind: Kind::Real { min: 0.001, max: 1_000_000.0 }, default: HardwarePreset(preset),
            label: "Memory per GPU", unit: "GB", slider: (16.0, 288.0, 1.0),
            resolved: |s| Some(s.hardware.hbm_gb),
        },
    }
    /// The `workload` section.
    WorkloadInput => FilledWorkload at [workload] () {
        /// Workload.
        kind: WorkloadKind {
            link: 13, key: "kind",
            kind: Kind::Enum(choices![
                ("transformer", "GPT-style transformer"),
                ("matmul_allreduce", "MatMul + AllReduce (micro-benchmark)"),
                ("collective", "One collective (nccl-tests)"),
            ]),
            default: Fixed(WorkloadKind::Transformer), label: "Workload", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(workload_kind(s)),
        },
        /// Mode.
        mode: Mode {
            link: 14, key: "mode",
            kind: Kind::Enum(choices![("train", "Training"), ("inference", "Inference (forward only)")]),
            default: Fixed(Mode::Train), label: "Mode", unit: "", slider: NO_SLIDER,
            resolved: |s| transformer(s).map(|t| t.mode),
        },
        /// Layers.
        layers: u32 {
            link: 15, key: "layers", kind: Kind::Int { min: 1, max: 4096 }, default: Fixed(8),
            label: "Layers", unit: "", slider: (1.0, 192.0, 1.0),
            resolved: |s| transformer(s).map(|t| t.layers),
        },
        /// Hidden size.
        hidden: u32 {
            link: 16, key: "hidden", kind: Kind::Int { min: 1, max: 262_144 }, default: Fixed(4096),
            label: "Hidden size", unit: "", slider: (256.0, 32768.0, 256.0),
            resolved: |s| transformer(s).map(|t| t.hidden),
        },
        /// Attention heads.
        heads: u32 {
            link: 17, key: "heads", kind: Kind::Int { min: 1, max: 4096 }, default: Fixed(32),
            label: "Attention heads", unit: "", slider: (1.0, 192.0, 1.0),
            resolved: |s| transformer(s).map(|t| t.heads),
        },
        /// Sequence length, tokens.
        seq: u32 {
            link: 18, key: "seq", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Fixed(2048),
            label: "Sequence length", unit: "tokens", slider: (128.0, 16384.0, 128.0),
            resolved: |s| transformer(s).map(|t| t.seq),
        },
        /// Vocabulary.
        vocab: u32 {
            link: 19, key: "vocab", kind: Kind::Int { min: 1, max: 10_000_000 }, default: Fixed(51200),
            label: "Vocabulary", unit: "", slider: (1000.0, 256_000.0, 1000.0),
            resolved: |s| transformer(s).map(|t| t.vocab),
        },
        /// Micro-batch.
        micro_batch: u32 {
            link: 20, key: "micro_batch", kind: Kind::Int { min: 1, max: 65_536 }, default: Fixed(1),
            label: "Micro-batch", unit: "", slider: (1.0, 16.0, 1.0),
            resolved: |s| transformer(s).map(|t| t.micro_batch),
        },
        /// Global batch.
        global_batch: u32 {
            link: 21, key: "global_batch", kind: Kind::Int { min: 1, max: 100_000_000 }, default: Fixed(8),
            label: "Global batch", unit: "", slider: (1.0, 4096.0, 1.0),
            resolved: |s| transformer(s).map(|t| t.global_batch),
        },
        /// Recomputation.
        recompute: Recompute {
            link: 22, key: "recompute",
            kind: Kind::Enum(choices![
                ("none", "None"),
                ("selective", "Selective (attention core)"),
                ("full", "Full"),
            ]),
            default: Fixed(Recompute::None), label: "Recomputation", unit: "", slider: NO_SLIDER,
            resolved: |s| transformer(s).map(|t| t.recompute),
            inert: |s| transformer(s).filter(|t| t.mode == Mode::Inference).map(|_| {
                "Changes nothing in inference: there is no backward to recompute for.".to_string()
            }),
        },
        /// Sequence parallelism.
        sequence_parallel: bool {
            link: 23, key: "sequence_parallel", kind: Kind::Bool, default: Fixed(false),
            label: "Sequence parallelism", unit: "", slider: NO_SLIDER,
            resolved: |s| transformer(s).map(|t| t.sequence_parallel),
            inert: |s| transformer(s).filter(|_| s.parallel.tp == 1).map(|_| {
                "Changes nothing here: with TP 1 there is no TP group to share the sequence over.".to_string()
            }),
        },
        /// MatMul+AllReduce only: the GEMM is [m x k] x [k x n].
        m: u32 {
            link: 24, key: "m", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Fixed(24576),
            label: "GEMM rows m", unit: "", slider: (256.0, 65536.0, 256.0),
            resolved: |s| matmul(s).map(|m| m.m),
        },
        /// GEMM columns n.
        n: u32 {
            link: 25, key: "n", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Fixed(3072),
            label: "GEMM columns n", unit: "", slider: (256.0, 65536.0, 256.0),
            resolved: |s| matmul(s).map(|m| m.n),
        },
        /// GEMM inner k.
        k: u32 {
            link: 26, key: "k", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Fixed(768),
            label: "GEMM inner k", unit: "", slider: (256.0, 65536.0, 256.0),
            resolved: |s| matmul(s).map(|m| m.k),
        },
        /// Collective workload only: which collective.
        collective: CollectiveOp {
            link: 27, key: "coll",
            kind: Kind::Enum(choices![
                ("all_reduce", "AllReduce"),
                ("all_gather", "AllGather"),
                ("reduce_scatter", "ReduceScatter"),
                ("all_to_all", "AllToAll"),
            ]),
            default: Fixed(CollectiveOp::AllReduce), label: "Collective", unit: "", slider: NO_SLIDER,
            resolved: |s| bench(s).map(|c| c.collective),
        },
        /// Collective workload only: the buffer's bytes.
        bytes: f64 {
            link: 28, key: "bytes", kind: Kind::Real { min: 1.0, max: 1_099_511_627_776.0 }, default: Fixed(DEFAULT_COLLECTIVE_BYTES),
            label: "Collective size", unit: "bytes", slider: (8.0, 4_294_967_296.0, 8.0),
            resolved: |s| bench(s).map(|c| c.bytes),
        },
        /// Key/value heads (grouped-query attention); `heads` when absent.
        kv_heads: u32 {
            link: 46, key: "kv_heads", kind: Kind::Int { min: 1, max: 4096 }, default: Derived("heads", heads),
            label: "Key/value heads (GQA)", unit: "", slider: (1.0, 128.0, 1.0),
            resolved: |s| transformer(s).map(|t| t.kv_heads),
        },
        /// The MLP's inner width; 4 x hidden when absent.
        ffn_hidden: u32 {
            link: 47, key: "ffn_hidden", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Derived("4 x hidden", hidden.saturating_mul(4)),
            label: "MLP inner width", unit: "", slider: (1024.0, 65536.0, 256.0),
            resolved: |s| transformer(s).map(|t| t.ffn_hidden),
        },
        /// The MLP's form, `"gelu"` or `"swiglu"`.
        mlp: Mlp {
            link: 48, key: "mlp",
            kind: Kind::Enum(choices![("gelu", "GELU (two GEMMs)"), ("swiglu", "SwiGLU (three GEMMs)")]),
            default: Fixed(Mlp::Gelu), label: "MLP", unit: "", slider: NO_SLIDER,
            resolved: |s| transformer(s).map(|t| t.mlp),
        },
        /// Whether the input embedding and the output layer share one matrix.
        tied_embeddings: bool {
            link: 49, key: "tied_embeddings", kind: Kind::Bool, default: Fixed(true),
            label: "Tied embeddings", unit: "", slider: NO_SLIDER,
            resolved: |s| transformer(s).map(|t| t.tied_embeddings),
        },
        /// The attention core, `"flash"` or `"materialized"` (materialized
        /// when absent, so v1 links keep their figures).
        attention: Attention {
            link: 50, key: "attention",
            kind: Kind::Enum(choices![
                ("materialized", "Materialised scores (2021 Megatron)"),
                ("flash", "FlashAttention-2"),
            ]),
            default: Fixed(Attention::Materialized), label: "Attention", unit: "", slider: NO_SLIDER,
            resolved: |s| transformer(s).map(|t| t.attention),
        },
        /// The linear layers' number format, `"bf16"` or `"fp8"`.
        precision: Precision {
            link: 66, key: "precision",
            kind: Kind::Enum(choices![
                ("bf16", "bf16"),
                ("fp8", "FP8 linear layers (tensorwise scaling)"),
            ]),
            default: Fixed(Precision::Bf16), label: "Precision", unit: "", slider: NO_SLIDER,
            resolved: |s| transformer(s).map(|t| t.precision),
        },
        /// Width of one attention head; hidden / heads when absent.
        head_dim: u32 {
            link: 54, key: "head_dim", kind: Kind::Int { min: 1, max: 4096 }, default: Derived("hidden / heads", hidden / heads.max(1)),
            label: "Head width", unit: "", slider: (32.0, 256.0, 8.0),
            resolved: |s| transformer(s).map(|t| t.head_dim),
        },
        /// The mixture of experts: absent (or without `experts`) for a dense model.
        moe: MoeInput(ffn_hidden),
    }
    /// The `workload.moe` object: every field optional; `experts` makes the
    /// model a mixture of experts.
    MoeInput => FilledMoe at [workload moe] (ffn_hidden: u32) {
        /// Routed experts per MoE layer.
        experts: u32 {
            link: 55, key: "experts", kind: Kind::Int { min: 1, max: 4096 }, default: Absent,
            label: "Routed experts", unit: "", slider: (2.0, 256.0, 1.0),
            resolved: |s| moe(s).map(|m| m.experts),
        },
        /// Experts per token.
        top_k: u32 {
            link: 56, key: "top_k", kind: Kind::Int { min: 1, max: 64 }, default: Fixed(2),
            label: "Experts per token (top-k)", unit: "", slider: (1.0, 16.0, 1.0),
            resolved: |s| moe_field(s, |m| m.top_k),
            inert: moe_inert,
        },
        /// Each expert's inner width; `ffn_hidden` when absent.
        expert_ffn_hidden: u32 {
            link: 57, key: "expert_ffn", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Derived("ffn_hidden", ffn_hidden),
            label: "Expert inner width", unit: "", slider: (256.0, 32768.0, 256.0),
            resolved: |s| moe_field(s, |m| m.expert_ffn_hidden),
            inert: moe_inert,
        },
        /// Shared experts.
        shared_experts: u32 {
            link: 58, key: "shared_experts", kind: Kind::Int { min: 0, max: 64 }, default: Fixed(0),
            label: "Shared experts", unit: "", slider: (0.0, 4.0, 1.0),
            resolved: |s| moe_field(s, |m| m.shared_experts),
            inert: moe_inert,
        },
        /// Leading dense layers.
        dense_layers: u32 {
            link: 59, key: "dense_layers", kind: Kind::Int { min: 0, max: 100_000 }, default: Fixed(0),
            label: "Leading dense layers", unit: "", slider: (0.0, 8.0, 1.0),
            resolved: |s| moe_field(s, |m| m.dense_layers),
            inert: moe_inert,
        },
        /// `"alltoall"` or `"deepep"`.
        dispatcher: Dispatcher {
            link: 60, key: "dispatcher",
            kind: Kind::Enum(choices![
                ("alltoall", "NCCL all-to-all"),
                ("deepep", "DeepEP (node-limited)"),
            ]),
            default: Fixed(Dispatcher::Alltoall), label: "Token dispatcher", unit: "", slider: NO_SLIDER,
            resolved: |s| moe_field(s, |m| m.dispatcher),
            inert: moe_inert,
        },
        /// DeepEP: nodes a token may reach.
        max_nodes_per_token: u32 {
            link: 61, key: "max_nodes", kind: Kind::Int { min: 1, max: 4096 }, default: Fixed(MAX_NODES_PER_TOKEN),
            label: "Nodes per token (DeepEP)", unit: "", slider: (1.0, 16.0, 1.0),
            resolved: |s| moe_field(s, |m| m.max_nodes_per_token),
            inert: deepep_inert,
        },
        /// Busiest expert's tokens over the mean.
        imbalance: f64 {
            link: 62, key: "imbalance", kind: Kind::Real { min: 1.0, max: 64.0 }, default: Fixed(1.0),
            label: "Busiest expert / mean", unit: "×", slider: (1.0, 4.0, 0.05),
            resolved: |s| moe_field(s, |m| m.imbalance),
            inert: moe_inert,
        },
        /// SMs DeepEP's kernels hold.
        deepep_sms: u32 {
            link: 63, key: "deepep_sms", kind: Kind::Int { min: 1, max: 1024 }, default: Fixed(DEEPEP_SMS),
            label: "SMs for DeepEP", unit: "", slider: (4.0, 64.0, 2.0),
            resolved: |s| moe_field(s, |m| m.deepep_sms),
            inert: deepep_inert,
        },
        /// Megatron-LM's `recompute_modules` (`model::recompute_modules`).
        recompute: RecomputeModules {
            link: 71, key: "moe_recompute",
            kind: Kind::Switches {
                choices: choices![
                    ("0", "None"),
                    ("moe_act", "The experts' activation function"),
                    ("moe_act+layernorm", "Activation and LayerNorms"),
                    ("moe_act+layernorm+shared_experts", "Activation, LayerNorms, shared experts"),
                    ("moe", "The whole MoE layer"),
                ],
                options: &RECOMPUTE_MODULE_NAMES,
            },
            default: Fixed(RecomputeModules::default()),
            label: "Recomputed modules (MoE)", unit: "", slider: NO_SLIDER,
            resolved: |s| moe_field(s, |m| m.recompute),
            inert: moe_inert,
        },
        /// Dispatched activations cached in FP8.
        fp8_dispatch_cache: bool {
            link: 72, key: "fp8_dispatch_cache", kind: Kind::Bool, default: Fixed(false),
            label: "Dispatched tokens cached in FP8", unit: "", slider: NO_SLIDER,
            resolved: |s| moe_field(s, |m| m.fp8_dispatch_cache),
            inert: moe_inert,
        },
        /// The experts' SwiGLU inputs cached in FP8.
        fp8_swiglu_cache: bool {
            link: 76, key: "fp8_swiglu_cache", kind: Kind::Bool, default: Fixed(false),
            label: "Experts' SwiGLU inputs cached in FP8", unit: "", slider: NO_SLIDER,
            resolved: |s| moe_field(s, |m| m.fp8_swiglu_cache),
            inert: moe_inert,
        },
        /// Tokens and their gradients sent to the experts in FP8.
        fp8_dispatch: bool {
            link: 75, key: "fp8_dispatch", kind: Kind::Bool, default: Fixed(false),
            label: "Tokens dispatched in FP8 (DeepEP)", unit: "", slider: NO_SLIDER,
            resolved: |s| moe_field(s, |m| m.fp8_dispatch),
            inert: fp8_dispatch_inert,
        },
    }
    /// The `parallel` section.
    ParallelInput => FilledParallel at [parallel] (hardware: FilledHardware, workload: FilledWorkload) into Parallel {
        /// TP degree.
        tp: u32 {
            link: 29, key: "tp", kind: Kind::Int { min: 1, max: 64 }, default: WorkloadKind(match workload.kind {
                WorkloadKind::Transformer => 4,
                WorkloadKind::MatmulAllreduce => hardware.gpus_per_node,
                WorkloadKind::Collective => 1,
            }),
            // The collective workload is one communicator over every GPU,
            // whatever the input (or the preset a link starts from) says.
            ignored: workload.kind == WorkloadKind::Collective,
            label: "TP degree", unit: "", slider: (1.0, 16.0, 1.0),
            resolved: |s| Some(s.parallel.tp),
            inert: collective_layout_inert,
        },
        /// PP degree.
        pp: u32 {
            link: 30, key: "pp", kind: Kind::Int { min: 1, max: 4096 }, default: WorkloadKind(match workload.kind {
                WorkloadKind::Transformer => 2,
                WorkloadKind::MatmulAllreduce | WorkloadKind::Collective => 1,
            }),
            ignored: workload.kind == WorkloadKind::Collective,
            label: "PP degree", unit: "", slider: (1.0, 64.0, 1.0),
            resolved: |s| Some(s.parallel.pp),
            inert: collective_layout_inert,
        },
        /// DP degree.
        dp: u32 {
            link: 31, key: "dp", kind: Kind::Int { min: 1, max: 65_536 }, default: WorkloadKind(match workload.kind {
                WorkloadKind::Transformer => 2,
                WorkloadKind::MatmulAllreduce => 1,
                WorkloadKind::Collective => hardware.nodes.saturating_mul(hardware.gpus_per_node),
            }),
            ignored: workload.kind == WorkloadKind::Collective,
            label: "DP degree", unit: "", slider: (1.0, 64.0, 1.0),
            resolved: |s| Some(s.parallel.dp),
            inert: collective_layout_inert,
        },
        /// Pipeline schedule.
        schedule: Schedule {
            link: 32, key: "schedule",
            kind: Kind::Enum(&SCHEDULE_CHOICES),
            default: Fixed(Schedule::OneFOneB),
            // With one stage there is no pipeline: every schedule runs Megatron's
            // loop without pipelining (forward then backward per micro-batch, as
            // 1F1B does on one stage) and one chunk per GPU; otherwise a split
            // backward (zero bubble) or a V's two chunks would change the step
            // with no bubble to fill and no stage to send to (issue 45).
            ignored: pp == 1,
            label: "Pipeline schedule", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.parallel.schedule),
            inert: schedule_inert,
        },
        /// Virtual stages.
        virtual_stages: u32 {
            link: 33, key: "virtual_stages", kind: Kind::Int { min: 1, max: 64 }, default: Fixed(1),
            ignored: pp == 1,
            label: "Virtual stages", unit: "", slider: (1.0, 8.0, 1.0),
            resolved: |s| Some(s.parallel.virtual_stages),
            inert: schedule_inert,
        },
        /// Scatter/gather of pipeline sends.
        scatter_gather: bool {
            link: 34, key: "scatter_gather", kind: Kind::Bool, default: Fixed(true),
            label: "Scatter/gather of pipeline sends", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.parallel.scatter_gather),
            inert: scatter_gather_inert,
        },
        /// DP sharding.
        dp_sharding: DpSharding {
            link: 51, key: "dp_sharding",
            kind: Kind::Enum(choices![
                ("none", "None (all-reduce)"),
                ("optimizer", "Distributed optimizer (ZeRO-1/2)"),
                ("full", "FSDP (ZeRO-3)"),
            ]),
            default: Fixed(DpSharding::None), label: "DP sharding", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.parallel.dp_sharding),
        },
        /// Expert-parallel degree.
        ep: u32 {
            link: 64, key: "ep", kind: Kind::Int { min: 1, max: 65_536 }, default: Fixed(1),
            label: "EP", unit: "", slider: (1.0, 64.0, 1.0),
            resolved: |s| transformer(s).map(|_| s.parallel.ep),
        },
        /// Expert tensor-parallel degree: each routed expert's GEMMs split
        /// over this many ranks (Megatron-LM's `expert_tensor_parallel_size`,
        /// whose own default is the TP degree,
        /// megatron/training/arguments.py:587-588; 1 here, as interface.md
        /// declares and as the MoE model zoo's recipes set it).
        etp: u32 {
            link: 73, key: "etp", kind: Kind::Int { min: 1, max: 64 }, default: Fixed(1),
            label: "Expert TP", unit: "", slider: (1.0, 8.0, 1.0),
            resolved: |s| transformer(s).map(|_| s.parallel.etp),
        },
        /// CP degree.
        cp: u32 {
            link: 67, key: "cp", kind: Kind::Int { min: 1, max: 1024 }, default: Fixed(1),
            // Context parallelism splits a transformer's sequence; the
            // micro-benchmarks have none.
            ignored: workload.kind != WorkloadKind::Transformer,
            label: "CP degree", unit: "", slider: (1.0, 32.0, 1.0),
            resolved: |s| Some(s.parallel.cp),
            inert: cp_inert,
        },
        /// CP's K/V exchange, `"ring"` or `"allgather"`.
        cp_mode: CpMode {
            link: 68, key: "cp_mode",
            kind: Kind::Enum(choices![
                ("ring", "Ring attention (K/V blocks pass around)"),
                ("allgather", "All-gather K/V (Llama 3)"),
            ]),
            default: Fixed(CpMode::Ring), label: "CP mode", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.parallel.cp_mode),
            inert: cp_mode_inert,
        },
        /// What each virtual stage holds, in Megatron's layout vocabulary
        /// (`model::pipeline_layout`); absent, the even split.
        pipeline_layout: PipelineLayout {
            link: 74, key: "pp_layout", kind: Kind::Layout, default: Absent,
            label: "Pipeline layout", unit: "", slider: NO_SLIDER,
            resolved: |s| s.parallel.pipeline_layout.clone(),
        },
    }
    /// The `overlap` section.
    OverlapInput => FilledOverlap at [overlap] (workload: FilledWorkload) into Overlap {
        /// TP overlap.
        tp: bool {
            link: 35, key: "tp_overlap", kind: Kind::Bool, default: Fixed(true),
            label: "TP overlap", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.tp),
            inert: tp_overlap_inert,
        },
        /// PP overlap.
        pp: bool {
            link: 36, key: "pp_overlap", kind: Kind::Bool, default: Fixed(true),
            label: "PP overlap", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.pp),
            inert: pp_overlap_inert,
        },
        /// DP overlap.
        dp: bool {
            link: 37, key: "dp_overlap", kind: Kind::Bool, default: Fixed(true),
            label: "DP overlap", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.dp),
            inert: dp_overlap_inert,
        },
        /// TP chunks.
        tp_chunks: u32 {
            link: 38, key: "tp_chunks", kind: Kind::Int { min: 1, max: 64 }, default: Fixed(4),
            label: "TP chunks", unit: "", slider: (1.0, 64.0, 1.0),
            resolved: |s| Some(s.overlap.tp_chunks),
            inert: tp_chunks_inert,
        },
        /// How TP overlaps: chunked, Megatron's or Async TP.
        tp_mode: TpMode {
            link: 39, key: "tp_mode",
            kind: Kind::Enum(choices![
                ("chunked", "Chunked GEMM (CoCoNet)"),
                ("megatron", "Megatron (collective under the backward GEMM)"),
                ("async", "Async TP (ring steps on copy engines)"),
            ]),
            default: Derived(
                "async with sequence parallelism, else chunked",
                TpMode::first_version(
                    workload.kind == WorkloadKind::Transformer && workload.sequence_parallel
                )
            ),
            label: "TP overlap form", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.tp_mode),
            inert: tp_mode_inert,
        },
        /// DP bucket size, MB.
        bucket_mb: f64 {
            link: 40, key: "bucket_mb", kind: Kind::Real { min: 0.1, max: 100_000.0 }, default: Fixed(25.0),
            label: "DP bucket size", unit: "MB", slider: (1.0, 500.0, 1.0),
            resolved: |s| Some(s.overlap.bucket_mb),
            inert: bucket_mb_inert,
        },
        /// Gradient width, bytes.
        grad_bytes: u32 {
            link: 41, key: "grad_bytes",
            kind: Kind::IntOf {
                choices: choices![("1", "1 byte (fp8)"), ("2", "2 bytes (bf16)"), ("4", "4 bytes (fp32)")],
                noun: "a gradient width",
            },
            default: Fixed(2), label: "Gradient width", unit: "bytes", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.grad_bytes),
        },
        /// Chunks of the sliced pipeline boundary.
        pp_chunks: u32 {
            link: 44, key: "pp_chunks", kind: Kind::Int { min: 1, max: 64 }, default: Fixed(1),
            label: "PP boundary chunks (sliced)", unit: "", slider: (1.0, 16.0, 1.0),
            resolved: |s| Some(s.overlap.pp_chunks),
        },
        /// TP collectives fused with the pointwise work after them.
        fuse: bool {
            link: 45, key: "fuse", kind: Kind::Bool, default: Fixed(false),
            label: "Fuse TP collective with bias, dropout, residual", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.fuse),
        },
        /// Parameter all-gather under forward (distributed optimizer).
        param_gather: bool {
            link: 52, key: "param_gather", kind: Kind::Bool, default: Fixed(false),
            label: "Parameter all-gather under forward", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.param_gather),
        },
        /// FSDP gradient reduce-scatter on every or the last micro-batch.
        grad_sync: GradSync {
            link: 53, key: "grad_sync",
            kind: Kind::Enum(choices![
                ("every_micro_batch", "Every micro-batch"),
                ("last_micro_batch", "Last micro-batch only"),
            ]),
            default: Fixed(GradSync::EveryMicroBatch), label: "FSDP gradient sync", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.grad_sync),
        },
        /// EP all-to-all overlap: off, the schedule's natural form, or
        /// Megatron-LM's options by name (`model::ep_overlap`).
        ep: EpOverlap {
            link: 65, key: "ep_overlap",
            kind: Kind::Switches {
                choices: choices![
                    ("0", "Off"),
                    ("1", "On: the schedule's own form"),
                    ("shared_expert", "Shared experts beside the all-to-alls"),
                    ("dispatch_wgrad", "Dispatch backward under the experts' weight gradients"),
                    ("shared_expert+dispatch_wgrad", "Both of these"),
                    ("combined_1f1b", "Combined 1F1B: forward and backward paired per layer"),
                ],
                options: &crate::model::ep_overlap::EP_OPTION_NAMES,
            },
            default: Fixed(EpOverlap::Off),
            label: "EP overlap", unit: "", slider: NO_SLIDER,
            resolved: |s| transformer(s).map(|_| s.overlap.ep),
            inert: ep_overlap_inert,
        },
        /// CP overlap.
        cp: bool {
            link: 69, key: "cp_overlap", kind: Kind::Bool, default: Fixed(false),
            label: "CP overlap", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.cp),
            inert: cp_overlap_inert,
        },
        /// FSDP gathers fp8 weights.
        fp8_all_gather: bool {
            link: 70, key: "fp8_all_gather", kind: Kind::Bool, default: Fixed(false),
            label: "FSDP gathers fp8 weights", unit: "", slider: NO_SLIDER,
            resolved: |s| Some(s.overlap.fp8_all_gather),
            inert: fp8_all_gather_inert,
        },
    }
}

impl FilledMoe {
    /// The model's mixture of these fields and `experts`.
    pub(crate) fn with_experts(self, experts: u32) -> Moe {
        Moe {
            experts,
            top_k: self.top_k,
            expert_ffn_hidden: self.expert_ffn_hidden,
            shared_experts: self.shared_experts,
            dense_layers: self.dense_layers,
            dispatcher: self.dispatcher,
            max_nodes_per_token: self.max_nodes_per_token,
            imbalance: self.imbalance,
            deepep_sms: self.deepep_sms,
            recompute: self.recompute,
            fp8_dispatch_cache: self.fp8_dispatch_cache,
            fp8_swiglu_cache: self.fp8_swiglu_cache,
            fp8_dispatch: self.fp8_dispatch,
        }
    }
}

/// A field of `workload.moe` as a dense transformer resolves it: what the
/// fill gives it beside experts, were they given (so that the table states
/// a default), the model's own value once it has experts.
fn moe_field<T>(s: &Scenario, read: fn(&Moe) -> T) -> Option<T> {
    let t = transformer(s)?;
    Some(match &t.moe {
        Some(m) => read(m),
        // `read` is never `experts` (its row reads `moe`): any count will do.
        None => read(&MoeInput::default().fill(t.ffn_hidden).with_experts(1)),
    })
}

/// The row of a dotted path, if there is one.
pub fn find(path: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.path == path)
}

/// The row of a share-link key, if there is one.
pub fn by_key(key: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.key == key)
}

/// The row of a dotted path, in constant context: a path that is not in the
/// table stops the build.
pub const fn field(path: &str) -> &'static Field {
    let mut i = 0;
    while i < FIELDS.len() {
        if same(FIELDS[i].path.as_bytes(), path.as_bytes()) {
            return &FIELDS[i];
        }
        i += 1;
    }
    panic!("no such scenario field")
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
