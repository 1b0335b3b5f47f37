//! One transformer layer's op sequence in each pass: the forward, the whole
//! backward, and the zero-bubble schedules' split of the backward into B
//! (input gradients) and W (weight gradients). Each comes in two forms:
//! with its TP collectives as whole calls (blocking, chunked or launched
//! beside a GEMM, `tp_modes`), or, with sequence parallelism under Async
//! TP, decomposed into ring steps under the GEMM pieces. An MoE layer's
//! experts replace its MLP (`moe_layer`).

use super::fp8_scales::Casts;
use super::Builder;
use crate::collective::Collective;
use crate::model::op::{OpKind, Phase};
use crate::workload::cost::roofline::OpCost;
use crate::workload::graph::task::Meta;

impl Builder<'_> {
    /// A layer's forward: QKV, the attention core, the projection, then
    /// the MLP's two GEMMs; each column-parallel GEMM after the SP
    /// AllGather of its input, each row-parallel one with its output's
    /// reduction (`tp_modes`). The bias-dropout-add opening QKV and the
    /// MLP is left out where the collective before it ran it (`fusion`).
    pub(super) fn layer_forward(&mut self, layer: u32, mb: u32, phase: Phase) {
        let meta = Meta::new(OpKind::Qkv, phase).mb(mb).layer(layer);
        let sp = self.t.sequence_parallel && self.tp > 1;
        let (fused, bda) = (self.fused, self.cost.bias_dropout_add);
        self.fp8_scales(Casts::AttentionInput, meta);
        if self.decomposed {
            let pre = fused.opening(self.cost.qkv_pre, bda, OpKind::Qkv, layer);
            let gemm = self.cost.qkv_gemm;
            self.gathered_column_parallel(pre, gemm, meta);
        } else {
            if sp {
                self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
            }
            let qkv = fused.opening(self.cost.qkv, bda, OpKind::Qkv, layer);
            self.compute_all(qkv, meta);
        }
        self.attention_forward(meta.op(OpKind::Attention));
        self.fp8_scales(Casts::ProjInput, meta);
        self.row_parallel(self.cost.proj, meta.op(OpKind::Proj));
        // An MoE layer's experts replace the MLP (`moe_layer`).
        if self.t.is_moe_layer(layer) {
            return;
        }
        let up = meta.op(OpKind::MlpUp);
        self.fp8_scales(Casts::MlpInput, up);
        if self.decomposed {
            let pre = fused.opening(self.cost.mlp_up_pre, bda, OpKind::MlpUp, layer);
            let gemm = self.cost.mlp_up_gemm;
            self.gathered_column_parallel(pre, gemm, up);
            self.compute_all(self.cost.mlp_up_post, up);
        } else {
            if sp {
                self.tp_blocking(Collective::AllGather, meta.op(OpKind::AllGather));
            }
            let mlp_up = fused.opening(self.cost.mlp_up, bda, OpKind::MlpUp, layer);
            self.compute_all(mlp_up, up);
        }
        self.fp8_scales(Casts::MlpDownInput, up);
        self.row_parallel(self.cost.mlp_down, meta.op(OpKind::MlpDown));
    }

    /// A layer's whole backward: each column-parallel GEMM's input gradient
    /// and its reduction across the TP group, beside that GEMM's weight
    /// gradient (`column_parallel_backward`).
    pub(super) fn layer_backward(&mut self, layer: u32, mb: u32) {
        let meta = backward_meta(layer, mb);
        if self.decomposed {
            self.layer_backward_decomposed(meta);
            return;
        }
        self.mlp_then_attention(
            meta,
            true,
            |b| {
                b.compute_all(b.cost.mlp_down_backward, meta);
                b.column_parallel_backward(
                    b.cost.mlp_up_dgrad,
                    b.cost.mlp_up_wgrad,
                    meta.op(OpKind::MlpUpDgrad),
                    meta.op(OpKind::MlpUpWgrad),
                );
            },
            |b| {
                b.attention_backward(
                    b.cost.attention_backward,
                    meta.op(OpKind::AttentionBackward),
                );
                b.column_parallel_backward(
                    b.cost.qkv_dgrad,
                    b.cost.qkv_wgrad,
                    meta.op(OpKind::QkvDgrad),
                    meta.op(OpKind::QkvWgrad),
                );
            },
        );
    }

    /// B of one layer: the input gradients only (Qi et al. 2024), with the TP
    /// collectives they need: the mirrors of the forward's reductions and
    /// the reduction of each column-parallel GEMM's input gradient, which the
    /// next B op consumes. The weight-gradient GEMMs wait for W.
    pub(super) fn layer_input_grad(&mut self, layer: u32, mb: u32) {
        let meta = backward_meta(layer, mb);
        if self.decomposed {
            self.layer_input_grad_decomposed(meta);
            return;
        }
        self.mlp_then_attention(
            meta,
            true,
            |b| {
                let down_wgrad = b.cost.mlp_down.chunk(&b.roof, 1);
                b.compute_all(b.cost.mlp_down_backward.without(down_wgrad), meta);
                b.input_grad_reduced(b.cost.mlp_up_dgrad, meta.op(OpKind::MlpUpDgrad));
            },
            |b| {
                let proj_wgrad = b.cost.proj.chunk(&b.roof, 1);
                b.attention_backward(
                    b.cost.attention_backward.without(proj_wgrad),
                    meta.op(OpKind::AttentionBackward),
                );
                b.input_grad_reduced(b.cost.qkv_dgrad, meta.op(OpKind::QkvDgrad));
            },
        );
    }

    /// W of one layer: the four weight-gradient GEMMs, as one op for the MLP
    /// and one for attention (an MoE layer's experts' in place of the MLP's).
    pub(super) fn layer_weight_grad(&mut self, layer: u32, mb: u32) {
        let meta = Meta::new(OpKind::MlpUpWgrad, Phase::Backward)
            .mb(mb)
            .layer(layer);
        if self.decomposed {
            self.layer_weight_grad_decomposed(meta);
            return;
        }
        if self.t.is_moe_layer(layer) {
            self.experts_weight_grad(meta);
        }
        self.mlp_then_attention(
            meta,
            false,
            |b| {
                let down_wgrad = b.cost.mlp_down.chunk(&b.roof, 1);
                b.compute_all(down_wgrad.add(b.cost.mlp_up_wgrad), meta);
            },
            |b| {
                let proj_wgrad = b.cost.proj.chunk(&b.roof, 1);
                b.compute_all(proj_wgrad.add(b.cost.qkv_wgrad), meta.op(OpKind::QkvWgrad));
            },
        );
    }

    /// The order of a layer's backward in each of its forms with whole TP
    /// collectives (whole, B, W): the MLP's part, then attention's. With
    /// sequence parallelism each part opens with a blocking AllGather
    /// across the TP group of a sequence-sharded activation its GEMMs read:
    /// in a whole backward and in B the output gradient (the mirror of the
    /// forward's ReduceScatter), in W the part's input, which the
    /// column-parallel weight gradient reads (Megatron gathers it under the
    /// input gradient in a whole backward). An MoE layer has no MLP part:
    /// its experts' backward is built apart (`moe_layer`). Where the part
    /// computes input gradients (`grads`: a whole backward and B), its
    /// output gradients' fp8 scales are agreed first, before they are
    /// gathered (`fp8_scales`).
    fn mlp_then_attention(
        &mut self,
        meta: Meta,
        grads: bool,
        mlp: impl FnOnce(&mut Self),
        attention: impl FnOnce(&mut Self),
    ) {
        let sp = self.t.sequence_parallel && self.tp > 1;
        let gather = meta.op(OpKind::AllGather);
        if !self.t.is_moe_layer(meta.layer) {
            if grads {
                self.fp8_scales(Casts::MlpGrads, meta);
            }
            if sp {
                self.tp_blocking(Collective::AllGather, gather);
            }
            mlp(self);
        }
        if grads {
            self.fp8_scales(Casts::AttentionGrads, meta);
        }
        if sp {
            self.tp_blocking(Collective::AllGather, gather);
        }
        attention(self);
    }

    /// A layer's backward with sequence parallelism and TP overlap: every
    /// SP AllGather and ReduceScatter decomposed into ring steps under the
    /// GEMM beside it (Async TP / userbuffers, forward and backward alike).
    fn layer_backward_decomposed(&mut self, meta: Meta) {
        // MLP: the output gradient is gathered under the down projection's
        // input gradient; its weight gradient then runs on the whole. (An
        // MoE layer's experts have run their backward already.)
        if !self.t.is_moe_layer(meta.layer) {
            let down = self.cost.mlp_down;
            self.fp8_scales(Casts::MlpGrads, meta);
            self.output_grad_gathered(down, meta);
            self.compute_all(down.chunk(&self.roof, 1), meta);
            self.decomposed_column_backward(
                self.cost.mlp_up_dgrad_pre,
                self.cost.mlp_up_gemm,
                meta.op(OpKind::MlpUpDgrad),
                meta.op(OpKind::MlpUpWgrad),
            );
        }
        // Attention: likewise for the projection, then the core's backward.
        let attention = meta.op(OpKind::AttentionBackward);
        let proj = self.cost.proj;
        self.fp8_scales(Casts::AttentionGrads, attention);
        self.output_grad_gathered(proj, attention);
        self.attention_backward(
            proj.chunk(&self.roof, 1)
                .add(self.cost.attention_core_backward),
            attention,
        );
        self.decomposed_column_backward(
            OpCost::default(),
            self.cost.qkv_gemm,
            meta.op(OpKind::QkvDgrad),
            meta.op(OpKind::QkvWgrad),
        );
    }

    /// B of one layer with sequence parallelism and TP overlap: the input
    /// gradients with their SP collectives decomposed (Async TP). Each
    /// row-parallel GEMM's output gradient is gathered in ring steps under
    /// the pieces of its input-gradient GEMM, and each column-parallel
    /// GEMM's input gradient is reduce-scattered in ring steps under its
    /// own pieces. The layer input that W needs is not gathered here: W
    /// gathers it again (`layer_weight_grad_decomposed`).
    fn layer_input_grad_decomposed(&mut self, meta: Meta) {
        if !self.t.is_moe_layer(meta.layer) {
            let down = self.cost.mlp_down;
            self.fp8_scales(Casts::MlpGrads, meta);
            self.output_grad_gathered(down, meta);
            self.input_grad_scattered(
                self.cost.mlp_up_dgrad_pre,
                self.cost.mlp_up_gemm,
                meta.op(OpKind::MlpUpDgrad),
            );
        }
        let attention = meta.op(OpKind::AttentionBackward);
        let proj = self.cost.proj;
        self.fp8_scales(Casts::AttentionGrads, attention);
        self.output_grad_gathered(proj, attention);
        self.attention_backward(self.cost.attention_core_backward, attention);
        self.input_grad_scattered(
            OpCost::default(),
            self.cost.qkv_gemm,
            meta.op(OpKind::QkvDgrad),
        );
    }

    /// W of one layer with sequence parallelism and TP overlap. The
    /// row-parallel weight gradients read the output gradients B gathered
    /// (kept with the deferred W). Each column-parallel weight gradient
    /// gathers the layer's input again, in ring steps under its own
    /// pieces. This is what the zero-bubble reference does (Qi et al. 2024;
    /// the Megatron-LM fork in sail-sg/zero-bubble-pipeline-parallelism,
    /// whose `WeightGradStore` keeps only the local sequence slice with each
    /// deferred W and all-gathers it when W runs): keeping the gathered
    /// input of every held layer and micro-batch instead would cost t times
    /// that activation memory.
    fn layer_weight_grad_decomposed(&mut self, meta: Meta) {
        let qkv = meta.op(OpKind::QkvWgrad);
        if self.t.is_moe_layer(meta.layer) {
            self.experts_weight_grad(meta);
        } else {
            self.compute_all(self.cost.mlp_down.chunk(&self.roof, 1), meta);
            let up = self.cost.mlp_up_gemm.weight_grad_chunk(&self.roof, self.tp);
            self.decomposed_gather(OpCost::default(), up, meta);
        }
        self.compute_all(self.cost.proj.chunk(&self.roof, 1), qkv);
        let qkv_piece = self.cost.qkv_gemm.weight_grad_chunk(&self.roof, self.tp);
        self.decomposed_gather(OpCost::default(), qkv_piece, qkv);
    }
}

/// Where a layer's backward starts: the MLP's down projection, of `layer`
/// and micro-batch `mb`.
fn backward_meta(layer: u32, mb: u32) -> Meta {
    Meta::new(OpKind::MlpDownBackward, Phase::Backward)
        .mb(mb)
        .layer(layer)
}
