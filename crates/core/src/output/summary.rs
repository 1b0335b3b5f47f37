//! Turns an engine run into what readers get: the timeline (plain data for
//! the page and the trace) and the report (model.md section 6), the latter
//! by way of a [`Tally`] of the run's additive sums (`tally.rs`).

use crate::model::axis::Axis;
use std::ops::Range;

use crate::model::link::LinkClass;
use crate::model::scenario::Scenario;
use crate::output::hta;
use crate::output::report::Report;
use crate::output::tally::{GpuTally, LinkTally, Tally};
use crate::output::timeline::{GpuLanes, Interval, LinkLane, Timeline};
use crate::sim::engine::RunResult;
use crate::sim::link_log::AXIS_PAIRS;
use crate::workload::graph::task::COMPUTE;
use crate::workload::graph::Graph;

/// Builds the timeline; the run's link samples move into it.
pub(crate) fn timeline(g: &Graph, run: &mut RunResult, reduced: bool) -> Timeline {
    assert!(
        g.with_meta,
        "a timeline is drawn from a graph built with its ops' metadata"
    );
    let samples: Vec<_> = run
        .links
        .iter_mut()
        .map(|l| std::mem::take(&mut l.samples))
        .collect();
    let run = &*run;
    let alone_bps = alone_rates_bps(g);
    let interval = |task: u32, exposed: (f64, f64), with_window: bool| {
        let t = &g.tasks[task as usize];
        let meta = &g.meta[task as usize];
        let (start_s, end_s) = (run.start_s[task as usize], run.end_s[task as usize]);
        let window = g.window(task).filter(|_| with_window).map(|(from, to)| {
            let order = &g.compute_order[t.gpu as usize];
            (
                run.start_s[order[from as usize] as usize],
                run.end_s[order[to as usize] as usize],
            )
        });
        let comm = t.axis != COMPUTE;
        let transfer = if comm {
            transfer(g, run, task as usize, &alone_bps)
        } else {
            (0.0, 0.0)
        };
        Interval {
            id: task,
            owner: t.gpu,
            start_s,
            end_s,
            op: meta.op,
            phase: meta.phase,
            micro_batch: meta.micro_batch,
            layer: meta.layer,
            chunk: meta.chunk,
            bytes: if comm { t.work } else { 0.0 },
            kernel: meta.kernel,
            achieved_gbps: transfer.0,
            contention_s: transfer.1,
            exposed_s: exposed.0,
            exposed_from_s: if exposed.0 > 0.0 { exposed.1 } else { end_s },
            window,
            flops: meta.flops,
        }
    };
    let mut gpus: Vec<GpuLanes> = g
        .gpus
        .iter()
        .enumerate()
        .map(|(i, info)| GpuLanes {
            rank: info.rank,
            node: info.node,
            stage: info.stage,
            dp_rank: info.dp_rank,
            tp_rank: info.tp_rank,
            represents: info.represents,
            compute: g.compute_order[i]
                .iter()
                .map(|&t| interval(t, (0.0, 0.0), false))
                .collect(),
            comm: std::array::from_fn(|_| Vec::new()),
        })
        .collect();
    // Exact room for each communication lane: no copying while filling.
    let mut lane_len = vec![[0usize; Axis::COUNT]; gpus.len()];
    for (id, t) in g.tasks.iter().enumerate() {
        if t.axis != COMPUTE {
            for &m in g.members_of(id as u32) {
                lane_len[m as usize][t.axis as usize] += 1;
            }
        }
    }
    for (lanes, len) in gpus.iter_mut().zip(&lane_len) {
        for (lane, &n) in lanes.comm.iter_mut().zip(len) {
            lane.reserve_exact(n);
        }
    }
    for (id, t) in g.tasks.iter().enumerate() {
        if t.axis == COMPUTE {
            continue;
        }
        for (i, &m) in g.members_of(id as u32).iter().enumerate() {
            let slot = t.members_start as usize + i;
            let exposed = (run.exposed_s[slot], run.exposed_from_s[slot]);
            let iv = interval(id as u32, exposed, m == t.gpu);
            gpus[m as usize].comm[t.axis as usize].push(iv);
        }
    }
    for lanes in &mut gpus {
        for lane in &mut lanes.comm {
            lane.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
        }
    }
    let links = g
        .resources
        .iter()
        .zip(samples)
        .map(|(r, samples)| LinkLane {
            gpu: r.gpu,
            class: r.class,
            direction: r.direction,
            capacity_gbps: r.capacity_bps / 1e9,
            samples,
        })
        .collect();
    Timeline {
        step_time_s: run.step_time_s,
        reduced,
        gpus,
        links,
    }
}

