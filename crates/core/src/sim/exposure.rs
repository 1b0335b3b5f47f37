//! Where a GPU's idle time goes (model.md 5 and 6): each instant its
//! compute stream stands idle is charged once, to one axis or to the
//! bubble. The plain reference charges each idle period as the op after it
//! starts; the fast engine charges them all from the finished timeline
//! ([`Uncharged`]). Both through [`Exposure::charge`], so the tests comparing
//! the two check that the finished timeline tells the same idle periods as
//! the running one.
//!
//! An op that starts after the stream stood idle waited on the collectives
//! it depends on, and through them on the chains of collectives they
//! depended on in turn (a pipeline send, then the AllGather of its
//! slices). At each instant of the idle period, of those that were the
//! GPU's own and in flight, the one whose transfer ends last takes the
//! instant, for its axis: the stream could not have gone on before it
//! ended. An op (or a collective) that only queues behind a collective on
//! a shared hardware queue (`workload::graph::queues`) waits for its start, not its
//! end: that collective held nothing once started and is not charged, but
//! what held its start back (the collectives it needed, or the ones it
//! queued behind in turn) is followed as above.
//! An instant none of them was in flight for is bubble: the stream
//! waited on another GPU's work (its compute, or a link the GPU takes no
//! part in, as the sending stage's ReduceScatter at a sliced boundary). So
//! compute + exposed + bubble is the GPU's step exactly, and a GPU's exposed
//! time on an axis never exceeds the time that axis had a collective in
//! flight on it. Time at the end of a GPU's step, after its last compute
//! op, goes the same way: the step ends only when its last collective is
//! done.
//!
//! The same pass records when each GPU first needs each collective's result
//! ([`Exposure::needs`]): the end of the op before the first compute op of
//! that GPU that waits on it, directly or up a chain. The report's windows
//! (model.md 5) end there.

use crate::model::axis::Axis;
use std::ops::Range;

use crate::sim::engine::result::{GpuStats, RunResult};
use crate::workload::graph::task::{TaskId, COMPUTE};
use crate::workload::graph::Graph;

/// Collectives whose ends differ by at most this part of the later end
/// ended together, and the lowest task id among them is the one held up
/// on: the fast engine and the plain reference time the same end with
/// different rounding (a part in 10^15), and must charge the same axis.
const END_TIE: f64 = 1e-9;

/// Where a charge goes.
pub(crate) trait Charges {
    /// `to - from` of idle time charged to entry `slot` of `Graph::members`
    /// (a collective's member): its GPU waited on it.
    fn slot(&mut self, slot: usize, from: f64, to: f64);
    /// `s` of `gpu`'s idle time charged to `axis`.
    fn exposed(&mut self, gpu: u32, axis: usize, s: f64);
    /// `s` of `gpu`'s idle time charged to the bubble.
    fn bubble(&mut self, gpu: u32, s: f64);
    /// Entry `slot` of `Graph::members` is first needed at `at_s` (called
    /// in the order of its GPU's compute stream: the first call is the time).
    fn needed(&mut self, slot: usize, at_s: f64);
}

/// Where charged time goes (fields of the engine's `RunResult`).
pub(crate) struct Charged<'a> {
    /// Per entry of `Graph::members`: idle time charged to that member's collective.
    pub exposed_s: &'a mut [f64],
    /// Per entry of `Graph::members`: when the first charged span began.
    pub exposed_from_s: &'a mut [f64],
    /// Per entry of `Graph::members`: when its GPU first needs the result.
    pub needed_s: &'a mut [f64],
    /// Per GPU: idle time charged to each axis and to the bubble.
    pub gpus: &'a mut [GpuStats],
}

impl<'a> Charged<'a> {
    /// A run's finished tasks' (start, end), and where charges to its
    /// members and GPUs go.
    pub(crate) fn of_run(
        res: &'a mut RunResult,
    ) -> (impl Fn(TaskId) -> (f64, f64) + Copy + 'a, Self) {
        let (start_s, end_s) = (&res.start_s, &res.end_s);
        let charged = Charged {
            exposed_s: &mut res.exposed_s,
            exposed_from_s: &mut res.exposed_from_s,
            needed_s: &mut res.needed_s,
            gpus: &mut res.gpus,
        };
        (
            move |t: TaskId| (start_s[t as usize], end_s[t as usize]),
            charged,
        )
    }
}

