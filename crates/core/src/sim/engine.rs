//! The event loop: runs a task graph over fluid compute and fluid links.
//!
//! Compute and the GPU's collectives share its SMs and HBM as `interference`
//! describes (or, with a v1 `sm_tax`, compute runs at (1 - sm_tax) while a
//! collective of the same GPU runs). Collectives pay their latency, then join
//! the network, whose rates change whenever a flow starts or ends; the
//! memory-bound part of a kernel is a flow on its GPU's HBM there.
//! Events are ordered by time, then by a sequence number, so equal inputs
//! give identical timelines bit for bit.
//!
//! Cost per event is bounded: a flow class (see `network`) has one pending
//! event for its first finisher however many flows it holds, and superseded
//! events are dropped from the heap once they outnumber the live ones.
//! Events are few: ops that follow one another alone run as one
//! (`compute_run`), a collective alone on its links is timed from its
//! start with one event (`Engine::pay_latency`), and an op that runs beside
//! it, the GPU's only one, is planned past its end as the op starts
//! (`Engine::begin_compute_phase`).

use crate::model::axis::Axis;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::sim::bandwidth_model::BandwidthModel;
use crate::sim::exposure::Uncharged;
use crate::sim::link_log::LinkLog;
use crate::sim::network::{ClassId, Network};
use crate::workload::graph::interference::{memory_phase_s, NetworkSetup, Sharing, SmUse};
use crate::workload::graph::queues::Streams;
use crate::workload::graph::recycle;
use crate::workload::graph::task::{TaskId, COMPUTE};
use crate::workload::graph::Graph;
use event::{Event, Kind};
pub(crate) use result::{GpuStats, Mark, RunResult};

mod alone;
mod compute_run;
mod event;
mod events;
mod race;
pub(crate) mod result;
#[cfg(test)]
mod tests;

/// No compute run in progress on a GPU.
const NO_RUN: TaskId = TaskId::MAX;

/// No op's end planned past a collective's (`GpuState::planned_past_alone`).
const NOT_PLANNED: (TaskId, f64) = (TaskId::MAX, f64::NAN);

struct GpuState {
    running: Option<TaskId>,
    /// The running op's full-speed seconds left in its current phase (one
    /// op runs at a time per GPU, so this is kept here, not per task).
    remaining: f64,
    /// When `remaining` was last brought up to date.
    last_update: f64,
    comm_active: u32,
    /// SMs its collectives in flight hold.
    sms: SmUse,
    /// Speed at which the running op's compute-bound part progresses.
    speed: f64,
    inflight_count: [u32; Axis::COUNT],
    inflight_total: [f64; Axis::COUNT],
    inflight_last: [f64; Axis::COUNT],
    /// The GPU's one collective in flight, when it is timed alone: it and
    /// the end its event is at (`Engine::begin_compute_phase`).
    sole_alone: Option<(TaskId, f64)>,
    /// An op whose compute-bound part was planned, as it began, to end past
    /// the end of `sole_alone` (at the quiet speed from then on): it and
    /// the end its event is at; else `NOT_PLANNED`.
    planned_past_alone: (TaskId, f64),
    /// The first op of the compute run in progress (`NO_RUN` when none):
    /// its start is written, the ops after it have not started yet.
    run_head: TaskId,
    /// The run's ops in order with their phase times (the last one's end
    /// is the run's one event); kept allocated from run to run.
    run: Vec<compute_run::RunOp>,
}

impl GpuState {
    /// Per axis, the time a collective of this GPU was in flight until `now`.
    fn inflight_at(&self, now: f64) -> [f64; Axis::COUNT] {
        std::array::from_fn(|axis| {
            let open = if self.inflight_count[axis] > 0 {
                now - self.inflight_last[axis]
            } else {
                0.0
            };
            self.inflight_total[axis] + open
        })
    }
}

