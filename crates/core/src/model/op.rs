//! What an op is: its pass and its kind. The builder creates ops, the engine
//! runs them, and the timeline, trace and page label them from here.

use super::named::named_enum;

named_enum! {
    /// Which pass an op belongs to.
    pub enum Phase {
        /// The forward pass of a micro-batch.
        Forward = ("forward", "forward"),
        /// The forward pass recomputed before its backward (activation recomputation).
        Recompute = ("recompute", "recompute"),
        /// The backward pass of a micro-batch.
        Backward = ("backward", "backward"),
        /// The optimizer step after the gradient reduction.
        Step = ("step", "optimizer step"),
    }
}

named_enum! {
    /// What an interval is. Compute ops first, then collectives.
    pub enum OpKind {
        /// LayerNorm, then the QKV GEMM (6bsh^2/t).
        Qkv = ("qkv", "QKV GEMM"),
        /// The attention core (4bs^2h/t) with its softmax and dropout.
        Attention = ("attention", "attention"),
        /// The attention output projection (2bsh^2/t), row-parallel: its output is reduced.
        Proj = ("proj", "attn proj GEMM"),
        /// Bias-dropout-residual, LayerNorm, the first MLP GEMM (8bsh^2/t) and GeLU.
        MlpUp = ("mlp_up", "MLP up GEMM"),
        /// The second MLP GEMM (8bsh^2/t), row-parallel: its output is reduced.
        MlpDown = ("mlp_down", "MLP down GEMM"),
        /// The logits GEMM and the loss on the last stage (2bshV/t).
        Logits = ("logits", "logits"),
        /// Backward of the second MLP GEMM: input and weight gradients.
        MlpDownBackward = ("mlp_down_backward", "MLP down bwd"),
        /// Input gradient of the first MLP GEMM; its TP reduction follows.
        MlpUpDgrad = ("mlp_up_dgrad", "MLP up dgrad"),
        /// Weight gradient of the first MLP GEMM: the window of that reduction.
        /// In a split backward (zero-bubble schedules) it is the MLP's W: the
        /// weight gradients of both MLP GEMMs.
        MlpUpWgrad = ("mlp_up_wgrad", "MLP up wgrad"),
        /// Backward of the projection and of the attention core.
        AttentionBackward = ("attention_backward", "attention bwd"),
        /// Input gradient of the QKV GEMM; its TP reduction follows.
        QkvDgrad = ("qkv_dgrad", "QKV dgrad"),
        /// Weight gradient of the QKV GEMM: the window of that reduction. In a
        /// split backward it is attention's W: the weight gradients of the QKV
        /// and output projection GEMMs.
        QkvWgrad = ("qkv_wgrad", "QKV wgrad"),
        /// Backward of the logits GEMM and the loss.
        LogitsBackward = ("logits_backward", "logits bwd"),
        /// The optimizer step: memory-bound, after the DP reduction.
        Optimizer = ("optimizer", "optimizer"),
        /// The micro-benchmark's GEMM (or one chunk of it).
        Gemm = ("gemm", "GEMM"),
        /// An all-reduce: a TP output, or a DP gradient bucket.
        AllReduce = ("all_reduce", "AllReduce"),
        /// A reduce-scatter: sequence-parallel TP output, or sharded DP gradients.
        ReduceScatter = ("reduce_scatter", "ReduceScatter"),
        /// An all-gather: sequence-parallel TP input, or sharded DP parameters.
        AllGather = ("all_gather", "AllGather"),
        /// Pipeline send of activations (forward) or gradients (backward).
        Send = ("send", "send"),
        /// The tied embedding's gradient all-reduce between the first and last
        /// pipeline stage, which hold the two copies of the matrix (input
        /// embedding and output layer), at the end of the step.
        EmbeddingAllReduce = ("embedding_all_reduce", "embedding AllReduce"),
        /// An MoE layer's router: LayerNorm, the h x experts GEMM and top-k.
        Router = ("router", "router"),
        /// The routed experts' SwiGLU as grouped GEMMs, with the permutation
        /// of tokens to and from expert order.
        Experts = ("experts", "experts (grouped GEMM)"),
        /// The shared experts' SwiGLU, beside the routed ones.
        SharedExperts = ("shared_experts", "shared experts"),
        /// Backward of the routed experts: input gradients.
        ExpertsDgrad = ("experts_dgrad", "experts dgrad"),
        /// Weight gradients of the routed and shared experts (W).
        ExpertsWgrad = ("experts_wgrad", "experts wgrad"),
        /// Backward of the shared experts and the router: input gradients.
        SharedExpertsBackward = ("shared_experts_backward", "shared experts + router bwd"),
        /// The all-to-all that sends each token to the ranks of its experts
        /// (forward), or returns the gradients of the combine (backward).
        Dispatch = ("dispatch", "dispatch all-to-all"),
        /// The all-to-all that returns each expert's output to its token
        /// (forward), or sends the output gradients to the experts (backward).
        Combine = ("combine", "combine all-to-all"),
    }
}

impl OpKind {
    /// Whether the op computes weight gradients only (W): the part of the
    /// backward nothing downstream waits for, which the zero-bubble
    /// schedules move into the bubble. The other backward ops are B.
    pub fn is_weight_gradient(self) -> bool {
        matches!(
            self,
            OpKind::MlpUpWgrad | OpKind::QkvWgrad | OpKind::ExpertsWgrad
        )
    }

    /// Whether the op is a transfer rather than compute.
    pub fn is_comm(self) -> bool {
        matches!(
            self,
            OpKind::AllReduce
                | OpKind::ReduceScatter
                | OpKind::AllGather
                | OpKind::Send
                | OpKind::EmbeddingAllReduce
                | OpKind::Dispatch
                | OpKind::Combine
        )
    }
}

/// `u32::MAX` in `layer` or `micro_batch` means "not applicable".
pub const NONE: u32 = u32::MAX;