impl Charges for Charged<'_> {
    fn slot(&mut self, slot: usize, from: f64, to: f64) {
        self.exposed_s[slot] += to - from;
        let first = &mut self.exposed_from_s[slot];
        *first = first.min(from);
    }

    fn exposed(&mut self, gpu: u32, axis: usize, s: f64) {
        self.gpus[gpu as usize].exposed_s[axis] += s;
    }

    fn bubble(&mut self, gpu: u32, s: f64) {
        self.gpus[gpu as usize].bubble_s += s;
    }

    fn needed(&mut self, slot: usize, at_s: f64) {
        let first = &mut self.needed_s[slot];
        *first = first.min(at_s);
    }
}

/// One GPU's idle time as charged: per axis, and the bubble.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Idle {
    pub exposed_s: [f64; Axis::COUNT],
    pub bubble_s: f64,
}

/// A collective of the GPU in flight during an idle period: the part of
/// the period it covers, its end, its task and its member slot.
#[derive(Clone, Copy)]
struct InFlight {
    from: f64,
    to: f64,
    end: f64,
    task: TaskId,
    slot: usize,
}

/// Reused buffers for charging idle time and finding what each GPU needs.
#[derive(Default)]
pub(crate) struct Exposure {
    /// Per task, the walk (an idle period, or a GPU's needs) that last
    /// visited it as a result waited on (0: none).
    seen: Vec<u32>,
    /// Per task, the idle period's walk that last visited it as a
    /// queue-mate waited on only for its start (0: none).
    seen_queued: Vec<u32>,
    walk: u32,
    /// Tasks to visit, each with whether its result was waited on (not
    /// only its start).
    stack: Vec<(TaskId, bool)>,
    /// The current idle period's candidates, in the order they take time.
    inflight: Vec<InFlight>,
    /// The parts of the current idle period already taken, sorted, disjoint.
    taken: Vec<(f64, f64)>,
    /// Scratch for `taken`'s next state.
    merged: Vec<(f64, f64)>,
}

impl Exposure {
    pub fn new(tasks: usize) -> Self {
        Self {
            seen: vec![0; tasks],
            seen_queued: vec![0; tasks],
            ..Self::default()
        }
    }

    /// The stream of `gpu` stood idle from `from` to `now` waiting on the
    /// collectives `direct` (and whatever else it waited on: the bubble),
    /// and queued behind the collectives `behind` (it could start once they
    /// had started); `times` gives a finished task's start and end. Every
    /// instant of `from..now` is charged once (see the module's doc).
    #[allow(clippy::too_many_arguments)]
    pub fn charge(
        &mut self,
        g: &Graph,
        times: impl Fn(TaskId) -> (f64, f64),
        direct: &[TaskId],
        behind: &[TaskId],
        gpu: u32,
        from: f64,
        now: f64,
        res: &mut impl Charges,
    ) {
        self.walk += 1;
        self.inflight.clear();
        self.stack.clear();
        self.visit_all(direct, true);
        self.visit_all(behind, false);
        while let Some((on, needed)) = self.stack.pop() {
            let (start, end) = times(on);
            // A chain's earlier links ended before this one started: once a
            // link ended before the idle period, so did everything upstream.
            // A queue-mate waited on only for its start held nothing once
            // started (and may still run, its end unknown to the plain
            // reference): only what held its start back is followed.
            if (if needed { end } else { start }) <= from {
                continue;
            }
            let (data, queued) = (g.comm_data_predecessors(on), g.comm_queue_predecessors(on));
            self.visit_all(data, true);
            self.visit_all(queued, false);
            if !needed {
                continue;
            }
            debug_assert!(!end.is_nan(), "a collective waited on has ended");
            let (lo, hi) = (start.max(from), end.min(now));
            // Upstream links of other GPUs are followed, not charged.
            let own = g.members_of(on).iter().position(|&m| m == gpu);
            if let (true, Some(i)) = (hi > lo, own) {
                self.inflight.push(InFlight {
                    from: lo,
                    to: hi,
                    end,
                    task: on,
                    slot: g.tasks[on as usize].members_start as usize + i,
                });
            }
        }
        // The one ending last takes an instant first; ends within END_TIE
        // of one another tie, and the lowest task id goes first.
        self.inflight
            .sort_unstable_by(|a, b| b.end.total_cmp(&a.end).then(a.task.cmp(&b.task)));
        let mut group = 0;
        while group < self.inflight.len() {
            let last = self.inflight[group].end;
            let tied = self.inflight[group..]
                .iter()
                .take_while(|c| c.end >= last - END_TIE * last.abs())
                .count();
            self.inflight[group..group + tied].sort_unstable_by_key(|c| c.task);
            group += tied;
        }
        self.taken.clear();
        let mut charged = 0.0;
        for k in 0..self.inflight.len() {
            let c = self.inflight[k];
            let axis = g.tasks[c.task as usize].axis as usize;
            // The parts of `c.from..c.to` no earlier candidate took.
            let mut cursor = c.from;
            self.merged.clear();
            for &(lo, hi) in &self.taken {
                if hi <= cursor || lo >= c.to {
                    continue;
                }
                if lo > cursor {
                    res.slot(c.slot, cursor, lo);
                    res.exposed(gpu, axis, lo - cursor);
                    charged += lo - cursor;
                }
                cursor = cursor.max(hi);
            }
            if c.to > cursor {
                res.slot(c.slot, cursor, c.to);
                res.exposed(gpu, axis, c.to - cursor);
                charged += c.to - cursor;
            }
            // Taken now: the union of what was and `c`'s part.
            let mut span = (c.from, c.to);
            let mut placed = false;
            for &(lo, hi) in &self.taken {
                if hi < span.0 {
                    self.merged.push((lo, hi));
                } else if lo > span.1 {
                    if !placed {
                        self.merged.push(span);
                        placed = true;
                    }
                    self.merged.push((lo, hi));
                } else {
                    span = (span.0.min(lo), span.1.max(hi));
                }
            }
            if !placed {
                self.merged.push(span);
            }
            std::mem::swap(&mut self.taken, &mut self.merged);
        }
        if now - from > charged {
            res.bubble(gpu, now - from - charged);
        }
    }

