//! Every scenario field, declared once: its path in scenario JSON, its
//! share-link key, its type and valid range, where its default comes from,
//! and its label, unit and slider range on the page. The strict parser,
//! validation's range messages, share links and the app's controls all read
//! this table (in the manner of TensorFlow Playground's `state.ts`).
//!
//! Adding a field: one row in [`FIELDS`], plus the struct field it fills in
//! `ScenarioInput` (and in `Scenario`, read by the row's `resolved`). The
//! tests below fail if a `ScenarioInput` field has no row, or if a row does
//! not round-trip through a share link.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::input::parse::ScenarioInput;
use crate::model::hardware::HardwarePreset;
use crate::model::scenario::{
    Attention, CpMode, Dispatcher, DpSharding, GradSync, Interference, MatmulAllreduce, Mlp, Mode,
    Moe, Precision, Recompute, Scenario, Schedule, TpMode, Transformer, Workload, WorkloadKind,
};
use crate::model::scenario::{CollectiveBench, CollectiveOp};

/// One value an enumerated field may take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Choice {
    /// Its name in scenario JSON and in share links (`"1f1b"`).
    pub name: &'static str,
    /// What the page's select shows for it.
    pub label: &'static str,
}

/// A field's type, with what is valid for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A whole number in `min..=max`.
    Int {
        /// The smallest valid value.
        min: u32,
        /// The largest valid value.
        max: u32,
    },
    /// A finite number in `min..=max`.
    Real {
        /// The smallest valid value.
        min: f64,
        /// The largest valid value.
        max: f64,
    },
    /// A whole number from a short list (`grad_bytes`: 1, 2 or 4).
    IntOf {
        /// The valid values, by name, with their labels.
        choices: &'static [Choice],
        /// What a value is, for the message ("a gradient width").
        noun: &'static str,
    },
    /// true or false; `1`/`0` in links.
    Bool,
    /// One name from a list.
    Enum(&'static [Choice]),
}

/// Where a missing field's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultFrom {
    /// One value for every scenario (see [`Field::default_value`]).
    Fixed,
    /// The hardware preset's datasheet.
    HardwarePreset,
    /// Depends on the workload kind: the transformer's layout, or one TP
    /// group on one node for the micro-benchmark.
    WorkloadKind,
    /// None: the field is absent unless given, and its absence has a meaning
    /// of its own (`sm_tax`: the modelled interference applies).
    Absent,
    /// Follows other fields of the same scenario, as the text says
    /// (`kv_heads`: "heads"), so that editing those keeps it consistent.
    Derived(&'static str),
}

/// One scenario field. Rows are built by the `fields!` macro below, which
/// writes the accessors from the field's path.
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

/// A field's value type: how a number from the page becomes one. Every
/// type a row holds implements it; only numbers convert.
pub trait FieldValue: Serialize + DeserializeOwned + Sized {
    /// The value for a number typed on the page, if this is a number type.
    fn from_number(_value: f64) -> Option<Self> {
        None
    }
}

impl FieldValue for u32 {
    fn from_number(value: f64) -> Option<Self> {
        // Saturating: the page checks whole numbers first, validation the range.
        Some(value.round().clamp(0.0, f64::from(u32::MAX)) as u32)
    }
}

impl FieldValue for f64 {
    fn from_number(value: f64) -> Option<Self> {
        Some(value)
    }
}

impl FieldValue for bool {}
impl FieldValue for HardwarePreset {}
impl FieldValue for WorkloadKind {}
impl FieldValue for Mode {}
impl FieldValue for Recompute {}
impl FieldValue for Schedule {}
impl FieldValue for Interference {}
impl FieldValue for Mlp {}
impl FieldValue for TpMode {}
impl FieldValue for Attention {}
impl FieldValue for DpSharding {}
impl FieldValue for GradSync {}
impl FieldValue for Dispatcher {}
impl FieldValue for Precision {}
impl FieldValue for CpMode {}
impl FieldValue for CollectiveOp {}

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("field values serialise")
}

fn from_json<T: FieldValue>(value: Option<&Value>) -> Result<Option<T>, String> {
    value
        .map(|v| T::deserialize(v).map_err(|e| e.to_string()))
        .transpose()
}

fn transformer(s: &Scenario) -> Option<&Transformer> {
    match &s.workload {
        Workload::Transformer(t) => Some(t),
        Workload::MatmulAllreduce(_) | Workload::Collective(_) => None,
    }
}

fn matmul(s: &Scenario) -> Option<&MatmulAllreduce> {
    match &s.workload {
        Workload::MatmulAllreduce(m) => Some(m),
        Workload::Transformer(_) | Workload::Collective(_) => None,
    }
}

fn bench(s: &Scenario) -> Option<&CollectiveBench> {
    match &s.workload {
        Workload::Collective(c) => Some(c),
        Workload::Transformer(_) | Workload::MatmulAllreduce(_) => None,
    }
}

/// Why an axis's overlap switch changes nothing: the axis has one GPU,
/// so it moves nothing (the tied embedding's all-reduce between the first
/// and last stage, on the DP lane, runs after the backward either way).
fn degree_one(axis: &str, degree: u32, what: &str) -> Option<String> {
    (degree == 1)
        .then(|| format!("Changes nothing here: with {axis} 1 there is no {what} to overlap."))
}

fn tp_overlap_inert(s: &Scenario) -> Option<String> {
    degree_one("TP", s.parallel.tp, "TP collective")
}

fn pp_overlap_inert(s: &Scenario) -> Option<String> {
    degree_one("PP", s.parallel.pp, "pipeline send")
}

/// DP reduces over its replicas and the CP ranks (model.md 4d).
fn dp_overlap_inert(s: &Scenario) -> Option<String> {
    (s.parallel.cp == 1)
        .then(|| degree_one("DP", s.parallel.dp, "gradient reduction"))
        .flatten()
}

fn cp_overlap_inert(s: &Scenario) -> Option<String> {
    degree_one("CP", s.parallel.cp, "K/V exchange")
}

/// Why `parallel.cp` changes nothing: only a transformer has a sequence to split.
fn cp_inert(s: &Scenario) -> Option<String> {
    transformer(s).is_none().then(|| {
        "Changes nothing here: only a transformer has a sequence for context parallelism to split."
            .to_string()
    })
}

/// Why `parallel.cp_mode` changes nothing: with CP 1 no K/V moves, ring or gather.
fn cp_mode_inert(s: &Scenario) -> Option<String> {
    (s.parallel.cp == 1).then(|| {
        "Changes nothing here: with CP 1 each GPU holds the whole sequence, so no keys and values move, by ring or by gather."
            .to_string()
    })
}

/// Why `overlap.fp8_all_gather` changes nothing: it is FSDP's parameter
/// gather in fp8, so it needs FSDP and fp8 linear layers.
fn fp8_all_gather_inert(s: &Scenario) -> Option<String> {
    use crate::model::scenario::DpSharding;
    if s.parallel.dp_sharding != DpSharding::Full {
        Some("Changes nothing here: only FSDP (dp_sharding \"full\") gathers parameters before each layer.".to_string())
    } else if s.precision() != Precision::Fp8 {
        Some(
            "Changes nothing in bf16: only fp8 linear layers have fp8 weights to gather."
                .to_string(),
        )
    } else if s.parallel.dp_group() == 1 {
        Some("Changes nothing here: with one DP rank there is nothing to gather.".to_string())
    } else {
        None
    }
}