/// A collective's achieved bandwidth (bytes over its transfer time, latency
/// excluded), GB/s, and how much longer its transfer took than it would have
/// alone on the same links, s.
fn transfer(g: &Graph, run: &RunResult, id: usize, alone_bps: &[f64]) -> (f64, f64) {
    let t = &g.tasks[id];
    let transfer_s = run.end_s[id] - run.start_s[id] - t.latency_s();
    if t.work <= 0.0 || transfer_s <= 0.0 {
        return (0.0, 0.0);
    }
    let delay = transfer_s - t.work / alone_bps[t.pattern as usize];
    // Below a part in a billion it is rounding, not contention.
    let contention = if delay > 1e-9 * transfer_s {
        delay
    } else {
        0.0
    };
    (t.work / transfer_s / 1e9, contention)
}

/// Per pattern, the rate a collective gets alone on its links
/// (`Graph::alone_rate_bps`), worked out once rather than per collective.
fn alone_rates_bps(g: &Graph) -> Vec<f64> {
    (0..g.patterns.len() as u32)
        .map(|p| g.alone_rate_bps(p))
        .collect()
}

/// When collective `task`'s data is ready by its schedule (model.md 5):
/// the end of the compute op before its window's first (the op that made
/// its data ready; the step's start when that is the first op), and the end
/// of the window's last op. The schedule's interval, whether or not the
/// overlap switch lets the collective run in it.
fn window_span(g: &Graph, run: &RunResult, gpu: usize, (from, to): (u32, u32)) -> (f64, f64) {
    let order = &g.compute_order[gpu];
    let start = if from == 0 {
        0.0
    } else {
        run.end_s[order[from as usize - 1] as usize]
    };
    (start, run.end_s[order[to as usize] as usize])
}

/// The report of a run (model.md section 6), HTA's overlap per GPU
/// included when `with_hta` (callers with a timeline read it from there).
pub(crate) fn report(s: &Scenario, g: &Graph, run: &RunResult, with_hta: bool) -> Report {
    tally(g, run, with_hta).report(s)
}

/// The additive sums of a run, per simulated GPU and per link class.
pub(crate) fn tally(g: &Graph, run: &RunResult, with_hta: bool) -> Tally {
    let sums = gpu_shares(g, 1)
        .into_iter()
        .map(|share| gpu_sums(g, run, with_hta, share))
        .collect();
    tally_with_periods(g, run, with_hta, sums).0
}

/// Graphs of fewer tasks are tallied in one share: a thread started for
/// another would cost more than it saves.
const TASKS_PER_TALLY_THREAD: usize = 100_000;

/// The GPUs of `g` in up to `threads` shares, for [`gpu_sums`] to work out
/// one each (on threads of their own): one share on a small graph.
pub(crate) fn gpu_shares(g: &Graph, threads: usize) -> Vec<Range<usize>> {
    let gpus = g.gpus.len();
    let threads = threads
        .min(g.tasks.len() / TASKS_PER_TALLY_THREAD)
        .clamp(1, gpus.max(1));
    (0..threads)
        .map(|k| k * gpus / threads..(k + 1) * gpus / threads)
        .collect()
}