    /// Visits `tasks` in the current walk, as results waited on (`needed`)
    /// or as queue-mates waited on for their start, unless visited so.
    fn visit_all(&mut self, tasks: &[TaskId], needed: bool) {
        let seen = if needed {
            &mut self.seen
        } else {
            &mut self.seen_queued
        };
        for &t in tasks {
            if seen[t as usize] != self.walk {
                seen[t as usize] = self.walk;
                self.stack.push((t, needed));
            }
        }
    }

    /// When `gpu` first needs each of its collectives' results: walking its
    /// compute stream in order, each op needs the collectives it waits on
    /// and their chains, from the end of the op before it (the step's
    /// start for the first).
    pub fn needs(
        &mut self,
        g: &Graph,
        times: impl Fn(TaskId) -> (f64, f64),
        gpu: u32,
        res: &mut impl Charges,
    ) {
        self.walk += 1;
        let mut ready_s = 0.0;
        for &t in &g.compute_order[gpu as usize] {
            // Results it needs, not queue-mates it starts behind: a window
            // runs to the first need of the data (model.md section 5).
            self.visit_all(g.collectives_needed_by(t), true);
            while let Some((c, _)) = self.stack.pop() {
                if let Some(i) = g.members_of(c).iter().position(|&m| m == gpu) {
                    res.needed(g.tasks[c as usize].members_start as usize + i, ready_s);
                }
                self.visit_all(g.comm_data_predecessors(c), true);
            }
            ready_s = times(t).1;
        }
    }

    /// The end of the step: each GPU's stream idles from `last_compute_end`
    /// to the end of its last task, waiting on the collectives still in flight.
    pub fn charge_step_end(
        &mut self,
        g: &Graph,
        times: impl Fn(TaskId) -> (f64, f64),
        last_compute_end: &[f64],
        res: &mut Charged,
    ) {
        let mut waiting: Vec<Vec<TaskId>> = vec![Vec::new(); g.gpus.len()];
        for (id, t) in g.tasks.iter().enumerate() {
            if t.axis == COMPUTE {
                continue;
            }
            let end = times(id as TaskId).1;
            for &m in g.members_of(id as TaskId) {
                if end > last_compute_end[m as usize] {
                    waiting[m as usize].push(id as TaskId);
                }
            }
        }
        for (gpu, direct) in waiting.iter().enumerate() {
            let (from, to) = (last_compute_end[gpu], res.gpus[gpu].end_s);
            if to > from {
                self.charge(g, &times, direct, &[], gpu as u32, from, to, res);
            }
        }
    }
}