/// Why `parallel.scatter_gather` changes nothing: it splits a stage's
/// send over its TP ranks, so it needs a pipeline and a TP group.
fn scatter_gather_inert(s: &Scenario) -> Option<String> {
    if s.parallel.pp == 1 {
        Some("Changes nothing here: with PP 1 there is no pipeline send to scatter.".to_string())
    } else if s.parallel.tp == 1 {
        Some("Changes nothing here: with TP 1 each send leaves one GPU whole; there is nothing to scatter over.".to_string())
    } else {
        None
    }
}

/// Why a parallel degree changes nothing for the collective workload: it
/// runs one collective over every GPU of the hardware.
fn collective_layout_inert(s: &Scenario) -> Option<String> {
    bench(s).map(|_| {
        "Changes nothing here: the collective workload runs one collective over every GPU of the hardware."
            .to_string()
    })
}

/// Why the pipeline schedule and its virtual stages change nothing: with
/// PP 1 every schedule runs as 1F1B on one chunk (`validate::filled`).
pub(crate) fn schedule_inert(s: &Scenario) -> Option<String> {
    (s.parallel.pp == 1).then(|| {
        "Changes nothing here: with PP 1 there is no pipeline, so every schedule runs as 1F1B (one forward, then its backward, per micro-batch) on one chunk.".to_string()
    })
}

/// A field that changes something in every scenario it applies to.
/// The mixture of experts of a transformer scenario, if it has one.
fn moe(s: &Scenario) -> Option<&Moe> {
    transformer(s).and_then(|t| t.moe.as_ref())
}

/// A field of `workload.moe` as a dense transformer resolves it: the
/// default it would take (so that the table states one), the model's own
/// value once it has experts.
fn moe_field<T>(s: &Scenario, read: fn(&Moe) -> T) -> Option<T> {
    let t = transformer(s)?;
    Some(read(
        t.moe
            .as_ref()
            .unwrap_or(&crate::input::validate::default_moe(t)),
    ))
}

/// Why a field of `workload.moe` changes nothing: the model is dense.
fn moe_inert(s: &Scenario) -> Option<String> {
    transformer(s).filter(|t| t.moe.is_none()).map(|_| {
        "Changes nothing here: without workload.moe.experts the model is dense.".to_string()
    })
}

/// Why a DeepEP knob changes nothing: the model is dense, or NCCL's
/// all-to-all dispatches.
fn deepep_inert(s: &Scenario) -> Option<String> {
    moe_inert(s).or_else(|| {
        moe(s)
            .filter(|m| m.dispatcher != Dispatcher::Deepep)
            .map(|_| {
                "Changes nothing here: only DeepEP's dispatcher limits nodes and holds its own SMs."
                    .to_string()
            })
    })
}

/// Why `overlap.ep` changes nothing: no experts, or all of them on each GPU.
fn ep_overlap_inert(s: &Scenario) -> Option<String> {
    moe_inert(s).or_else(|| degree_one("EP", s.parallel.ep, "all-to-all"))
}

fn never_inert(_: &Scenario) -> Option<String> {
    None
}

/// Why `overlap.bucket_mb` changes nothing, when it does not: with no DP
/// replicas there is no gradient reduction to split (the tied embedding's
/// all-reduce is one call whatever the size).
fn bucket_mb_inert(s: &Scenario) -> Option<String> {
    (s.parallel.dp_group() == 1).then(|| {
        "Changes nothing here: with DP 1 there are no gradients to reduce in buckets.".to_string()
    })
}

/// Why `overlap.tp_chunks` changes nothing, when it does not: the GEMMs
/// are split only under TP overlap, for a TP group, and not with sequence
/// parallelism, whose TP overlap decomposes each collective into the
/// group's ring steps instead (`workload::transformer`, Async TP).
fn tp_chunks_inert(s: &Scenario) -> Option<String> {
    let tp = s.parallel.tp;
    if let Some(why) = tp_overlap_inert(s) {
        Some(why)
    } else if !s.overlap.tp {
        Some("Changes nothing while TP overlap is off: each GEMM then runs whole before its collective.".to_string())
    } else if transformer(s).is_some_and(|t| t.sequence_parallel)
        && s.overlap.tp_mode == TpMode::Async
    {
        Some(format!(
            "Changes nothing with sequence parallelism and Async TP: TP overlap splits each collective into \
             its {tp} ring steps under the GEMM, not into chunks."
        ))
    } else if transformer(s).is_some() && s.overlap.tp_mode == TpMode::Megatron {
        Some("Changes nothing with Megatron's TP overlap: it runs each GEMM whole.".to_string())
    } else {
        None
    }
}

/// Why `overlap.tp_mode` changes nothing, when it does not: it chooses how
/// TP overlap runs, so it needs a TP group of a transformer with TP overlap
/// on (the MatMul + AllReduce micro-benchmark is CoCoNet's chunks).
fn tp_mode_inert(s: &Scenario) -> Option<String> {
    if let Some(why) = tp_overlap_inert(s) {
        Some(why)
    } else if transformer(s).is_none() {
        Some(
            "Changes nothing for the MatMul + AllReduce benchmark: it is CoCoNet's chunked GEMM."
                .to_string(),
        )
    } else if !s.overlap.tp {
        Some("Changes nothing while TP overlap is off: each collective then runs in the compute stream's order.".to_string())
    } else {
        None
    }
}

fn workload_kind(s: &Scenario) -> WorkloadKind {
    match s.workload {
        Workload::Transformer(_) => WorkloadKind::Transformer,
        Workload::MatmulAllreduce(_) => WorkloadKind::MatmulAllreduce,
        Workload::Collective(_) => WorkloadKind::Collective,
    }
}

/// `choices![("gpipe", "GPipe"), ...]`: an enum's values and their labels.
/// The schedule select's options: every schedule, named and labelled by
/// `Schedule` itself.
const SCHEDULE_CHOICES: [Choice; Schedule::ALL.len()] = {
    let mut out = [Choice {
        name: "",
        label: "",
    }; Schedule::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = Choice {
            name: Schedule::ALL[i].name(),
            label: Schedule::ALL[i].label(),
        };
        i += 1;
    }
    out
};

macro_rules! choices {
    ($(($name:literal, $label:literal)),* $(,)?) => {
        &[$(Choice { name: $name, label: $label }),*]
    };
}

/// One row per field: `path => key, kind, default, label, unit, slider,
/// resolved`, and where the field can change nothing, `inert`. The path's
/// tokens write the accessors on `ScenarioInput`.
macro_rules! fields {
    ($($first:ident $(. $rest:ident)* => {
        key: $key:literal,
        kind: $kind:expr,
        default: $default:ident $(($derived:literal))?,
        label: $label:literal,
        unit: $unit:literal,
        slider: $slider:expr,
        resolved: $resolved:expr
        $(, inert: $inert:expr)? $(,)?
    }),* $(,)?) => {
        /// Every scenario field, in share-link order.
        pub const FIELDS: &[Field] = &[$(Field {
            path: concat!(stringify!($first) $(, ".", stringify!($rest))*),
            key: $key,
            kind: $kind,
            default: DefaultFrom::$default $(($derived))?,
            label: $label,
            unit: $unit,
            slider: $slider,
            get: |i| i.$first $(.$rest)*.as_ref().map(to_json),
            set: |i, v| {
                i.$first $(.$rest)* = from_json(v)?;
                Ok(())
            },
            resolved: |s| {
                let read: fn(&Scenario) -> Option<_> = $resolved;
                read(s).map(|v| to_json(&v))
            },
            set_number: |i, v| {
                if let Some(x) = FieldValue::from_number(v) {
                    i.$first $(.$rest)* = Some(x);
                }
            },
            inert: [$($inert as fn(&Scenario) -> Option<String>,)? never_inert][0],
        }),*];
    };
}

