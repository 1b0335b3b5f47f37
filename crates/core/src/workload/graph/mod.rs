//! The step as a graph of tasks: compute ops that run one at a time on a
//! GPU's compute stream, and collectives that move bytes over link resources.
//! Workloads build it; the engine runs it. Dependencies carry every ordering:
//! a stream's FIFO, a blocking collective, a pipeline receive.

pub(crate) mod cluster;
pub mod interference;
pub(crate) mod queues;
pub(crate) mod recycle;
pub mod task;

use crate::model::axis::Axis;
use crate::model::op::Phase;
use crate::workload::graph::task::{
    alone_rate, CallUse, GpuInfo, Meta, Placed, ResourceInfo, RunsOn, Task, TaskId, TaskMeta,
    Usage, COMPUTE,
};

/// `Graph::windows` of a task without a window (no compute index is this large).
const NO_WINDOW: (u32, u32) = (u32::MAX, u32::MAX);

pub(crate) struct Graph {
    pub tasks: Vec<Task>,
    /// Per task, what the timeline shows of it; empty in a graph built for
    /// the figures alone (`with_meta` false), which never reads it.
    pub meta: Vec<TaskMeta>,
    /// Whether the builder keeps `meta`.
    pub with_meta: bool,
    /// Per task: a collective's window, the compute that can hide it, as
    /// indices into its owner's compute order (inclusive); [`NO_WINDOW`]
    /// when none. The figures read it (`Graph::window`): a pair per task,
    /// a third of a `TaskMeta`.
    windows: Vec<(u32, u32)>,
    pub members: Vec<u32>,
    /// (from, to): `to` waits for `from`. Emptied by `finish`.
    edges: Vec<(TaskId, TaskId)>,
    /// (from, to): `to` may start once `from` has started (a hardware
    /// queue's order, `queues`). Emptied by `finish`.
    start_edges: Vec<(TaskId, TaskId)>,
    /// Edges between collectives that exposure does not follow
    /// (`dep_unchained`), sorted by `finish`. Emptied by `finish`.
    unchained: Vec<(TaskId, TaskId)>,
    /// Successors of task i: `succ[succ_start[i]..succ_start[i + 1]]` (built by `finish`).
    succ_start: Vec<u32>,
    succ: Vec<TaskId>,
    /// Tasks that wait for task i to start:
    /// `start_succ[start_succ_start[i]..start_succ_start[i + 1]]` (built by `finish`).
    start_succ_start: Vec<u32>,
    start_succ: Vec<TaskId>,
    /// Collectives each collective waits for: `comm_pred[comm_pred_start[i]..comm_pred_start[i + 1]]`
    /// (built by `finish`; exposure follows chains of them).
    comm_pred_start: Vec<u32>,
    comm_pred: Vec<TaskId>,
    /// Collectives each compute op waits for, laid out as `comm_pred`
    /// (built by `finish`; exposure charges idle time to them).
    waited_start: Vec<u32>,
    waited: Vec<TaskId>,
    /// Where each task's entries of `comm_pred` and `waited` that wait for a
    /// result (an end) stop: they come first, before those that only wait
    /// for a queue-mate to start, which are not data a task needs (windows)
    /// and hold it only until they start (exposure).
    comm_pred_data_end: Vec<u32>,
    waited_data_end: Vec<u32>,
    /// Dependencies of each task (built by `finish`).
    pub initial_pending: Vec<u32>,
    pub gpus: Vec<GpuInfo>,
    /// Per GPU, its compute tasks in stream order.
    pub compute_order: Vec<Vec<TaskId>>,
    pub resources: Vec<ResourceInfo>,
    pub patterns: Vec<Vec<Usage>>,
    /// Per pattern: HBM bytes each member moves per link byte on top of the
    /// collective's own (`interference`): the pointwise work fused into it.
    pub fused_hbm_per_link_byte: Vec<f64>,
    /// Per pattern: HBM bytes the collective itself moves per link byte
    /// (its call's, `CollectiveCall::hbm_bytes_per_link_byte`).
    pub call_hbm_per_link_byte: Vec<f64>,
    /// Per task: the NCCL channels (SMs) a collective's call holds; 0 for compute.
    pub channels: Vec<u8>,
    /// Per task: output tiles of a compute op's longest compute-bound GEMM
    /// (`OpCost::tiles`); 0 for an op without one and for communication.
    pub tiles: Vec<u32>,
    /// Each distinct pattern once: equal patterns share an id, so that their
    /// flows share one class in the engine (max-min gives them one rate).
    /// Looked up once per collective built: with the standard library's
    /// SipHash this was 7.6% of the 1T step's instructions with every
    /// overlap on (cachegrind), hence rustc's Fx hash (no untrusted keys).
    pattern_ids: rustc_hash::FxHashMap<Vec<(u32, u64)>, u32>,
    /// Compute waits for these before its next op (blocking sends, blocking collectives).
    pending_blockers: Vec<Vec<TaskId>>,
    pub peak_tflops: f64,
    pub hbm_gbps: f64,
    /// Per GPU: FLOPs of the model (recomputation not counted) and FLOPs executed.
    pub flops: Vec<(f64, f64)>,
    /// Builders stop adding ops (layer by layer) once the graph holds more
    /// than this: counting a step that is over budget must stay cheap.
    pub cap_ops: usize,
    /// Hardware work queues per GPU (`queues`).
    pub max_connections: u32,
    /// Collectives their GPUs launch before the step's first compute op
    /// though they wait for none (`Graph::launch_first`), in launch order.
    launched_first: Vec<TaskId>,
    /// Three tasks whose ends mark off two whole periods of the steady state
    /// (`steady_state`): the same task of three consecutive units of
    /// micro-batches. Empty when the builder marks none.
    pub period_marks: Vec<TaskId>,
    /// Per GPU: the FLOPs (model, executed) one unit of micro-batches adds
    /// past the pipeline's fill, when `period_marks` are set.
    pub unit_flops: Vec<(f64, f64)>,
    /// The libraries that run the step's collectives (`Cluster` asks them).
    pub libraries: crate::collective::Libraries,
}

