//! What a run gives back: per GPU what it did, the sums at each period
//! mark, and every task's start and end.

use crate::model::axis::Axis;
use crate::sim::link_log::ResourceLog;
use crate::workload::graph::recycle;

/// What one GPU did during the step.
#[derive(Clone, Debug, Default)]
pub(crate) struct GpuStats {
    /// Time each axis had a collective in flight on this GPU.
    pub comm_s: [f64; Axis::COUNT],
    /// Time the compute stream stood idle waiting on each axis.
    pub exposed_s: [f64; Axis::COUNT],
    /// Time the compute stream stood idle waiting on another GPU's work
    /// (until `end_s`): with `exposed_s` and `compute_busy_s`, all of it.
    pub bubble_s: f64,
    /// Time the compute stream ran.
    pub compute_busy_s: f64,
    /// When the GPU's last task ended.
    pub end_s: f64,
}

/// The engine's sums as they stood when a period mark (`Graph::period_marks`)
/// ended, before anything of its end was counted: between two marks, each
/// sum grew by what one period added to it (`steady_state`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Mark {
    pub time_s: f64,
    /// Per GPU: compute busy, exposed, and in flight until now (`end_s`,
    /// its last end so far, is not read). Exposed time is charged after the
    /// run, each mark getting what the compute ops started before it charged
    /// (`exposure::charge_finished`).
    pub gpus: Vec<GpuStats>,
    /// Per logged link: its busy, shared and per-pair seconds until now;
    /// empty when the run does not record.
    pub links: Vec<crate::sim::link_log::LinkAt>,
}

pub(crate) struct RunResult {
    pub start_s: Vec<f64>,
    pub end_s: Vec<f64>,
    /// Per entry of `Graph::members`: compute idle time of that member waiting on the task.
    pub exposed_s: Vec<f64>,
    /// Per entry of `Graph::members`: when that wait began (infinite when none).
    pub exposed_from_s: Vec<f64>,
    /// Per entry of `Graph::members`: when that member's compute stream
    /// first needs the task's result (infinite when it never does).
    pub needed_s: Vec<f64>,
    pub gpus: Vec<GpuStats>,
    pub links: Vec<ResourceLog>,
    pub step_time_s: f64,
    /// At each of the graph's period marks, in order.
    pub marks: Vec<Mark>,
    pub events: u64,
    /// Events planned (heap pushes), superseded ones included.
    pub planned_events: u64,
}

impl RunResult {
    /// Frees the result, keeping its per-task arrays for the thread's next
    /// run (`recycle`).
    pub fn recycle(self) {
        recycle::give(self.start_s);
        recycle::give(self.end_s);
        recycle::give(self.exposed_s);
        recycle::give(self.exposed_from_s);
        recycle::give(self.needed_s);
    }
}