const NO_SLIDER: (f64, f64, f64) = (0.0, 0.0, 0.0);

fields! {
    hardware.preset => {
        key: "hw",
        kind: Kind::Enum(choices![
            ("dgx2-v100", "DGX-2 (16 × V100)"),
            ("dgx-a100", "DGX A100 (8 × A100)"),
            ("dgx-h100", "DGX H100 (8 × H100)"),
        ]),
        default: Fixed, label: "Hardware preset", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.hardware_preset),
    },
    hardware.nodes => {
        key: "nodes", kind: Kind::Int { min: 1, max: 8192 }, default: Fixed,
        label: "Nodes", unit: "", slider: (1.0, 64.0, 1.0),
        resolved: |s| Some(s.hardware.nodes),
    },
    hardware.gpus_per_node => {
        key: "gpus_per_node", kind: Kind::Int { min: 1, max: 64 }, default: HardwarePreset,
        label: "GPUs per node", unit: "", slider: (1.0, 16.0, 1.0),
        resolved: |s| Some(s.hardware.gpus_per_node),
    },
    hardware.peak_tflops => {
        key: "peak_tflops", kind: Kind::Real { min: 0.001, max: 100_000.0 }, default: HardwarePreset,
        label: "Peak compute", unit: "TFLOP/s", slider: (50.0, 2000.0, 1.0),
        resolved: |s| Some(s.hardware.peak_tflops),
    },
    hardware.hbm_gbps => {
        key: "hbm_gbps", kind: Kind::Real { min: 0.001, max: 1_000_000.0 }, default: HardwarePreset,
        label: "HBM bandwidth", unit: "GB/s", slider: (500.0, 8000.0, 10.0),
        resolved: |s| Some(s.hardware.hbm_gbps),
    },
    hardware.nvlink_gbps => {
        key: "nvlink_gbps", kind: Kind::Real { min: 0.001, max: 100_000.0 }, default: HardwarePreset,
        label: "NVLink bandwidth", unit: "GB/s", slider: (25.0, 900.0, 5.0),
        resolved: |s| Some(s.hardware.nvlink_gbps),
    },
    hardware.nic_gbps => {
        key: "nic_gbps", kind: Kind::Real { min: 0.001, max: 100_000.0 }, default: HardwarePreset,
        label: "NIC bandwidth", unit: "GB/s", slider: (1.0, 100.0, 0.5),
        resolved: |s| Some(s.hardware.nic_gbps),
    },
    hardware.oversubscription => {
        key: "oversubscription", kind: Kind::Real { min: 1.0, max: 64.0 }, default: HardwarePreset,
        label: "Oversubscription", unit: "×", slider: (1.0, 8.0, 0.5),
        resolved: |s| Some(s.hardware.oversubscription),
    },
    hardware.nvlink_latency_us => {
        key: "nvlink_latency_us", kind: Kind::Real { min: 0.0, max: 10_000.0 }, default: HardwarePreset,
        label: "NVLink latency", unit: "µs", slider: (0.0, 20.0, 0.5),
        resolved: |s| Some(s.hardware.nvlink_latency_us),
    },
    hardware.network_latency_us => {
        key: "network_latency_us", kind: Kind::Real { min: 0.0, max: 10_000.0 }, default: HardwarePreset,
        label: "Network latency", unit: "µs", slider: (0.0, 50.0, 0.5),
        resolved: |s| Some(s.hardware.network_latency_us),
    },
    hardware.sms => {
        key: "sms", kind: Kind::Int { min: 1, max: 1024 }, default: HardwarePreset,
        label: "SMs per GPU", unit: "", slider: (16.0, 264.0, 1.0),
        resolved: |s| Some(s.hardware.sms),
    },
    hardware.max_connections => {
        key: "max_connections", kind: Kind::Int { min: 1, max: 32 }, default: Fixed,
        label: "Hardware queues (CUDA_DEVICE_MAX_CONNECTIONS)", unit: "", slider: (1.0, 32.0, 1.0),
        resolved: |s| Some(s.hardware.max_connections),
    },
    hardware.hbm_gb => {
        key: "hbm_gb", kind: Kind::Real { min: 0.001, max: 1_000_000.0 }, default: HardwarePreset,
        label: "Memory per GPU", unit: "GB", slider: (16.0, 288.0, 1.0),
        resolved: |s| Some(s.hardware.hbm_gb),
    },
    workload.kind => {
        key: "kind",
        kind: Kind::Enum(choices![
            ("transformer", "GPT-style transformer"),
            ("matmul_allreduce", "MatMul + AllReduce (micro-benchmark)"),
            ("collective", "One collective (nccl-tests)"),
        ]),
        default: Fixed, label: "Workload", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(workload_kind(s)),
    },
    workload.mode => {
        key: "mode",
        kind: Kind::Enum(choices![("train", "Training"), ("inference", "Inference (forward only)")]),
        default: Fixed, label: "Mode", unit: "", slider: NO_SLIDER,
        resolved: |s| transformer(s).map(|t| t.mode),
    },
    workload.layers => {
        key: "layers", kind: Kind::Int { min: 1, max: 4096 }, default: Fixed,
        label: "Layers", unit: "", slider: (1.0, 192.0, 1.0),
        resolved: |s| transformer(s).map(|t| t.layers),
    },
    workload.hidden => {
        key: "hidden", kind: Kind::Int { min: 1, max: 262_144 }, default: Fixed,
        label: "Hidden size", unit: "", slider: (256.0, 32768.0, 256.0),
        resolved: |s| transformer(s).map(|t| t.hidden),
    },
    workload.heads => {
        key: "heads", kind: Kind::Int { min: 1, max: 4096 }, default: Fixed,
        label: "Attention heads", unit: "", slider: (1.0, 192.0, 1.0),
        resolved: |s| transformer(s).map(|t| t.heads),
    },
    workload.seq => {
        key: "seq", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Fixed,
        label: "Sequence length", unit: "tokens", slider: (128.0, 16384.0, 128.0),
        resolved: |s| transformer(s).map(|t| t.seq),
    },
    workload.vocab => {
        key: "vocab", kind: Kind::Int { min: 1, max: 10_000_000 }, default: Fixed,
        label: "Vocabulary", unit: "", slider: (1000.0, 256_000.0, 1000.0),
        resolved: |s| transformer(s).map(|t| t.vocab),
    },
    workload.micro_batch => {
        key: "micro_batch", kind: Kind::Int { min: 1, max: 65_536 }, default: Fixed,
        label: "Micro-batch", unit: "", slider: (1.0, 16.0, 1.0),
        resolved: |s| transformer(s).map(|t| t.micro_batch),
    },
    workload.global_batch => {
        key: "global_batch", kind: Kind::Int { min: 1, max: 100_000_000 }, default: Fixed,
        label: "Global batch", unit: "", slider: (1.0, 4096.0, 1.0),
        resolved: |s| transformer(s).map(|t| t.global_batch),
    },
    workload.recompute => {
        key: "recompute",
        kind: Kind::Enum(choices![
            ("none", "None"),
            ("selective", "Selective (attention core)"),
            ("full", "Full"),
        ]),
        default: Fixed, label: "Recomputation", unit: "", slider: NO_SLIDER,
        resolved: |s| transformer(s).map(|t| t.recompute),
        inert: |s| transformer(s).filter(|t| t.mode == Mode::Inference).map(|_| {
            "Changes nothing in inference: there is no backward to recompute for.".to_string()
        }),
    },
    workload.sequence_parallel => {
        key: "sequence_parallel", kind: Kind::Bool, default: Fixed,
        label: "Sequence parallelism", unit: "", slider: NO_SLIDER,
        resolved: |s| transformer(s).map(|t| t.sequence_parallel),
        inert: |s| transformer(s).filter(|_| s.parallel.tp == 1).map(|_| {
            "Changes nothing here: with TP 1 there is no TP group to share the sequence over.".to_string()
        }),
    },
    workload.m => {
        key: "m", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Fixed,
        label: "GEMM rows m", unit: "", slider: (256.0, 65536.0, 256.0),
        resolved: |s| matmul(s).map(|m| m.m),
    },
    workload.n => {
        key: "n", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Fixed,
        label: "GEMM columns n", unit: "", slider: (256.0, 65536.0, 256.0),
        resolved: |s| matmul(s).map(|m| m.n),
    },
    workload.k => {
        key: "k", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Fixed,
        label: "GEMM inner k", unit: "", slider: (256.0, 65536.0, 256.0),
        resolved: |s| matmul(s).map(|m| m.k),
    },
    workload.collective => {
        key: "coll",
        kind: Kind::Enum(choices![
            ("all_reduce", "AllReduce"),
            ("all_gather", "AllGather"),
            ("reduce_scatter", "ReduceScatter"),
            ("all_to_all", "AllToAll"),
        ]),
        default: Fixed, label: "Collective", unit: "", slider: NO_SLIDER,
        resolved: |s| bench(s).map(|c| c.collective),
    },
    workload.bytes => {
        key: "bytes", kind: Kind::Real { min: 1.0, max: 1_099_511_627_776.0 }, default: Fixed,
        label: "Collective size", unit: "bytes", slider: (8.0, 4_294_967_296.0, 8.0),
        resolved: |s| bench(s).map(|c| c.bytes),
    },
    parallel.tp => {
        key: "tp", kind: Kind::Int { min: 1, max: 64 }, default: WorkloadKind,
        label: "TP degree", unit: "", slider: (1.0, 16.0, 1.0),
        resolved: |s| Some(s.parallel.tp),
        inert: collective_layout_inert,
    },
    parallel.pp => {
        key: "pp", kind: Kind::Int { min: 1, max: 4096 }, default: WorkloadKind,
        label: "PP degree", unit: "", slider: (1.0, 64.0, 1.0),
        resolved: |s| Some(s.parallel.pp),
        inert: collective_layout_inert,
    },
    parallel.dp => {
        key: "dp", kind: Kind::Int { min: 1, max: 65_536 }, default: WorkloadKind,
        label: "DP degree", unit: "", slider: (1.0, 64.0, 1.0),
        resolved: |s| Some(s.parallel.dp),
        inert: collective_layout_inert,
    },
    parallel.schedule => {
        key: "schedule",
        kind: Kind::Enum(&SCHEDULE_CHOICES),
        default: Fixed, label: "Pipeline schedule", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.parallel.schedule),
        inert: schedule_inert,
    },
    parallel.virtual_stages => {
        key: "virtual_stages", kind: Kind::Int { min: 1, max: 64 }, default: Fixed,
        label: "Virtual stages", unit: "", slider: (1.0, 8.0, 1.0),
        resolved: |s| Some(s.parallel.virtual_stages),
        inert: schedule_inert,
    },
    parallel.scatter_gather => {
        key: "scatter_gather", kind: Kind::Bool, default: Fixed,
        label: "Scatter/gather of pipeline sends", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.parallel.scatter_gather),
        inert: scatter_gather_inert,
    },
    overlap.tp => {
        key: "tp_overlap", kind: Kind::Bool, default: Fixed,
        label: "TP overlap", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.tp),
        inert: tp_overlap_inert,
    },
    overlap.pp => {
        key: "pp_overlap", kind: Kind::Bool, default: Fixed,
        label: "PP overlap", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.pp),
        inert: pp_overlap_inert,
    },
    overlap.dp => {
        key: "dp_overlap", kind: Kind::Bool, default: Fixed,
        label: "DP overlap", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.dp),
        inert: dp_overlap_inert,
    },
    overlap.tp_chunks => {
        key: "tp_chunks", kind: Kind::Int { min: 1, max: 64 }, default: Fixed,
        label: "TP chunks", unit: "", slider: (1.0, 64.0, 1.0),
        resolved: |s| Some(s.overlap.tp_chunks),
        inert: tp_chunks_inert,
    },
    overlap.tp_mode => {
        key: "tp_mode",
        kind: Kind::Enum(choices![
            ("chunked", "Chunked GEMM (CoCoNet)"),
            ("megatron", "Megatron (collective under the backward GEMM)"),
            ("async", "Async TP (ring steps on copy engines)"),
        ]),
        default: Derived("async with sequence parallelism, else chunked"),
        label: "TP overlap form", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.tp_mode),
        inert: tp_mode_inert,
    },
    overlap.bucket_mb => {
        key: "bucket_mb", kind: Kind::Real { min: 0.1, max: 100_000.0 }, default: Fixed,
        label: "DP bucket size", unit: "MB", slider: (1.0, 500.0, 1.0),
        resolved: |s| Some(s.overlap.bucket_mb),
        inert: bucket_mb_inert,
    },
    overlap.grad_bytes => {
        key: "grad_bytes",
        kind: Kind::IntOf {
            choices: choices![("1", "1 byte (fp8)"), ("2", "2 bytes (bf16)"), ("4", "4 bytes (fp32)")],
            noun: "a gradient width",
        },
        default: Fixed, label: "Gradient width", unit: "bytes", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.grad_bytes),
    },
    sm_tax => {
        key: "sm_tax", kind: Kind::Real { min: 0.0, max: 0.9 }, default: Absent,
        label: "SM tax", unit: "of compute", slider: (0.0, 0.5, 0.01),
        resolved: |s| s.sm_tax,
    },
    interference => {
        key: "interference",
        kind: Kind::Enum(choices![("modelled", "Modelled (SMs and HBM shared)"), ("off", "Off (free overlap)")]),
        default: Fixed, label: "Interference", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.interference),
    },
    overlap.pp_chunks => {
        key: "pp_chunks", kind: Kind::Int { min: 1, max: 64 }, default: Fixed,
        label: "PP boundary chunks (sliced)", unit: "", slider: (1.0, 16.0, 1.0),
        resolved: |s| Some(s.overlap.pp_chunks),
    },
    overlap.fuse => {
        key: "fuse", kind: Kind::Bool, default: Fixed,
        label: "Fuse TP collective with bias, dropout, residual", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.fuse),
    },
    workload.kv_heads => {
        key: "kv_heads", kind: Kind::Int { min: 1, max: 4096 }, default: Derived("heads"),
        label: "Key/value heads (GQA)", unit: "", slider: (1.0, 128.0, 1.0),
        resolved: |s| transformer(s).map(|t| t.kv_heads),
    },
    workload.ffn_hidden => {
        key: "ffn_hidden", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Derived("4 x hidden"),
        label: "MLP inner width", unit: "", slider: (1024.0, 65536.0, 256.0),
        resolved: |s| transformer(s).map(|t| t.ffn_hidden),
    },
    workload.mlp => {
        key: "mlp",
        kind: Kind::Enum(choices![("gelu", "GELU (two GEMMs)"), ("swiglu", "SwiGLU (three GEMMs)")]),
        default: Fixed, label: "MLP", unit: "", slider: NO_SLIDER,
        resolved: |s| transformer(s).map(|t| t.mlp),
    },
    workload.tied_embeddings => {
        key: "tied_embeddings", kind: Kind::Bool, default: Fixed,
        label: "Tied embeddings", unit: "", slider: NO_SLIDER,
        resolved: |s| transformer(s).map(|t| t.tied_embeddings),
    },
    workload.attention => {
        key: "attention",
        kind: Kind::Enum(choices![
            ("materialized", "Materialised scores (2021 Megatron)"),
            ("flash", "FlashAttention-2"),
        ]),
        default: Fixed, label: "Attention", unit: "", slider: NO_SLIDER,
        resolved: |s| transformer(s).map(|t| t.attention),
    },
    parallel.dp_sharding => {
        key: "dp_sharding",
        kind: Kind::Enum(choices![
            ("none", "None (all-reduce)"),
            ("optimizer", "Distributed optimizer (ZeRO-1/2)"),
            ("full", "FSDP (ZeRO-3)"),
        ]),
        default: Fixed, label: "DP sharding", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.parallel.dp_sharding),
    },
    overlap.param_gather => {
        key: "param_gather", kind: Kind::Bool, default: Fixed,
        label: "Parameter all-gather under forward", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.param_gather),
    },
    overlap.grad_sync => {
        key: "grad_sync",
        kind: Kind::Enum(choices![
            ("every_micro_batch", "Every micro-batch"),
            ("last_micro_batch", "Last micro-batch only"),
        ]),
        default: Fixed, label: "FSDP gradient sync", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.grad_sync),
    },
    workload.head_dim => {
        key: "head_dim", kind: Kind::Int { min: 1, max: 4096 }, default: Derived("hidden / heads"),
        label: "Head width", unit: "", slider: (32.0, 256.0, 8.0),
        resolved: |s| transformer(s).map(|t| t.head_dim),
    },
    workload.moe.experts => {
        key: "experts", kind: Kind::Int { min: 1, max: 4096 }, default: Absent,
        label: "Routed experts", unit: "", slider: (2.0, 256.0, 1.0),
        resolved: |s| moe(s).map(|m| m.experts),
    },
    workload.moe.top_k => {
        key: "top_k", kind: Kind::Int { min: 1, max: 64 }, default: Fixed,
        label: "Experts per token (top-k)", unit: "", slider: (1.0, 16.0, 1.0),
        resolved: |s| moe_field(s, |m| m.top_k),
        inert: moe_inert,
    },
    workload.moe.expert_ffn_hidden => {
        key: "expert_ffn", kind: Kind::Int { min: 1, max: 1 << 20 }, default: Derived("ffn_hidden"),
        label: "Expert inner width", unit: "", slider: (256.0, 32768.0, 256.0),
        resolved: |s| moe_field(s, |m| m.expert_ffn_hidden),
        inert: moe_inert,
    },
    workload.moe.shared_experts => {
        key: "shared_experts", kind: Kind::Int { min: 0, max: 64 }, default: Fixed,
        label: "Shared experts", unit: "", slider: (0.0, 4.0, 1.0),
        resolved: |s| moe_field(s, |m| m.shared_experts),
        inert: moe_inert,
    },
    workload.moe.dense_layers => {
        key: "dense_layers", kind: Kind::Int { min: 0, max: 100_000 }, default: Fixed,
        label: "Leading dense layers", unit: "", slider: (0.0, 8.0, 1.0),
        resolved: |s| moe_field(s, |m| m.dense_layers),
        inert: moe_inert,
    },
    workload.moe.dispatcher => {
        key: "dispatcher",
        kind: Kind::Enum(choices![
            ("alltoall", "NCCL all-to-all"),
            ("deepep", "DeepEP (node-limited)"),
        ]),
        default: Fixed, label: "Token dispatcher", unit: "", slider: NO_SLIDER,
        resolved: |s| moe_field(s, |m| m.dispatcher),
        inert: moe_inert,
    },
    workload.moe.max_nodes_per_token => {
        key: "max_nodes", kind: Kind::Int { min: 1, max: 4096 }, default: Fixed,
        label: "Nodes per token (DeepEP)", unit: "", slider: (1.0, 16.0, 1.0),
        resolved: |s| moe_field(s, |m| m.max_nodes_per_token),
        inert: deepep_inert,
    },
    workload.moe.imbalance => {
        key: "imbalance", kind: Kind::Real { min: 1.0, max: 64.0 }, default: Fixed,
        label: "Busiest expert / mean", unit: "×", slider: (1.0, 4.0, 0.05),
        resolved: |s| moe_field(s, |m| m.imbalance),
        inert: moe_inert,
    },
    workload.moe.deepep_sms => {
        key: "deepep_sms", kind: Kind::Int { min: 1, max: 1024 }, default: Fixed,
        label: "SMs for DeepEP", unit: "", slider: (4.0, 64.0, 2.0),
        resolved: |s| moe_field(s, |m| m.deepep_sms),
        inert: deepep_inert,
    },
    parallel.ep => {
        key: "ep", kind: Kind::Int { min: 1, max: 65_536 }, default: Fixed,
        label: "EP", unit: "", slider: (1.0, 64.0, 1.0),
        resolved: |s| transformer(s).map(|_| s.parallel.ep),
    },
    overlap.ep => {
        key: "ep_overlap", kind: Kind::Bool, default: Fixed,
        label: "EP overlap", unit: "", slider: NO_SLIDER,
        resolved: |s| transformer(s).map(|_| s.overlap.ep),
        inert: ep_overlap_inert,
    },
    workload.precision => {
        key: "precision",
        kind: Kind::Enum(choices![
            ("bf16", "bf16"),
            ("fp8", "FP8 linear layers (tensorwise scaling)"),
        ]),
        default: Fixed, label: "Precision", unit: "", slider: NO_SLIDER,
        resolved: |s| transformer(s).map(|t| t.precision),
    },
    parallel.cp => {
        key: "cp", kind: Kind::Int { min: 1, max: 1024 }, default: Fixed,
        label: "CP degree", unit: "", slider: (1.0, 32.0, 1.0),
        resolved: |s| Some(s.parallel.cp),
        inert: cp_inert,
    },
    parallel.cp_mode => {
        key: "cp_mode",
        kind: Kind::Enum(choices![
            ("ring", "Ring attention (K/V blocks pass around)"),
            ("allgather", "All-gather K/V (Llama 3)"),
        ]),
        default: Fixed, label: "CP mode", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.parallel.cp_mode),
        inert: cp_mode_inert,
    },
    overlap.cp => {
        key: "cp_overlap", kind: Kind::Bool, default: Fixed,
        label: "CP overlap", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.cp),
        inert: cp_overlap_inert,
    },
    overlap.fp8_all_gather => {
        key: "fp8_all_gather", kind: Kind::Bool, default: Fixed,
        label: "FSDP gathers fp8 weights", unit: "", slider: NO_SLIDER,
        resolved: |s| Some(s.overlap.fp8_all_gather),
        inert: fp8_all_gather_inert,
    },
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