impl Default for Graph {
    fn default() -> Self {
        Self {
            tasks: Vec::new(),
            meta: Vec::new(),
            with_meta: true,
            windows: Vec::new(),
            members: Vec::new(),
            edges: Vec::new(),
            start_edges: Vec::new(),
            unchained: Vec::new(),
            succ_start: Vec::new(),
            succ: Vec::new(),
            start_succ_start: Vec::new(),
            start_succ: Vec::new(),
            comm_pred_start: Vec::new(),
            comm_pred: Vec::new(),
            waited_start: Vec::new(),
            waited: Vec::new(),
            comm_pred_data_end: Vec::new(),
            waited_data_end: Vec::new(),
            initial_pending: Vec::new(),
            gpus: Vec::new(),
            compute_order: Vec::new(),
            resources: Vec::new(),
            patterns: Vec::new(),
            fused_hbm_per_link_byte: Vec::new(),
            call_hbm_per_link_byte: Vec::new(),
            channels: Vec::new(),
            tiles: Vec::new(),
            pattern_ids: Default::default(),
            pending_blockers: Vec::new(),
            peak_tflops: 0.0,
            hbm_gbps: 0.0,
            flops: Vec::new(),
            cap_ops: usize::MAX,
            max_connections: crate::model::hardware::DEFAULT_MAX_CONNECTIONS,
            launched_first: Vec::new(),
            period_marks: Vec::new(),
            unit_flops: Vec::new(),
            libraries: Default::default(),
        }
    }
}

impl Graph {
    /// Whether the builder has passed `cap_ops` (the graph is then incomplete).
    pub fn over_cap(&self) -> bool {
        self.tasks.len() > self.cap_ops
    }

    /// Room for about `ops` tasks, so that building a large step does not
    /// copy its arrays over and over as they grow. On a graph with no task
    /// yet, the room is taken from what the thread's previous run left
    /// (`recycle`).
    pub fn reserve(&mut self, ops: usize) {
        if ops > 0 && self.tasks.is_empty() {
            self.tasks = recycle::with_capacity(ops);
            self.windows = recycle::with_capacity(ops);
            if self.with_meta {
                self.meta = recycle::with_capacity(ops);
            }
        }
        self.tasks.reserve(ops);
        self.windows.reserve(ops);
        if self.with_meta {
            self.meta.reserve(ops);
        }
        self.edges.reserve(ops * 2);
    }

