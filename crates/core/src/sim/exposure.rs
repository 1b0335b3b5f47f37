//! Exposed communication (model.md 5 and 6): idle time of a GPU's compute
//! stream charged to the axes whose transfers held it up. The plain
//! reference charges each idle period as the op after it starts; the fast
//! engine charges them all from the finished timeline ([`Uncharged`]).
//! Both through [`Exposure::charge`], so the tests comparing the two check
//! that the finished timeline tells the same idle periods as the running one.
//!
//! A compute op that starts after the stream stood idle charges that idle
//! time to the collectives it waited on, and through them to the chain of
//! collectives they waited on in turn (a pipeline send, then the AllGather
//! of its slices): each idle instant goes to the axis whose transfer was in
//! flight at that instant, not to the last link of the chain. Only the
//! GPU's own collectives are charged: while a link it takes no part in is
//! in flight (the sending stage's ReduceScatter at a sliced boundary), the
//! GPU waits on another GPU's work, which is bubble to it, as waiting on
//! that GPU's compute is. So a GPU's exposed time on an axis never exceeds
//! the time that axis had a collective in flight on it, and `hidden` stays
//! a share of its own communication. Time at the end of a GPU's step, after
//! its last compute op, goes to the collectives still in flight: the step
//! ends only when they are done.

use std::ops::Range;

use crate::sim::engine::{GpuStats, RunResult};
use crate::workload::graph::{Graph, TaskId, COMPUTE};

/// Where a charge goes.
pub(crate) trait Charges {
    /// `to - from` of idle time charged to entry `slot` of `Graph::members`
    /// (a collective's member).
    fn slot(&mut self, slot: usize, from: f64, to: f64);
    /// The idle time charged to each axis on `gpu` so far.
    fn gpu(&mut self, gpu: u32) -> &mut [f64; 3];
}

/// Where charged time goes (fields of the engine's `RunResult`).
pub(crate) struct Charged<'a> {
    /// Per entry of `Graph::members`: idle time charged to that member's collective.
    pub exposed_s: &'a mut [f64],
    /// Per entry of `Graph::members`: when the first charged span began.
    pub exposed_from_s: &'a mut [f64],
    /// Per GPU: idle time charged to each axis.
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

    fn gpu(&mut self, gpu: u32) -> &mut [f64; 3] {
        &mut self.gpus[gpu as usize].exposed_s
    }
}

/// Reused buffers for charging idle time.
#[derive(Default)]
pub(crate) struct Exposure {
    /// Per axis, the spans charged to it by the current idle period.
    spans: [Vec<(f64, f64)>; 3],
    /// Per task, the idle period that last visited it (0: none).
    seen: Vec<u32>,
    period: u32,
    stack: Vec<TaskId>,
}

impl Exposure {
    pub fn new(tasks: usize) -> Self {
        Self {
            seen: vec![0; tasks],
            ..Self::default()
        }
    }

    /// The stream of `gpu` stood idle from `from` to `now` waiting on the
    /// collectives `direct`; `times` gives a finished task's start and end.
    #[allow(clippy::too_many_arguments)]
    pub fn charge(
        &mut self,
        g: &Graph,
        times: impl Fn(TaskId) -> (f64, f64),
        direct: &[TaskId],
        gpu: u32,
        from: f64,
        now: f64,
        res: &mut impl Charges,
    ) {
        self.period += 1;
        for list in &mut self.spans {
            list.clear();
        }
        self.stack.clear();
        for &t in direct {
            if self.seen[t as usize] != self.period {
                self.seen[t as usize] = self.period;
                self.stack.push(t);
            }
        }
        while let Some(on) = self.stack.pop() {
            let (start, end) = times(on);
            // A chain's earlier links ended before this one started: once a
            // link ended before the idle period, so did everything upstream.
            if end <= from {
                continue;
            }
            for &up in g.comm_predecessors(on) {
                if self.seen[up as usize] != self.period {
                    self.seen[up as usize] = self.period;
                    self.stack.push(up);
                }
            }
            let (lo, hi) = (start.max(from), end.min(now));
            if hi <= lo {
                continue;
            }
            let on_task = &g.tasks[on as usize];
            // Upstream links of other GPUs are followed, not charged.
            if let Some(i) = g.members_of(on).iter().position(|&m| m == gpu) {
                self.spans[on_task.axis as usize].push((lo, hi));
                res.slot(on_task.members_start as usize + i, lo, hi);
            }
        }
        let exposed = res.gpu(gpu);
        for (axis, list) in self.spans.iter_mut().enumerate() {
            exposed[axis] += union_length(list);
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
            if !direct.is_empty() && to > from {
                self.charge(g, &times, direct, gpu as u32, from, to, res);
            }
        }
    }
}

