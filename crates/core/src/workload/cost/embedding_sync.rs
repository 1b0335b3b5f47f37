//! The tied embedding's gradient all-reduce (model.md section 4): with tied
//! embeddings the input embedding on the first virtual stage and the output
//! layer on the last are two copies of one matrix. When those stages sit on
//! different GPUs, each copy collects only its own gradient, so the two GPUs
//! of each TP rank and replica sum them before the optimizer step
//! (Megatron-LM's embedding group, after the DP gradient reduction).
//!
//! It is a gradient reduction and runs on the DP axis: like the DP
//! buckets it sums copies of one gradient, after the backward that made
//! them final, and the optimizer step waits on it (model.md sections 5-6).
//! Its window is what the DP row gives, the backward compute after the
//! gradient is final: on the first stage the input embedding's gradient is
//! final only after the last backward op, so nothing follows it and the
//! window is empty, and the whole all-reduce is exposed. Its bytes cross the
//! links between the two stages (a pipeline send's links). The timeline
//! draws it on the DP lane as `OpKind::EmbeddingAllReduce`.
//!
//! A scenario in the first version's model (a given `sm_tax`,
//! `Scenario::first_version_tax`) runs without it, as the first version
//! did, so that v1 links keep their figures.

use crate::model::scenario::{DpSharding, Mode, Scenario, Transformer};
use crate::workload::cost::params::embedding_params_whole;

/// The pipeline stages (first, last) whose GPUs all-reduce the tied
/// embedding's gradient, or `None` where the step has no such all-reduce:
/// inference, untied embeddings, a scenario in the first version's model,
/// and a schedule whose first and last virtual stage share a GPU (pp 1, or
/// the V-shaped schedules, whose first and last chunk sit on stage 0).
pub fn stages(s: &Scenario, t: &Transformer) -> Option<(u32, u32)> {
    if t.mode != Mode::Train || !t.tied_embeddings || s.first_version_tax().is_some() {
        return None;
    }
    let p = &s.parallel;
    let last_vs = p.pp * p.virtual_stages - 1;
    let first = p.schedule.stage_and_chunk(0, p.pp).0;
    let last = p.schedule.stage_and_chunk(last_vs, p.pp).0;
    (first != last).then_some((first, last))
}

/// Bytes each of the two GPUs all-reduces: the embedding's parameters on
/// one TP rank (its vocabulary slice) at `grad_bytes` per value. With a
/// sharded optimizer (distributed optimizer or FSDP) the reduce-scatter
/// over the DP x CP group (`Parallel::dp_group`) leaves each rank the final
/// gradient of its 1/d shard only, and its optimizer updates that shard
/// only, so the all-reduce sums that shard: summing the rest would add
/// gradients no optimizer reads.
pub fn bytes_per_rank(s: &Scenario, t: &Transformer) -> f64 {
    let p = &s.parallel;
    let shards = match p.dp_sharding {
        DpSharding::None => 1.0,
        DpSharding::Optimizer | DpSharding::Full => f64::from(p.dp_group()),
    };
    embedding_params_whole(t) / f64::from(p.tp) * f64::from(s.overlap.grad_bytes) / shards
}
