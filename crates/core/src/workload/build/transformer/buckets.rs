//! One GPU's gradient buckets, as the builder keeps them while the
//! backward fills them (`grad_buckets` builds their reductions): state
//! only, so that the builder's own module can hold it without importing
//! the module that extends the builder.

use crate::workload::graph::task::TaskId;

/// Gradients whose reduction can start: a DP bucket, seen from one GPU.
pub(super) struct Bucket {
    pub(super) bytes: f64,
    /// The compute op after which its gradients are final.
    pub(super) ready: TaskId,
    /// First compute op that runs after it is ready (its window starts there).
    pub(super) window_from: u32,
}

/// One GPU's gradients: those pending, the buckets flushed, and the
/// parameters its optimizer updates.
#[derive(Default)]
pub(super) struct GpuBuckets {
    pub(super) pending_bytes: f64,
    pub(super) buckets: Vec<Bucket>,
    pub(super) params: f64,
    /// Of `params`, the layers' (the embeddings left out): with FSDP's fp8
    /// gathers, the weights whose scales the optimizer step recomputes.
    pub(super) layer_params: f64,
    /// The routed experts' gradients, reduced over the expert-data-parallel
    /// group (tp * cp * dp / (ep * etp) ranks) rather than over DP.
    pub(super) expert_pending_bytes: f64,
    pub(super) expert_buckets: Vec<Bucket>,
    pub(super) expert_params: f64,
}

impl GpuBuckets {
    /// The flushed buckets: the routed experts' if `experts`, else the dense.
    pub(super) fn of(&self, experts: bool) -> &[Bucket] {
        if experts {
            &self.expert_buckets
        } else {
            &self.buckets
        }
    }
}
