//! CoCoNet's fusion (Jangda et al. 2021; model.md section 5): a TP
//! collective fused with the bias, dropout and residual add that follow it.
//! The fused pointwise work runs on each reduced chunk inside the
//! collective, so its separate memory-bound kernel leaves the compute
//! stream, and the collective's HBM traffic carries the kernel's bytes
//! (`interference`: its members' HBM is crossed that much more per link
//! byte).
//!
//! Which kernels fuse, in each step's run of layers (forward and
//! recomputed forward alike): the attention projection's reduction carries
//! the bias-dropout-add that opens the MLP; the MLP's reduction carries the
//! one that opens the next layer's QKV, except after the step's last layer,
//! whose closing bias-dropout-add runs on the next stage (or nowhere, before
//! the logits) and so stays a kernel. The backward's TP reductions are
//! followed by GEMMs, not pointwise work, and do not fuse.

use crate::model::op::OpKind;
use crate::workload::cost::roofline::OpCost;
use crate::workload::graph::task::TaskId;
use crate::workload::graph::Graph;

/// The fusions of one step's run of layers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct FusedLayers {
    /// `overlap.fuse` with a TP group to fuse across.
    pub on: bool,
    /// First layer of the step.
    pub first: u32,
    /// Last layer of the step.
    pub last: u32,
}

impl FusedLayers {
    /// Whether the collective that reduces `op`'s output in `layer` carries
    /// the bias-dropout-add after it.
    pub fn carries(&self, op: OpKind, layer: u32) -> bool {
        self.on
            && match op {
                OpKind::Proj => true,
                OpKind::MlpDown => layer != self.last,
                _ => false,
            }
    }

    /// The op `op` of `layer`, which opens with the bias-dropout-add `bda`,
    /// without it when the collective before it ran it.
    pub fn opening(&self, cost: OpCost, bda: OpCost, op: OpKind, layer: u32) -> OpCost {
        let fused = self.on
            && match op {
                OpKind::MlpUp => true,
                OpKind::Qkv => layer != self.first,
                _ => false,
            };
        if fused {
            cost.without(bda)
        } else {
            cost
        }
    }
}

/// Moves `bytes` (per member) of fused pointwise work into collective
/// `task`: its members' HBM carries them while it moves its link bytes.
pub(crate) fn carry(g: &mut Graph, task: TaskId, bytes: f64) {
    let t = &g.tasks[task as usize];
    if t.work <= 0.0 || bytes <= 0.0 {
        return;
    }
    let pattern = t.pattern as usize;
    let per_link_byte = g.fused_hbm_per_link_byte[pattern] + bytes / t.work;
    let usage = g.patterns[pattern].clone();
    let call_hbm = g.call_hbm_per_link_byte[pattern];
    g.tasks[task as usize].pattern = g.add_call_pattern(usage, per_link_byte, call_hbm);
}
