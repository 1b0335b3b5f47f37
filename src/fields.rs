//! The scenario's numeric fields as a typed table: the name the core uses in
//! its errors (`parallel.tp`), a label, a slider range, and how to read and
//! write it on a `ScenarioInput`. Controls, error placement and (later) share
//! links all read this one table, in the manner of TensorFlow Playground's
//! state table.

use overlap_core::scenario::{Scenario, ScenarioInput, Workload};

pub struct NumField {
    /// Dotted path, exactly as in the core's `FieldError::field`.
    pub field: &'static str,
    pub label: &'static str,
    /// Unit shown after the number field.
    pub unit: &'static str,
    /// The slider's range and step. The number field accepts any value; the
    /// core says what is valid.
    pub slider: (f64, f64, f64),
    pub integer: bool,
    /// The value the user (or the preset) set, if any.
    pub get: fn(&ScenarioInput) -> Option<f64>,
    /// The value the last resolved scenario used (defaults filled in).
    pub resolved: fn(&Scenario) -> Option<f64>,
    pub set: fn(&mut ScenarioInput, f64),
}

impl NumField {
    /// What the control shows: the user's value if set, else the resolved one.
    pub fn shown(&self, input: &ScenarioInput, resolved: Option<&Scenario>) -> Option<f64> {
        (self.get)(input).or_else(|| resolved.and_then(|s| (self.resolved)(s)))
    }

    pub fn id(&self) -> String {
        format!("f-{}", self.field.replace(['.', '_'], "-"))
    }
}

fn transformer(s: &Scenario) -> Option<&overlap_core::scenario::Transformer> {
    match &s.workload {
        Workload::Transformer(t) => Some(t),
        Workload::MatmulAllreduce(_) => None,
    }
}

fn matmul(s: &Scenario) -> Option<&overlap_core::scenario::MatmulAllreduce> {
    match &s.workload {
        Workload::MatmulAllreduce(m) => Some(m),
        Workload::Transformer(_) => None,
    }
}

/// Saturating conversion for integer fields; the control checks the value first.
fn to_u32(v: f64) -> u32 {
    v.round().clamp(0.0, u32::MAX as f64) as u32
}

macro_rules! num {
    ($field:literal, $label:literal, $unit:literal, ($lo:expr, $hi:expr, $st:expr), int,
     $grp:ident . $name:ident, $res:expr) => {
        NumField {
            field: $field,
            label: $label,
            unit: $unit,
            slider: ($lo as f64, $hi as f64, $st as f64),
            integer: true,
            get: |i| i.$grp.$name.map(f64::from),
            resolved: $res,
            set: |i, v| i.$grp.$name = Some(to_u32(v)),
        }
    };
    ($field:literal, $label:literal, $unit:literal, ($lo:expr, $hi:expr, $st:expr), real,
     $grp:ident . $name:ident, $res:expr) => {
        NumField {
            field: $field,
            label: $label,
            unit: $unit,
            slider: ($lo as f64, $hi as f64, $st as f64),
            integer: false,
            get: |i| i.$grp.$name,
            resolved: $res,
            set: |i, v| i.$grp.$name = Some(v),
        }
    };
}

pub const NODES: NumField = num!(
    "hardware.nodes",
    "Nodes",
    "",
    (1, 64, 1),
    int,
    hardware.nodes,
    |s| Some(s.hardware.nodes.into())
);
pub const GPUS_PER_NODE: NumField = num!(
    "hardware.gpus_per_node",
    "GPUs per node",
    "",
    (1, 16, 1),
    int,
    hardware.gpus_per_node,
    |s| Some(s.hardware.gpus_per_node.into())
);
pub const PEAK_TFLOPS: NumField = num!(
    "hardware.peak_tflops",
    "Peak compute",
    "TFLOP/s",
    (50, 2000, 1),
    real,
    hardware.peak_tflops,
    |s| Some(s.hardware.peak_tflops)
);
pub const HBM_GBPS: NumField = num!(
    "hardware.hbm_gbps",
    "HBM bandwidth",
    "GB/s",
    (500, 8000, 10),
    real,
    hardware.hbm_gbps,
    |s| Some(s.hardware.hbm_gbps)
);
pub const NVLINK_GBPS: NumField = num!(
    "hardware.nvlink_gbps",
    "NVLink bandwidth",
    "GB/s",
    (25, 900, 5),
    real,
    hardware.nvlink_gbps,
    |s| Some(s.hardware.nvlink_gbps)
);
pub const NIC_GBPS: NumField = num!(
    "hardware.nic_gbps",
    "NIC bandwidth",
    "GB/s",
    (1, 100, 0.5),
    real,
    hardware.nic_gbps,
    |s| Some(s.hardware.nic_gbps)
);
pub const OVERSUBSCRIPTION: NumField = num!(
    "hardware.oversubscription",
    "Oversubscription",
    "×",
    (1, 8, 0.5),
    real,
    hardware.oversubscription,
    |s| Some(s.hardware.oversubscription)
);
pub const NVLINK_LATENCY: NumField = num!(
    "hardware.nvlink_latency_us",
    "NVLink latency",
    "µs",
    (0, 20, 0.5),
    real,
    hardware.nvlink_latency_us,
    |s| Some(s.hardware.nvlink_latency_us)
);
pub const NETWORK_LATENCY: NumField = num!(
    "hardware.network_latency_us",
    "Network latency",
    "µs",
    (0, 50, 0.5),
    real,
    hardware.network_latency_us,
    |s| Some(s.hardware.network_latency_us)
);

