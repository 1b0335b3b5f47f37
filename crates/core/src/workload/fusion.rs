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

use crate::model::fidelity::Fidelity;
use crate::model::op::OpKind;
use crate::model::scenario::Scenario;
use crate::workload::graph::{Graph, TaskId, COMPUTE};
use crate::workload::layer_cost::OpCost;

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

/// Where one simulated GPU's HBM traffic sits in a step: in its compute
/// ops, or carried by its collectives as fused work. The check that fusion
/// moves bytes and removes time and nothing else.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HbmLedger {
    /// Seconds of the GPU's compute ops at full speed on an idle GPU.
    pub compute_s: f64,
    /// Bytes the memory-bound parts of its compute ops move through HBM.
    pub kernel_bytes: f64,
    /// Bytes of fused pointwise work its collectives carry through HBM.
    pub fused_bytes: f64,
    /// Its collectives that carry fused work.
    pub fused_collectives: u32,
}

/// The HBM ledger of the first GPU of the scenario's reduced simulation
/// (the first TP rank of the first stage).
pub fn hbm_ledger(s: &Scenario) -> HbmLedger {
    let g = crate::workload::build(
        s,
        Fidelity::Reduced,
        0,
        &crate::collective::Libraries::of(s),
    );
    let hbm_bps = s.hardware.hbm_achievable_bps();
    let mut ledger = HbmLedger::default();
    for (i, t) in g.tasks.iter().enumerate() {
        if t.axis == COMPUTE {
            if t.gpu == 0 {
                ledger.compute_s += t.work;
                ledger.kernel_bytes += t.memory_s() * hbm_bps;
            }
            continue;
        }
        let fused = g.fused_hbm_per_link_byte[t.pattern as usize];
        if fused > 0.0 && g.members_of(i as TaskId).contains(&0) {
            ledger.fused_bytes += fused * t.work;
            ledger.fused_collectives += 1;
        }
    }
    ledger
}
