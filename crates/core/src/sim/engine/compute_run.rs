//! Compute runs: while no collective of a GPU is in flight, each of its
//! compute ops takes a fixed time (its memory-bound part alone on HBM, then
//! its compute-bound part at the quiet GPU's speed). Ops that follow one
//! another and nothing else (each the only successor of the one before, and
//! waiting on nothing else) then need no event of their own: the run is
//! planned with one event, at its last op's end.
//!
//! Times are summed in the order the op-by-op path adds them, so every start
//! and end is bit-identical to it. A collective of the GPU that starts during
//! the run splits it at that instant: the ops done by then complete at their
//! ends, the op running resumes its phase as if it had run op by op (the
//! collective then retimes it, or moves its memory-bound part onto the
//! network), and the ops after it run op by op.

use super::{Engine, Kind, NO_RUN};
use crate::sim::bandwidth_model::BandwidthModel;
use crate::workload::graph::interference::memory_phase_s;
use crate::workload::graph::task::TaskId;

/// Most ops planned as one run: a run split early has been walked once for
/// nothing, so this bounds the walk a split can waste.
const MAX_RUN_OPS: usize = 256;

/// A compute op's phases on a quiet GPU, from its start.
#[derive(Clone, Copy)]
pub(super) struct QuietTimes {
    /// Seconds of its memory-bound part (zero: it has none).
    memory_s: f64,
    /// When its memory-bound part ends (its start when it has none).
    memory_end_s: f64,
    /// When it ends.
    end_s: f64,
}

/// One op of a planned run and its phases.
#[derive(Clone, Copy)]
pub(super) struct RunOp {
    task: TaskId,
    times: QuietTimes,
}

impl RunOp {
    /// The op.
    pub(super) fn task(&self) -> TaskId {
        self.task
    }

    /// When it ends, as planned.
    pub(super) fn end_s(&self) -> f64 {
        self.times.end_s
    }
}