    pub fn add_gpu(&mut self, info: GpuInfo) -> u32 {
        self.gpus.push(info);
        self.compute_order.push(Vec::new());
        self.pending_blockers.push(Vec::new());
        self.flops.push((0.0, 0.0));
        self.unit_flops.push((0.0, 0.0));
        (self.gpus.len() - 1) as u32
    }

    pub fn add_resource(&mut self, info: ResourceInfo) -> u32 {
        self.resources.push(info);
        (self.resources.len() - 1) as u32
    }

    /// Registers a link usage pattern, or finds the equal one registered before.
    pub fn add_pattern(&mut self, usage: Vec<Usage>) -> u32 {
        self.add_fused_pattern(usage, 0.0)
    }

    /// Registers a pattern whose members also move `hbm_per_link_byte` HBM
    /// bytes per link byte for work fused into the collective, or finds the
    /// equal one registered before.
    pub fn add_fused_pattern(&mut self, usage: Vec<Usage>, hbm_per_link_byte: f64) -> u32 {
        self.add_call_pattern(usage, hbm_per_link_byte, 0.0)
    }

    /// Registers a pattern as `add_fused_pattern` does, for a call that
    /// itself moves `call_hbm` HBM bytes per link byte (0: not yet known).
    pub fn add_call_pattern(&mut self, usage: Vec<Usage>, fused_hbm: f64, call_hbm: f64) -> u32 {
        let mut key: Vec<(u32, u64)> = usage
            .iter()
            .map(|u| (u.resource, u.weight.to_bits()))
            .collect();
        if fused_hbm != 0.0 {
            key.push((u32::MAX, fused_hbm.to_bits()));
        }
        if call_hbm != 0.0 {
            key.push((u32::MAX - 1, call_hbm.to_bits()));
        }
        let next = self.patterns.len() as u32;
        let id = *self.pattern_ids.entry(key).or_insert(next);
        if id == next {
            self.patterns.push(usage);
            self.fused_hbm_per_link_byte.push(fused_hbm);
            self.call_hbm_per_link_byte.push(call_hbm);
        }
        id
    }

    /// Pattern `pattern` for a call moving `call_hbm` HBM bytes per link byte.
    fn with_call_hbm(&mut self, pattern: u32, call_hbm: f64) -> u32 {
        let p = pattern as usize;
        if self.call_hbm_per_link_byte[p] == call_hbm {
            return pattern;
        }
        let usage = self.patterns[p].clone();
        self.add_call_pattern(usage, self.fused_hbm_per_link_byte[p], call_hbm)
    }

    pub fn dep(&mut self, from: TaskId, to: TaskId) {
        self.edges.push((from, to));
    }

    /// `to` waits for `from`, but idle time spent waiting on `to` is not
    /// charged along this edge to `from` (`sim::exposure` follows chains of
    /// collectives). For a collective whose members wait on `from` directly
    /// where it is their own, and where it is not, wait only for another
    /// GPU to be done, not for traffic of their own.
    pub fn dep_unchained(&mut self, from: TaskId, to: TaskId) {
        self.edges.push((from, to));
        self.unchained.push((from, to));
    }

    /// Part of a compute op's FLOPs that is recomputation (selective recompute).
    pub fn count_as_recompute(&mut self, gpu: u32, flops: f64) {
        self.flops[gpu as usize].0 -= flops;
    }

    /// Index the next compute task of `gpu` will have in its stream.
    pub fn next_compute_index(&self, gpu: u32) -> u32 {
        self.compute_order[gpu as usize].len() as u32
    }

    pub fn last_compute(&self, gpu: u32) -> Option<TaskId> {
        self.compute_order[gpu as usize].last().copied()
    }

    /// Collective `task` is launched by its members' host threads before
    /// their step's first compute op, though it waits for none of them (a
    /// gather issued as the step starts): it takes that place in their
    /// hardware queues (`queues`), after those marked before it. A
    /// collective that waits for no compute op and is not marked takes no
    /// place there (the receiving end of a pipeline send, launched by the
    /// sender).
    pub fn launch_first(&mut self, task: TaskId) {
        self.launched_first.push(task);
    }

    /// What the next compute op of `gpu` will wait for, so far.
    pub fn blockers_of(&self, gpu: u32) -> &[TaskId] {
        &self.pending_blockers[gpu as usize]
    }

