//! Hardware work queues (model.md 3b). Kernels reach a GPU through
//! `max_connections` queues (`CUDA_DEVICE_MAX_CONNECTIONS`); CUDA maps
//! streams onto them round-robin in the order the streams were created, and
//! a queue hands its kernels to the GPU in launch order. When two streams
//! share a queue, a kernel of one cannot start before the kernel launched
//! ahead of it on the other has started: with one queue (Megatron's setting)
//! a collective launched ahead of a GEMM starts first and runs beside it,
//! while one that cannot start yet (waiting on its stream) holds the GEMM.
//!
//! Streams of every GPU, in creation order: compute, then one communication
//! stream per axis (TP, PP, DP). With 4 queues or more each has its own; with
//! 3, compute shares with DP while TP and PP have one each; with 2, compute
//! shares with PP and TP with DP; with 1, all share.
//!
//! Launch order on a GPU is the order its host thread issues kernels, which
//! is the order the builder issues ops on that GPU: compute ops in their
//! stream order, and each collective right after the last compute op of
//! that GPU it depends on (the op that made its data ready), after any
//! collective issued there before it. A collective that depends on no
//! compute op of a GPU is launched before the GPU's first compute op when
//! the builder says so (`Graph::launch_first`: a parameter gather issued as
//! the step starts, as in Megatron-LM issue 1468, where with one queue the
//! first forward waits for it); otherwise (the receiving end of a pipeline
//! send) it is launched by the sender and takes no place in that GPU's
//! queues.
//!
//! A shared queue becomes start-order dependencies: each kernel may start
//! only once the kernel launched before it in its queue has started (not
//! finished), and a kernel that cannot start yet (its stream still busy, or
//! an event it waits for not yet recorded) holds everything behind it. The
//! finish-to-start order within a stream stays the graph's own (compute ops
//! in stream order, a communication stream's collectives one after another).
//! Sources: CUDA C++ Programming Guide, "CUDA Environment Variables"
//! (`CUDA_DEVICE_MAX_CONNECTIONS`: the number of hardware work queues, 8 by
//! default, 1 to 32) and the Hyper-Q notes of the Kepler GK110 whitepaper
//! (one queue: a kernel waiting on its stream blocks the kernels of other
//! streams behind it, "false dependencies"); Megatron-LM
//! `core/tensor_parallel/layers.py`, whose backward launches the AllGather
//! of the layer input ahead of the input-gradient GEMM and the input
//! gradient's ReduceScatter (AllReduce without sequence parallelism) ahead
//! of the weight-gradient GEMM and relies on `CUDA_DEVICE_MAX_CONNECTIONS=1`
//! so that each collective is scheduled first and runs beside its GEMM;
//! Megatron-LM issue 1468, where with one queue the distributed optimizer's
//! parameter gathers did not overlap: launched as the step starts, one
//! after another on one stream, the last stands blocked at the head until
//! the one before it ends, and the forward waits behind it. (The issue saw
//! its gradient reductions serialised too; in start order a reduction
//! launched ahead of the next backward GEMM runs beside it, unless the one
//! before it on its stream still runs: `tests/queues.rs` pins that gap.)
//! The fast engine and the plain reference run the same graph, so both
//! model the same queues.

use crate::workload::graph::{Task, TaskId, COMPUTE};

/// Streams of a GPU: compute and one per communication axis.
const STREAMS: u32 = 4;

/// Stream of a task: compute is stream 0, axis `a`'s collectives stream a + 1.
fn stream(task: &Task) -> u32 {
    if task.axis == COMPUTE {
        0
    } else {
        u32::from(task.axis) + 1
    }
}

/// The queue a stream's kernels go through (CUDA's round-robin by creation).
pub(crate) fn queue_of_stream(stream: u32, max_connections: u32) -> u32 {
    stream % max_connections.max(1)
}

