//! Which form TP overlap takes in a transformer's layers (`overlap.tp_mode`,
//! model.md section 4), decided once per scenario; `transformer` lays out
//! the ops of each form.
//!
//! - `chunked` (CoCoNet, Jangda et al. 2021): each row-parallel GEMM runs in
//!   `tp_chunks`, each chunk's collective a call of its own while the next
//!   chunk computes; in the backward, as Megatron does.
//! - `megatron` (Korthikanti et al. 2022 as Megatron-LM's
//!   `core/tensor_parallel/layers.py` runs it): the forward's collectives
//!   block; in the backward the layer input's AllGather is launched ahead
//!   of the input-gradient GEMM and the input gradient's ReduceScatter
//!   (AllReduce without sequence parallelism) ahead of the weight-gradient
//!   GEMM, each running beside its GEMM. With one hardware queue
//!   (`queues`) that launch order is what lets each start first.
//! - `async` (PyTorch Async TP): with sequence parallelism every AllGather
//!   and ReduceScatter decomposed into the group's ring steps under the GEMM
//!   pieces, each step a copy-engine transfer that holds no SM; without
//!   sequence parallelism there is nothing to decompose, and it runs as
//!   `chunked` (model.md section 4).

use crate::model::scenario::{Scenario, TpMode, Transformer};

/// The form TP overlap takes in one scenario's layers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TpForm {
    /// TP overlap runs (on, with a TP group).
    pub on: bool,
    /// Sequence-parallel collectives decomposed into ring steps (Async TP).
    pub decomposed: bool,
    /// Chunks each row-parallel GEMM runs in (1: whole).
    pub chunks: u32,
}

impl TpForm {
    pub fn of(s: &Scenario, t: &Transformer) -> Self {
        let on = s.overlap.tp && s.parallel.tp > 1;
        let mode = s.overlap.tp_mode;
        let decomposed = on && t.sequence_parallel && mode == TpMode::Async;
        let chunks = if on && mode != TpMode::Megatron {
            s.overlap.tp_chunks
        } else {
            1
        };
        Self {
            on,
            decomposed,
            chunks,
        }
    }
}
