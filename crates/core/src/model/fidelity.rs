//! How much of the cluster a run simulates (model.md section 7).

/// How much of the cluster to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fidelity {
    /// One GPU per pipeline stage stands for its TP group and DP replicas (model.md section 7).
    Reduced,
    /// Every GPU; for checking the reduction on small clusters.
    Full,
}
