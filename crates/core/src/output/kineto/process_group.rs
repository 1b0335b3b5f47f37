//! Each collective's process group, as PyTorch's profiler writes it on a
//! kernel and Megatron-LM names and orders its groups.

use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::model::scenario::Scenario;
use crate::output::timeline::Interval;

/// The process group of a collective of `rank` on `axis` (or the tied
/// embedding's all-reduce): Megatron-LM's description of it and its global
/// ranks, `Scenario::axis_degree` of them `Scenario::axis_stride` apart
/// from the first (Megatron's rank order: TP fastest, then CP, then DP,
/// then PP). The embedding's group is the first and last pipeline stage of
/// the rank's position in its stage.
pub(super) fn process_group(
    s: &Scenario,
    rank: u32,
    iv: &Interval,
    axis: Axis,
) -> (&'static str, Vec<u32>) {
    let p = &s.parallel;
    let (tp, cp, dp, pp) = (p.tp.max(1), p.cp.max(1), p.dp.max(1), p.pp.max(1));
    let stage_size = tp * cp * dp;
    if iv.op == OpKind::EmbeddingAllReduce {
        let local = rank % stage_size;
        return (
            "EMBEDDING_GROUP",
            vec![local, local + (pp - 1) * stage_size],
        );
    }
    let (size, stride) = (s.axis_degree(axis).max(1), s.axis_stride(axis).max(1));
    let first = rank - rank / stride % size * stride;
    (
        axis.megatron_group(),
        (0..size).map(|i| first + i * stride).collect(),
    )
}

/// Ranks as PyTorch writes them: `[0, 1, 2, 3]`.
pub(super) fn ranks_text(ranks: &[u32]) -> String {
    let listed: Vec<String> = ranks.iter().map(u32::to_string).collect();
    format!("[{}]", listed.join(", "))
}
