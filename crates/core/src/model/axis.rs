//! The names the whole model speaks in: the parallelism axes and the
//! lanes of a GPU's timeline.

use serde::Serialize;

/// The parallelism axes; each has its own communication stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Tensor parallelism: collectives inside a layer.
    Tp,
    /// Pipeline parallelism: sends between stages.
    Pp,
    /// Data parallelism: the gradient reduction.
    Dp,
    /// Expert parallelism: the mixture-of-experts all-to-alls.
    Ep,
    /// Context parallelism: the K/V ring or gather of attention (model.md 4d).
    Cp,
}

impl Axis {
    /// Every axis, in lane order.
    pub const ALL: [Axis; 5] = [Axis::Tp, Axis::Pp, Axis::Dp, Axis::Ep, Axis::Cp];

    /// How many axes there are: the length of per-axis arrays.
    pub const COUNT: usize = Self::ALL.len();

    /// The axis's position in per-axis arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The lower-case key used in scenario fields, share links and CSS classes.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Tp => "tp",
            Axis::Pp => "pp",
            Axis::Dp => "dp",
            Axis::Ep => "ep",
            Axis::Cp => "cp",
        }
    }

    /// The label readers see: "TP", "PP", "DP", "EP", "CP".
    pub fn label(self) -> &'static str {
        match self {
            Axis::Tp => "TP",
            Axis::Pp => "PP",
            Axis::Dp => "DP",
            Axis::Ep => "EP",
            Axis::Cp => "CP",
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
    pub const ALL: [Lane; 1 + Axis::COUNT] = [
        Lane::Compute,
        Lane::Comm(Axis::Tp),
        Lane::Comm(Axis::Pp),
        Lane::Comm(Axis::Dp),
        Lane::Comm(Axis::Ep),
        Lane::Comm(Axis::Cp),
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
