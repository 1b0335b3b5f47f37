//! Turns an engine run into what readers get: the timeline (plain data for
//! the page and the trace) and the report (model.md section 6).

use crate::model::axis::Axis;
use crate::model::link::LinkClass;
use crate::model::scenario::Scenario;
use crate::output::hta;
use crate::output::report::{AxisReport, LinkReport, Report};
use crate::output::timeline::{GpuLanes, Interval, LinkLane, Timeline};
use crate::sim::engine::RunResult;
use crate::workload::graph::{Graph, COMPUTE};

/// HTA's overlap ratio of every simulated GPU in rank order, from the run
/// itself: the figures `hta::overlap_per_gpu` reads off the timeline, for
/// callers that never build one.
pub(crate) fn hta_overlap_per_gpu(g: &Graph, run: &RunResult) -> Vec<f64> {
    let span = |t: usize| (run.start_s[t], run.end_s[t]);
    let mut comm: Vec<Vec<(f64, f64)>> = vec![Vec::new(); g.gpus.len()];
    for (id, t) in g.tasks.iter().enumerate() {
        if t.axis != COMPUTE {
            for &m in g.members_of(id as u32) {
                comm[m as usize].push(span(id));
            }
        }
    }
    let mut per: Vec<(u32, f64)> = g
        .gpus
        .iter()
        .zip(comm)
        .enumerate()
        .map(|(i, (info, comm))| {
            let compute = hta::union(g.compute_order[i].iter().map(|&t| span(t as usize)));
            (info.rank, hta::overlap_ratio(&hta::union(comm), &compute))
        })
        .collect();
    per.sort_by_key(|&(rank, _)| rank);
    per.into_iter().map(|(_, ratio)| ratio).collect()
}