/// A finished run whose idle time is not charged yet. The fast engine
/// charges it after the run (the plain reference as it goes, and the two
/// are compared): each GPU's compute ops in stream order, one that starts
/// after the stream stood idle since the previous op's end (since the
/// step's start, for the first) charging that idle time as
/// [`Exposure::charge`] does. GPUs apart charge apart:
/// [`Uncharged::charge_share`] charges some of them, on any thread, and
/// [`Uncharged::settle`] gathers the shares and charges what each stream
/// waits for after its last op, as [`Exposure::charge_step_end`] does.
pub(crate) struct Uncharged {
    run: RunResult,
    /// Whether the run recorded (an unrecorded one has nothing to charge).
    record: bool,
}

/// What [`Uncharged::charge_share`] charged on some GPUs.
pub(crate) struct ShareCharges {
    gpus: Range<usize>,
    /// Per member slot charged, in order: (slot, from, to).
    slots: Vec<(u32, f64, f64)>,
    /// Per member slot needed, the first time: (slot, when).
    needed: Vec<(u32, f64)>,
    /// Per GPU of the share: its idle time as charged.
    idle: Vec<Idle>,
    /// Per GPU of the share, per period mark: as `idle`, by the compute
    /// ops that started before the mark.
    at_marks: Vec<Idle>,
    /// Per GPU of the share: when its last compute op ended.
    last_compute_end: Vec<f64>,
}

impl Charges for ShareCharges {
    fn slot(&mut self, slot: usize, from: f64, to: f64) {
        self.slots.push((slot as u32, from, to));
    }

    fn exposed(&mut self, gpu: u32, axis: usize, s: f64) {
        self.idle[gpu as usize - self.gpus.start].exposed_s[axis] += s;
    }

    fn bubble(&mut self, gpu: u32, s: f64) {
        self.idle[gpu as usize - self.gpus.start].bubble_s += s;
    }

    fn needed(&mut self, slot: usize, at_s: f64) {
        self.needed.push((slot as u32, at_s));
    }
}

impl Uncharged {
    pub(crate) fn new(run: RunResult, record: bool) -> Self {
        Self { run, record }
    }

    /// Charges the idle time of `gpus`.
    pub(crate) fn charge_share(&self, g: &Graph, gpus: Range<usize>) -> ShareCharges {
        let res = &self.run;
        let times = |t: TaskId| (res.start_s[t as usize], res.end_s[t as usize]);
        // Each GPU of the share needs each of its member slots once, and
        // most slots are charged in one span: room for that many up front
        // spares the copies and fresh pages of growing by doubling (on 1T
        // with every overlap on, growing these two arrays was a sixth of a
        // run's time).
        let own_slots = if self.record {
            g.members
                .iter()
                .filter(|&&m| gpus.contains(&(m as usize)))
                .count()
        } else {
            0
        };
        let mut out = ShareCharges {
            gpus: gpus.clone(),
            slots: Vec::with_capacity(own_slots),
            needed: Vec::with_capacity(own_slots),
            idle: vec![Idle::default(); gpus.len()],
            at_marks: Vec::with_capacity(gpus.len() * res.marks.len()),
            last_compute_end: Vec::with_capacity(gpus.len()),
        };
        if !self.record {
            return out;
        }
        let mut exposure = Exposure::new(g.tasks.len());
        for gpu in gpus.clone() {
            let local = gpu - gpus.start;
            let mut marks = res.marks.iter().map(|m| m.time_s).peekable();
            let mut idle_since = 0.0;
            for &t in &g.compute_order[gpu] {
                let now = res.start_s[t as usize];
                while marks.next_if(|&mark_s| mark_s <= now).is_some() {
                    out.at_marks.push(out.idle[local]);
                }
                if now > idle_since {
                    let (direct, behind) =
                        (g.collectives_needed_by(t), g.collectives_queued_before(t));
                    let gpu = gpu as u32;
                    exposure.charge(g, times, direct, behind, gpu, idle_since, now, &mut out);
                }
                idle_since = res.end_s[t as usize];
            }
            for _ in marks {
                out.at_marks.push(out.idle[local]);
            }
            out.last_compute_end.push(idle_since);
            exposure.needs(g, times, gpu as u32, &mut out);
        }
        out
    }

