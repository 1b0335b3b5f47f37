//! The SM race at a kernel's start (model.md 3b), as both engines run it.
//!
//! With several hardware queues the block scheduler takes kernels as their
//! queues offer them. A collective and a GEMM that become ready at the same
//! instant on different queues race for the SMs, and the model lets the
//! GEMM win: its first wave fills every SM, and the collective's channels
//! get SMs only as that wave's blocks retire, so the collective starts when
//! the wave drains and runs beside the GEMM's tail rather than beside all
//! of it. This is the simplification model.md 3b asks for: the real block
//! scheduler may interleave the two kernels' blocks, and a wave's blocks
//! do not all retire at once.
//!
//! On one queue (or wherever the collective shares compute's queue) there
//! is no race: launch order decides, through the queue's start-order edges
//! (`workload::graph::queues`): a collective launched ahead of the GEMM starts
//! first and holds its channels from the start, which is why Megatron's
//! TP overlap asks for `CUDA_DEVICE_MAX_CONNECTIONS=1` (its
//! `tensor_parallel/layers.py`).
//!
//! Who races and how long the wave takes:
//! - the collective holds SMs: an NCCL kernel (not a copy-engine transfer)
//!   on one channel or more, and the sharing models SMs (`Sharing::Modelled`;
//!   with `interference: "off"` or a v1 `sm_tax` nothing is shared to race
//!   for);
//! - the compute op that started at that instant on one of its members
//!   opens with a tiled GEMM (its tiles known, no memory-bound kernels ahead
//!   of it: an op that opens with elementwise kernels holds the SMs only for
//!   their short blocks, and the collective is taken to start with it);
//! - its first wave is its compute-bound seconds over its waves on the whole
//!   GPU (`GemmGeneration::wave_stretch`'s waves are equal: on fewer SMs a
//!   GEMM runs more waves, each as long), so the wave drains at the op's
//!   start plus `work / ceil(tiles / sms)`;
//! - a collective races on every member: it starts when the last member's
//!   wave drains (an NCCL collective runs once all its ranks' kernels run).
//!
//! A collective that lost a race is already waiting at the block scheduler
//! when the wave drains: it starts then, whatever else becomes ready at
//! that instant. Each engine defers a collective that may race to the end
//! of the instant it becomes ready (every event at that time processed), so
//! that a GEMM that becomes ready at the same time later in the event order
//! is seen too.

use crate::workload::graph::interference::{memory_phase_s, Sharing};
use crate::workload::graph::queues::Streams;
use crate::workload::graph::task::{RunsOn, TaskId, COMPUTE};
use crate::workload::graph::Graph;

/// Whether collective `t` can lose an SM race: it holds SMs that the
/// sharing models, and goes through another queue than compute's.
pub(crate) fn may_lose(g: &Graph, sharing: &Sharing, streams: &Streams, t: TaskId) -> bool {
    let task = &g.tasks[t as usize];
    sharing.modelled().is_some()
        && task.axis != COMPUTE
        && task.runs_on == RunsOn::Sms
        && g.channels[t as usize] > 0
        && streams.queue(task) != 0
}

/// Compute op `k` started at this instant: how long the first wave of the
/// GEMM it opens with takes, if it opens with one.
pub(crate) fn first_wave_s(g: &Graph, sharing: &Sharing, k: TaskId) -> Option<f64> {
    let modelled = sharing.modelled()?;
    let tiles = g.tiles[k as usize];
    if tiles == 0 || memory_phase_s(g, sharing, k as usize) > 0.0 {
        return None;
    }
    let waves = (f64::from(tiles) / f64::from(modelled.sms.max(1))).ceil();
    Some(g.tasks[k as usize].work / waves)
}

/// When collective `t`, ready at `now`, starts: the latest end of a first
/// wave among the GEMMs its members started at `now` (`started_now` gives a
/// member's compute op that started at this instant, if any), else `now`.
pub(crate) fn start_s(
    g: &Graph,
    sharing: &Sharing,
    t: TaskId,
    now: f64,
    mut started_now: impl FnMut(u32) -> Option<TaskId>,
) -> f64 {
    g.members_of(t)
        .iter()
        .filter_map(|&m| started_now(m))
        .filter_map(|k| first_wave_s(g, sharing, k))
        .fold(now, |at, wave_s| at.max(now + wave_s))
}
