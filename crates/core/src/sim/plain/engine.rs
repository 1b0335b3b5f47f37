//! The plain event loop, one event per flow: the reference the fast engine
//! (`crate::sim::engine`) is checked against. It re-rates every flow of a changed
//! component one by one, so its cost grows with concurrent flows; only tests
//! and `simulate_plain` run it.
//!
//! Compute and the GPU's collectives share its SMs and HBM as `interference`
//! describes (or, with a v1 `sm_tax`, compute runs at (1 - sm_tax) while a
//! collective of the same GPU runs). Collectives pay their latency, then join
//! the network, whose rates change whenever a flow starts or ends; the
//! memory-bound part of a kernel is a flow on its GPU's HBM there.
//! Events are ordered by time, then by a sequence number, so equal inputs
//! give identical timelines bit for bit.

use crate::model::axis::Axis;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::network::Network;
use crate::sim::engine::result::{GpuStats, RunResult};
use crate::sim::exposure::{Charged, Exposure};
use crate::sim::link_log::LinkLog;
use crate::sim::sm_race;
use crate::workload::graph::interference::{memory_phase_s, NetworkSetup, Sharing, SmUse};
use crate::workload::graph::queues::Streams;
use crate::workload::graph::task::{TaskId, COMPUTE};
use crate::workload::graph::Graph;

const NO_WAIT: u32 = u32::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Latency paid: the bytes start moving.
    LatencyDone,
    /// Compute finished, or the last byte arrived.
    Done,
    /// A collective that lost the SM race to a GEMM's first wave starts
    /// (`sim::sm_race`).
    RaceLost,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Event {
    /// Bit pattern of a non-negative f64: orders like the number.
    time_bits: u64,
    seq: u64,
    task: TaskId,
    version: u32,
    kind: Kind,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest event.
        (other.time_bits, other.seq).cmp(&(self.time_bits, self.seq))
    }
}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

struct GpuState {
    running: Option<TaskId>,
    comm_active: u32,
    /// SMs its collectives in flight hold.
    sms: SmUse,
    /// Speed at which the running op's compute-bound part progresses.
    speed: f64,
    idle_since: f64,
    inflight_count: [u32; Axis::COUNT],
    inflight_total: [f64; Axis::COUNT],
    inflight_last: [f64; Axis::COUNT],
}

impl GpuState {
    fn inflight_at(&self, axis: usize, now: f64) -> f64 {
        let open = if self.inflight_count[axis] > 0 {
            now - self.inflight_last[axis]
        } else {
            0.0
        };
        self.inflight_total[axis] + open
    }
}

#[derive(Clone, Copy, Default)]
struct TaskState {
    /// Compute: full-speed seconds left. Communication: bytes left per member.
    remaining: f64,
    /// When `remaining` was last brought up to date.
    last_update: f64,
    /// Communication: bytes per second per member now.
    rate: f64,
    /// Dependencies not yet finished.
    pending: u32,
    /// Bumped whenever the task's finish is re-planned; stale events are skipped.
    version: u32,
    /// Compute: its memory-bound part is moving through HBM.
    in_memory_phase: bool,
    /// ... as a network flow (it shares HBM with a collective), not timed
    /// alone at the full HBM bandwidth.
    memory_in_network: bool,
}

struct Engine<'g> {
    g: &'g Graph,
    sharing: &'g Sharing,
    setup: NetworkSetup,
    /// Per task, what changes as it runs (one cache line for two tasks).
    st: Vec<TaskState>,
    /// Reused buffer for the flows whose rates a network change touched.
    changed: Vec<TaskId>,
    /// Per compute task, the head of its list of collectives it waited on
    /// (`NO_WAIT` when none): nodes are (next, collective, whether it waited
    /// for the collective's end, rather than only its start in a queue).
    wait_head: Vec<u32>,
    wait_nodes: Vec<(u32, TaskId, bool)>,
    /// Charges idle time to the collectives waited on.
    exposure: Exposure,
    res: RunResult,
    gpu: Vec<GpuState>,
    net: Network,
    /// Records what the links did.
    links: LinkLog,
    heap: BinaryHeap<Event>,
    seq: u64,
    now: f64,
    /// The GPUs' streams and the queues they go through (the SM race).
    streams: Streams,
    /// Collectives ready at this instant that may lose the SM race: they
    /// start once every event of the instant is processed.
    racing: Vec<TaskId>,
}