    /// The run, its idle time charged: `shares` (in the GPUs' order) hold
    /// every GPU's.
    pub(crate) fn settle(self, g: &Graph, shares: Vec<ShareCharges>) -> RunResult {
        let mut res = self.run;
        if !self.record {
            return res;
        }
        let marks = res.marks.len();
        let mut last_compute_end = Vec::with_capacity(g.gpus.len());
        for share in &shares {
            for (local, gpu) in share.gpus.clone().enumerate() {
                set_idle(&mut res.gpus[gpu], share.idle[local]);
                for (k, mark) in res.marks.iter_mut().enumerate() {
                    set_idle(&mut mark.gpus[gpu], share.at_marks[local * marks + k]);
                }
            }
            last_compute_end.extend_from_slice(&share.last_compute_end);
        }
        assert_eq!(last_compute_end.len(), g.gpus.len(), "every GPU charged");
        let (times, mut charged) = Charged::of_run(&mut res);
        for share in &shares {
            for &(slot, from, to) in &share.slots {
                charged.slot(slot as usize, from, to);
            }
            for &(slot, at_s) in &share.needed {
                charged.needed(slot as usize, at_s);
            }
        }
        Exposure::new(g.tasks.len()).charge_step_end(g, times, &last_compute_end, &mut charged);
        res
    }

    /// The run, its idle time charged on this thread.
    pub(crate) fn charge_here(self, g: &Graph) -> RunResult {
        let all = self.charge_share(g, 0..g.gpus.len());
        self.settle(g, vec![all])
    }
}

/// Sets a GPU's idle time as charged.
fn set_idle(stats: &mut GpuStats, idle: Idle) {
    stats.exposed_s = idle.exposed_s;
    stats.bubble_s = idle.bubble_s;
}

#[cfg(test)]
mod tests {
    use crate::model::axis::Axis;
    use crate::model::link::LinkClass;
    use crate::model::op::{OpKind, Phase};
    use crate::workload::graph::interference::Sharing;
    use crate::workload::graph::{task::Meta, Graph};

    /// GPU 0 computes for 1 ms and sends 1 MB to GPU 1 (1 ms on its link);
    /// GPU 1 gathers the slices over NVLink (1 ms more), then computes.
    /// GPU 1 idles 3 ms: the first while GPU 0 computes (bubble), the
    /// second while the send is in flight (PP), the third while the gather
    /// is (TP): the send is charged although GPU 1's op waited on the gather.
    fn send_then_gather() -> Graph {
        let (mut g, links) =
            Graph::with_test_links(2, &[(0, LinkClass::Network), (1, LinkClass::Nvlink)]);
        let (network, nvlink) = (links[0], links[1]);
        let meta = Meta::new(OpKind::Gemm, Phase::Forward);
        let a = g.compute(0, 1e-3, 0.0, 0.0, 0.0, meta);
        let send = g.comm(&[0, 1], Axis::Pp, network, 1e6, 0.0, meta.op(OpKind::Send));
        g.dep(a, send);
        let gather = g.comm(&[1], Axis::Tp, nvlink, 1e6, 0.0, meta.op(OpKind::AllGather));
        g.dep(send, gather);
        g.block_compute_on(1, gather);
        g.compute(1, 1e-3, 0.0, 0.0, 0.0, meta);
        g.finish();
        g
    }