    /// The next compute op of `gpu` will wait for `task`.
    pub fn block_compute_on(&mut self, gpu: u32, task: TaskId) {
        self.pending_blockers[gpu as usize].push(task);
    }

    /// Appends a compute op to `gpu`'s stream: it follows the previous op and
    /// anything that blocks the stream. `memory_s` of its `time_s` is
    /// memory-bound; `tiles` are its longest GEMM's output tiles.
    pub fn compute(
        &mut self,
        gpu: u32,
        time_s: f64,
        memory_s: f64,
        tiles: f64,
        flops: f64,
        meta: Meta,
    ) -> TaskId {
        let id = self.tasks.len() as TaskId;
        let counted = &mut self.flops[gpu as usize];
        counted.1 += flops;
        if meta.phase != Phase::Recompute {
            counted.0 += flops;
        }
        self.tasks.push(Task::compute(gpu, time_s, memory_s));
        self.windows.push(NO_WINDOW);
        self.channels.push(0);
        // Whole tiles: the count is a product of ceilings, far below u32's range.
        self.tiles.push(tiles as u32);
        if self.with_meta {
            self.meta.push(TaskMeta::new(meta, flops));
        }
        if let Some(prev) = self.last_compute(gpu) {
            self.dep(prev, id);
        }
        for b in self.pending_blockers[gpu as usize].drain(..) {
            self.edges.push((b, id));
        }
        self.compute_order[gpu as usize].push(id);
        id
    }

    /// A collective laid out on the cluster's links ([`Placed`]): its
    /// pattern, bytes and latency, and its kernel in `meta`.
    pub fn placed_comm(&mut self, members: &[u32], axis: Axis, c: Placed, meta: Meta) -> TaskId {
        self.comm(
            members,
            axis,
            c.pattern,
            c.bytes,
            c.latency_s,
            Meta {
                call: Some(c.call),
                kernel: c.kernel,
                ..meta
            },
        )
    }

    /// Adds a collective among `members` (simulated GPUs; the first owns it).
    #[allow(clippy::too_many_arguments)]
    pub fn comm(
        &mut self,
        members: &[u32],
        axis: Axis,
        pattern: u32,
        bytes: f64,
        latency_s: f64,
        meta: Meta,
    ) -> TaskId {
        let id = self.tasks.len() as TaskId;
        let start = self.members.len() as u32;
        self.members.extend_from_slice(members);
        let call = meta.call.unwrap_or_else(|| CallUse::of_op(meta.op));
        let pattern = self.with_call_hbm(pattern, call.hbm_per_link_byte);
        self.channels.push(call.channels);
        self.tiles.push(0);
        // The task packs its lane's axis into one byte (`Task::axis`).
        self.tasks.push(Task::comm(
            axis as u8,
            pattern,
            bytes,
            latency_s,
            members[0],
            (start, members.len() as u16),
        ));
        self.windows.push(NO_WINDOW);
        if self.with_meta {
            self.meta.push(TaskMeta::new(meta, 0.0));
        }
        id
    }

    /// Collective `task` moves its bytes on copy engines: it takes no SM.
    pub fn on_copy_engines(&mut self, task: TaskId) {
        debug_assert!(self.tasks[task as usize].axis != COMPUTE);
        self.tasks[task as usize].runs_on = RunsOn::CopyEngine;
    }

    /// Seconds of compute task `task` (at full HBM bandwidth) that are
    /// memory-bound kernels (zero for communication).
    pub fn memory_s(&self, task: TaskId) -> f64 {
        self.tasks[task as usize].memory_s()
    }