impl<N: BandwidthModel> Engine<'_, N> {
    /// The phases of compute op `t` started at `start_s` on a GPU whose
    /// compute-bound parts run at `speed`, added up as `start`,
    /// `memory_done` and `begin_compute_phase` add them.
    fn quiet_times(&self, t: TaskId, start_s: f64, speed: f64) -> QuietTimes {
        let memory_s = memory_phase_s(self.g, self.sharing, t as usize);
        let work_s = self.g.tasks[t as usize].work;
        if memory_s > 0.0 {
            let memory_end_s = start_s + memory_s;
            let left_s = work_s - memory_s;
            let end_s = if left_s > 0.0 {
                memory_end_s + left_s / speed
            } else {
                memory_end_s
            };
            QuietTimes {
                memory_s,
                memory_end_s,
                end_s,
            }
        } else {
            QuietTimes {
                memory_s,
                memory_end_s: start_s,
                end_s: start_s + work_s / speed,
            }
        }
    }

    /// The op that starts the instant `t` ends and because of it alone: the
    /// only successor of `t`, a compute op of the same GPU waiting on
    /// nothing else, and with no kernel queued behind it waiting for its
    /// start (`queues`), which a run would not start.
    fn run_successor(&self, t: TaskId, gpu: u32) -> Option<TaskId> {
        let &[next] = self.g.successors(t) else {
            return None;
        };
        let st = &self.st[next as usize];
        (st.compute
            && st.pending == 1
            && self.g.tasks[next as usize].gpu == gpu
            && self.g.start_successors(next).is_empty())
        .then_some(next)
    }

    /// Compute op `t` starts now on `gpu`, which has no collective in flight
    /// (its start is written). When ops follow it alone, plans them with it
    /// as one run and returns true; otherwise it runs op by op.
    ///
    /// Each op's phase times are kept in the GPU's run list: finishing or
    /// splitting the run reads them there instead of working them out again.
    pub(super) fn begin_run(&mut self, t: TaskId, gpu: u32) -> bool {
        let Some(mut next) = self.run_successor(t, gpu) else {
            return false;
        };
        // No collective of the GPU is in flight: every op of the run runs
        // at the quiet speed, whatever its tiles.
        let speed = self.speed(gpu, t);
        let mut ops = std::mem::take(&mut self.gpu[gpu as usize].run);
        ops.clear();
        let mut times = self.quiet_times(t, self.now, speed);
        ops.push(RunOp { task: t, times });
        loop {
            times = self.quiet_times(next, times.end_s, speed);
            ops.push(RunOp { task: next, times });
            match self.run_successor(next, gpu) {
                Some(after) if ops.len() < MAX_RUN_OPS => next = after,
                _ => break,
            }
        }
        let st = &mut self.gpu[gpu as usize];
        st.run = ops;
        st.run_head = t;
        self.push(times.end_s, t, Kind::RunDone);
        true
    }

    /// The last op of the run that `head` began ended now: its ops complete
    /// in order, each at its end.
    pub(super) fn finish_run(&mut self, head: TaskId) {
        let gpu = self.g.tasks[head as usize].gpu;
        let st = &mut self.gpu[gpu as usize];
        st.run_head = NO_RUN;
        let ops = std::mem::take(&mut st.run);
        for pair in ops.windows(2) {
            self.complete_in_run(pair[0].task, gpu, pair[0].times.end_s, pair[1].task);
        }
        let last = ops.last().expect("a run holds two ops or more").task;
        // Handed back before the last op completes: what starts then on this
        // GPU may begin a run of its own.
        self.gpu[gpu as usize].run = ops;
        self.gpu[gpu as usize].running = Some(last);
        self.complete(last);
    }

    /// A collective of `gpu` starts now, during its run, before it counts as
    /// in flight. The ops done by now complete; the op running now (the last
    /// one, at the latest) is set in its phase as the op-by-op path would
    /// have it, with its event; the ops after it start as it ends, op by op.
    pub(super) fn split_run(&mut self, gpu: u32) {
        let now = self.now;
        let st = &mut self.gpu[gpu as usize];
        let head = st.run_head;
        st.run_head = NO_RUN;
        let ops = std::mem::take(&mut st.run);
        self.cancel(head);
        // The collective does not count yet: the quiet speed, as the run's.
        let speed = self.speed(gpu, head);
        let mut i = 0;
        while i + 1 < ops.len() && ops[i].times.end_s <= now {
            self.complete_in_run(ops[i].task, gpu, ops[i].times.end_s, ops[i + 1].task);
            i += 1;
        }
        let RunOp { task: t, times } = ops[i];
        self.gpu[gpu as usize].run = ops;
        let start_s = self.res.start_s[t as usize];
        self.gpu[gpu as usize].running = Some(t);
        let work_s = self.g.tasks[t as usize].work;
        let left_s = work_s - times.memory_s;
        if times.memory_s > 0.0 && (now < times.memory_end_s || left_s <= 0.0) {
            self.st[t as usize].in_memory_phase = true;
            let st = &mut self.gpu[gpu as usize];
            st.remaining = times.memory_s;
            st.last_update = start_s;
            self.push(times.memory_end_s, t, Kind::Done);
        } else {
            let (phase_start_s, phase_s) = if times.memory_s > 0.0 {
                (times.memory_end_s, left_s)
            } else {
                (start_s, work_s)
            };
            let st = &mut self.gpu[gpu as usize];
            st.speed = speed;
            st.remaining = phase_s;
            st.last_update = phase_start_s;
            self.push(times.end_s, t, Kind::Done);
        }
    }

    /// Op `t` of a run on `gpu` ended at `end_s`: what `complete` records
    /// for a compute op; its one successor `next`, the run's next op, starts
    /// then (it never waited, so no idle time is charged).
    fn complete_in_run(&mut self, t: TaskId, gpu: u32, end_s: f64, next: TaskId) {
        let ti = t as usize;
        self.res.end_s[ti] = end_s;
        let stats = &mut self.res.gpus[gpu as usize];
        stats.compute_busy_s += end_s - self.res.start_s[ti];
        stats.end_s = stats.end_s.max(end_s);
        self.st[next as usize].pending -= 1;
        self.res.start_s[next as usize] = end_s;
    }
}
