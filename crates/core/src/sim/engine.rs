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
use crate::sim::link_log::{LinkLog, ResourceLog};
use crate::sim::network::{ClassId, Network};
use crate::workload::graph::{Graph, TaskId, COMPUTE};
use crate::workload::interference::{memory_phase_s, NetworkSetup, Sharing, SmUse};
use crate::workload::recycle;

mod compute_run;

/// No compute run in progress on a GPU.
const NO_RUN: TaskId = TaskId::MAX;

/// No op's end planned past a collective's (`GpuState::planned_past_alone`).
const NOT_PLANNED: (TaskId, f64) = (TaskId::MAX, f64::NAN);

/// What an entity's pending event stands for; kept beside the entity (the
/// heap entry carries only time, order and entity).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    /// No event pending.
    None,
    /// Latency paid: the bytes start moving.
    LatencyDone,
    /// Compute finished, or the last byte arrived.
    Done,
    /// The last op of a compute run (`compute_run`) finished; the entity is
    /// the run's first op.
    RunDone,
    /// A collective timed alone on its links, from its start, ended (see
    /// `Engine::pay_latency`).
    AloneDone,
}

/// A heap entry in 16 bytes: the time's bit pattern (a non-negative f64
/// orders like the number), then the sequence number of its push, then the
/// entity (a task below the task count, else a flow class at task count +
/// class). Ordered by that one number: by time, then by push order, so equal
/// times break the same way on every run. The sequence number also tells a
/// live entry from a superseded one: only the entity's latest push is live.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event(u128);

impl Event {
    fn new(time_bits: u64, seq: u32, entity: u32) -> Self {
        Self(u128::from(time_bits) << 64 | u128::from(seq) << 32 | u128::from(entity))
    }

    fn time_bits(self) -> u64 {
        (self.0 >> 64) as u64
    }

    fn time_s(self) -> f64 {
        f64::from_bits(self.time_bits())
    }

    fn seq(self) -> u32 {
        (self.0 >> 32) as u32
    }

    fn entity(self) -> u32 {
        self.0 as u32
    }
}

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

