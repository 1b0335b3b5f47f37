//! How a trace's kernel names are recognised as a library's communication:
//! each library contributes its rows ([`NameRule`]) through its registry
//! line, and the trace importer reads them in registry order, the first
//! row that matches deciding.

use serde::Serialize;

use crate::model::axis::Axis;

/// What a communication kernel does, as a trace can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum TraceOp {
    /// All-reduce.
    AllReduce,
    /// All-gather.
    AllGather,
    /// Reduce-scatter.
    ReduceScatter,
    /// All-to-all (NCCL runs it as send/recv; PyTorch's record names it).
    AllToAll,
    /// Point-to-point send and receive.
    SendRecv,
    /// Broadcast.
    Broadcast,
    /// Reduce to one rank.
    Reduce,
    /// A barrier or signal between ranks.
    Barrier,
    /// An expert-parallel token dispatch to experts.
    Dispatch,
    /// An expert-parallel combine of expert outputs.
    Combine,
    /// An exchange of token counts before a dispatch or combine.
    Notify,
    /// A copy between GPUs.
    Copy,
    /// A kernel of the library whose operation the name does not say.
    Other,
}

impl TraceOp {
    /// The name readers see.
    pub fn label(self) -> &'static str {
        match self {
            TraceOp::AllReduce => "AllReduce",
            TraceOp::AllGather => "AllGather",
            TraceOp::ReduceScatter => "ReduceScatter",
            TraceOp::AllToAll => "AllToAll",
            TraceOp::SendRecv => "SendRecv",
            TraceOp::Broadcast => "Broadcast",
            TraceOp::Reduce => "Reduce",
            TraceOp::Barrier => "Barrier",
            TraceOp::Dispatch => "dispatch",
            TraceOp::Combine => "combine",
            TraceOp::Notify => "notify",
            TraceOp::Copy => "copy",
            TraceOp::Other => "other",
        }
    }
}

/// How a row recognises a kernel's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// The name starts with this.
    Prefix(&'static str),
    /// The kernel's function is `name`, inside a namespace whose path
    /// contains `scope` (any namespace when `scope` is empty), read from the
    /// demangled name with the return type, template and call arguments
    /// and anonymous namespaces set aside: `void
    /// deep_ep::intranode::dispatch<8, 768>(int4*, ...)` is the function
    /// `dispatch` in `deep_ep::intranode`.
    Function {
        /// A part of the namespace path, e.g. `deep_ep`.
        scope: &'static str,
        /// The function's own name.
        name: &'static str,
    },
}

/// What a matching row says of the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpFrom {
    /// Always this operation.
    Fixed(TraceOp),
    /// The word after the prefix names it, as NCCL's kernels do
    /// (`ncclDevKernel_AllReduce_Sum_bf16_RING_LL`): read by [`NCCL_WORDS`].
    NameWord,
}

/// One row of the importer's table, contributed by a library.
#[derive(Clone, Copy, Debug)]
pub struct NameRule {
    /// How the name is recognised.
    pub pattern: Pattern,
    /// The family readers see ("NCCL", "DeepEP", "P2P").
    pub family: &'static str,
    /// The operation.
    pub op: OpFrom,
    /// The axis, when the library serves only one.
    pub axis: Option<Axis>,
    /// Where the name comes from: the source that defines the kernel.
    pub source: &'static str,
}

/// A row recognising the function `name` in a namespace containing `scope`.
pub const fn function(scope: &'static str, name: &'static str) -> Pattern {
    Pattern::Function { scope, name }
}

/// NCCL's collective words, as its kernel names spell them.
pub const NCCL_WORDS: &[(&str, TraceOp)] = &[
    ("AllReduce", TraceOp::AllReduce),
    ("AllGather", TraceOp::AllGather),
    ("ReduceScatter", TraceOp::ReduceScatter),
    ("SendRecv", TraceOp::SendRecv),
    ("Broadcast", TraceOp::Broadcast),
    ("Reduce", TraceOp::Reduce),
    ("AllToAll", TraceOp::AllToAll),
];
