//! Each collective's process group, as PyTorch's profiler writes it on a
//! kernel and Megatron-LM names and orders its groups.

use crate::model::axis::Axis;
use crate::model::op::OpKind;
use crate::model::scenario::Scenario;
use crate::output::timeline::Interval;

/// The process group of a collective of `rank` on `axis` (or the tied
/// embedding's all-reduce): Megatron-LM's description of it and its global
/// ranks, in Megatron's rank order (TP fastest, then CP, then DP, then
/// PP). The embedding's group is the first and last pipeline stage of the
/// rank's position in its stage. DP's group holds the CP ranks too, as the
/// gradients reduce over dp x cp (Megatron's data-parallel group with
/// context parallelism); the routed experts' reductions are written with
/// it as well. An EP group is `ep` consecutive ranks of a stage.
pub(super) fn process_group(
    s: &Scenario,
    rank: u32,
    iv: &Interval,
    axis: Axis,
) -> (&'static str, Vec<u32>) {
    let p = &s.parallel;
    let (tp, cp, dp, pp) = (p.tp.max(1), p.cp.max(1), p.dp.max(1), p.pp.max(1));
    let stage_size = tp * cp * dp;
    let (stage_base, local) = (rank / stage_size * stage_size, rank % stage_size);
    if iv.op == OpKind::EmbeddingAllReduce {
        return (
            "EMBEDDING_GROUP",
            vec![local, local + (pp - 1) * stage_size],
        );
    }
    match axis {
        Axis::Tp => {
            let base = rank - rank % tp;
            ("TENSOR_MODEL_PARALLEL_GROUP", (base..base + tp).collect())
        }
        Axis::Cp => {
            let base = rank - rank % (tp * cp) + rank % tp;
            (
                "CONTEXT_PARALLEL_GROUP",
                (0..cp).map(|i| base + i * tp).collect(),
            )
        }
        Axis::Dp => {
            let base = stage_base + rank % tp;
            (
                "DATA_PARALLEL_GROUP",
                (0..dp * cp).map(|i| base + i * tp).collect(),
            )
        }
        Axis::Ep => {
            let ep = p.ep.max(1);
            let base = stage_base + local / ep * ep;
            ("EXPERT_MODEL_PARALLEL_GROUP", (base..base + ep).collect())
        }
        Axis::Pp => (
            "PIPELINE_MODEL_PARALLEL_GROUP",
            (0..pp).map(|i| local + i * stage_size).collect(),
        ),
    }
}

/// Ranks as PyTorch writes them: `[0, 1, 2, 3]`.
pub(super) fn ranks_text(ranks: &[u32]) -> String {
    let listed: Vec<String> = ranks.iter().map(u32::to_string).collect();
    format!("[{}]", listed.join(", "))
}