/// Everything the engine changes about one task, in one place: an event
/// touches a task's state with one cache miss instead of one per array.
/// Kept small (16 bytes): what only the running op needs sits in `GpuState`.
#[derive(Clone, Copy)]
struct TaskState {
    /// Dependencies not yet finished.
    pending: u32,
    /// Sequence number of the task's latest pushed event: an entry with
    /// another is superseded and skipped.
    seq: u32,
    /// What the task's pending event stands for (`Kind::None`: none pending).
    kind: Kind,
    /// Compute: its memory-bound part is moving through HBM.
    in_memory_phase: bool,
    /// ... as a network flow (it shares HBM with a collective), not timed
    /// alone at the full HBM bandwidth.
    memory_in_network: bool,
    /// A compute op (constant): a run looks this up for the op that may
    /// follow, in the state it reads anyway rather than in the larger `Task`.
    compute: bool,
}

// The record stays within 12 bytes: five to a cache line.
const _: () = assert!(std::mem::size_of::<TaskState>() == 12);

struct Engine<'g, N: BandwidthModel> {
    g: &'g Graph,
    sharing: &'g Sharing,
    setup: NetworkSetup,
    /// Per task, what changes as it runs.
    st: Vec<TaskState>,
    /// Whether to record what the timeline and the report read (exposure,
    /// link logs); the baseline needs only its step time.
    record: bool,
    /// Per flow class: as `TaskState::seq` and `kind` (always `Done` when pending).
    class_seq: Vec<u32>,
    class_kind: Vec<Kind>,
    /// Heap entries that are superseded.
    stale: usize,
    /// Reused buffer for the classes whose rates a network change touched.
    changed: Vec<ClassId>,
    res: RunResult,
    gpu: Vec<GpuState>,
    /// How the links are shared.
    net: N,
    /// Records what the links did (only when `record`).
    links: LinkLog,
    heap: BinaryHeap<Reverse<Event>>,
    /// Sequence number of the latest push.
    seq: u32,
    now: f64,
    /// The next period mark to note (`Graph::period_marks`), or
    /// `TaskId::MAX` when none is left: one compare per completion.
    next_mark: TaskId,
    /// Compute speed with no collective of the GPU in flight.
    quiet_speed: f64,
    /// The GPUs' streams and the queues they go through (the SM race).
    streams: Streams,
    /// Collectives ready at this instant that may lose the SM race: they
    /// start once every event of the instant is processed (`race`).
    racing: Vec<TaskId>,
}

/// Runs the graph. `record_links` keeps per-link bandwidth samples (the page
/// draws them), link logs and exposure; the baseline run needs none of them,
/// only its step time.
pub(crate) fn run<'g>(g: &'g Graph, record_links: bool, sharing: &'g Sharing) -> RunResult {
    run_uncharged(g, record_links, record_links, sharing).charge_here(g)
}

/// Runs the graph, recording link logs and exposure when `record` (what the
/// report reads) and per-link bandwidth samples when `samples` too (what
/// only the timeline draws: a large step changes link rates millions of
/// times). Its idle time is left for the caller to charge, on as many
/// threads as it has (`exposure::Uncharged`).
pub(crate) fn run_uncharged<'g>(
    g: &'g Graph,
    record: bool,
    samples: bool,
    sharing: &'g Sharing,
) -> Uncharged {
    run_from_seq(g, record, samples, sharing, 0)
}

