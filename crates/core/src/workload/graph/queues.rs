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
//! stream per axis the step has a collective on, in the axes' order (TP,
//! PP, DP, EP, CP; [`Streams`]). A framework creates a communicator's
//! stream for the groups it uses, so an axis of degree 1 adds none. With as
//! many queues as streams each has its own; with fewer, stream s goes
//! through queue s mod the queues (a dense 3D step's four streams on 3
//! queues: compute shares with DP while TP and PP have one each; on 2,
//! compute shares with PP and TP with DP; on 1, all share). An MoE step
//! with TP, DP and EP has four streams too, a fifth with PP: EP and CP
//! streams take their queues like the others, not a fixed four.
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

use crate::model::axis::Axis;
use crate::workload::graph::task::{Task, TaskId, COMPUTE};

/// Most streams a GPU has: compute and one per axis.
const MAX_STREAMS: usize = Axis::COUNT + 1;

/// The streams of a step's GPUs and the hardware queue each goes through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Streams {
    /// Per axis index (compute at `COMPUTE`): its stream's queue.
    queue: [u8; MAX_STREAMS],
    /// Streams in all: compute and one per axis with a collective.
    count: u32,
    /// Whether some queue holds two streams or more.
    any_shared: bool,
    /// Per queue: whether two streams or more share it.
    shared: [bool; MAX_STREAMS],
}

impl Streams {
    /// The streams of the step `tasks` make up, on `max_connections` queues:
    /// compute is stream 0, then each axis with a collective in the step
    /// takes the next, in the axes' order.
    pub(crate) fn of(tasks: &[Task], max_connections: u32) -> Self {
        let mut has = [false; Axis::COUNT];
        for t in tasks {
            if t.axis != COMPUTE {
                has[usize::from(t.axis)] = true;
            }
        }
        Self::with_axes(has, max_connections)
    }

    /// The streams of a step with a collective on each axis `has` marks.
    fn with_axes(has: [bool; Axis::COUNT], max_connections: u32) -> Self {
        let queues = max_connections.clamp(1, MAX_STREAMS as u32);
        let mut queue = [0u8; MAX_STREAMS];
        let mut members = [0u32; MAX_STREAMS];
        members[0] = 1;
        let mut count = 1u32;
        for a in 0..Axis::COUNT {
            if has[a] {
                let q = count % queues;
                queue[a] = q as u8;
                members[q as usize] += 1;
                count += 1;
            }
        }
        let shared = std::array::from_fn(|q| members[q] > 1);
        Self {
            queue,
            count,
            any_shared: shared.iter().any(|&s| s),
            shared,
        }
    }

    /// The queue task `task`'s kernels go through (compute's is queue 0).
    pub(crate) fn queue(&self, task: &Task) -> usize {
        if task.axis == COMPUTE {
            0
        } else {
            usize::from(self.queue[usize::from(task.axis)])
        }
    }

    /// Streams in all.
    #[cfg(test)]
    fn count(&self) -> u32 {
        self.count
    }
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
    let streams = Streams::of(tasks, max_connections);
    if !streams.any_shared {
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
    let mut added = Vec::new();
    for mut list in launches {
        list.sort_unstable();
        let mut last: [Option<TaskId>; MAX_STREAMS] = [None; MAX_STREAMS];
        for (_, _, task) in list {
            let q = streams.queue(&tasks[task as usize]);
            if !streams.shared[q] {
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

    /// The queues of compute and of each axis, in `Axis::ALL`'s order.
    fn queues(has: [bool; Axis::COUNT], n: u32) -> Vec<u8> {
        let s = Streams::with_axes(has, n);
        std::iter::once(0)
            .chain(s.queue)
            .take(MAX_STREAMS)
            .collect()
    }

    #[test]
    fn streams_share_queues_round_robin() {
        // TP, PP and DP: compute and three streams.
        let dense = [true, true, true, false, false];
        assert_eq!(queues(dense, 1), [0, 0, 0, 0, 0, 0]);
        assert_eq!(queues(dense, 2), [0, 1, 0, 1, 0, 0]);
        assert_eq!(queues(dense, 3), [0, 1, 2, 0, 0, 0]);
        assert_eq!(queues(dense, 8), [0, 1, 2, 3, 0, 0]);
        assert!(!Streams::with_axes(dense, 4).any_shared);
    }

    #[test]
    fn every_stream_the_step_has_takes_a_queue() {
        // TP, DP and EP (no PP): EP is the fourth stream, its own queue on
        // 4 and compute's on 3. With every axis, CP is a sixth stream.
        let moe = [true, false, true, true, false];
        assert_eq!(queues(moe, 3), [0, 1, 0, 2, 0, 0]);
        assert_eq!(Streams::with_axes(moe, 3).queue(&task(Axis::Ep)), 0);
        assert!(!Streams::with_axes(moe, 4).any_shared);
        let all = [true; Axis::COUNT];
        let four = Streams::with_axes(all, 4);
        assert_eq!(four.count(), 6);
        assert!(four.any_shared);
        assert_eq!(four.queue(&task(Axis::Cp)), 1);
        assert_eq!(four.queue(&task(Axis::Ep)), 0);
        assert!(!Streams::with_axes(all, 6).any_shared);
    }

    /// A collective of `axis` (the fields `Streams` reads).
    fn task(axis: Axis) -> Task {
        let mut g = crate::workload::graph::Graph::default();
        g.add_gpu(crate::workload::graph::task::GpuInfo::lone(0));
        let pattern = g.add_pattern(Vec::new());
        let meta = crate::workload::graph::task::Meta::new(
            crate::model::op::OpKind::AllReduce,
            crate::model::op::Phase::Forward,
        );
        let id = g.comm(&[0], axis, pattern, 0.0, 0.0, meta);
        g.tasks[id as usize].clone()
    }
}