/// Builds the timeline; the run's link samples move into it.
pub(crate) fn timeline(g: &Graph, run: &mut RunResult, reduced: bool) -> Timeline {
    let samples: Vec<_> = run
        .links
        .iter_mut()
        .map(|l| std::mem::take(&mut l.samples))
        .collect();
    let run = &*run;
    let interval = |task: u32, exposed: (f64, f64), with_window: bool| {
        let t = &g.tasks[task as usize];
        let meta = &g.meta[task as usize];
        let (start_s, end_s) = (run.start_s[task as usize], run.end_s[task as usize]);
        let window = meta.window.filter(|_| with_window).map(|(from, to)| {
            let order = &g.compute_order[t.gpu as usize];
            (
                run.start_s[order[from as usize] as usize],
                run.end_s[order[to as usize] as usize],
            )
        });
        let comm = t.axis != COMPUTE;
        let transfer = if comm {
            transfer(g, run, task as usize)
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
            comm: [Vec::new(), Vec::new(), Vec::new()],
        })
        .collect();
    // Exact room for each communication lane: no copying while filling.
    let mut lane_len = vec![[0usize; 3]; gpus.len()];
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
fn transfer(g: &Graph, run: &RunResult, id: usize) -> (f64, f64) {
    let t = &g.tasks[id];
    let transfer_s = run.end_s[id] - run.start_s[id] - t.latency_s;
    if t.work <= 0.0 || transfer_s <= 0.0 {
        return (0.0, 0.0);
    }
    let delay = transfer_s - t.work / g.alone_rate_bps(t.pattern);
    // Below a part in a billion it is rounding, not contention.
    let contention = if delay > 1e-9 * transfer_s {
        delay
    } else {
        0.0
    };
    (t.work / transfer_s / 1e9, contention)
}

/// A window as it ran (model.md 5): from the moment the collective could
/// start, the end of the compute op before the window's first (the op that
/// made its data ready), to the end of the window's last op. Compute that
/// interference stretched counts at its stretched length, and so do the
/// gaps between the ops, during which the collective holds nothing up.
fn window_span(g: &Graph, run: &RunResult, gpu: usize, (from, to): (u32, u32)) -> (f64, f64) {
    let order = &g.compute_order[gpu];
    let start = if from == 0 {
        run.start_s[order[0] as usize]
    } else {
        run.end_s[order[from as usize - 1] as usize]
    };
    (start, run.end_s[order[to as usize] as usize])
}

/// Length of the union of spans: overlapping windows of one axis count once.
fn union_length(spans: &mut [(f64, f64)]) -> f64 {
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut covered = 0.0;
    let mut reach = f64::NEG_INFINITY;
    for &(lo, hi) in spans.iter() {
        let lo = lo.max(reach);
        if hi > lo {
            covered += hi - lo;
            reach = hi;
        }
    }
    covered
}

/// The slowest GPU: the one that finishes last (the lowest index on a tie).
fn slowest(run: &RunResult) -> usize {
    let mut best = 0;
    for (i, st) in run.gpus.iter().enumerate() {
        if st.end_s > run.gpus[best].end_s {
            best = i;
        }
    }
    best
}

pub(crate) fn report(s: &Scenario, g: &Graph, run: &RunResult) -> Report {
    let step = run.step_time_s;
    let gi = slowest(run);
    let stats = &run.gpus[gi];
    let mut r = Report {
        step_time_ms: step * 1e3,
        compute_ms: stats.compute_busy_s * 1e3,
        ..Report::default()
    };
    let mut windows: [Vec<(f64, f64)>; 3] = Default::default();
    let mut contention_s = [0.0f64; 3];
    for (id, t) in g.tasks.iter().enumerate() {
        if t.axis == COMPUTE || !g.members_of(id as u32).contains(&(gi as u32)) {
            continue;
        }
        contention_s[t.axis as usize] += transfer(g, run, id).1;
        if t.gpu as usize == gi {
            if let Some(window) = g.meta[id].window {
                windows[t.axis as usize].push(window_span(g, run, gi, window));
            }
        }
        // Whatever the schedule meant, the GPU's compute also hides the
        // collective while it goes on without the data: from the
        // collective's start until the GPU first waits for it (a pipeline
        // receive, slices gathered on arrival).
        if let Some(i) = g
            .members_of(id as u32)
            .iter()
            .position(|&m| m as usize == gi)
        {
            let slot = t.members_start as usize + i;
            let until = run.exposed_from_s[slot].min(run.end_s[id]);
            windows[t.axis as usize].push((run.start_s[id], until));
        }
    }
    let window_s = windows.map(|mut spans| union_length(&mut spans));
    for axis in Axis::ALL {
        let a = axis.index();
        let comm = stats.comm_s[a];
        let exposed = stats.exposed_s[a];
        *r.axes.get_mut(axis) = AxisReport {
            comm_ms: comm * 1e3,
            exposed_ms: exposed * 1e3,
            hidden: if comm > 0.0 {
                (1.0 - exposed / comm).clamp(0.0, 1.0)
            } else {
                1.0
            },
            window_ms: window_s[a] * 1e3,
            contention_ms: contention_s[a] * 1e3,
        };
    }
    for (class, out) in [
        (LinkClass::Nvlink, &mut r.links.nvlink),
        (LinkClass::Network, &mut r.links.network),
    ] {
        let (mut busy, mut shared, mut count) = (0.0, 0.0, 0usize);
        for (res, log) in g.resources.iter().zip(&run.links) {
            if res.class == class && res.gpu.is_some() {
                busy += log.busy_s;
                shared += log.shared_s;
                count += 1;
            }
        }
        *out = LinkReport {
            busy: if count > 0 && step > 0.0 {
                busy / count as f64 / step
            } else {
                0.0
            },
            shared: if busy > 0.0 { shared / busy } else { 0.0 },
        };
    }
    let gpus = s.hardware.gpus() as f64;
    let (mut model, mut executed) = (0.0, 0.0);
    for (info, (m, e)) in g.gpus.iter().zip(&g.flops) {
        model += m * f64::from(info.represents);
        executed += e * f64::from(info.represents);
    }
    let per = |flops: f64| {
        if step > 0.0 {
            flops / gpus / step / 1e12
        } else {
            0.0
        }
    };
    r.model_tflops_per_gpu = per(model);
    r.hardware_tflops_per_gpu = per(executed);
    r.mfu = r.model_tflops_per_gpu / s.hardware.peak_tflops;
    let exposed_total: f64 = stats.exposed_s.iter().sum();
    r.bubble_fraction = if step > 0.0 {
        ((step - stats.compute_busy_s - exposed_total) / step).max(0.0)
    } else {
        0.0
    };
    r
}