    /// Turns the edge list into successor lists (one flat array) and
    /// dependency counts, and frees the edge list.
    pub fn finish(&mut self) {
        let queued = crate::workload::graph::queues::queue_edges(
            &self.tasks,
            &self.members,
            &self.compute_order,
            &self.edges,
            &std::mem::take(&mut self.launched_first),
            self.max_connections,
        );
        self.start_edges.extend(queued);
        let n = self.tasks.len();
        let mut pending = vec![0u32; n];
        let (start, succ) = successor_lists(n, &self.edges, &mut pending);
        // A queue per stream (the default) adds no start edges: no offsets
        // are kept then (on the 1T step they would be 12 MB of zeros).
        let (start_start, start_succ) = if self.start_edges.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            successor_lists(n, &self.start_edges, &mut pending)
        };
        self.unchained.sort_unstable();
        let unchained = std::mem::take(&mut self.unchained);
        let is_comm = |t: TaskId| self.tasks[t as usize].axis != COMPUTE;
        /// What exposure makes of an edge.
        enum Follows {
            /// A link of a chain of collectives (`comm_pred`).
            Chain,
            /// A compute op waiting on a collective (`waited`).
            Wait,
            Neither,
        }
        // A task that waits for a collective to start (queue order) waits,
        // through it, on what holds that collective back: exposure follows
        // it as it follows a wait for its end.
        let follows = |from: TaskId, to: TaskId| match (is_comm(from), is_comm(to)) {
            (true, true) if unchained.binary_search(&(from, to)).is_err() => Follows::Chain,
            (true, false) => Follows::Wait,
            _ => Follows::Neither,
        };
        let all_edges = || self.edges.iter().chain(&self.start_edges);
        let (mut pred_start, mut waited_start) = (vec![0u32; n + 1], vec![0u32; n + 1]);
        for &(from, to) in all_edges() {
            match follows(from, to) {
                Follows::Chain => pred_start[to as usize + 1] += 1,
                Follows::Wait => waited_start[to as usize + 1] += 1,
                Follows::Neither => {}
            }
        }
        for i in 0..n {
            pred_start[i + 1] += pred_start[i];
            waited_start[i + 1] += waited_start[i];
        }
        let (mut pred_fill, mut waited_fill) = (pred_start.clone(), waited_start.clone());
        let mut pred = vec![0; pred_start[n] as usize];
        let mut waited = vec![0; waited_start[n] as usize];
        // Ends first, then starts: each task's list holds its data
        // dependencies ahead of its queue-order ones.
        let mut data_end = (Vec::new(), Vec::new());
        for (i, &(from, to)) in all_edges().enumerate() {
            if i == self.edges.len() {
                data_end = (pred_fill.clone(), waited_fill.clone());
            }
            let (list, fill) = match follows(from, to) {
                Follows::Chain => (&mut pred, &mut pred_fill),
                Follows::Wait => (&mut waited, &mut waited_fill),
                Follows::Neither => continue,
            };
            list[fill[to as usize] as usize] = from;
            fill[to as usize] += 1;
        }
        if self.start_edges.is_empty() {
            data_end = (pred_fill, waited_fill);
        }
        (self.comm_pred_data_end, self.waited_data_end) = data_end;
        self.comm_pred_start = pred_start;
        self.comm_pred = pred;
        self.waited_start = waited_start;
        self.waited = waited;
        // Freed, not kept: they would sit idle through the run, at its peak.
        self.edges = Vec::new();
        self.start_edges = Vec::new();
        self.succ_start = start;
        self.succ = succ;
        self.start_succ_start = start_start;
        self.start_succ = start_succ;
        self.initial_pending = pending;
    }

    /// Frees the dependency arrays once the engine has run: the timeline
    /// and the report do not read them, and the step's peak memory is reached
    /// while the timeline is built.
    pub fn release_dependencies(&mut self) {
        self.succ = Vec::new();
        self.succ_start = Vec::new();
        self.start_succ = Vec::new();
        self.start_succ_start = Vec::new();
        self.comm_pred = Vec::new();
        self.comm_pred_start = Vec::new();
        self.waited = Vec::new();
        self.waited_start = Vec::new();
        self.comm_pred_data_end = Vec::new();
        self.waited_data_end = Vec::new();
        self.initial_pending = Vec::new();
        self.pattern_ids = Default::default();
    }

    /// Frees the graph, keeping its large arrays for the thread's next run
    /// (`recycle`).
    pub fn recycle(mut self) {
        self.release_dependencies();
        recycle::give(std::mem::take(&mut self.tasks));
        recycle::give(std::mem::take(&mut self.windows));
        recycle::give(std::mem::take(&mut self.meta));
    }

    /// Collective `task`'s window: the compute that can hide it, as indices
    /// into its owner's compute order (inclusive), if it has one.
    pub fn window(&self, task: TaskId) -> Option<(u32, u32)> {
        let window = self.windows[task as usize];
        (window != NO_WINDOW).then_some(window)
    }

    /// Gives collective `task` the window from compute `first` to `last` of
    /// its owner's compute order (inclusive).
    pub fn set_window(&mut self, task: TaskId, first: u32, last: u32) {
        self.windows[task as usize] = (first, last);
    }

    pub fn successors(&self, task: TaskId) -> &[TaskId] {
        let i = task as usize;
        &self.succ[self.succ_start[i] as usize..self.succ_start[i + 1] as usize]
    }

    /// The tasks that wait for `task` to start (the next kernels of its
    /// hardware queue, `queues`).
    pub fn start_successors(&self, task: TaskId) -> &[TaskId] {
        // None kept without start edges (`finish`).
        if self.start_succ.is_empty() {
            return &[];
        }
        let i = task as usize;
        &self.start_succ[self.start_succ_start[i] as usize..self.start_succ_start[i + 1] as usize]
    }

    /// Bytes per second per member a collective of `pattern` gets alone on its links.
    pub fn alone_rate_bps(&self, pattern: u32) -> f64 {
        alone_rate(&self.patterns[pattern as usize], |r| {
            self.resources[r as usize].capacity_bps
        })
    }

    /// The collectives whose results collective `task` needs: its
    /// predecessors less those it only queues behind (their start).
    pub fn comm_data_predecessors(&self, task: TaskId) -> &[TaskId] {
        let i = task as usize;
        &self.comm_pred[self.comm_pred_start[i] as usize..self.comm_pred_data_end[i] as usize]
    }

    /// The collectives collective `task` only queues behind: it may start
    /// once they have started (`queues`).
    pub fn comm_queue_predecessors(&self, task: TaskId) -> &[TaskId] {
        let i = task as usize;
        &self.comm_pred[self.comm_pred_data_end[i] as usize..self.comm_pred_start[i + 1] as usize]
    }

    /// The collectives whose results compute op `task` needs: those it
    /// waits on less those it only queues behind (their start).
    pub fn collectives_needed_by(&self, task: TaskId) -> &[TaskId] {
        let i = task as usize;
        &self.waited[self.waited_start[i] as usize..self.waited_data_end[i] as usize]
    }

    /// The collectives compute op `task` only queues behind: it may start
    /// once they have started (`queues`).
    pub fn collectives_queued_before(&self, task: TaskId) -> &[TaskId] {
        let i = task as usize;
        &self.waited[self.waited_data_end[i] as usize..self.waited_start[i + 1] as usize]
    }

    pub fn members_of(&self, task: TaskId) -> &[u32] {
        let t = &self.tasks[task as usize];
        &self.members
            [t.members_start as usize..(t.members_start as usize + usize::from(t.members_len))]
    }
}

