//! The names the whole model speaks in: the parallelism axes and the
//! lanes of a GPU's timeline.

use serde::Serialize;

use super::named::named_enum;

named_enum! {
    /// The parallelism axes; each has its own communication stream.
    pub enum Axis {
        /// Tensor parallelism: collectives inside a layer.
        Tp = ("tp", "TP"),
        /// Pipeline parallelism: sends between stages.
        Pp = ("pp", "PP"),
        /// Data parallelism: the gradient reduction.
        Dp = ("dp", "DP"),
        /// Expert parallelism: the mixture-of-experts all-to-alls.
        Ep = ("ep", "EP"),
        /// Context parallelism: the K/V ring or gather of attention (model.md 4d).
        Cp = ("cp", "CP"),
    }
}

impl Axis {
    /// Megatron-LM's description of the axis's process group
    /// (parallel_state.py's `group_desc`), as PyTorch's profiler writes it
    /// on each collective. DP's group holds the CP ranks too, as the
    /// gradients reduce over dp x cp; the routed experts' reductions are
    /// written with it as well.
    pub fn megatron_group(self) -> &'static str {
        match self {
            Axis::Tp => "TENSOR_MODEL_PARALLEL_GROUP",
            Axis::Pp => "PIPELINE_MODEL_PARALLEL_GROUP",
            Axis::Dp => "DATA_PARALLEL_GROUP",
            Axis::Ep => "EXPERT_MODEL_PARALLEL_GROUP",
            Axis::Cp => "CONTEXT_PARALLEL_GROUP",
        }
    }
}

/// One row of a GPU's timeline: its compute stream or one axis's
/// communication stream. Rows are drawn in the order of [`Lane::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// The compute stream.
    Compute,
    /// One axis's communication stream.
    Comm(Axis),
}

impl Lane {
    /// Every lane of a GPU, compute first.
    pub const ALL: [Lane; 1 + Axis::COUNT] = {
        let mut all = [Lane::Compute; 1 + Axis::COUNT];
        let mut i = 0;
        while i < Axis::COUNT {
            all[1 + i] = Lane::Comm(Axis::ALL[i]);
            i += 1;
        }
        all
    };

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