/// "1, 2 or 4".
fn listed(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// A number as a message shows it: 1e300 in exponent form rather than its
/// 301 digits.
pub fn shown(value: f64) -> String {
    let plain = value.to_string();
    if plain.len() > 24 {
        format!("{value:e}")
    } else {
        plain
    }
}

impl Field {
    /// The section the field sits in (`"parallel"`), or `""` at the top level.
    pub fn section(&self) -> &'static str {
        self.path.split_once('.').map_or("", |(section, _)| section)
    }

    /// The field's name inside its section (`"tp"`).
    pub fn name(&self) -> &'static str {
        self.path
            .split_once('.')
            .map_or(self.path, |(_, name)| name)
    }

    /// Whether the page shows it as a number box with a slider.
    pub fn is_number(&self) -> bool {
        matches!(self.kind, Kind::Int { .. } | Kind::Real { .. })
    }

    /// Whether the number is whole.
    pub fn is_integer(&self) -> bool {
        matches!(self.kind, Kind::Int { .. } | Kind::IntOf { .. })
    }

    /// The choices of an enumerated field (empty for others).
    pub fn choices(&self) -> &'static [Choice] {
        match self.kind {
            Kind::Enum(choices) | Kind::IntOf { choices, .. } => choices,
            _ => &[],
        }
    }

    /// The value the input sets, as a number (numbers only).
    pub fn number(&self, input: &ScenarioInput) -> Option<f64> {
        (self.get)(input)?.as_f64()
    }

    /// The value a resolved scenario uses, as a number (numbers only).
    pub fn resolved_number(&self, scenario: &Scenario) -> Option<f64> {
        (self.resolved)(scenario)?.as_f64()
    }

    /// The value as a link or a select writes it: a name, a number, or 1/0.
    pub fn text(value: &Value) -> String {
        match value {
            Value::String(s) => s.clone(),
            Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
            other => other.to_string(),
        }
    }

    /// Reads a value as links and selects write it ([`Field::text`]); the
    /// message says what is valid.
    pub fn parse_text(&self, raw: &str) -> Result<Value, String> {
        match self.kind {
            Kind::Int { .. } => raw.parse::<u32>().map(Value::from).map_err(|e| {
                // Digits past u32 are a whole number, only too large.
                if *e.kind() == std::num::IntErrorKind::PosOverflow {
                    self.out_of_range(raw)
                } else {
                    self.not_of_kind(&format!("{raw:?}"))
                }
            }),
            Kind::IntOf { .. } => raw
                .parse::<u32>()
                .map(Value::from)
                .map_err(|_| self.not_of_kind(&format!("{raw:?}"))),
            Kind::Real { .. } => raw
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .map(Value::from)
                .ok_or_else(|| self.not_of_kind(&format!("{raw:?}"))),
            // Links write a switch as 1 or 0 (`Field::text`).
            Kind::Bool => match raw {
                "1" | "true" | "on" => Ok(Value::Bool(true)),
                "0" | "false" | "off" => Ok(Value::Bool(false)),
                _ => Err(format!("{raw:?} is not a switch: valid are 1 or 0")),
            },
            Kind::Enum(choices) if choices.iter().any(|c| c.name == raw) => Ok(Value::from(raw)),
            Kind::Enum(_) => Err(self.not_of_kind(&format!("{raw:?}"))),
        }
    }

    /// That a value of this field, as `given` writes it, is not of the
    /// field's kind, and what is valid (JSON's words for a switch: true or
    /// false).
    fn not_of_kind(&self, given: &str) -> String {
        let names = |choices: &[Choice]| -> Vec<&str> { choices.iter().map(|c| c.name).collect() };
        match self.kind {
            Kind::Int { min, max } => {
                format!("{given} is not a whole number: valid is {min} to {max}")
            }
            Kind::Real { min, max } => {
                format!("{given} is not a number: valid is from {min} to {max}")
            }
            Kind::IntOf { choices, noun } => format!(
                "{given} is not {noun}: valid are {} {}",
                listed(&names(choices)),
                self.unit
            ),
            Kind::Bool => format!("{given} is not a switch: valid are true or false"),
            Kind::Enum(choices) => format!(
                "{given} is not valid: valid are {}",
                names(choices).join(", ")
            ),
        }
    }

    /// What is wrong with `value`, given in scenario JSON for this field
    /// and refused by the parser, said as the field reference states what
    /// is valid (the parser's own words name Rust types: "expected u32").
    pub fn json_refusal(&self, value: &Value) -> String {
        let given = match value {
            Value::String(s) => format!("{s:?}"),
            other => other.to_string(),
        };
        // A whole number the parser refused for an integer field is out of
        // range (past u32); anything else is not of the field's kind.
        let whole = value.as_f64().filter(|x| x.fract() == 0.0);
        match (self.kind, whole.map(|x| self.check_number(x))) {
            (Kind::Int { .. }, Some(Err(out_of_range))) => out_of_range,
            _ => self.not_of_kind(&given),
        }
    }

    /// That a number of this field, as `given` writes it, is out of its
    /// range, and what is valid.
    pub fn out_of_range(&self, given: &str) -> String {
        match self.kind {
            Kind::Int { min, max } => format!("{given} is out of range: valid is {min} to {max}"),
            Kind::Real { min, max } => {
                format!("{given} is out of range: valid is from {min} to {max}")
            }
            _ => format!("{given} is out of range: valid is {}", self.kind.describe()),
        }
    }

    /// Whether `value` is in the field's range, and if not what is valid.
    /// Types are the parser's business: a value of another type passes.
    pub fn check_range(&self, value: &Value) -> Result<(), String> {
        match value.as_f64() {
            Some(x) => self.check_number(x),
            None => Ok(()),
        }
    }

    /// Whether the number `x` is in the field's range (a non-finite number
    /// never is), and if not what is valid. Other kinds have no range.
    pub fn check_number(&self, x: f64) -> Result<(), String> {
        match self.kind {
            Kind::Int { min, max } if x < f64::from(min) || x > f64::from(max) => {
                Err(self.out_of_range(&shown(x)))
            }
            Kind::Real { min, max } if !x.is_finite() || x < min || x > max => {
                Err(self.out_of_range(&shown(x)))
            }
            Kind::IntOf { choices, .. } if !choices.iter().any(|c| c.name == shown(x)) => {
                Err(self.not_of_kind(&shown(x)))
            }
            _ => Ok(()),
        }
    }

    /// The value the field takes when the scenario leaves it out, for
    /// [`DefaultFrom::Fixed`] fields (the transformer's for its fields, the
    /// micro-benchmark's for `m`, `n`, `k`); the default hardware preset's for
    /// [`DefaultFrom::HardwarePreset`]; the transformer's for the rest.
    pub fn default_value(&self) -> Option<Value> {
        let transformer = ScenarioInput::default().resolve().ok()?;
        (self.resolved)(&transformer).or_else(|| {
            let mut i = ScenarioInput::default();
            // One TP group on one node, as the micro-benchmark runs.
            i.workload.kind = Some(WorkloadKind::MatmulAllreduce);
            i.hardware.nodes = Some(1);
            (self.resolved)(&i.resolve().ok()?).or_else(|| {
                // The collective workload's own fields.
                let mut i = ScenarioInput::default();
                i.workload.kind = Some(WorkloadKind::Collective);
                (self.resolved)(&i.resolve().ok()?)
            })
        })
    }
}

