//! What an op is: its pass and its kind. The builder creates ops, the engine
//! runs them, and the timeline, trace and page label them from here.

use serde::Serialize;

/// Which pass an op belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The forward pass of a micro-batch.
    Forward,
    /// The forward pass recomputed before its backward (activation recomputation).
    Recompute,
    /// The backward pass of a micro-batch.
    Backward,
    /// The optimizer step after the gradient reduction.
    Step,
}

impl Phase {
    /// The label readers see in tooltips, tables and traces.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Forward => "forward",
            Phase::Recompute => "recompute",
            Phase::Backward => "backward",
            Phase::Step => "optimizer step",
        }
    }
}

/// What an interval is. Compute ops first, then collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    /// LayerNorm, then the QKV GEMM (6bsh^2/t).
    Qkv,
    /// The attention core (4bs^2h/t) with its softmax and dropout.
    Attention,
    /// The attention output projection (2bsh^2/t), row-parallel: its output is reduced.
    Proj,
    /// Bias-dropout-residual, LayerNorm, the first MLP GEMM (8bsh^2/t) and GeLU.
    MlpUp,
    /// The second MLP GEMM (8bsh^2/t), row-parallel: its output is reduced.
    MlpDown,
    /// The logits GEMM and the loss on the last stage (2bshV/t).
    Logits,
    /// Backward of the second MLP GEMM: input and weight gradients.
    MlpDownBackward,
    /// Input gradient of the first MLP GEMM; its TP reduction follows.
    MlpUpDgrad,
    /// Weight gradient of the first MLP GEMM: the window of that reduction.
    /// In a split backward (zero-bubble schedules) it is the MLP's W: the
    /// weight gradients of both MLP GEMMs.
    MlpUpWgrad,
    /// Backward of the projection and of the attention core.
    AttentionBackward,
    /// Input gradient of the QKV GEMM; its TP reduction follows.
    QkvDgrad,
    /// Weight gradient of the QKV GEMM: the window of that reduction. In a
    /// split backward it is attention's W: the weight gradients of the QKV
    /// and output projection GEMMs.
    QkvWgrad,
    /// Backward of the logits GEMM and the loss.
    LogitsBackward,
    /// The optimizer step: memory-bound, after the DP reduction.
    Optimizer,
    /// The micro-benchmark's GEMM (or one chunk of it).
    Gemm,
    /// An all-reduce: a TP output, or a DP gradient bucket.
    AllReduce,
    /// A reduce-scatter: sequence-parallel TP output, or sharded DP gradients.
    ReduceScatter,
    /// An all-gather: sequence-parallel TP input, or sharded DP parameters.
    AllGather,
    /// Pipeline send of activations (forward) or gradients (backward).
    Send,
    /// The tied embedding's gradient all-reduce between the first and last
    /// pipeline stage, which hold the two copies of the matrix (input
    /// embedding and output layer), at the end of the step.
    EmbeddingAllReduce,
    /// An MoE layer's router: LayerNorm, the h x experts GEMM and top-k.
    Router,
    /// The routed experts' SwiGLU as grouped GEMMs, with the permutation
    /// of tokens to and from expert order.
    Experts,
    /// The shared experts' SwiGLU, beside the routed ones.
    SharedExperts,
    /// Backward of the routed experts: input gradients.
    ExpertsDgrad,
    /// Weight gradients of the routed and shared experts (W).
    ExpertsWgrad,
    /// Backward of the shared experts and the router: input gradients.
    SharedExpertsBackward,
    /// The all-to-all that sends each token to the ranks of its experts
    /// (forward), or returns the gradients of the combine (backward).
    Dispatch,
    /// The all-to-all that returns each expert's output to its token
    /// (forward), or sends the output gradients to the experts (backward).
    Combine,
}

impl OpKind {
    /// The label readers see in tooltips, tables and traces.
    pub fn label(self) -> &'static str {
        match self {
            OpKind::Qkv => "QKV GEMM",
            OpKind::Attention => "attention",
            OpKind::Proj => "attn proj GEMM",
            OpKind::MlpUp => "MLP up GEMM",
            OpKind::MlpDown => "MLP down GEMM",
            OpKind::Logits => "logits",
            OpKind::MlpDownBackward => "MLP down bwd",
            OpKind::MlpUpDgrad => "MLP up dgrad",
            OpKind::MlpUpWgrad => "MLP up wgrad",
            OpKind::AttentionBackward => "attention bwd",
            OpKind::QkvDgrad => "QKV dgrad",
            OpKind::QkvWgrad => "QKV wgrad",
            OpKind::LogitsBackward => "logits bwd",
            OpKind::Optimizer => "optimizer",
            OpKind::Gemm => "GEMM",
            OpKind::AllReduce => "AllReduce",
            OpKind::ReduceScatter => "ReduceScatter",
            OpKind::AllGather => "AllGather",
            OpKind::Send => "send",
            OpKind::EmbeddingAllReduce => "embedding AllReduce",
            OpKind::Router => "router",
            OpKind::Experts => "experts (grouped GEMM)",
            OpKind::SharedExperts => "shared experts",
            OpKind::ExpertsDgrad => "experts dgrad",
            OpKind::ExpertsWgrad => "experts wgrad",
            OpKind::SharedExpertsBackward => "shared experts + router bwd",
            OpKind::Dispatch => "dispatch all-to-all",
            OpKind::Combine => "combine all-to-all",
        }
    }

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