/// `run_uncharged` with the events' sequence numbers starting after
/// `first_seq` (tests start near the end of their range).
fn run_from_seq<'g>(
    g: &'g Graph,
    record: bool,
    samples: bool,
    sharing: &'g Sharing,
    first_seq: u32,
) -> Uncharged {
    let n = g.tasks.len();
    let setup = NetworkSetup::new(g, sharing);
    let mut net = Network::new(setup.capacity_bps.clone());
    for p in &setup.patterns {
        BandwidthModel::add_pattern(&mut net, p.clone());
    }
    // HBM resources follow the links; only the links are logged.
    let links = LinkLog::new(setup.links, record && samples);
    let classes = BandwidthModel::class_count(&net);
    let gpus = g.gpus.len();
    let mut e = Engine {
        g,
        sharing,
        setup,
        st: g
            .initial_pending
            .iter()
            .zip(&g.tasks)
            .map(|(&pending, task)| TaskState {
                pending,
                seq: 0,
                kind: Kind::None,
                in_memory_phase: false,
                memory_in_network: false,
                compute: task.axis == COMPUTE,
            })
            .collect(),
        record,
        class_seq: vec![0; classes],
        class_kind: vec![Kind::None; classes],
        stale: 0,
        changed: Vec::new(),
        res: RunResult {
            // Written as tasks start and end: they are the run's result,
            // not copied out of the engine's state at the end.
            start_s: recycle::filled(n, f64::NAN),
            end_s: recycle::filled(n, f64::NAN),
            exposed_s: recycle::filled(g.members.len(), 0.0),
            exposed_from_s: recycle::filled(g.members.len(), f64::INFINITY),
            needed_s: recycle::filled(g.members.len(), f64::INFINITY),
            gpus: vec![GpuStats::default(); gpus],
            links: Vec::new(),
            step_time_s: 0.0,
            marks: Vec::with_capacity(g.period_marks.len()),
            events: 0,
            planned_events: 0,
        },
        gpu: (0..gpus)
            .map(|_| GpuState {
                running: None,
                remaining: 0.0,
                last_update: 0.0,
                comm_active: 0,
                sms: SmUse::default(),
                speed: 1.0,
                inflight_count: [0; Axis::COUNT],
                inflight_total: [0.0; Axis::COUNT],
                inflight_last: [0.0; Axis::COUNT],
                sole_alone: None,
                planned_past_alone: NOT_PLANNED,
                run_head: NO_RUN,
                run: Vec::new(),
            })
            .collect(),
        net,
        links,
        heap: BinaryHeap::with_capacity(1024),
        seq: first_seq,
        now: 0.0,
        next_mark: g.period_marks.first().copied().unwrap_or(TaskId::MAX),
        quiet_speed: sharing.compute_speed(0, &SmUse::default(), 0),
        streams: Streams::of(&g.tasks, g.max_connections),
        racing: Vec::new(),
    };
    // Collected first: a task started here may start the kernels queued
    // behind it (`start`), which must not start a second time.
    let ready: Vec<TaskId> = (0..n as TaskId)
        .filter(|&t| e.st[t as usize].pending == 0)
        .collect();
    for t in ready {
        e.start(t);
    }
    loop {
        // The instant's last event is processed: the collectives held to
        // its end start, or lose the race (`race`).
        if !e.racing.is_empty() && e.heap.peek().is_none_or(|Reverse(ev)| ev.time_s() > e.now) {
            e.settle_races();
            continue;
        }
        let Some(Reverse(ev)) = e.heap.pop() else {
            break;
        };
        let entity = ev.entity() as usize;
        let (seq, kind) = e.slot(ev.entity());
        if ev.seq() != *seq || *kind == Kind::None {
            e.stale -= 1;
            continue;
        }
        let kind = std::mem::replace(kind, Kind::None);
        e.now = ev.time_s();
        e.res.events += 1;
        if entity >= n {
            let class = (entity - n) as ClassId;
            let task = BandwidthModel::pop_finished(&mut e.net, e.now, class);
            if e.st[task as usize].in_memory_phase {
                e.memory_done(task);
            } else {
                e.complete(task);
            }
        } else {
            let t = ev.entity();
            match kind {
                Kind::LatencyDone => e.begin_transfer(t),
                Kind::RunDone => e.finish_run(t),
                Kind::AloneDone => e.finish_alone(t),
                Kind::RaceLost => e.start_now(t),
                Kind::Done if e.st[entity].in_memory_phase => e.memory_done(t),
                Kind::Done => e.complete(t),
                Kind::None => unreachable!("a live event has a kind"),
            }
        }
    }
    // The engine's per-task state is not read past this point. Freed, not
    // kept (`recycle`): kept, it would sit idle through the report's tally,
    // the run's peak.
    e.st = Vec::new();
    let unfinished = e.res.end_s.iter().filter(|t| t.is_nan()).count();
    debug_assert_eq!(unfinished, 0, "task graph has a cycle");
    let step = e.now;
    if e.record {
        e.links.finish(step);
    }
    for (i, st) in e.gpu.iter().enumerate() {
        e.res.gpus[i].comm_s = st.inflight_at(step);
    }
    e.res.step_time_s = step;
    e.res.links = std::mem::take(&mut e.links.logs);
    // Idle time is charged from the finished timeline, GPU by GPU, each
    // compute op's collectives listed by the graph. Charged in the loop,
    // it cost twice as much: a list of waited-on collectives grown per
    // run, and each charge reaching across every GPU's recent state.
    Uncharged::new(e.res, e.record)
}