impl GpuStats {
    /// Sets its idle time as charged (`exposure`).
    pub(crate) fn set_idle(&mut self, idle: crate::sim::exposure::Idle) {
        self.exposed_s = idle.exposed_s;
        self.bubble_s = idle.bubble_s;
    }
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
    /// Per logged link: (busy, shared) seconds until now; empty when the
    /// run does not record.
    pub links: Vec<(f64, f64)>,
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
    };
    // Collected first: a task started here may start the kernels queued
    // behind it (`start`), which must not start a second time.
    let ready: Vec<TaskId> = (0..n as TaskId)
        .filter(|&t| e.st[t as usize].pending == 0)
        .collect();
    for t in ready {
        e.start(t);
    }
    while let Some(Reverse(ev)) = e.heap.pop() {
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
    /// Schedules the entity's next event, superseding any pending one.
    fn push(&mut self, at: f64, entity: u32, kind: Kind) {
        self.cancel(entity);
        if self.seq == u32::MAX {
            self.renumber();
        }
        self.seq += 1;
        let seq = self.seq;
        let slot = self.slot(entity);
        *slot.0 = seq;
        *slot.1 = kind;
        self.res.planned_events += 1;
        self.heap
            .push(Reverse(Event::new(at.max(0.0).to_bits(), seq, entity)));
    }

    /// The sequence numbers ran out: the live events are numbered again from
    /// 1 in their order, which the heap keeps, and the superseded ones dropped.
    fn renumber(&mut self) {
        let mut live: Vec<Event> = std::mem::take(&mut self.heap)
            .into_iter()
            .map(|Reverse(ev)| ev)
            .filter(|&ev| self.is_live(ev))
            .collect();
        live.sort_unstable();
        for (i, ev) in live.iter_mut().enumerate() {
            let seq = i as u32 + 1;
            *self.slot(ev.entity()).0 = seq;
            *ev = Event::new(ev.time_bits(), seq, ev.entity());
        }
        self.seq = live.len() as u32;
        self.stale = 0;
        self.heap = live.into_iter().map(Reverse).collect();
    }

    /// Whether the heap entry is its entity's pending event.
    fn is_live(&self, ev: Event) -> bool {
        let n = self.st.len();
        let e = ev.entity() as usize;
        let (seq, kind) = if e < n {
            (self.st[e].seq, self.st[e].kind)
        } else {
            (self.class_seq[e - n], self.class_kind[e - n])
        };
        ev.seq() == seq && kind != Kind::None
    }

    /// The entity's latest sequence number and its pending event's kind.
    fn slot(&mut self, entity: u32) -> (&mut u32, &mut Kind) {
        let n = self.st.len();
        let e = entity as usize;
        if e < n {
            let t = &mut self.st[e];
            (&mut t.seq, &mut t.kind)
        } else {
            (&mut self.class_seq[e - n], &mut self.class_kind[e - n])
        }
    }

    /// Drops the entity's pending event, if any. When superseded entries
    /// outnumber live ones the heap is rebuilt without them, so that it never
    /// holds more than twice the live events (plus a constant).
    fn cancel(&mut self, entity: u32) {
        let (_, kind) = self.slot(entity);
        if std::mem::replace(kind, Kind::None) != Kind::None {
            self.stale += 1;
            if self.stale > 1024 && self.stale * 2 > self.heap.len() {
                let mut heap = std::mem::take(&mut self.heap);
                heap.retain(|&Reverse(ev)| self.is_live(ev));
                self.heap = heap;
                self.stale = 0;
            }
        }
    }

    /// Plans the class's next finish (after its rate or its queue changed).
    fn schedule_class(&mut self, class: ClassId) {
        let entity = self.g.tasks.len() as u32 + class;
        match self.net.next_finish(class) {
            Some((at, _)) => self.push(at, entity, Kind::Done),
            None => self.cancel(entity),
        }
    }

    /// Speed of compute task `t`'s compute-bound part on `gpu` now.
    fn speed(&self, gpu: u32, t: TaskId) -> f64 {
        let st = &self.gpu[gpu as usize];
        self.sharing
            .compute_speed(st.comm_active, &st.sms, self.g.tiles[t as usize])
    }

    fn start(&mut self, t: TaskId) {
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

    /// Collective `t` pays its latency until `latency_end_s`, then moves
    /// its bytes. When nothing moves on its links and none other is timed
    /// alone there, it is timed alone from now: one event at its end, at
    /// the time the network would give it (`latency_end_s` plus its bytes
    /// at its bottleneck rate, the same sum). Whatever joins its links
    /// before then settles it first (`settle_alone`), as if it had joined
    /// the network at `latency_end_s`. Most collectives of a large step
    /// meet nothing on their links: this spares each of them an event and
    /// two rate changes.
    /// Returns the end it is timed alone to, if it is.
    fn pay_latency(&mut self, t: TaskId, latency_end_s: f64) -> Option<f64> {
        let task = &self.g.tasks[t as usize];
        if task.work > 0.0 {
            if let Some(rate) = self.net.reserve_alone(t, task.pattern) {
                let end_s = latency_end_s + task.work / rate;
                self.push(end_s, t, Kind::AloneDone);
                return Some(end_s);
            }
        }
        self.push(latency_end_s, t, Kind::LatencyDone);
        None
    }

    /// The GPU's collective timed alone is no longer its only one, or no
    /// longer timed alone: its end no longer tells when the GPU's op speeds
    /// up, so an op planned past it (`begin_compute_phase`) is planned again
    /// as op by op, at the speed it began with.
    fn forget_sole_alone(&mut self, gpu: u32) {
        let st = &mut self.gpu[gpu as usize];
        st.sole_alone = None;
        let op = std::mem::replace(&mut st.planned_past_alone, NOT_PLANNED).0;
        if st.running == Some(op) {
            let end_s = st.last_update + st.remaining / st.speed;
            self.push(end_s, op, Kind::Done);
        }
    }

    /// When started collective `t`'s latency ends: the sum `start` made.
    fn latency_end_s(&self, t: TaskId) -> f64 {
        self.res.start_s[t as usize] + self.g.tasks[t as usize].latency_s()
    }

    /// Collective `t`, timed alone since its start, meets a flow joining
    /// its links now: it becomes what the network would have made of it.
    /// Still paying its latency, it joins when that ends; already moving,
    /// it joins as of its latency's end, alone on its links until now.
    fn settle_alone(&mut self, t: TaskId) {
        let g = self.g;
        let task = &g.tasks[t as usize];
        self.net.release(task.pattern);
        self.cancel(t);
        for &m in g.members_of(t) {
            if self.gpu[m as usize]
                .sole_alone
                .is_some_and(|(alone, _)| alone == t)
            {
                self.forget_sole_alone(m);
            }
        }
        let latency_end_s = self.latency_end_s(t);
        if self.now <= latency_end_s {
            self.push(latency_end_s, t, Kind::LatencyDone);
        } else {
            let now = std::mem::replace(&mut self.now, latency_end_s);
            self.begin_transfer(t);
            self.now = now;
        }
    }

    /// Collective `t`, timed alone since its start, ended now.
    fn finish_alone(&mut self, t: TaskId) {
        let g = self.g;
        let task = &g.tasks[t as usize];
        self.net.release(task.pattern);
        if self.record {
            let span = (self.latency_end_s(t), self.now);
            self.net
                .observe_alone(task.pattern, task.axis, span, &mut self.links);
        }
        self.complete_off_network(t);
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
        if self.record {
            self.net.observe(self.now, &mut self.links);
        }
        let own = self.net.class_of(pattern, axis);
        // Its own class's first finisher may have changed even if its rate did not.
        if !changed.contains(&own) {
            changed.push(own);
        }
        for &c in &changed {
            self.schedule_class(c);
        }
        self.changed = changed;
    }

    /// A flow of class `own` (already popped) leaves the network.
    fn leave_network(&mut self, own: ClassId) {
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        changed.extend_from_slice(self.net.end(self.now, own));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::presets;
    use crate::model::axis::Axis;
    use crate::model::fidelity::Fidelity;
    use crate::model::link::{Direction, LinkClass};
    use crate::model::op::{OpKind, Phase};
    use crate::sim::network::Usage;
    use crate::workload;
    use crate::workload::graph::{GpuInfo, Meta, ResourceInfo};

    /// One GPU and one 1 GB/s link. A PP send starts at once: 1 ms of
    /// latency, then 3 MB (3 ms alone). A compute op of `compute_s`, then a
    /// DP collective on the same link: 0.5 ms of latency, then 1 MB.
    fn send_then_collective(compute_s: f64) -> Graph {
        let mut g = Graph::default();
        // A queue per stream: the send and the collective may overlap.
        g.max_connections = 4;
        g.add_gpu(GpuInfo::lone(0));
        g.add_resource(ResourceInfo {
            gpu: Some(0),
            class: LinkClass::Network,
            direction: Direction::Out,
            capacity_bps: 1e9,
        });
        let link = g.add_pattern(vec![Usage {
            resource: 0,
            weight: 1.0,
        }]);
        let meta = Meta::new(OpKind::Gemm, Phase::Forward);
        g.comm(&[0], Axis::Pp as u8, link, 3e6, 1e-3, meta.op(OpKind::Send));
        let op = g.compute(0, compute_s, 0.0, 0.0, 0.0, meta);
        let reduce = g.comm(
            &[0],
            Axis::Dp as u8,
            link,
            1e6,
            0.5e-3,
            meta.op(OpKind::AllReduce),
        );
        g.dep(op, reduce);
        g.finish();
        g
    }

    /// A matmul that starts beside a collective timed alone, which ends
    /// before it: slowed (a 50% tax) until the collective ends, then at
    /// full speed. Its end is planned once, as it starts, to the same sum
    /// the collective's end would give it: no event is superseded. Sends
    /// of other GPUs joining the link first make the collective a flow of
    /// the network, which then ends after the matmul's planned end: the
    /// matmul is planned again, and the times are the plain reference's.
    /// So it is when a second collective of the GPU starts, on another
    /// link, and outlasts the first: the tax stays as the first ends.
    #[test]
    fn a_matmul_beside_a_collective_timed_alone_is_planned_once() {
        #[derive(PartialEq)]
        enum Beside {
            Nothing,
            SendsOnItsLink,
            ASecondCollective,
        }
        let build = |beside: Beside| {
            let mut g = Graph::default();
            g.max_connections = 4;
            for gpu in 0..5 {
                g.add_gpu(GpuInfo::lone(gpu));
            }
            for gpu in 0..2 {
                g.add_resource(ResourceInfo {
                    gpu: Some(gpu),
                    class: LinkClass::Nvlink,
                    direction: Direction::Out,
                    capacity_bps: 1e9,
                });
            }
            let [link, other_link] = [0, 1].map(|resource| {
                g.add_pattern(vec![Usage {
                    resource,
                    weight: 1.0,
                }])
            });
            let meta = Meta::new(OpKind::Gemm, Phase::Forward);
            let first = g.compute(0, 1e-3, 0.0, 0.0, 0.0, meta);
            // 0.5 ms of latency, then 0.5 MB at 1 GB/s: alone, it ends at 2 ms.
            let all_reduce = meta.op(OpKind::AllReduce);
            let reduce = g.comm(&[0], Axis::Tp as u8, link, 0.5e6, 0.5e-3, all_reduce);
            g.dep(first, reduce);
            // 2 ms of work: 0.5 ms of it done by 2 ms, at half speed.
            let second = g.compute(0, 2e-3, 0.0, 0.0, 0.0, meta);
            if beside == Beside::SendsOnItsLink {
                // GPUs 1 to 4 each send 10 MB on the link from 1.2 ms,
                // while the all-reduce still pays its latency: from 1.5 ms
                // it gets a fifth of the link, and ends at 4 ms.
                for gpu in 1..5 {
                    let before = g.compute(gpu, 1.2e-3, 0.0, 0.0, 0.0, meta);
                    let send = meta.op(OpKind::Send);
                    let send = g.comm(&[gpu], Axis::Pp as u8, link, 1e7, 0.0, send);
                    g.dep(before, send);
                }
            }
            if beside == Beside::ASecondCollective {
                // From 1.2 ms to 4.2 ms, GPU 0 a member, on GPU 1's link.
                let before = g.compute(1, 1.2e-3, 0.0, 0.0, 0.0, meta);
                let gather = meta.op(OpKind::AllGather);
                let gather = g.comm(&[1, 0], Axis::Dp as u8, other_link, 3e6, 0.0, gather);
                g.dep(before, gather);
            }
            g.finish();
            (g, second)
        };
        let tax = Sharing::Tax(0.5);
        let (g, second) = build(Beside::Nothing);
        let fast = run(&g, true, &tax);
        let plain = crate::sim::plain::run(&g, true, &tax);
        for end_s in [fast.end_s[second as usize], plain.end_s[second as usize]] {
            assert!((end_s - 3.5e-3).abs() < 1e-15, "{end_s}");
        }
        assert_eq!(
            (fast.events, fast.planned_events),
            (3, 3),
            "no event superseded"
        );
        // Slowed until 4 ms (1.5 ms of its work done), then 0.5 ms more;
        // slowed until 4.2 ms (1.6 ms done), then 0.4 ms more.
        for (beside, expected_s) in [
            (Beside::SendsOnItsLink, 4.5e-3),
            (Beside::ASecondCollective, 4.6e-3),
        ] {
            let (g, second) = build(beside);
            let fast = run(&g, true, &tax);
            let plain = crate::sim::plain::run(&g, true, &tax);
            for (f, p) in fast.end_s.iter().zip(&plain.end_s) {
                assert!((f - p).abs() < 1e-15, "fast {f} plain {p}");
            }
            let end_s = fast.end_s[second as usize];
            assert!((end_s - expected_s).abs() < 1e-15, "{end_s}");
        }
    }

    /// A collective timed alone from its start (one event) gives what the
    /// network gives it, whether another joins its link during its latency,
    /// while it moves, or only after it ended; so do the link's logs.
    #[test]
    fn a_collective_timed_alone_gives_the_network_times() {
        let sharing = Sharing::Tax(0.0);
        // The collective joins at 0.7 ms (the send still pays its latency),
        // at 2 ms (the send moves, 1 MB of 3 sent), at 5.5 ms (it ended at
        // 4). The link then moves the 4 MB from its first byte on without a
        // pause, at 1 GB/s: the send ends at 4.7, 5 and 4 ms.
        for (compute_s, send_end_s) in [(0.2e-3, 4.7e-3), (1.5e-3, 5e-3), (5e-3, 4e-3)] {
            let g = send_then_collective(compute_s);
            let fast = run(&g, true, &sharing);
            let plain = crate::sim::plain::run(&g, true, &sharing);
            let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
            for t in 0..g.tasks.len() {
                assert!(
                    close(fast.start_s[t], plain.start_s[t]),
                    "{compute_s}: task {t}"
                );
                assert!(
                    close(fast.end_s[t], plain.end_s[t]),
                    "{compute_s}: task {t}"
                );
            }
            assert!(
                close(fast.end_s[0], send_end_s),
                "{compute_s}: {}",
                fast.end_s[0]
            );
            let (f, p) = (&fast.links[0], &plain.links[0]);
            assert!(close(f.busy_s, p.busy_s) && close(f.shared_s, p.shared_s));
            assert!((f.bytes - p.bytes).abs() < 1e-3, "{} {}", f.bytes, p.bytes);
            assert!((f.bytes - 4e6).abs() < 1e-3, "{}", f.bytes);
        }
        // Alone all along, each collective is one event; the compute op one.
        let alone = run(&send_then_collective(5e-3), true, &sharing);
        assert_eq!(alone.events, 3);
    }

    /// Sequence numbers that run out mid-run are numbered again in order:
    /// the timeline is the same bit for bit.
    #[test]
    fn renumbered_sequence_gives_the_same_timeline() {
        let s = presets::scenario("contention").unwrap();
        let g = workload::build(
            &s,
            Fidelity::Reduced,
            0,
            &crate::collective::Libraries::of(&s),
        );
        let sharing = Sharing::of(&s);
        let plain = run_from_seq(&g, true, true, &sharing, 0).charge_here(&g);
        assert!(plain.planned_events > 1000, "enough pushes to run out");
        // The numbers run out halfway through.
        let first_seq = u32::MAX - (plain.planned_events / 2) as u32;
        let wrapped = run_from_seq(&g, true, true, &sharing, first_seq).charge_here(&g);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&plain.start_s), bits(&wrapped.start_s));
        assert_eq!(bits(&plain.end_s), bits(&wrapped.end_s));
        assert_eq!(bits(&plain.exposed_s), bits(&wrapped.exposed_s));
        assert_eq!(plain.step_time_s.to_bits(), wrapped.step_time_s.to_bits());
        assert_eq!(plain.events, wrapped.events);
    }
}