pub const LAYERS: NumField = num!(
    "workload.layers",
    "Layers",
    "",
    (1, 192, 1),
    int,
    workload.layers,
    |s| transformer(s).map(|t| t.layers.into())
);
pub const HIDDEN: NumField = num!(
    "workload.hidden",
    "Hidden size",
    "",
    (256, 32768, 256),
    int,
    workload.hidden,
    |s| transformer(s).map(|t| t.hidden.into())
);
pub const HEADS: NumField = num!(
    "workload.heads",
    "Attention heads",
    "",
    (1, 192, 1),
    int,
    workload.heads,
    |s| transformer(s).map(|t| t.heads.into())
);
pub const SEQ: NumField = num!(
    "workload.seq",
    "Sequence length",
    "tokens",
    (128, 16384, 128),
    int,
    workload.seq,
    |s| transformer(s).map(|t| t.seq.into())
);
pub const VOCAB: NumField = num!(
    "workload.vocab",
    "Vocabulary",
    "",
    (1000, 256000, 1000),
    int,
    workload.vocab,
    |s| transformer(s).map(|t| t.vocab.into())
);
pub const MICRO_BATCH: NumField = num!(
    "workload.micro_batch",
    "Micro-batch",
    "",
    (1, 16, 1),
    int,
    workload.micro_batch,
    |s| transformer(s).map(|t| t.micro_batch.into())
);
pub const GLOBAL_BATCH: NumField = num!(
    "workload.global_batch",
    "Global batch",
    "",
    (1, 4096, 1),
    int,
    workload.global_batch,
    |s| transformer(s).map(|t| t.global_batch.into())
);
pub const GEMM_M: NumField = num!(
    "workload.m",
    "GEMM rows m",
    "",
    (256, 65536, 256),
    int,
    workload.m,
    |s| matmul(s).map(|m| m.m.into())
);
pub const GEMM_N: NumField = num!(
    "workload.n",
    "GEMM columns n",
    "",
    (256, 65536, 256),
    int,
    workload.n,
    |s| matmul(s).map(|m| m.n.into())
);
pub const GEMM_K: NumField = num!(
    "workload.k",
    "GEMM inner k",
    "",
    (256, 65536, 256),
    int,
    workload.k,
    |s| matmul(s).map(|m| m.k.into())
);

pub const TP: NumField = num!(
    "parallel.tp",
    "TP degree",
    "",
    (1, 16, 1),
    int,
    parallel.tp,
    |s| Some(s.parallel.tp.into())
);
pub const PP: NumField = num!(
    "parallel.pp",
    "PP degree",
    "",
    (1, 64, 1),
    int,
    parallel.pp,
    |s| Some(s.parallel.pp.into())
);
pub const DP: NumField = num!(
    "parallel.dp",
    "DP degree",
    "",
    (1, 64, 1),
    int,
    parallel.dp,
    |s| Some(s.parallel.dp.into())
);
pub const VIRTUAL_STAGES: NumField = num!(
    "parallel.virtual_stages",
    "Virtual stages",
    "",
    (1, 8, 1),
    int,
    parallel.virtual_stages,
    |s| Some(s.parallel.virtual_stages.into())
);

pub const TP_CHUNKS: NumField = num!(
    "overlap.tp_chunks",
    "TP chunks",
    "",
    (1, 64, 1),
    int,
    overlap.tp_chunks,
    |s| Some(s.overlap.tp_chunks.into())
);
pub const BUCKET_MB: NumField = num!(
    "overlap.bucket_mb",
    "DP bucket size",
    "MB",
    (1, 500, 1),
    real,
    overlap.bucket_mb,
    |s| Some(s.overlap.bucket_mb)
);

pub const SM_TAX: NumField = NumField {
    field: "sm_tax",
    label: "SM tax",
    unit: "of compute",
    slider: (0.0, 0.5, 0.01),
    integer: false,
    get: |i| i.sm_tax,
    resolved: |s| s.sm_tax,
    set: |i, v| i.sm_tax = Some(v),
};

/// Every field a control shows, so that an error on any other field is shown
/// in the general message box instead of being lost.
pub const ALL: &[&NumField] = &[
    &NODES,
    &GPUS_PER_NODE,
    &PEAK_TFLOPS,
    &HBM_GBPS,
    &NVLINK_GBPS,
    &NIC_GBPS,
    &OVERSUBSCRIPTION,
    &NVLINK_LATENCY,
    &NETWORK_LATENCY,
    &LAYERS,
    &HIDDEN,
    &HEADS,
    &SEQ,
    &VOCAB,
    &MICRO_BATCH,
    &GLOBAL_BATCH,
    &GEMM_M,
    &GEMM_N,
    &GEMM_K,
    &TP,
    &PP,
    &DP,
    &VIRTUAL_STAGES,
    &TP_CHUNKS,
    &BUCKET_MB,
    &SM_TAX,
];

/// Fields with a control that is not a number pair (selects and switches).
pub const OTHER_CONTROLLED: &[&str] = &[
    "hardware.preset",
    "workload.kind",
    "workload.mode",
    "workload.recompute",
    "workload.sequence_parallel",
    "parallel.schedule",
    "parallel.scatter_gather",
    "overlap.tp",
    "overlap.pp",
    "overlap.dp",
    "overlap.grad_bytes",
];

pub fn has_control(field: &str) -> bool {
    ALL.iter().any(|f| f.field == field) || OTHER_CONTROLLED.contains(&field)
}