impl Kind {
    /// The type and valid range as the field reference states them.
    pub fn describe(&self) -> String {
        let names = |choices: &[Choice]| -> Vec<String> {
            choices.iter().map(|c| format!("`{}`", c.name)).collect()
        };
        match *self {
            Kind::Int { min, max } => format!("whole number, {min} to {max}"),
            Kind::Real { min, max } => format!("number, {min} to {max}"),
            Kind::IntOf { choices, .. } => format!("one of {}", names(choices).join(", ")),
            Kind::Bool => "true or false (`1` or `0` in links)".to_string(),
            Kind::Enum(choices) => format!("one of {}", names(choices).join(", ")),
        }
    }
}

/// Every field as a Markdown table: path, link key, type and range,
/// default, and the page's label (`overlap-lab fields`).
pub fn table() -> String {
    let mut out = String::from(
        "| field | link key | type and range | default | label |\n|---|---|---|---|---|\n",
    );
    for f in FIELDS {
        let default = match (f.default, f.default_value()) {
            (DefaultFrom::HardwarePreset, _) => "from the hardware preset".to_string(),
            (DefaultFrom::WorkloadKind, Some(v)) => {
                format!(
                    "{} (transformer); one TP group for matmul_allreduce",
                    Field::text(&v)
                )
            }
            (DefaultFrom::Absent, _) => "absent".to_string(),
            (DefaultFrom::Derived(rule), _) => format!("= {rule}"),
            (_, Some(v)) => Field::text(&v),
            (_, None) => String::new(),
        };
        let label = if f.unit.is_empty() {
            f.label.to_string()
        } else {
            format!("{} ({})", f.label, f.unit)
        };
        out += &format!(
            "| `{}` | `{}` | {} | {} | {} |\n",
            f.path,
            f.key,
            f.kind.describe(),
            default,
            label
        );
    }
    out
}

