//! Where a GPU's HBM traffic sits in a built step: in its compute ops'
//! memory-bound kernels, or carried by its collectives as CoCoNet's fused
//! work (`fusion`). The check that fusion moves bytes and removes time and
//! nothing else.

use crate::model::fidelity::Fidelity;
use crate::model::scenario::Scenario;
use crate::workload::graph::task::{TaskId, COMPUTE};

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
    let g = crate::workload::build::build(
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