/// Successor lists of `edges` over `n` tasks as one flat array and its
/// offsets; each edge's target counts one more dependency in `pending`.
fn successor_lists(
    n: usize,
    edges: &[(TaskId, TaskId)],
    pending: &mut [u32],
) -> (Vec<u32>, Vec<TaskId>) {
    let mut start = vec![0u32; n + 1];
    for &(from, to) in edges {
        start[from as usize + 1] += 1;
        pending[to as usize] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut succ = vec![0; edges.len()];
    for &(from, to) in edges {
        succ[fill[from as usize] as usize] = to;
        fill[from as usize] += 1;
    }
    (start, succ)
}

#[cfg(test)]
impl Graph {
    /// For tests: `gpus` lone GPUs, and per `(gpu, class)` of `links` an
    /// outgoing 1 GB/s link of that GPU with a pattern on it alone (the
    /// patterns' ids, in order).
    pub(crate) fn with_test_links(
        gpus: u32,
        links: &[(usize, crate::model::link::LinkClass)],
    ) -> (Graph, Vec<u32>) {
        let mut g = Graph::default();
        for rank in 0..gpus {
            g.add_gpu(GpuInfo::lone(rank));
        }
        let patterns = links
            .iter()
            .map(|&(gpu, class)| {
                let resource = g.add_resource(ResourceInfo {
                    gpu: Some(gpu),
                    class,
                    direction: crate::model::link::Direction::Out,
                    capacity_bps: 1e9,
                });
                g.add_pattern(vec![Usage {
                    resource,
                    weight: 1.0,
                }])
            })
            .collect();
        (g, patterns)
    }
}