/// The additive sums of a run and, when it ran past three period marks
/// (`Graph::period_marks`), what each of its two marked periods added to
/// every sum: a tally of the same shape whose step and ends are the
/// period's length. A sum the engine keeps is read from the marks; one
/// worked out here from the run's times counts what lies between the
/// marks (a union's part between them; a collective's contention where it
/// starts between them); the FLOPs are the builder's per unit. The GPUs'
/// sums come in `shares` from [`gpu_sums`], in the order of the GPUs.
pub(crate) fn tally_with_periods(
    g: &Graph,
    run: &RunResult,
    with_hta: bool,
    shares: Vec<GpuSums>,
) -> (Tally, Option<[Tally; 2]>) {
    let bounds = mark_times(run);
    let mut per_gpu = Vec::with_capacity(g.gpus.len());
    let mut periods: [Vec<GpuTally>; 2] = [Vec::new(), Vec::new()];
    for sums in shares {
        per_gpu.extend(sums.whole);
        for (all, share) in periods.iter_mut().zip(sums.periods) {
            all.extend(share);
        }
    }
    let link_class = |res: &crate::workload::graph::task::ResourceInfo| {
        res.gpu.map(|_| match res.class {
            LinkClass::Nvlink => 0,
            LinkClass::Network => 1,
        })
    };
    let mut links = [LinkTally::default(); 2];
    for (res, log) in g.resources.iter().zip(&run.links) {
        if let Some(class) = link_class(res) {
            let out = &mut links[class];
            out.busy_s += log.busy_s;
            out.shared_s += log.shared_s;
            out.count += 1;
            for (sum, pair_s) in out.pairs_s.iter_mut().zip(log.pairs_s) {
                *sum += pair_s;
            }
        }
    }
    let (mut model_flops, mut executed_flops) = (0.0, 0.0);
    let (mut unit_model, mut unit_executed) = (0.0, 0.0);
    for ((info, (m, e)), (um, ue)) in g.gpus.iter().zip(&g.flops).zip(&g.unit_flops) {
        let represents = f64::from(info.represents);
        model_flops += m * represents;
        executed_flops += e * represents;
        unit_model += um * represents;
        unit_executed += ue * represents;
    }
    let whole = Tally {
        step_s: run.step_time_s,
        gpus: per_gpu,
        links,
        model_flops,
        executed_flops,
        with_hta,
    };
    let Some(bounds) = bounds else {
        return (whole, None);
    };
    let [first, second] = periods;
    let period = |p: usize, gpus: Vec<GpuTally>| {
        let mut links = links.map(|l| LinkTally {
            busy_s: 0.0,
            shared_s: 0.0,
            count: l.count,
            pairs_s: [0.0; AXIS_PAIRS],
        });
        for (k, res) in g.resources.iter().enumerate() {
            if let (Some(class), Some(from), Some(to)) = (
                link_class(res),
                run.marks[p].links.get(k),
                run.marks[p + 1].links.get(k),
            ) {
                let l = &mut links[class];
                l.busy_s += to.busy_s - from.busy_s;
                l.shared_s += to.shared_s - from.shared_s;
                for (sum, (t, f)) in l
                    .pairs_s
                    .iter_mut()
                    .zip(to.pairs_s.iter().zip(from.pairs_s))
                {
                    *sum += t - f;
                }
            }
        }
        Tally {
            step_s: bounds[p + 1] - bounds[p],
            gpus,
            links,
            model_flops: unit_model,
            executed_flops: unit_executed,
            with_hta,
        }
    };
    (whole, Some([period(0, first), period(1, second)]))
}

/// The times of a run's three period marks, if it has them.
fn mark_times(run: &RunResult) -> Option<[f64; 3]> {
    match run.marks.as_slice() {
        [a, b, c] => Some([a.time_s, b.time_s, c.time_s]),
        _ => None,
    }
}

/// The sums of a share of the GPUs: over the whole run, and over each
/// marked period when the run has marks.
pub(crate) struct GpuSums {
    whole: Vec<GpuTally>,
    periods: [Vec<GpuTally>; 2],
}

