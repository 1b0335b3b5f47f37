//! The scenario as users write it (JSON, share links) and as the simulator
//! reads it. `ScenarioInput` has every field optional; `resolve` fills the
//! gaps from the hardware preset and the defaults, then validates.

use serde::{Deserialize, Serialize};

use crate::hardware::{Hardware, HardwarePreset};
use crate::validate;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    Transformer,
    MatmulAllreduce,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Train,
    Inference,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recompute {
    None,
    Selective,
    Full,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    Gpipe,
    #[serde(rename = "1f1b")]
    OneFOneB,
    Interleaved,
}

/// Every field optional: what is missing comes from the preset or the default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioInput {
    #[serde(default, skip_serializing_if = "HardwareInput::is_empty")]
    pub hardware: HardwareInput,
    #[serde(default, skip_serializing_if = "WorkloadInput::is_empty")]
    pub workload: WorkloadInput,
    #[serde(default, skip_serializing_if = "ParallelInput::is_empty")]
    pub parallel: ParallelInput,
    #[serde(default, skip_serializing_if = "OverlapInput::is_empty")]
    pub overlap: OverlapInput,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_tax: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HardwareInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<HardwarePreset>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_tflops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscription: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_latency_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_latency_us: Option<f64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<WorkloadKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<Mode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heads: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_batch: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_batch: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recompute: Option<Recompute>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_parallel: Option<bool>,
    /// MatMul+AllReduce only: the GEMM is [m x k] x [k x n].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub m: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParallelInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtual_stages: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scatter_gather: Option<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverlapInput {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pp: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dp: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tp_chunks: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grad_bytes: Option<u32>,
}

macro_rules! all_none {
    ($s:expr; $($f:ident),*) => { true $(&& $s.$f.is_none())* };
}

impl HardwareInput {
    pub fn is_empty(&self) -> bool {
        all_none!(self; preset, nodes, gpus_per_node, peak_tflops, hbm_gbps, nvlink_gbps,
            nic_gbps, oversubscription, nvlink_latency_us, network_latency_us)
    }
}
impl WorkloadInput {
    pub fn is_empty(&self) -> bool {
        all_none!(self; kind, mode, layers, hidden, heads, seq, vocab, micro_batch,
            global_batch, recompute, sequence_parallel, m, n, k)
    }
}
impl ParallelInput {
    pub fn is_empty(&self) -> bool {
        all_none!(self; tp, pp, dp, schedule, virtual_stages, scatter_gather)
    }
}
impl OverlapInput {
    pub fn is_empty(&self) -> bool {
        all_none!(self; tp, pp, dp, tp_chunks, bucket_mb, grad_bytes)
    }
}

/// A GPT-style transformer (model.md section 4).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transformer {
    pub mode: Mode,
    pub layers: u32,
    pub hidden: u32,
    pub heads: u32,
    pub seq: u32,
    pub vocab: u32,
    pub micro_batch: u32,
    pub global_batch: u32,
    pub recompute: Recompute,
    pub sequence_parallel: bool,
}

/// The CoCoNet micro-benchmark: one GEMM [m x k] x [k x n], then an AllReduce
/// of its [m x n] output over the TP group.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatmulAllreduce {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Workload {
    Transformer(Transformer),
    MatmulAllreduce(MatmulAllreduce),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Parallel {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub schedule: Schedule,
    pub virtual_stages: u32,
    pub scatter_gather: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overlap {
    pub tp: bool,
    pub pp: bool,
    pub dp: bool,
    pub tp_chunks: u32,
    pub bucket_mb: f64,
    pub grad_bytes: u32,
}

/// A complete, validated scenario: what the simulator runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    pub hardware_preset: HardwarePreset,
    pub hardware: Hardware,
    pub workload: Workload,
    pub parallel: Parallel,
    pub overlap: Overlap,
    pub sm_tax: f64,
}

impl Scenario {
    /// Micro-batches per pipeline per step (m = B / (b * d)); 1 for the micro-benchmark.
    pub fn micro_batches(&self) -> u32 {
        match &self.workload {
            Workload::Transformer(t) => t.global_batch / (t.micro_batch * self.parallel.dp),
            Workload::MatmulAllreduce(_) => 1,
        }
    }

    /// The same scenario with every overlap switched off: the report's baseline.
    pub fn all_overlap_off(&self) -> Scenario {
        let mut s = self.clone();
        s.overlap.tp = false;
        s.overlap.pp = false;
        s.overlap.dp = false;
        s
    }
}

/// One refused field: its dotted path and what would be valid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every problem found in a scenario, so that a user sees them all at once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScenarioError {
    pub errors: Vec<FieldError>,
}

impl ScenarioError {
    pub fn single(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            errors: vec![FieldError {
                field: field.into(),
                message: message.into(),
            }],
        }
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.errors.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for ScenarioError {}

impl ScenarioInput {
    /// Parses scenario JSON. Type errors and unknown fields name their path.
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let message = inner.to_string();
            // A syntax error has no field (serde_path_to_error says "." or "?").
            let path = if path == "?" { ".".to_string() } else { path };
            let field = match (path.as_str(), unknown_field_name(&message)) {
                (".", Some(name)) => name,
                (p, Some(name)) if !p.ends_with(&name) => format!("{p}.{name}"),
                (".", None) => "scenario".to_string(),
                (p, _) => p.to_string(),
            };
            ScenarioError::single(field, message)
        })
    }

    pub fn to_json_pretty(&self) -> String {
        serde_json::to_string_pretty(self).expect("scenario input always serialises")
    }

    /// Fills every missing field (hardware preset first, then defaults) and validates.
    pub fn resolve(&self) -> Result<Scenario, ScenarioError> {
        validate::resolve(self)
    }
}

fn unknown_field_name(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    Some(rest.split('`').next()?.to_string())
}

/// Parses and resolves in one go.
pub fn parse_scenario(text: &str) -> Result<Scenario, ScenarioError> {
    ScenarioInput::from_json(text)?.resolve()
}
