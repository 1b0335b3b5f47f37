//! Each axis in a reader's words, one row per axis: its card's heading,
//! the compute its communication can hide behind, and what it moves. The
//! axis cards (`axis_reading.rs`, the app's figures) and the change
//! sentence (`why.rs`) read their words here. The match has no catch-all
//! arm, so that a new axis cannot go unnamed.

use overlap_core::Axis;

/// One axis's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisWords {
    /// The card's heading: what the axis parallelises.
    pub title: &'static str,
    /// The compute it can hide its communication behind: the thesis, per
    /// axis (model.md 4 and 5).
    pub window: &'static str,
    /// What it moves: the subject of the change sentence's template.
    pub traffic: &'static str,
}

/// The words of `axis`.
pub const fn words(axis: Axis) -> AxisWords {
    match axis {
        Axis::Tp => AxisWords {
            title: "TP: tensor parallel",
            window: "the GEMM next to each all-reduce or all-gather: small, against heavy traffic",
            traffic: "collectives",
        },
        Axis::Pp => AxisWords {
            title: "PP: pipeline",
            window: "a whole micro-batch's forward or backward on the stage",
            traffic: "stage sends",
        },
        Axis::Dp => AxisWords {
            title: "DP: data parallel",
            window: "with gradient accumulation, only the last micro-batch's backward (the \
                     gradients are final only then)",
            traffic: "gradient reductions",
        },
        Axis::Ep => AxisWords {
            title: "EP: expert parallel",
            window: "another micro-batch's compute, when two micro-batches' passes are merged \
                     (combined 1F1B, DualPipe): one micro-batch's own layers wait on their \
                     all-to-all",
            traffic: "all-to-alls",
        },
        Axis::Cp => AxisWords {
            title: "CP: context parallel",
            window: "the attention of the block in hand, which grows with the square of the \
                     sequence",
            traffic: "K/V transfers",
        },
    }
}