/// Start-order dependencies (from, to) that the shared queues add: `to`
/// may start once `from` has started. None when every stream has a queue
/// of its own.
pub(crate) fn queue_edges(
    tasks: &[Task],
    members: &[u32],
    compute_order: &[Vec<TaskId>],
    edges: &[(TaskId, TaskId)],
    launched_first: &[TaskId],
    max_connections: u32,
) -> Vec<(TaskId, TaskId)> {
    if max_connections >= STREAMS {
        return Vec::new();
    }
    const NONE: u32 = u32::MAX;
    let mut compute_index = vec![NONE; tasks.len()];
    for order in compute_order {
        for (i, &t) in order.iter().enumerate() {
            compute_index[t as usize] = i as u32;
        }
    }
    // Per member slot of a collective: the last compute op of that member it
    // waits for (NONE: none).
    let mut launched_after = vec![NONE; members.len()];
    for &(from, to) in edges {
        let (f, t) = (&tasks[from as usize], &tasks[to as usize]);
        if f.axis != COMPUTE || t.axis == COMPUTE {
            continue;
        }
        let start = t.members_start as usize;
        let slots = start..start + usize::from(t.members_len);
        if let Some(slot) = slots.clone().find(|&s| members[s] == f.gpu) {
            let idx = compute_index[from as usize];
            let at = &mut launched_after[slot];
            *at = if *at == NONE { idx } else { (*at).max(idx) };
        }
    }
    // Launched before the first compute op: ranked in the order marked.
    let mut first_rank = vec![NONE; tasks.len()];
    for (rank, &t) in launched_first.iter().enumerate() {
        let first = &mut first_rank[t as usize];
        if *first == NONE {
            *first = rank as u32;
        }
    }
    // Per GPU, its kernels in launch order: (slot, rank within, task), where
    // slot 0 is before the first compute op and slot i + 1 is compute op i
    // (rank 0) with what is launched after it.
    let mut launches: Vec<Vec<(u32, u32, TaskId)>> = compute_order
        .iter()
        .map(|order| {
            order
                .iter()
                .enumerate()
                .map(|(i, &t)| (i as u32 + 1, 0, t))
                .collect()
        })
        .collect();
    for (id, t) in tasks.iter().enumerate() {
        if t.axis == COMPUTE {
            continue;
        }
        let start = t.members_start as usize;
        for slot in start..start + usize::from(t.members_len) {
            let gpu = members[slot] as usize;
            if launched_after[slot] != NONE {
                // After the compute op, and after the collectives issued there before it.
                launches[gpu].push((launched_after[slot] + 1, 1 + id as u32, id as TaskId));
            } else if first_rank[id] != NONE {
                launches[gpu].push((0, first_rank[id], id as TaskId));
            }
        }
    }
    // A queue that one stream has to itself orders nothing the stream does
    // not (as with a queue per stream, where no edges are added): a stream
    // starts its kernels in its own order already.
    let shared: [bool; STREAMS as usize] = std::array::from_fn(|q| {
        (0..STREAMS)
            .filter(|&s| queue_of_stream(s, max_connections) as usize == q)
            .count()
            > 1
    });
    let mut added = Vec::new();
    for mut list in launches {
        list.sort_unstable();
        let mut last: [Option<TaskId>; STREAMS as usize] = [None; STREAMS as usize];
        for (_, _, task) in list {
            let q = queue_of_stream(stream(&tasks[task as usize]), max_connections) as usize;
            if !shared[q] {
                continue;
            }
            if let Some(prev) = last[q].replace(task) {
                added.push((prev, task));
            }
        }
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_share_queues_round_robin() {
        let queues = |n| {
            (0..STREAMS)
                .map(|s| queue_of_stream(s, n))
                .collect::<Vec<_>>()
        };
        assert_eq!(queues(1), [0, 0, 0, 0]);
        assert_eq!(queues(2), [0, 1, 0, 1]);
        assert_eq!(queues(3), [0, 1, 2, 0]);
        assert_eq!(queues(8), [0, 1, 2, 3]);
    }
}