/// A finished run whose idle time is not charged yet. The fast engine
/// charges it after the run (the plain reference as it goes, and the two
/// are compared): each GPU's compute ops in stream order, one that starts
/// after the stream stood idle since the previous op's end (since the
/// step's start, for the first) charging that idle time to the collectives
/// it waited on, as [`Exposure::charge`] does. GPUs apart charge apart:
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
    /// Per GPU of the share: idle time charged to each axis.
    exposed: Vec<[f64; 3]>,
    /// Per GPU of the share, per period mark: as `exposed`, by the compute
    /// ops that started before the mark.
    at_marks: Vec<[f64; 3]>,
    /// Per GPU of the share: when its last compute op ended.
    last_compute_end: Vec<f64>,
}

impl Charges for ShareCharges {
    fn slot(&mut self, slot: usize, from: f64, to: f64) {
        self.slots.push((slot as u32, from, to));
    }

    fn gpu(&mut self, gpu: u32) -> &mut [f64; 3] {
        &mut self.exposed[gpu as usize - self.gpus.start]
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
        let mut out = ShareCharges {
            gpus: gpus.clone(),
            slots: Vec::new(),
            exposed: vec![[0.0; 3]; gpus.len()],
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
                    out.at_marks.push(out.exposed[local]);
                }
                let direct = g.collectives_waited_on(t);
                if now > idle_since && !direct.is_empty() {
                    exposure.charge(g, times, direct, gpu as u32, idle_since, now, &mut out);
                }
                idle_since = res.end_s[t as usize];
            }
            for _ in marks {
                out.at_marks.push(out.exposed[local]);
            }
            out.last_compute_end.push(idle_since);
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
                res.gpus[gpu].exposed_s = share.exposed[local];
                for (k, mark) in res.marks.iter_mut().enumerate() {
                    mark.gpus[gpu].exposed_s = share.at_marks[local * marks + k];
                }
            }
            last_compute_end.extend_from_slice(&share.last_compute_end);
        }
        assert_eq!(last_compute_end.len(), g.gpus.len(), "every GPU charged");
        let (times, mut charged) = Charged::of_run(&mut res);
        for &(slot, from, to) in shares.iter().flat_map(|share| &share.slots) {
            charged.slot(slot as usize, from, to);
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

/// Length of the union of spans (sorts them): overlapping spans count once.
pub(crate) fn union_length(list: &mut [(f64, f64)]) -> f64 {
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    sorted_union_within(list, f64::NEG_INFINITY, f64::INFINITY)
}

/// The length of the union of `spans` (sorted by start, as
/// [`union_length`] leaves them) that lies within `from..to`.
pub(crate) fn sorted_union_within(spans: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let mut covered = 0.0;
    let mut reach = from;
    for &(lo, hi) in spans {
        if lo >= to {
            break;
        }
        let (lo, hi) = (lo.max(reach), hi.min(to));
        if hi > lo {
            covered += hi - lo;
            reach = hi;
        }
    }
    covered
}

#[cfg(test)]
mod tests {
    use crate::model::axis::Axis;
    use crate::model::link::{Direction, LinkClass};
    use crate::model::op::{OpKind, Phase};
    use crate::sim::network::Usage;
    use crate::workload::graph::{GpuInfo, Graph, Meta, ResourceInfo};

    /// GPU 0 computes for 1 ms and sends 1 MB to GPU 1 (1 ms on its link);
    /// GPU 1 gathers the slices over NVLink (1 ms more), then computes.
    /// GPU 1 idles 3 ms: the first while GPU 0 computes (bubble), the
    /// second while the send is in flight (PP), the third while the gather
    /// is (TP): the send is charged although GPU 1's op waited on the gather.
    fn send_then_gather() -> Graph {
        let mut g = Graph::default();
        for rank in 0..2 {
            g.add_gpu(GpuInfo::lone(rank));
        }
        for (gpu, class) in [(0, LinkClass::Network), (1, LinkClass::Nvlink)] {
            g.add_resource(ResourceInfo {
                gpu: Some(gpu),
                class,
                direction: Direction::Out,
                capacity_bps: 1e9,
            });
        }
        let usage = |resource| {
            vec![Usage {
                resource,
                weight: 1.0,
            }]
        };
        let (network, nvlink) = (g.add_pattern(usage(0)), g.add_pattern(usage(1)));
        let meta = Meta::new(OpKind::Gemm, Phase::Forward);
        let a = g.compute(0, 1e-3, 0.0, 0.0, meta);
        let send = g.comm(
            &[0, 1],
            Axis::Pp as u8,
            network,
            1e6,
            0.0,
            meta.op(OpKind::Send),
        );
        g.dep(a, send);
        let gather = g.comm(
            &[1],
            Axis::Tp as u8,
            nvlink,
            1e6,
            0.0,
            meta.op(OpKind::AllGather),
        );
        g.dep(send, gather);
        g.block_compute_on(1, gather);
        g.compute(1, 1e-3, 0.0, 0.0, meta);
        g.finish();
        g
    }

    /// Charged in shares of GPUs (on threads of their own in a report) or
    /// all at once, a run's idle time comes out the same bit for bit: each
    /// member's charges, each GPU's sums, and the sums at each period mark.
    #[test]
    fn charging_in_shares_equals_charging_at_once() {
        use crate::model::fidelity::Fidelity;
        use crate::workload::interference::Sharing;
        let mut s = crate::input::presets::scenario("didactic").unwrap();
        if let crate::model::scenario::Workload::Transformer(t) = &mut s.workload {
            t.global_batch = 16;
        }
        let g = crate::workload::build(&s, Fidelity::Reduced, 0);
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
            let exposed = |r: &crate::sim::engine::RunResult| {
                let mut all: Vec<[f64; 3]> = r.gpus.iter().map(|s| s.exposed_s).collect();
                for mark in &r.marks {
                    all.extend(mark.gpus.iter().map(|s| s.exposed_s));
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
    fn a_union_within_bounds_counts_overlaps_once() {
        let spans = [(0.0, 2.0), (1.0, 3.0), (2.5, 4.0), (6.0, 7.0)];
        assert_eq!(super::sorted_union_within(&spans, 1.5, 6.5), 3.0);
        assert_eq!(super::sorted_union_within(&spans, 4.0, 6.0), 0.0);
        assert_eq!(super::sorted_union_within(&spans, -1.0, 10.0), 5.0);
    }

    #[test]
    fn idle_time_goes_to_the_axis_in_flight_along_a_chain() {
        let g = send_then_gather();
        for run in [
            crate::sim::engine::run(&g, true, &crate::workload::interference::Sharing::Tax(0.0)),
            crate::sim::plain::run(&g, true, &crate::workload::interference::Sharing::Tax(0.0)),
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
        }
    }

    #[test]
    fn communication_after_the_last_compute_op_is_exposed() {
        let g = send_then_gather();
        let run =
            crate::sim::engine::run(&g, true, &crate::workload::interference::Sharing::Tax(0.0));
        // GPU 0's step ends when its send is delivered, 1 ms after its compute.
        let exposed = run.gpus[0].exposed_s;
        assert!(
            (exposed[Axis::Pp.index()] - 1e-3).abs() < 1e-12,
            "{exposed:?}"
        );
    }
}