/// The sums of GPUs `share` (see [`tally_with_periods`]).
pub(crate) fn gpu_sums(g: &Graph, run: &RunResult, with_hta: bool, share: Range<usize>) -> GpuSums {
    let bounds = mark_times(run);
    let gpus = share.len();
    // Which marked period an instant falls in, if any.
    let period_of = |t: f64| {
        let [a, b, c] = bounds?;
        if (a..b).contains(&t) {
            Some(0)
        } else if (b..c).contains(&t) {
            Some(1)
        } else {
            None
        }
    };
    // Per GPU and axis: when its collectives were in flight, and when they
    // might legally have run (model.md 5).
    let mut inflight: Vec<[Vec<(f64, f64)>; Axis::COUNT]> = vec![Default::default(); gpus];
    // Kept in two lists, each nearly sorted as the tasks come (unions sort
    // their spans, and two interleaved orders would cost a full sort).
    let mut legal: Vec<[Vec<(f64, f64)>; Axis::COUNT]> = vec![Default::default(); gpus];
    let mut scheduled_legal: Vec<[Vec<(f64, f64)>; Axis::COUNT]> = vec![Default::default(); gpus];
    let mut contention_s = vec![[0.0f64; Axis::COUNT]; gpus];
    let mut period_contention_s = [
        vec![[0.0f64; Axis::COUNT]; gpus],
        vec![[0.0f64; Axis::COUNT]; gpus],
    ];
    let alone_bps = alone_rates_bps(g);
    for (id, t) in g.tasks.iter().enumerate() {
        if t.axis == COMPUTE {
            continue;
        }
        let a = t.axis as usize;
        let members = g.members_of(id as u32);
        if !members.iter().any(|&m| share.contains(&(m as usize))) {
            continue;
        }
        let contention = transfer(g, run, id, &alone_bps).1;
        let period = period_of(run.start_s[id]);
        let span = (run.start_s[id], run.end_s[id]);
        // The schedule's interval, on its owner (it is drawn there too).
        let scheduled = g
            .window(id as u32)
            .map(|w| window_span(g, run, t.gpu as usize, w));
        // Its data is ready when the schedule says, or when it started if
        // that was earlier (it cannot start without its data).
        let ready_s = scheduled.map_or(span.0, |w| w.0.min(span.0));
        // A result no GPU of the step needs is one the next step needs (the
        // distributed optimizer's parameter gathers without `param_gather`,
        // which the next forward reads bucket by bucket): it is needed at
        // the end of its scheduled window, not at the end of the step
        // (model.md 5), so its window is the forward's compute up to its
        // bucket's first layer, never the whole step.
        let start = t.members_start as usize;
        let next_step_needs = scheduled.filter(|_| {
            run.needed_s[start..start + members.len()]
                .iter()
                .all(|n| n.is_infinite())
        });
        for (i, &m) in members.iter().enumerate() {
            if !share.contains(&(m as usize)) {
                continue;
            }
            let local = m as usize - share.start;
            contention_s[local][a] += contention;
            if let Some(p) = period {
                period_contention_s[p][local][a] += contention;
            }
            inflight[local][a].push(span);
            // Until this GPU first needs the result (its step's end when it
            // never does, as a send's sender): its compute can hide the
            // collective until then, and no longer, as the stream then
            // waits for it.
            let slot = t.members_start as usize + i;
            let end_s = run.gpus[m as usize].end_s;
            let needed_s = match next_step_needs {
                Some(w) => w.1.min(end_s),
                None => run.needed_s[slot].min(end_s),
            };
            legal[local][a].push((ready_s, needed_s));
            if let Some(w) = scheduled.filter(|_| t.gpu == m) {
                scheduled_legal[local][a].push(w);
            }
        }
    }
    let mut out = GpuSums {
        whole: Vec::with_capacity(gpus),
        periods: [Vec::new(), Vec::new()],
    };
    let zip = inflight.into_iter().zip(legal).zip(scheduled_legal);
    for ((local, ((inflight, legal), scheduled)), i) in zip.enumerate().zip(share) {
        let (info, stats) = (&g.gpus[i], &run.gpus[i]);
        let span = |t: u32| (run.start_s[t as usize], run.end_s[t as usize]);
        let busy = hta::union(g.compute_order[i].iter().map(|&t| span(t)));
        let inflight = inflight.map(hta::union);
        let legal = legal.map(hta::union);
        let scheduled = scheduled.map(hta::union);
        let legal: [Vec<(f64, f64)>; Axis::COUNT] =
            std::array::from_fn(|a| hta::union(legal[a].iter().chain(&scheduled[a]).copied()));
        let hta_comm = with_hta.then(|| hta::union(inflight.iter().flatten().copied()));
        let (hta_comm_s, hta_overlapped_s) = match &hta_comm {
            Some(comm) => (hta::length(comm), hta::intersection_length(comm, &busy)),
            None => (0.0, 0.0),
        };
        // The three parts of each axis's communication, and its window,
        // within `from..to`, given the exposed time charged there.
        let parts = |from: f64, to: f64, exposed_s: [f64; Axis::COUNT]| {
            let mut under_compute_s = [0.0; Axis::COUNT];
            let mut under_idle_s = [0.0; Axis::COUNT];
            let mut window_s = [0.0; Axis::COUNT];
            for a in 0..Axis::COUNT {
                let comm = hta::clip(&inflight[a], from, to);
                under_compute_s[a] = hta::intersection_length(&comm, &busy);
                under_idle_s[a] = hta::length(&comm) - under_compute_s[a] - exposed_s[a];
                window_s[a] = hta::intersection_length(&hta::clip(&legal[a], from, to), &busy);
            }
            (under_compute_s, under_idle_s, window_s)
        };
        let (under_compute_s, under_idle_s, window_s) =
            parts(f64::NEG_INFINITY, f64::INFINITY, stats.exposed_s);
        out.whole.push(GpuTally {
            rank: info.rank,
            end_s: stats.end_s,
            compute_busy_s: stats.compute_busy_s,
            comm_s: stats.comm_s,
            exposed_s: stats.exposed_s,
            // After its last task, the GPU waits for the others to finish.
            bubble_s: stats.bubble_s + (run.step_time_s - stats.end_s),
            under_compute_s,
            under_idle_s,
            window_s,
            contention_s: contention_s[local],
            hta_comm_s,
            hta_overlapped_s,
        });
        let Some(bounds) = bounds else {
            continue;
        };
        for (p, period) in out.periods.iter_mut().enumerate() {
            let (from, to) = (bounds[p], bounds[p + 1]);
            let (start, end) = (&run.marks[p].gpus[i], &run.marks[p + 1].gpus[i]);
            let (hta_comm_s, hta_overlapped_s) = match &hta_comm {
                Some(comm) => {
                    let comm = hta::clip(comm, from, to);
                    (hta::length(&comm), hta::intersection_length(&comm, &busy))
                }
                None => (0.0, 0.0),
            };
            let minus =
                |e: [f64; Axis::COUNT], s: [f64; Axis::COUNT]| std::array::from_fn(|a| e[a] - s[a]);
            let exposed_s = minus(end.exposed_s, start.exposed_s);
            let (under_compute_s, under_idle_s, window_s) = parts(from, to, exposed_s);
            period.push(GpuTally {
                rank: info.rank,
                end_s: to - from,
                compute_busy_s: end.compute_busy_s - start.compute_busy_s,
                comm_s: minus(end.comm_s, start.comm_s),
                exposed_s,
                // What the period's compute and exposed time leave of it. The
                // charges at the marks are each idle period's, whole, as the
                // op after it started: one that straddles a mark would be
                // counted in the period it ends in, and the first period,
                // still settling there, would differ from the second by it.
                bubble_s: (to - from)
                    - (end.compute_busy_s - start.compute_busy_s)
                    - exposed_s.iter().sum::<f64>(),
                under_compute_s,
                under_idle_s,
                window_s,
                contention_s: period_contention_s[p][local],
                hta_comm_s,
                hta_overlapped_s,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::presets;
    use crate::model::fidelity::Fidelity;
    use crate::sim::engine;
    use crate::workload;
    use crate::workload::build::run_cost::with_micro_batches;
    use crate::workload::graph::interference::Sharing;

    /// The GPUs' sums worked out in shares on several threads are the
    /// one-thread sums bit for bit, the marked periods' included.
    #[test]
    fn shares_of_the_gpus_give_the_same_tally() {
        let mut s = presets::scenario("megatron-145.6b").unwrap();
        s.overlap.tp = true;
        s.overlap.pp = true;
        s.overlap.dp = true;
        let s = with_micro_batches(&s, 12);
        let g = workload::build_for_figures(
            &s,
            Fidelity::Reduced,
            0,
            &crate::collective::Libraries::of(&s),
        );
        let run = engine::run(&g, true, &Sharing::of(&s));
        assert_eq!(run.marks.len(), 3, "the run marks its periods");
        let in_shares = |n: usize| {
            let gpus = g.gpus.len();
            let shares = (0..n).map(|k| k * gpus / n..(k + 1) * gpus / n);
            let sums = shares
                .map(|share| gpu_sums(&g, &run, true, share))
                .collect();
            tally_with_periods(&g, &run, true, sums)
        };
        let one = in_shares(1);
        assert!(one.1.is_some());
        assert_eq!(one.0, tally(&g, &run, true));
        for n in [2, 3, 8] {
            assert_eq!(in_shares(n), one, "{n} shares");
        }
    }

    /// GPU 0 computes A (1 ms), launches a DP reduction (4 ms on its
    /// link) that nothing waits for, then computes B (1 ms) once GPU 1's
    /// op X (3 ms) is done. The reduction may legally run from A's end to
    /// GPU 0's end (1 to 5 ms), but GPU 0 computes only during B in that
    /// interval: its window is 1 ms, not the interval's 4 (idle time is not
    /// window), and the reduction ran under compute for that 1 ms. The idle
    /// time from 1 to 3 ms, waiting on GPU 1, is bubble; the last ms, waiting
    /// on the reduction, is DP exposed. So the reported comm minus exposed
    /// (3 ms, the hidden time the old windows were checked against) exceeds
    /// the window, while the time under compute does not.
    #[test]
    fn a_window_is_the_compute_inside_the_legal_interval() {
        use crate::model::axis::Axis;
        use crate::model::link::LinkClass;
        use crate::model::op::{OpKind, Phase};
        use crate::workload::graph::task::Meta;
        let (mut g, links) = Graph::with_test_links(2, &[(0, LinkClass::Network)]);
        let link = links[0];
        let meta = Meta::new(OpKind::Gemm, Phase::Backward);
        let a = g.compute(0, 1e-3, 0.0, 0.0, 0.0, meta);
        let x = g.compute(1, 3e-3, 0.0, 0.0, 0.0, meta);
        let reduce = g.comm(&[0], Axis::Dp, link, 4e6, 0.0, meta.op(OpKind::AllReduce));
        g.dep(a, reduce);
        let b = g.compute(0, 1e-3, 0.0, 0.0, 0.0, meta);
        g.dep(x, b);
        // The schedule: B is the compute that can hide it.
        g.set_window(reduce, 1, 1);
        g.finish();
        let sharing = Sharing::Tax(0.0);
        for run in [
            engine::run(&g, true, &sharing),
            crate::sim::plain::run(&g, true, &sharing),
        ] {
            let t = tally(&g, &run, false);
            let gpu = &t.gpus[0];
            let dp = Axis::Dp.index();
            let near = |x: f64, ms: f64| (x - ms * 1e-3).abs() < 1e-12;
            assert!(near(t.step_s, 5.0), "{t:?}");
            assert!(near(gpu.window_s[dp], 1.0), "{gpu:?}");
            assert!(near(gpu.under_compute_s[dp], 1.0), "{gpu:?}");
            assert!(near(gpu.exposed_s[dp], 1.0), "{gpu:?}");
            assert!(near(gpu.under_idle_s[dp], 2.0), "{gpu:?}");
            assert!(near(gpu.bubble_s, 2.0), "{gpu:?}");
            assert!(near(
                gpu.compute_busy_s + gpu.exposed_s[dp] + gpu.bubble_s,
                5.0
            ));
            // The counter-case: the old check fails here, the new one holds.
            assert!(gpu.comm_s[dp] - gpu.exposed_s[dp] > gpu.window_s[dp] + 1e-3);
            assert!(gpu.under_compute_s[dp] <= gpu.window_s[dp] + 1e-12);
            // GPU 1 waited 2 ms for the step's end: bubble too.
            assert!(near(t.gpus[1].bubble_s, 2.0), "{:?}", t.gpus[1]);
        }
    }
}