/// A resolved scenario written back as complete input: every field that
/// applies to it is set, except a [`DefaultFrom::Derived`] field whose value
/// is what its rule gives, which stays absent so that it keeps following
/// the fields it derives from (a link that changes `heads` does not also
/// pin `kv_heads`).
pub fn complete_input(s: &Scenario) -> ScenarioInput {
    let mut input = ScenarioInput::default();
    for f in FIELDS {
        if let Some(v) = (f.resolved)(s) {
            (f.set)(&mut input, Some(&v)).expect("a resolved value has its field's type");
        }
    }
    // A dense model's `workload.moe` fields state only what they would
    // default to: written back, they would say nothing.
    if input.workload.moe.experts.is_none() {
        input.workload.moe = Default::default();
    }
    for f in FIELDS
        .iter()
        .filter(|f| matches!(f.default, DefaultFrom::Derived(_)))
    {
        let mut without = input.clone();
        (f.set)(&mut without, None).expect("a field can be cleared");
        if (f.resolved)(&crate::input::validate::filled(&without)) == (f.resolved)(s) {
            input = without;
        }
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::share_link;

    /// Every leaf of a JSON object, as dotted paths.
    fn leaves(prefix: &str, value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let path = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    leaves(&path, v, out);
                }
            }
            _ => out.push(prefix.to_string()),
        }
    }

    /// An input with every field set: each row's default, through the table.
    fn fully_populated() -> ScenarioInput {
        let mut input = ScenarioInput::default();
        for f in FIELDS {
            let v = match (f.default, f.kind) {
                // A field without a default: its smallest valid value.
                (DefaultFrom::Absent, Kind::Real { min, .. }) => serde_json::json!(min),
                (DefaultFrom::Absent, Kind::Int { min, .. }) => serde_json::json!(min),
                _ => f
                    .default_value()
                    .unwrap_or_else(|| panic!("{} has a default", f.path)),
            };
            (f.set)(&mut input, Some(&v)).unwrap();
        }
        input
    }

    #[test]
    fn every_input_field_has_a_row() {
        let json = serde_json::to_value(fully_populated()).unwrap();
        let mut paths = Vec::new();
        leaves("", &json, &mut paths);
        let mut rows: Vec<&str> = FIELDS.iter().map(|f| f.path).collect();
        paths.sort();
        rows.sort();
        assert_eq!(paths, rows);
        // The other way: a struct field missing from the table would not be
        // set above, so serde would not list it. Deserialising an object
        // with every row's path set proves each path is a struct field.
        let back: ScenarioInput = serde_json::from_value(json).unwrap();
        assert_eq!(back, fully_populated());
    }

    #[test]
    fn no_struct_field_is_missing_from_the_table() {
        // serde names the expected fields of a section when an unknown one is
        // given: every one of them must be a row.
        for section in [
            "hardware",
            "workload",
            "parallel",
            "overlap",
            "",
            "workload.moe",
        ] {
            let probe = match section.split_once('.') {
                _ if section.is_empty() => r#"{"zz_unknown": 1}"#.to_string(),
                Some((outer, inner)) => {
                    format!(r#"{{"{outer}": {{"{inner}": {{"zz_unknown": 1}}}}}}"#)
                }
                None => format!(r#"{{"{section}": {{"zz_unknown": 1}}}}"#),
            };
            let message = serde_json::from_str::<ScenarioInput>(&probe)
                .unwrap_err()
                .to_string();
            let expected = message
                .split("expected one of ")
                .nth(1)
                .unwrap_or_else(|| panic!("{message}"));
            for name in expected.split(", ") {
                let name = name.trim_matches(|c: char| c == '`' || c.is_whitespace());
                let name = name.split('`').next().unwrap();
                if section.is_empty() && FIELDS.iter().any(|f| f.section() == name) {
                    continue;
                }
                // An object of fields inside a section, probed on its own.
                let prefix = format!("{section}.{name}.");
                if FIELDS.iter().any(|f| f.path.starts_with(&prefix)) {
                    continue;
                }
                let path = if section.is_empty() {
                    name.to_string()
                } else {
                    format!("{section}.{name}")
                };
                assert!(find(&path).is_some(), "{path} has no row in FIELDS");
            }
        }
    }

    #[test]
    fn every_row_round_trips_through_a_share_link() {
        for f in FIELDS {
            let mut values: Vec<Value> = f
                .choices()
                .iter()
                .map(|c| f.parse_text(c.name).unwrap())
                .collect();
            match f.kind {
                Kind::Int { min, max } => values.extend([min, max].map(Value::from)),
                Kind::Real { min, max } => values.extend([min, max].map(Value::from)),
                Kind::Bool => values.extend([true, false].map(Value::from)),
                Kind::Enum(_) | Kind::IntOf { .. } => {}
            }
            for v in values {
                let mut input = ScenarioInput::default();
                // m, n, k apply to the micro-benchmark only.
                if f.path.starts_with("workload.") && matches!(f.name(), "m" | "n" | "k") {
                    input.workload.kind = Some(WorkloadKind::MatmulAllreduce);
                }
                // collective and bytes apply to the collective workload only.
                if f.path.starts_with("workload.") && matches!(f.name(), "collective" | "bytes") {
                    input.workload.kind = Some(WorkloadKind::Collective);
                }
                (f.set)(&mut input, Some(&v)).unwrap();
                let link = format!("v=1&{}={}", f.key, Field::text(&v));
                let back = share_link::decode(&link, &[]);
                let back_value = (f.get)(&back.input);
                // A link that makes the scenario invalid keeps the preset's value
                // and says so; every other value comes back exactly.
                if back.errors.is_empty() {
                    assert_eq!(back_value.as_ref(), Some(&v), "{link}");
                    let again = share_link::encode(&back.input, None);
                    let twice = share_link::decode(&again, &[]);
                    assert_eq!(twice.input.resolve(), back.input.resolve(), "{again}");
                } else {
                    assert!(
                        back.errors
                            .iter()
                            .any(|e| e.field == f.key || e.field == "scenario"),
                        "{link}: {:?}",
                        back.errors
                    );
                }
            }
        }
    }

    #[test]
    fn a_fully_populated_input_round_trips_through_a_link() {
        let input = complete_input(&ScenarioInput::default().resolve().unwrap());
        let link = share_link::encode(&input, Some("contention"));
        let back = share_link::decode(&link, &[]);
        assert!(back.errors.is_empty(), "{link}: {:?}", back.errors);
        assert_eq!(
            complete_input(&back.input.resolve().unwrap()),
            input,
            "{link}"
        );
    }

    #[test]
    fn every_enum_value_has_a_choice() {
        // The matches are exhaustive: a new variant stops the build here
        // until the table lists it.
        let name = |v: Value| v.as_str().unwrap().to_string();
        let names = |path: &str| -> Vec<String> {
            find(path)
                .unwrap()
                .choices()
                .iter()
                .map(|c| c.name.to_string())
                .collect()
        };
        for p in HardwarePreset::ALL {
            match p {
                HardwarePreset::Dgx2V100 | HardwarePreset::DgxA100 | HardwarePreset::DgxH100 => {}
            }
            assert!(names("hardware.preset").contains(&name(to_json(&p))));
        }
        for k in [
            WorkloadKind::Transformer,
            WorkloadKind::MatmulAllreduce,
            WorkloadKind::Collective,
        ] {
            match k {
                WorkloadKind::Transformer
                | WorkloadKind::MatmulAllreduce
                | WorkloadKind::Collective => {}
            }
            assert!(names("workload.kind").contains(&name(to_json(&k))));
        }
        for c in CollectiveOp::ALL {
            match c {
                CollectiveOp::AllReduce
                | CollectiveOp::AllGather
                | CollectiveOp::ReduceScatter
                | CollectiveOp::AllToAll => {}
            }
            assert!(names("workload.collective").contains(&name(to_json(&c))));
        }
        for m in [Mode::Train, Mode::Inference] {
            match m {
                Mode::Train | Mode::Inference => {}
            }
            assert!(names("workload.mode").contains(&name(to_json(&m))));
        }
        for r in [Recompute::None, Recompute::Selective, Recompute::Full] {
            match r {
                Recompute::None | Recompute::Selective | Recompute::Full => {}
            }
            assert!(names("workload.recompute").contains(&name(to_json(&r))));
        }
        // The match fails to compile when a schedule is added: then add it
        // to `Schedule::ALL` too.
        for s in Schedule::ALL {
            match s {
                Schedule::Gpipe
                | Schedule::OneFOneB
                | Schedule::Interleaved
                | Schedule::ZeroBubble1p
                | Schedule::ZeroBubble2p
                | Schedule::ZeroBubbleV
                | Schedule::DualPipeV => {}
            }
            assert!(names("parallel.schedule").contains(&name(to_json(&s))));
        }
        for i in [Interference::Modelled, Interference::Off] {
            match i {
                Interference::Modelled | Interference::Off => {}
            }
            assert!(names("interference").contains(&name(to_json(&i))));
        }
        for a in [Attention::Materialized, Attention::Flash] {
            match a {
                Attention::Materialized | Attention::Flash => {}
            }
            assert!(names("workload.attention").contains(&name(to_json(&a))));
        }
        for m in [Mlp::Gelu, Mlp::Swiglu] {
            match m {
                Mlp::Gelu | Mlp::Swiglu => {}
            }
            assert!(names("workload.mlp").contains(&name(to_json(&m))));
        }
        for d in [DpSharding::None, DpSharding::Optimizer, DpSharding::Full] {
            match d {
                DpSharding::None | DpSharding::Optimizer | DpSharding::Full => {}
            }
            assert!(names("parallel.dp_sharding").contains(&name(to_json(&d))));
        }
        for g in [GradSync::EveryMicroBatch, GradSync::LastMicroBatch] {
            match g {
                GradSync::EveryMicroBatch | GradSync::LastMicroBatch => {}
            }
            assert!(names("overlap.grad_sync").contains(&name(to_json(&g))));
        }
        for d in [Dispatcher::Alltoall, Dispatcher::Deepep] {
            match d {
                Dispatcher::Alltoall | Dispatcher::Deepep => {}
            }
            assert!(names("workload.moe.dispatcher").contains(&name(to_json(&d))));
        }
        // And every choice is a value serde reads.
        for f in FIELDS {
            for c in f.choices() {
                let mut input = ScenarioInput::default();
                let v = f.parse_text(c.name).unwrap();
                (f.set)(&mut input, Some(&v)).unwrap_or_else(|e| panic!("{}: {e}", f.path));
            }
        }
    }

    #[test]
    fn keys_and_paths_are_unique() {
        for (i, f) in FIELDS.iter().enumerate() {
            for g in &FIELDS[i + 1..] {
                assert_ne!(f.key, g.key);
                assert_ne!(f.path, g.path);
            }
            assert!(f.key != "v" && f.key != "preset", "{} is reserved", f.key);
        }
    }

    #[test]
    fn unreadable_link_values_name_the_valid_range() {
        let tp = find("parallel.tp").unwrap();
        assert_eq!(
            tp.parse_text("banana").unwrap_err(),
            "\"banana\" is not a whole number: valid is 1 to 64"
        );
        let tax = find("sm_tax").unwrap();
        assert_eq!(
            tax.parse_text("lots").unwrap_err(),
            "\"lots\" is not a number: valid is from 0 to 0.9"
        );
        let grad = find("overlap.grad_bytes").unwrap();
        assert_eq!(
            grad.parse_text("two").unwrap_err(),
            "\"two\" is not a gradient width: valid are 1, 2 or 4 bytes"
        );
    }

    #[test]
    fn range_messages_name_the_valid_range() {
        let tp = find("parallel.tp").unwrap();
        assert_eq!(
            tp.check_range(&Value::from(65)).unwrap_err(),
            "65 is out of range: valid is 1 to 64"
        );
        let tax = find("sm_tax").unwrap();
        assert_eq!(
            tax.check_range(&Value::from(0.95)).unwrap_err(),
            "0.95 is out of range: valid is from 0 to 0.9"
        );
        let grad = find("overlap.grad_bytes").unwrap();
        assert_eq!(
            grad.check_range(&Value::from(3)).unwrap_err(),
            "3 is not a gradient width: valid are 1, 2 or 4 bytes"
        );
        assert!(grad.check_range(&Value::from(4)).is_ok());
    }

    #[test]
    fn the_const_lookup_finds_rows() {
        assert_eq!(field("parallel.tp").key, "tp");
        assert_eq!(field("sm_tax").section(), "");
    }
}
