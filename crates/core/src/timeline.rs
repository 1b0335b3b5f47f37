//! The step as plain data: what the page draws, the trace exports and the
//! report sums. Nothing here is recomputed by its readers.

use serde::Serialize;

/// The three parallelism axes; each has its own communication stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    Tp,
    Pp,
    Dp,
}

impl Axis {
    pub const ALL: [Axis; 3] = [Axis::Tp, Axis::Pp, Axis::Dp];

    pub fn index(self) -> usize {
        self as usize
    }

    /// The lower-case key used in scenario fields, share links and CSS classes.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Tp => "tp",
            Axis::Pp => "pp",
            Axis::Dp => "dp",
        }
    }

    /// The label readers see: "TP", "PP", "DP".
    pub fn label(self) -> &'static str {
        match self {
            Axis::Tp => "TP",
            Axis::Pp => "PP",
            Axis::Dp => "DP",
        }
    }
}

/// One row of a GPU's timeline: its compute stream or one axis's
/// communication stream. Rows are drawn in the order of [`Lane::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    Compute,
    Comm(Axis),
}

impl Lane {
    /// Every lane of a GPU, compute first.
    pub const ALL: [Lane; 4] = [
        Lane::Compute,
        Lane::Comm(Axis::Tp),
        Lane::Comm(Axis::Pp),
        Lane::Comm(Axis::Dp),
    ];

    /// The row index: 0 for compute, 1 + the axis index for communication.
    pub fn index(self) -> usize {
        match self {
            Lane::Compute => 0,
            Lane::Comm(axis) => 1 + axis.index(),
        }
    }

    /// The lane at a row index, if any.
    pub fn from_index(index: usize) -> Option<Lane> {
        Lane::ALL.get(index).copied()
    }

    /// The label readers see: "compute", "TP", "PP", "DP".
    pub fn label(self) -> &'static str {
        match self {
            Lane::Compute => "compute",
            Lane::Comm(axis) => axis.label(),
        }
    }

    /// The axis whose traffic the lane carries, if it is a communication lane.
    pub fn axis(self) -> Option<Axis> {
        match self {
            Lane::Compute => None,
            Lane::Comm(axis) => Some(axis),
        }
    }
}

/// Which pass an op belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Forward,
    Recompute,
    Backward,
    Step,
}

impl Phase {
    /// The label readers see in tooltips, tables and traces.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::Recompute => "recompute",
            Phase::Backward => "backward",
            Phase::Step => "optimizer step",
        }
    }
}

/// What an interval is. Compute ops first, then collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// LayerNorm, then the QKV GEMM (6bsh^2/t).
    Qkv,
    /// The attention core (4bs^2h/t) with its softmax and dropout.
    Attention,
    /// The attention output projection (2bsh^2/t), row-parallel: its output is reduced.
    Proj,
    /// Bias-dropout-residual, LayerNorm, the first MLP GEMM (8bsh^2/t) and GeLU.
    MlpUp,
    /// The second MLP GEMM (8bsh^2/t), row-parallel: its output is reduced.
    MlpDown,
    /// The logits GEMM and the loss on the last stage (2bshV/t).
    Logits,
    /// Backward of the second MLP GEMM: input and weight gradients.
    MlpDownBackward,
    /// Input gradient of the first MLP GEMM; its TP reduction follows.
    MlpUpDgrad,
    /// Weight gradient of the first MLP GEMM: the window of that reduction.
    MlpUpWgrad,
    /// Backward of the projection and of the attention core.
    AttentionBackward,
    /// Input gradient of the QKV GEMM; its TP reduction follows.
    QkvDgrad,
    /// Weight gradient of the QKV GEMM: the window of that reduction.
    QkvWgrad,
    LogitsBackward,
    /// The optimizer step: memory-bound, after the DP reduction.
    Optimizer,
    /// The micro-benchmark's GEMM (or one chunk of it).
    Gemm,
    AllReduce,
    ReduceScatter,
    AllGather,
    /// Pipeline send of activations (forward) or gradients (backward).
    Send,
}