/// Runs the graph. `record_links` keeps per-link bandwidth samples (the page
/// draws them; the baseline run does not need them).
pub(crate) fn run<'g>(g: &'g Graph, record_links: bool, sharing: &'g Sharing) -> RunResult {
    let n = g.tasks.len();
    let setup = NetworkSetup::new(g, sharing);
    let mut net = Network::new(setup.capacity_bps.clone(), n);
    for p in &setup.patterns {
        net.add_pattern(p.clone());
    }
    // HBM resources follow the links; only the links are logged.
    let links = LinkLog::new(setup.links, record_links);
    let gpus = g.gpus.len();
    let mut e = Engine {
        g,
        sharing,
        setup,
        st: g
            .initial_pending
            .iter()
            .map(|&p| TaskState {
                pending: p,
                ..TaskState::default()
            })
            .collect(),
        changed: Vec::new(),
        wait_head: vec![NO_WAIT; n],
        wait_nodes: Vec::new(),
        exposure: Exposure::new(n),
        res: RunResult {
            start_s: vec![f64::NAN; n],
            end_s: vec![f64::NAN; n],
            exposed_s: vec![0.0; g.members.len()],
            exposed_from_s: vec![f64::INFINITY; g.members.len()],
            needed_s: vec![f64::INFINITY; g.members.len()],
            gpus: vec![GpuStats::default(); gpus],
            links: Vec::new(),
            step_time_s: 0.0,
            // The reference marks no period: a step it runs is extrapolated
            // from three short runs, or simulated whole.
            marks: Vec::new(),
            events: 0,
            planned_events: 0,
        },
        gpu: (0..gpus)
            .map(|_| GpuState {
                running: None,
                comm_active: 0,
                sms: SmUse::default(),
                speed: 1.0,
                idle_since: 0.0,
                inflight_count: [0; Axis::COUNT],
                inflight_total: [0.0; Axis::COUNT],
                inflight_last: [0.0; Axis::COUNT],
            })
            .collect(),
        net,
        links,
        heap: BinaryHeap::with_capacity(1024),
        seq: 0,
        now: 0.0,
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
        // its end start, or lose the race.
        if !e.racing.is_empty()
            && e.heap
                .peek()
                .is_none_or(|ev| f64::from_bits(ev.time_bits) > e.now)
        {
            e.settle_races();
            continue;
        }
        let Some(ev) = e.heap.pop() else {
            break;
        };
        if ev.version != e.st[ev.task as usize].version {
            continue;
        }
        e.now = f64::from_bits(ev.time_bits);
        e.res.events += 1;
        match ev.kind {
            Kind::LatencyDone => e.begin_transfer(ev.task),
            Kind::Done if e.st[ev.task as usize].in_memory_phase => e.memory_done(ev.task),
            Kind::Done => e.complete(ev.task),
            Kind::RaceLost => e.start_now(ev.task),
        }
    }
    let unfinished = e.res.end_s.iter().filter(|t| t.is_nan()).count();
    debug_assert_eq!(unfinished, 0, "task graph has a cycle");
    let step = e.now;
    let last_compute_end: Vec<f64> = e.gpu.iter().map(|s| s.idle_since).collect();
    let (times, mut charged) = Charged::of_run(&mut e.res);
    e.exposure
        .charge_step_end(g, times, &last_compute_end, &mut charged);
    // What each GPU needs is read from the finished run, as the fast engine reads it.
    for gpu in 0..gpus as u32 {
        e.exposure.needs(g, times, gpu, &mut charged);
    }
    e.links.finish(step);
    for (i, st) in e.gpu.iter().enumerate() {
        for a in 0..Axis::COUNT {
            e.res.gpus[i].comm_s[a] = st.inflight_at(a, step);
        }
    }
    e.res.step_time_s = step;
    e.res.links = std::mem::take(&mut e.links.logs);
    e.res
}

