//! FP8's scale agreement across the TP group (model.md 4e). Tensorwise
//! scaling gives a whole tensor one scale, the maximum of |x| over the whole
//! tensor, while under TP each rank holds a shard of it. torchao's
//! `hp_tensor_to_float8_dynamic` takes `torch.max(torch.abs(x))` of the
//! sharded DTensor (torchao 6243040, the commit of torchtitan's Async TP
//! benchmark, float8/float8_utils.py:57-82: "assume that it will happen
//! elsewhere"); that maximum is a `Partial(max)` DTensor, and the scale's
//! arithmetic redistributes it to `Replicate`, an all-reduce (MAX) of one
//! scalar over the TP group. Transformer Engine makes the same reduction
//! compulsory with sequence parallelism, "because we gather the tensor in
//! FP8 after doing the cast" (NVIDIA/TransformerEngine pull request 74).
//!
//! Each reduction stands between the kernel that produced the tensor (the
//! amax fused into it under torch.compile, `fp8_casts`) and the cast that
//! needs the scale, so it has no compute beside it and no window: a
//! latency-bound NCCL call on the TP group's stream that the compute stream
//! waits for.
//!
//! Which casts reduce, per layer (torchtitan 820504e,
//! torchtitan/models/llama3/parallelize_llama.py:153-196, with torchao
//! 6243040 float8/float8_tensor_parallel.py:41-160 and
//! float8/float8_linear.py:69-250):
//! - forward, the four inputs: attention's (`PrepareFloat8ModuleInput`,
//!   shared by wq, wk and wv), wo's (`Float8RowwiseParallel`), the MLP's
//!   (shared by w1 and w3) and w2's;
//! - backward, the seven output gradients (`NoopFwToFloat8BwDynamic` in
//!   each linear's `_prepare_output_fn`): wq, wk, wv and wo in attention,
//!   w1, w3 and w2 in the MLP. The saved inputs are fp8 already.
//! - the seven weights in the forward and again in the backward, unless
//!   FSDP gathers them in fp8 with their scales precomputed once per step
//!   (`overlap.fp8_all_gather`, `precompute_float8_dynamic_scale_for_fsdp`).
//!
//! Full recomputation repeats the forward's; an MoE layer's experts are not
//! TP-sharded Float8Linears and add none.

use super::Builder;
use crate::collective::Collective;
use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::workload::graph::task::Meta;

/// Bytes of one reduction: one scalar, the maximum. Its width depends on
/// where DTensor redistributes it, the bf16 maximum or its fp64 upcast
/// (float8_utils.py:45), 2 to 8 bytes; the call is latency-bound (NCCL's
/// LL protocol at any of them), so 4 stands for all three.
const AMAX_BYTES: f64 = 4.0;

/// Where in a layer a group of casts sits (their count depends on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Casts {
    /// Attention's input, read by wq, wk and wv.
    AttentionInput,
    /// wo's input.
    ProjInput,
    /// The MLP's input, read by w1 and w3.
    MlpInput,
    /// w2's input.
    MlpDownInput,
    /// The MLP's backward: the output gradients of w2, w1 and w3.
    MlpGrads,
    /// Attention's backward: the output gradients of wo, wq, wk and wv.
    AttentionGrads,
}

impl Casts {
    /// Tensors cast here (activations or gradients) and the weights cast
    /// with them when the weights are cast per use.
    fn counts(self) -> (u32, u32) {
        match self {
            Casts::AttentionInput => (1, 3),
            Casts::ProjInput => (1, 1),
            Casts::MlpInput => (1, 2),
            Casts::MlpDownInput => (1, 1),
            Casts::MlpGrads => (3, 3),
            Casts::AttentionGrads => (4, 4),
        }
    }
}

impl Builder<'_> {
    /// Whether casts to fp8 agree on their scale across a TP group.
    fn scales_reduce(&self) -> bool {
        self.roof.fp8() && self.tp > 1
    }

    /// The reductions of the scales of the casts at `at`, one after
    /// another, each waited for by the compute stream.
    pub(super) fn fp8_scales(&mut self, at: Casts, meta: Meta) {
        if !self.scales_reduce() {
            return;
        }
        let (tensors, weights) = at.counts();
        // Each weight too, unless FSDP gathers it in fp8 with its scale.
        let count = tensors
            + if self.s.fsdp_gathers_fp8_weights() {
                0
            } else {
                weights
            };
        let call = self
            .cluster
            .node_call(Axis::Tp, Collective::AllReduce, self.tp, AMAX_BYTES);
        for _ in 0..count {
            let id = self.tp_call_without_window(&call, meta.op(OpKind::AllReduce));
            self.block_all(id);
        }
    }
}