    /// Charged in shares of GPUs (on threads of their own in a report) or
    /// all at once, a run's idle time comes out the same bit for bit: each
    /// member's charges, each GPU's sums, and the sums at each period mark.
    #[test]
    fn charging_in_shares_equals_charging_at_once() {
        use crate::model::fidelity::Fidelity;
        use crate::workload::graph::interference::Sharing;
        let mut s = crate::input::presets::scenario("didactic").unwrap();
        if let crate::model::scenario::Workload::Transformer(t) = &mut s.workload {
            t.global_batch = 16;
        }
        let g = crate::workload::build(
            &s,
            Fidelity::Reduced,
            0,
            &crate::collective::Libraries::of(&s),
        );
        let sharing = Sharing::of(&s);
        let run = || crate::sim::engine::run_uncharged(&g, true, false, &sharing);
        let whole = run().charge_here(&g);
        let gpus = g.gpus.len();
        assert!(
            gpus >= 2 && whole.marks.len() == 3,
            "{gpus} GPUs, {} marks",
            whole.marks.len()
        );
        for split in 1..gpus {
            let uncharged = run();
            let shares = [0..split, split..gpus].map(|share| uncharged.charge_share(&g, share));
            let parts = uncharged.settle(&g, shares.into());
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&whole.exposed_s),
                bits(&parts.exposed_s),
                "split at {split}"
            );
            assert_eq!(bits(&whole.exposed_from_s), bits(&parts.exposed_from_s));
            assert_eq!(bits(&whole.needed_s), bits(&parts.needed_s));
            let exposed = |r: &crate::sim::engine::RunResult| {
                let idle = |s: &crate::sim::engine::GpuStats| {
                    let mut v = s.exposed_s.to_vec();
                    v.push(s.bubble_s);
                    v
                };
                let mut all: Vec<Vec<f64>> = r.gpus.iter().map(idle).collect();
                for mark in &r.marks {
                    all.extend(mark.gpus.iter().map(idle));
                }
                all.iter()
                    .flatten()
                    .map(|x| x.to_bits())
                    .collect::<Vec<_>>()
            };
            assert_eq!(exposed(&whole), exposed(&parts), "split at {split}");
        }
        // Not vacuous: time is charged, and a mark sees less than the end.
        let total = |r: &crate::sim::engine::RunResult| {
            r.gpus.iter().flat_map(|s| s.exposed_s).sum::<f64>()
        };
        let at_first_mark: f64 = whole.marks[0].gpus.iter().flat_map(|s| s.exposed_s).sum();
        assert!(at_first_mark > 0.0 && at_first_mark < total(&whole));
    }

    #[test]
    fn idle_time_goes_to_the_axis_in_flight_along_a_chain() {
        let g = send_then_gather();
        for run in [
            crate::sim::engine::run(&g, true, &Sharing::Tax(0.0)),
            crate::sim::plain::run(&g, true, &Sharing::Tax(0.0)),
        ] {
            let exposed = run.gpus[1].exposed_s;
            assert!(
                (exposed[Axis::Pp.index()] - 1e-3).abs() < 1e-12,
                "{exposed:?}"
            );
            assert!(
                (exposed[Axis::Tp.index()] - 1e-3).abs() < 1e-12,
                "{exposed:?}"
            );
            assert_eq!(exposed[Axis::Dp.index()], 0.0);
            // The first millisecond it waited on GPU 0's compute.
            assert!(
                (run.gpus[1].bubble_s - 1e-3).abs() < 1e-12,
                "{:?}",
                run.gpus[1]
            );
            // GPU 1's op needs the gather, and through it the send, from the start.
            assert_eq!(&run.needed_s[..], &[f64::INFINITY, 0.0, 0.0]);
        }
    }

    /// GPU 0 computes 1 ms, then reduces over the network (DP, 3 ms) and
    /// sends over NVLink (TP, 2 ms), both launched as its compute ends; its
    /// next op waits on both. Its 3 ms of idle time are charged once: all
    /// to DP, the one whose transfer ends last, though TP was in flight
    /// for two of them (before, each axis got its own in-flight time).
    #[test]
    fn an_idle_instant_is_charged_once_to_the_collective_ending_last() {
        let (mut g, links) =
            Graph::with_test_links(1, &[(0, LinkClass::Network), (0, LinkClass::Nvlink)]);
        let (network, nvlink) = (links[0], links[1]);
        let meta = Meta::new(OpKind::Gemm, Phase::Forward);
        let a = g.compute(0, 1e-3, 0.0, 0.0, 0.0, meta);
        let dp = g.comm(
            &[0],
            Axis::Dp,
            network,
            3e6,
            0.0,
            meta.op(OpKind::AllReduce),
        );
        let tp = g.comm(&[0], Axis::Tp, nvlink, 2e6, 0.0, meta.op(OpKind::AllReduce));
        for c in [dp, tp] {
            g.dep(a, c);
            g.block_compute_on(0, c);
        }
        g.compute(0, 1e-3, 0.0, 0.0, 0.0, meta);
        g.finish();
        let sharing = Sharing::Tax(0.0);
        for run in [crate::sim::engine::run, crate::sim::plain::run].map(|r| r(&g, true, &sharing))
        {
            let stats = &run.gpus[0];
            assert!(
                (stats.exposed_s[Axis::Dp.index()] - 3e-3).abs() < 1e-12,
                "{stats:?}"
            );
            assert_eq!(stats.exposed_s[Axis::Tp.index()], 0.0, "{stats:?}");
            assert_eq!(stats.bubble_s, 0.0);
            let idle: f64 = stats.exposed_s.iter().sum::<f64>() + stats.bubble_s;
            assert!((stats.compute_busy_s + idle - run.step_time_s).abs() < 1e-12);
        }
    }

    #[test]
    fn communication_after_the_last_compute_op_is_exposed() {
        let g = send_then_gather();
        let run = crate::sim::engine::run(&g, true, &Sharing::Tax(0.0));
        // GPU 0's step ends when its send is delivered, 1 ms after its compute.
        let exposed = run.gpus[0].exposed_s;
        assert!(
            (exposed[Axis::Pp.index()] - 1e-3).abs() < 1e-12,
            "{exposed:?}"
        );
    }
}