impl Engine<'_> {
    fn push(&mut self, at: f64, task: TaskId, kind: Kind) {
        self.seq += 1;
        self.res.planned_events += 1;
        self.heap.push(Event {
            time_bits: at.max(0.0).to_bits(),
            seq: self.seq,
            task,
            version: self.st[task as usize].version,
            kind,
        });
    }

    /// Speed of compute task `t`'s compute-bound part on `gpu` now.
    fn speed(&self, gpu: u32, t: TaskId) -> f64 {
        let st = &self.gpu[gpu as usize];
        self.sharing
            .compute_speed(st.comm_active, &st.sms, self.g.tiles[t as usize])
    }

    /// Task `t` is ready now: it starts, unless it is a collective that may
    /// lose the SM race, which waits for the end of the instant.
    fn start(&mut self, t: TaskId) {
        if sm_race::may_lose(self.g, self.sharing, &self.streams, t) {
            self.racing.push(t);
        } else {
            self.start_now(t);
        }
    }

    /// Every event of the instant is processed: each collective held to its
    /// end starts now, or when the first wave of a GEMM its members started
    /// now drains.
    fn settle_races(&mut self) {
        while !self.racing.is_empty() {
            for t in std::mem::take(&mut self.racing) {
                let now = self.now;
                let at = sm_race::start_s(self.g, self.sharing, t, now, |m| {
                    let running = self.gpu[m as usize].running;
                    running.filter(|&k| self.res.start_s[k as usize] == now)
                });
                if at > now {
                    self.push(at, t, Kind::RaceLost);
                } else {
                    self.start_now(t);
                }
            }
        }
    }

    /// Task `t` starts now.
    fn start_now(&mut self, t: TaskId) {
        self.begin(t);
        // The kernels queued behind it may start now (`queues`); compute
        // among them waited on it, as on a collective it needs done.
        let g = self.g;
        let comm = g.tasks[t as usize].axis != COMPUTE;
        for &s in g.start_successors(t) {
            if comm && g.tasks[s as usize].axis == COMPUTE {
                self.waited_on(s, t, false);
            }
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
            let idle_from = self.gpu[gpu as usize].idle_since;
            if now > idle_from {
                self.attribute_idle(t, gpu, idle_from);
            }
            self.gpu[gpu as usize].running = Some(t);
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
                let st = &mut self.gpu[m as usize];
                if st.inflight_count[axis] == 0 {
                    st.inflight_last[axis] = now;
                }
                st.inflight_count[axis] += 1;
                st.comm_active += 1;
                st.sms.change(task.axis, channels, true);
                if st.comm_active == 1 {
                    self.memory_joins_network(m);
                }
                self.retime_compute(m);
            }
            let latency_s = task.latency_s();
            if latency_s > 0.0 {
                self.push(now + latency_s, t, Kind::LatencyDone);
            } else {
                self.begin_transfer(t);
            }
        }
    }

    /// Compute task `t` starts after the stream stood idle since `from`:
    /// each instant of the idle time is charged to one collective it waited
    /// on or up their chains, or to the bubble (`exposure`).
    fn attribute_idle(&mut self, t: TaskId, gpu: u32, from: f64) {
        let (mut direct, mut behind) = (Vec::new(), Vec::new());
        let mut node = self.wait_head[t as usize];
        while node != NO_WAIT {
            let (next, on, ended) = self.wait_nodes[node as usize];
            node = next;
            if ended { &mut direct } else { &mut behind }.push(on);
        }
        let (times, mut charged) = Charged::of_run(&mut self.res);
        let now = self.now;
        (self.exposure).charge(
            self.g,
            times,
            &direct,
            &behind,
            gpu,
            from,
            now,
            &mut charged,
        );
    }

    /// Compute op `t` waited on collective `on`: for its end (`ended`), or
    /// only for its start, queued behind it.
    fn waited_on(&mut self, t: TaskId, on: TaskId, ended: bool) {
        self.wait_nodes
            .push((self.wait_head[t as usize], on, ended));
        self.wait_head[t as usize] = (self.wait_nodes.len() - 1) as u32;
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
        self.gpu[gpu as usize].speed = speed;
        let now = self.now;
        let ts = &mut self.st[t as usize];
        ts.remaining = (ts.remaining - (now - ts.last_update) * old_speed).max(0.0);
        ts.last_update = now;
        ts.version += 1;
        let remaining = ts.remaining;
        self.push(now + remaining / speed, t, Kind::Done);
    }

    /// Compute task `t` runs `work_s` (full-speed seconds) on the SMs left.
    fn begin_compute_phase(&mut self, t: TaskId, work_s: f64) {
        let now = self.now;
        let gpu = self.g.tasks[t as usize].gpu;
        let speed = self.speed(gpu, t);
        self.gpu[gpu as usize].speed = speed;
        let ts = &mut self.st[t as usize];
        ts.remaining = work_s;
        ts.last_update = now;
        ts.rate = 0.0;
        ts.version += 1;
        self.push(now + work_s / speed, t, Kind::Done);
    }

    /// Compute task `t` first moves its memory-bound bytes through its GPU's
    /// HBM. Alone on HBM (no collective of its GPU in flight) it takes the
    /// full bandwidth, timed without the network; it joins the network when
    /// a collective of its GPU starts.
    fn begin_memory_phase(&mut self, t: TaskId, memory_s: f64) {
        let now = self.now;
        let gpu = self.g.tasks[t as usize].gpu;
        let ts = &mut self.st[t as usize];
        ts.in_memory_phase = true;
        ts.remaining = memory_s;
        ts.last_update = now;
        ts.rate = 0.0;
        ts.version += 1;
        if self.gpu[gpu as usize].comm_active == 0 {
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
        let now = self.now;
        let hbm_bps = self.sharing.modelled().map_or(0.0, |m| m.hbm_bps);
        let ts = &mut self.st[t as usize];
        if !ts.in_memory_phase || ts.memory_in_network {
            return;
        }
        ts.memory_in_network = true;
        let left_s = (ts.remaining - (now - ts.last_update)).max(0.0);
        ts.remaining = left_s * hbm_bps;
        ts.last_update = now;
        ts.rate = 0.0;
        ts.version += 1;
        let pattern = self.setup.kernel_pattern(self.g, gpu);
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        changed.extend_from_slice(self.net.add(t, pattern, 0));
        self.net.observe(now, &mut self.links);
        self.apply_rates(&changed);
        self.changed = changed;
    }

    /// The memory-bound part of compute task `t` is done: it leaves HBM
    /// and runs its compute-bound part.
    fn memory_done(&mut self, t: TaskId) {
        let g = self.g;
        self.st[t as usize].in_memory_phase = false;
        if std::mem::take(&mut self.st[t as usize].memory_in_network) {
            let mut changed = std::mem::take(&mut self.changed);
            changed.clear();
            changed.extend_from_slice(self.net.remove(t));
            self.net.observe(self.now, &mut self.links);
            self.st[t as usize].rate = 0.0;
            self.apply_rates(&changed);
            self.changed = changed;
        }
        let left_s = g.tasks[t as usize].work - memory_phase_s(g, self.sharing, t as usize);
        if left_s > 0.0 {
            self.begin_compute_phase(t, left_s);
        } else {
            self.complete(t);
        }
    }

    fn begin_transfer(&mut self, t: TaskId) {
        let g = self.g;
        let task = &g.tasks[t as usize];
        if task.work <= 0.0 {
            self.complete(t);
            return;
        }
        let ts = &mut self.st[t as usize];
        ts.remaining = task.work;
        ts.last_update = self.now;
        ts.rate = 0.0;
        let mut changed = std::mem::take(&mut self.changed);
        changed.clear();
        changed.extend_from_slice(self.net.add(t, task.pattern, task.axis));
        self.net.observe(self.now, &mut self.links);
        self.apply_rates(&changed);
        self.changed = changed;
    }

    /// Flows whose rate changed: account progress at the old rate, re-plan at the new.
    fn apply_rates(&mut self, changed: &[TaskId]) {
        let now = self.now;
        for &f in changed {
            let ts = &mut self.st[f as usize];
            ts.remaining = (ts.remaining - (now - ts.last_update) * ts.rate).max(0.0);
            ts.last_update = now;
            ts.rate = self.net.rate[f as usize];
            ts.version += 1;
            let (remaining, rate) = (ts.remaining, ts.rate);
            if rate > 0.0 {
                self.push(now + remaining / rate, f, Kind::Done);
            }
        }
    }

    fn complete(&mut self, t: TaskId) {
        let now = self.now;
        let ti = t as usize;
        self.res.end_s[ti] = now;
        self.st[ti].version += 1;
        let g = self.g;
        let task = &g.tasks[ti];
        if task.axis == COMPUTE {
            let gpu = task.gpu as usize;
            let st = &mut self.gpu[gpu];
            st.running = None;
            st.idle_since = now;
            self.res.gpus[gpu].compute_busy_s += now - self.res.start_s[ti];
            self.res.gpus[gpu].end_s = self.res.gpus[gpu].end_s.max(now);
        } else {
            // Zero-byte collectives never joined the network.
            if task.work > 0.0 {
                let mut changed = std::mem::take(&mut self.changed);
                changed.clear();
                changed.extend_from_slice(self.net.remove(t));
                self.net.observe(now, &mut self.links);
                self.st[ti].rate = 0.0;
                self.apply_rates(&changed);
                self.changed = changed;
            }
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
                st.sms.change(task.axis, channels, false);
                self.retime_compute(m);
                self.res.gpus[m as usize].end_s = self.res.gpus[m as usize].end_s.max(now);
            }
        }
        let successors = g.successors(t);
        if task.axis != COMPUTE {
            // Compute that waits on this collective: remember it, so that the
            // compute stream's idle time can be laid against it.
            for &s in successors {
                let st = &g.tasks[s as usize];
                if st.axis == COMPUTE {
                    self.waited_on(s, t, true);
                }
            }
        }
        for &s in successors {
            self.st[s as usize].pending -= 1;
            if self.st[s as usize].pending == 0 {
                self.start(s);
            }
        }
    }
}
