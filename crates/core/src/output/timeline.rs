//! The step as plain data: what the page draws, the trace exports and the
//! report sums. Nothing here is recomputed by its readers.

use serde::Serialize;

pub use crate::collective::nccl::{Algorithm, Kernel, Protocol};
pub use crate::model::axis::{Axis, Lane};
pub use crate::model::link::{Direction, LinkClass};
pub use crate::model::op::{OpKind, Phase, NONE};
pub use crate::sim::network::LinkSample;

/// One bar of the timeline.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Interval {
    /// The op's identity in the step: a collective shows on the lane of each
    /// GPU it involves, with the same id.
    pub id: u32,
    /// Index into `Timeline::gpus` of the GPU that issued it (the sender of a send).
    pub owner: u32,
    /// When the op started, seconds from the step's start.
    pub start_s: f64,
    /// When the op ended, seconds from the step's start.
    pub end_s: f64,
    /// What the op is.
    pub op: OpKind,
    /// Which pass it belongs to.
    pub phase: Phase,
    /// Its micro-batch, or `NONE`.
    pub micro_batch: u32,
    /// Its layer, or `NONE`.
    pub layer: u32,
    /// 0-based chunk of a split GEMM and its collective; 0 when not split.
    pub chunk: u32,
    /// Communication: bytes each rank sends to its ring neighbour (or the
    /// sent bytes, for a send). Compute: 0.
    pub bytes: f64,
    /// Collective: the NCCL kernel (algorithm and protocol) the model chose
    /// for its call. `None` for compute and for pipeline sends, whose
    /// kernel has no algorithm.
    pub kernel: Option<Kernel>,
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
    /// The node the GPU sits in.
    pub node: u32,
    /// Its pipeline stage.
    pub stage: u32,
    /// Its rank in the data-parallel group.
    pub dp_rank: u32,
    /// Its rank in the tensor-parallel group.
    pub tp_rank: u32,
    /// How many real GPUs this one stands for (TP ranks x DP replicas when reduced).
    pub represents: u32,
    /// The compute stream's intervals, in time order.
    pub compute: Vec<Interval>,
    /// Communication lanes, indexed by `Axis::index`.
    pub comm: [Vec<Interval>; Axis::COUNT],
}

impl GpuLanes {
    /// Its lanes: compute, then each axis's.
    pub fn lanes(&self) -> impl Iterator<Item = &[Interval]> + Clone {
        std::iter::once(self.compute.as_slice()).chain(self.comm.iter().map(Vec::as_slice))
    }

    /// The GPU with no bars.
    pub fn clone_without_lanes(&self) -> Self {
        Self {
            compute: Vec::new(),
            comm: Default::default(),
            ..*self
        }
    }
}

/// A link resource of one simulated GPU (or the shared network core).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkLane {
    /// Index into `Timeline::gpus`; `None` for the network core.
    pub gpu: Option<usize>,
    /// NVLink or network.
    pub class: LinkClass,
    /// Out of the GPU or into it.
    pub direction: Direction,
    /// What the collectives can use: datasheet bandwidth x collective efficiency.
    pub capacity_gbps: f64,
    /// The link's bandwidth per axis over time, from the step's start.
    pub samples: Vec<LinkSample>,
}

impl LinkLane {
    /// The link with no samples.
    pub fn clone_without_samples(&self) -> Self {
        Self {
            samples: Vec::new(),
            ..*self
        }
    }
}

/// The whole step.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Timeline {
    /// The step's simulated time, seconds.
    pub step_time_s: f64,
    /// True when each simulated GPU stands for its TP group and DP replicas.
    pub reduced: bool,
    /// The simulated GPUs, in rank order.
    pub gpus: Vec<GpuLanes>,
    /// The link resources, with bandwidth samples when recorded.
    pub links: Vec<LinkLane>,
}

impl Timeline {
    /// Number of bars, for level-of-detail decisions.
    pub fn interval_count(&self) -> usize {
        self.gpus
            .iter()
            .flat_map(GpuLanes::lanes)
            .map(<[Interval]>::len)
            .sum()
    }
}
