//! The scenario as the simulator reads it: complete and validated, plain
//! data. How users write it (every field optional) is `input::parse`.

use serde::{Deserialize, Serialize};

use crate::model::hardware::{Hardware, HardwarePreset};
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    Gpipe,
    #[serde(rename = "1f1b")]
    OneFOneB,
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
    /// v1: a fixed compute slowdown while a collective runs, when given;
    /// it then replaces the modelled interference.
    pub sm_tax: Option<f64>,
    /// Whether compute and communication slow each other.
    pub interference: Interference,
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
