//! Megatron-LM's `recompute_modules` in the backward (model.md section 4c,
//! `workload.moe.recompute`): each recomputed module's forward runs again
//! before the layer's backward, as its checkpoint's backward hook runs it
//! (megatron/core/tensor_parallel/random.py, `CheckpointFunction` and
//! `CheckpointWithoutOutput`). The ops are of phase `Recompute`: executed
//! FLOPs, not model FLOPs, as full recomputation's are.

use super::Builder;
use crate::model::op::{OpKind, Phase};
use crate::workload::cost::roofline::OpCost;
use crate::workload::graph::task::Meta;

impl Builder<'_> {
    /// Layer `layer`'s recomputed modules of micro-batch `mb`, before its
    /// backward (after full recomputation's forward, which excludes them:
    /// `input::expert_checks` refuses the list beside it).
    pub(super) fn recompute_modules(&mut self, layer: u32, mb: u32) {
        let modules = self.t.recompute_modules();
        if modules.is_empty() {
            return;
        }
        let meta = Meta::new(OpKind::Router, Phase::Recompute)
            .mb(mb)
            .layer(layer);
        // Both LayerNorms' outputs (transformer_layer.py:475-527).
        if modules.layernorm {
            let both = self.cost.layernorm.add(self.cost.layernorm);
            self.compute_all(both, meta.op(OpKind::Qkv));
        }
        if !self.t.is_moe_layer(layer) {
            // A dense layer's MLP from its input (transformer_layer.py:528-530).
            if modules.mlp {
                let up = self.cost.mlp_up_gemm.chunk(&self.roof, 1);
                let down = self.cost.mlp_down.chunk(&self.roof, 1);
                let mlp = up.add(self.cost.mlp_up_post).add(down);
                self.compute_all(mlp, meta.op(OpKind::MlpUp));
            }
            return;
        }
        let cost = self.moe_cost.expect("an MoE layer has its costs");
        if modules.moe {
            // The whole layer from its input, its all-to-alls included
            // (moe_layer.py:701-716): router, dispatch, shared and routed
            // experts, combine, each all-to-all awaited where its output
            // is needed.
            self.ep_wait();
            self.compute_all(cost.router, meta);
            self.ep_launch(meta.op(OpKind::Dispatch));
            if cost.shared != OpCost::default() {
                self.compute_all(cost.shared, meta.op(OpKind::SharedExperts));
            }
            self.ep_wait();
            self.compute_all(cost.experts, meta.op(OpKind::Experts));
            self.ep_launch(meta.op(OpKind::Combine));
            self.ep_wait();
            return;
        }
        // The activation from the fc1 output (experts.py:1019-1032).
        if modules.moe_act {
            self.compute_all(cost.act, meta.op(OpKind::Experts));
        }
        // The shared experts from their input (shared_experts.py:158).
        if modules.shared_experts && cost.shared != OpCost::default() {
            self.compute_all(cost.shared, meta.op(OpKind::SharedExperts));
        }
    }
}