impl<N: BandwidthModel> Engine<'_, N> {
    /// Speed of compute task `t`'s compute-bound part on `gpu` now.
    fn speed(&self, gpu: u32, t: TaskId) -> f64 {
        let st = &self.gpu[gpu as usize];
        self.sharing
            .compute_speed(st.comm_active, &st.sms, self.g.tiles[t as usize])
    }

    /// Task `t` starts now (`start` holds a collective that may lose the SM
    /// race to the end of the instant first).
    fn start_now(&mut self, t: TaskId) {
        self.begin(t);
        // The kernels queued behind it may start now (`queues`).
        for &s in self.g.start_successors(t) {
            self.st[s as usize].pending -= 1;
            if self.st[s as usize].pending == 0 {
                self.start(s);
            }
        }
    }

    /// Task `t` starts now.
    fn begin(&mut self, t: TaskId) {
        let now = self.now;
        self.res.start_s[t as usize] = now;
        let g = self.g;
        let task = &g.tasks[t as usize];
        if task.axis == COMPUTE {
            let gpu = task.gpu;
            self.gpu[gpu as usize].running = Some(t);
            if self.gpu[gpu as usize].comm_active == 0 && self.begin_run(t, gpu) {
                return;
            }
            let memory_s = memory_phase_s(g, self.sharing, t as usize);
            if memory_s > 0.0 {
                self.begin_memory_phase(t, memory_s);
            } else {
                self.begin_compute_phase(t, task.work);
            }
        } else {
            let axis = task.axis as usize;
            let channels = self.setup.channels(g, t);
            let start = task.members_start as usize;
            for i in 0..task.members_len as usize {
                let m = g.members[start + i];
                if self.gpu[m as usize].run_head != NO_RUN {
                    self.split_run(m);
                }
                let st = &mut self.gpu[m as usize];
                if st.inflight_count[axis] == 0 {
                    st.inflight_last[axis] = now;
                }
                st.inflight_count[axis] += 1;
                st.comm_active += 1;
                if st.sole_alone.is_some() {
                    self.forget_sole_alone(m);
                }
                let st = &mut self.gpu[m as usize];
                st.sms.change(task.axis, channels, true);
                if st.comm_active == 1 {
                    self.memory_joins_network(m);
                }
                self.retime_compute(m);
            }
            let latency_s = task.latency_s();
            if latency_s > 0.0 {
                if let Some(end_s) = self.pay_latency(t, now + latency_s) {
                    for &m in g.members_of(t) {
                        let st = &mut self.gpu[m as usize];
                        if st.comm_active == 1 {
                            st.sole_alone = Some((t, end_s));
                        }
                    }
                }
            } else {
                self.begin_transfer(t);
            }
        }
    }

    /// The GPU's collectives changed: if the speed of its running op's
    /// compute-bound part changed with them, re-plan the op.
    fn retime_compute(&mut self, gpu: u32) {
        let Some(t) = self.gpu[gpu as usize].running else {
            return;
        };
        let speed = self.speed(gpu, t);
        let old_speed = self.gpu[gpu as usize].speed;
        if speed == old_speed || self.st[t as usize].in_memory_phase {
            return;
        }
        let now = self.now;
        let st = &mut self.gpu[gpu as usize];
        st.speed = speed;
        st.remaining = (st.remaining - (now - st.last_update) * old_speed).max(0.0);
        st.last_update = now;
        let end_s = now + st.remaining / speed;
        let planned = std::mem::replace(&mut st.planned_past_alone, NOT_PLANNED);
        // Planned so as it began (the same sum): its event is already there.
        if planned.0 == t && planned.1.to_bits() == end_s.to_bits() {
            return;
        }
        self.push(end_s, t, Kind::Done);
    }

    /// Compute task `t` runs `work_s` (full-speed seconds) on the SMs left.
    ///
    /// When the GPU's one collective in flight is timed alone and ends
    /// before the op would, the op speeds up then (TP's chunked pipeline:
    /// each chunk's matmul runs beside the previous chunk's all-reduce).
    /// Its end is then planned now as `retime_compute` would plan it at the
    /// collective's end, the same sum: one event instead of two, and no
    /// superseded one left in the heap. Whatever else changes the GPU's
    /// collectives first retimes the op as usual.
    fn begin_compute_phase(&mut self, t: TaskId, work_s: f64) {
        let now = self.now;
        let gpu = self.g.tasks[t as usize].gpu;
        let speed = self.speed(gpu, t);
        let quiet = self.quiet_speed;
        let st = &mut self.gpu[gpu as usize];
        st.speed = speed;
        st.remaining = work_s;
        st.last_update = now;
        let mut end_s = now + work_s / speed;
        st.planned_past_alone = NOT_PLANNED;
        if let Some((_, alone_end_s)) = st.sole_alone {
            if st.comm_active == 1 && now < alone_end_s && alone_end_s < end_s && speed != quiet {
                let left_s = (work_s - (alone_end_s - now) * speed).max(0.0);
                end_s = alone_end_s + left_s / quiet;
                st.planned_past_alone = (t, end_s);
            }
        }
        self.push(end_s, t, Kind::Done);
    }

    /// Compute task `t` first moves its memory-bound bytes through its GPU's
    /// HBM, sharing it with collectives as a flow.
    /// Alone on HBM (no collective of its GPU in flight) it takes the full
    /// bandwidth, timed without the network; it joins the network when a
    /// collective of its GPU starts.
    fn begin_memory_phase(&mut self, t: TaskId, memory_s: f64) {
        let now = self.now;
        let gpu = self.g.tasks[t as usize].gpu;
        self.st[t as usize].in_memory_phase = true;
        let st = &mut self.gpu[gpu as usize];
        st.remaining = memory_s;
        st.last_update = now;
        if st.comm_active == 0 {
            self.push(now + memory_s, t, Kind::Done);
        } else {
            self.memory_joins_network(gpu);
        }
    }

    /// A collective of `gpu` starts: the memory-bound part its running op
    /// moves alone, if any, joins the network with the bytes left.
    fn memory_joins_network(&mut self, gpu: u32) {
        let Some(t) = self.gpu[gpu as usize].running else {
            return;
        };
        let ts = &mut self.st[t as usize];
        if !ts.in_memory_phase || ts.memory_in_network {
            return;
        }
        ts.memory_in_network = true;
        let st = &self.gpu[gpu as usize];
        let left_s = (st.remaining - (self.now - st.last_update)).max(0.0);
        self.cancel(t);
        let hbm_bps = self.sharing.modelled().map_or(0.0, |m| m.hbm_bps);
        let pattern = self.setup.kernel_pattern(self.g, gpu);
        self.join_network(t, pattern, 0, left_s * hbm_bps);
    }

    /// The memory-bound part of compute task `t` is done: it leaves HBM
    /// and runs its compute-bound part.
    fn memory_done(&mut self, t: TaskId) {
        let g = self.g;
        let gpu = g.tasks[t as usize].gpu;
        let ts = &mut self.st[t as usize];
        ts.in_memory_phase = false;
        if std::mem::take(&mut ts.memory_in_network) {
            self.leave_network(self.net.class_of(self.setup.kernel_pattern(g, gpu), 0));
        }
        let left_s = g.tasks[t as usize].work - memory_phase_s(g, self.sharing, t as usize);
        if left_s > 0.0 {
            self.begin_compute_phase(t, left_s);
        } else {
            self.complete(t);
        }
    }

    /// A flow of `bytes` per member joins the network; the classes whose
    /// rates changed are re-planned.
    fn join_network(&mut self, t: TaskId, pattern: u32, axis: u8, bytes: f64) {
        while let Some(alone) = self.net.reserved_on(pattern) {
            self.settle_alone(alone);
        }
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        changed.extend_from_slice(self.net.start(self.now, t, pattern, axis, bytes));
        let own = self.net.class_of(pattern, axis);
        self.network_changed(changed, own);
    }

    /// A flow of class `own` (already popped) leaves the network.
    fn leave_network(&mut self, own: ClassId) {
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        changed.extend_from_slice(self.net.end(self.now, own));
        self.network_changed(changed, own);
    }

    /// A flow of class `own` joined or left the network, which moved the
    /// rates of the classes `changed` (the buffer of `self.changed`, given
    /// back): the links' rates are logged, and each changed class is
    /// scheduled again, and `own`, whose first finisher may have changed
    /// even if its rate did not.
    fn network_changed(&mut self, mut changed: Vec<ClassId>, own: ClassId) {
        if self.record {
            self.net.observe(self.now, &mut self.links);
        }
        if !changed.contains(&own) {
            changed.push(own);
        }
        for &c in &changed {
            self.schedule_class(c);
        }
        self.changed = changed;
    }

    fn begin_transfer(&mut self, t: TaskId) {
        let g = self.g;
        let task = &g.tasks[t as usize];
        if task.work <= 0.0 {
            self.complete(t);
            return;
        }
        self.join_network(t, task.pattern, task.axis, task.work);
    }

    /// Notes the sums as they stand now (see [`Mark`]).
    fn mark(&mut self) {
        let now = self.now;
        let gpus = self
            .gpu
            .iter()
            .zip(&self.res.gpus)
            .map(|(st, stats)| GpuStats {
                comm_s: st.inflight_at(now),
                ..stats.clone()
            })
            .collect();
        let links = if self.record {
            self.links.busy_shared_at(now)
        } else {
            Vec::new()
        };
        self.res.marks.push(Mark {
            time_s: now,
            gpus,
            links,
        });
        self.next_mark =
            (self.g.period_marks.get(self.res.marks.len()).copied()).unwrap_or(TaskId::MAX);
    }

    fn complete(&mut self, t: TaskId) {
        let task = &self.g.tasks[t as usize];
        // Zero-byte collectives never joined the network.
        if task.axis != COMPUTE && task.work > 0.0 {
            self.leave_network(self.net.class_of(task.pattern, task.axis));
        }
        self.complete_off_network(t);
    }

    /// Task `t` ended now, off the network (a compute op, or a collective
    /// that never joined it or has left it).
    fn complete_off_network(&mut self, t: TaskId) {
        if t == self.next_mark {
            self.mark();
        }
        let now = self.now;
        let ti = t as usize;
        self.res.end_s[ti] = now;
        self.cancel(t);
        let g = self.g;
        let task = &g.tasks[ti];
        if task.axis == COMPUTE {
            let gpu = task.gpu as usize;
            let st = &mut self.gpu[gpu];
            st.running = None;
            self.res.gpus[gpu].compute_busy_s += now - self.res.start_s[ti];
            self.res.gpus[gpu].end_s = self.res.gpus[gpu].end_s.max(now);
        } else {
            let axis = task.axis as usize;
            let channels = self.setup.channels(g, t);
            let start = task.members_start as usize;
            for i in 0..task.members_len as usize {
                let m = g.members[start + i];
                let st = &mut self.gpu[m as usize];
                st.inflight_count[axis] -= 1;
                if st.inflight_count[axis] == 0 {
                    st.inflight_total[axis] += now - st.inflight_last[axis];
                }
                st.comm_active -= 1;
                st.sole_alone = None;
                st.sms.change(task.axis, channels, false);
                self.retime_compute(m);
                self.res.gpus[m as usize].end_s = self.res.gpus[m as usize].end_s.max(now);
            }
        }
        for &s in g.successors(t) {
            self.st[s as usize].pending -= 1;
            if self.st[s as usize].pending == 0 {
                self.start(s);
            }
        }
    }
}