impl OpKind {
    pub fn label(self) -> &'static str {
        match self {
            OpKind::Qkv => "QKV GEMM",
            OpKind::Attention => "attention",
            OpKind::Proj => "attn proj GEMM",
            OpKind::MlpUp => "MLP up GEMM",
            OpKind::MlpDown => "MLP down GEMM",
            OpKind::Logits => "logits",
            OpKind::MlpDownBackward => "MLP down bwd",
            OpKind::MlpUpDgrad => "MLP up dgrad",
            OpKind::MlpUpWgrad => "MLP up wgrad",
            OpKind::AttentionBackward => "attention bwd",
            OpKind::QkvDgrad => "QKV dgrad",
            OpKind::QkvWgrad => "QKV wgrad",
            OpKind::LogitsBackward => "logits bwd",
            OpKind::Optimizer => "optimizer",
            OpKind::Gemm => "GEMM",
            OpKind::AllReduce => "AllReduce",
            OpKind::ReduceScatter => "ReduceScatter",
            OpKind::AllGather => "AllGather",
            OpKind::Send => "send",
        }
    }

    pub fn is_comm(self) -> bool {
        matches!(
            self,
            OpKind::AllReduce | OpKind::ReduceScatter | OpKind::AllGather | OpKind::Send
        )
    }
}

/// `u32::MAX` in `layer` or `micro_batch` means "not applicable".
pub const NONE: u32 = u32::MAX;

/// One bar of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// The op's identity in the step: a collective shows on the lane of each
    /// GPU it involves, with the same id.
    pub id: u32,
    /// Index into `Timeline::gpus` of the GPU that issued it (the sender of a send).
    pub owner: u32,
    pub start_s: f64,
    pub end_s: f64,
    pub op: OpKind,
    pub phase: Phase,
    pub micro_batch: u32,
    pub layer: u32,
    /// 0-based chunk of a split GEMM and its collective; 0 when not split.
    pub chunk: u32,
    /// Communication: bytes each rank sends to its ring neighbour (or the
    /// sent bytes, for a send). Compute: 0.
    pub bytes: f64,
    /// Communication: bytes / transfer time (latency excluded), GB/s.
    pub achieved_gbps: f64,
    /// Communication: how much longer it took than alone on the same links.
    pub contention_s: f64,
    /// Communication: the part of it during which the compute stream waited on it.
    pub exposed_s: f64,
    /// Communication: when the compute stream began waiting on it (with
    /// `exposed_s` > 0; the wait runs to the end of the bar).
    pub exposed_from_s: f64,
    /// Communication: the compute that can hide it (model.md section 5), as a
    /// span on the same GPU's compute lane; `None` when it has no window.
    pub window: Option<(f64, f64)>,
    /// Compute: work in FLOPs.
    pub flops: f64,
}

/// One simulated GPU. Under the symmetric reduction it stands for `represents` GPUs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GpuLanes {
    /// Global rank of the GPU simulated.
    pub rank: u32,
    pub node: u32,
    pub stage: u32,
    pub dp_rank: u32,
    pub tp_rank: u32,
    /// How many real GPUs this one stands for (TP ranks x DP replicas when reduced).
    pub represents: u32,
    pub compute: Vec<Interval>,
    /// Communication lanes, indexed by `Axis::index`.
    pub comm: [Vec<Interval>; 3],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkClass {
    Nvlink,
    Network,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Out,
    In,
}

pub use crate::link_log::LinkSample;

/// A link resource of one simulated GPU (or the shared network core).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkLane {
    /// Index into `Timeline::gpus`; `None` for the network core.
    pub gpu: Option<usize>,
    pub class: LinkClass,
    pub direction: Direction,
    /// What the collectives can use: datasheet bandwidth x collective efficiency.
    pub capacity_gbps: f64,
    pub samples: Vec<LinkSample>,
}

/// The whole step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timeline {
    pub step_time_s: f64,
    /// True when each simulated GPU stands for its TP group and DP replicas.
    pub reduced: bool,
    pub gpus: Vec<GpuLanes>,
    pub links: Vec<LinkLane>,
}

impl Timeline {
    /// Number of bars, for level-of-detail decisions.
    pub fn interval_count(&self) -> usize {
        self.gpus
            .iter()
            .map(|g| g.compute.len() + g.comm.iter().map(Vec::len).sum::<usize>())
            .sum()
    }
}
