//! Turns an engine run into what readers get: the timeline (plain data for
//! the page and the trace) and the report (model.md section 6), the latter
//! by way of a [`Tally`] of the run's additive sums (`tally.rs`).

use crate::model::link::LinkClass;
use crate::model::scenario::Scenario;
use crate::output::hta;
use crate::output::report::Report;
use crate::output::tally::{GpuTally, LinkTally, Tally};
use crate::output::timeline::{GpuLanes, Interval, LinkLane, Timeline};
use crate::sim::engine::RunResult;
use crate::sim::exposure::union_length;
use crate::workload::graph::{Graph, COMPUTE};

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

/// The report of a run (model.md section 6), HTA's overlap per GPU
/// included when `with_hta` (callers with a timeline read it from there).
pub(crate) fn report(s: &Scenario, g: &Graph, run: &RunResult, with_hta: bool) -> Report {
    tally(g, run, with_hta).report(s)
}

/// The additive sums of a run, per simulated GPU and per link class.
pub(crate) fn tally(g: &Graph, run: &RunResult, with_hta: bool) -> Tally {
    let gpus = g.gpus.len();
    let mut windows: Vec<[Vec<(f64, f64)>; 3]> = vec![Default::default(); gpus];
    let mut contention_s = vec![[0.0f64; 3]; gpus];
    let mut hta_comm: Vec<Vec<(f64, f64)>> = vec![Vec::new(); if with_hta { gpus } else { 0 }];
    let alone_bps = alone_rates_bps(g);
    for (id, t) in g.tasks.iter().enumerate() {
        if t.axis == COMPUTE {
            continue;
        }
        let a = t.axis as usize;
        let members = g.members_of(id as u32);
        let contention = if members.is_empty() {
            0.0
        } else {
            transfer(g, run, id, &alone_bps).1
        };
        for (i, &m) in members.iter().enumerate() {
            let m = m as usize;
            contention_s[m][a] += contention;
            if t.gpu as usize == m {
                if let Some(window) = g.window(id as u32) {
                    windows[m][a].push(window_span(g, run, m, window));
                }
            }
            // Whatever the schedule meant, the GPU's compute also hides the
            // collective while it goes on without the data: from the
            // collective's start until the GPU first waits for it (a pipeline
            // receive, slices gathered on arrival).
            let slot = t.members_start as usize + i;
            let until = run.exposed_from_s[slot].min(run.end_s[id]);
            windows[m][a].push((run.start_s[id], until));
            if with_hta {
                hta_comm[m].push((run.start_s[id], run.end_s[id]));
            }
        }
    }
    let mut hta_comm = hta_comm.into_iter();
    let per_gpu = g
        .gpus
        .iter()
        .zip(windows)
        .zip(contention_s)
        .enumerate()
        .map(|(i, ((info, windows), contention_s))| {
            let stats = &run.gpus[i];
            let (hta_comm_s, hta_overlapped_s) = match hta_comm.next() {
                Some(comm) => {
                    let span = |t: u32| (run.start_s[t as usize], run.end_s[t as usize]);
                    let compute = hta::union(g.compute_order[i].iter().map(|&t| span(t)));
                    let comm = hta::union(comm);
                    (
                        hta::length(&comm),
                        hta::intersection_length(&comm, &compute),
                    )
                }
                None => (0.0, 0.0),
            };
            GpuTally {
                rank: info.rank,
                end_s: stats.end_s,
                compute_busy_s: stats.compute_busy_s,
                comm_s: stats.comm_s,
                exposed_s: stats.exposed_s,
                window_s: windows.map(|mut spans| union_length(&mut spans)),
                contention_s,
                hta_comm_s,
                hta_overlapped_s,
            }
        })
        .collect();
    let mut links = [LinkTally::default(); 2];
    for (res, log) in g.resources.iter().zip(&run.links) {
        if res.gpu.is_none() {
            continue;
        }
        let out = match res.class {
            LinkClass::Nvlink => &mut links[0],
            LinkClass::Network => &mut links[1],
        };
        out.busy_s += log.busy_s;
        out.shared_s += log.shared_s;
        out.count += 1;
    }
    let (mut model_flops, mut executed_flops) = (0.0, 0.0);
    for (info, (m, e)) in g.gpus.iter().zip(&g.flops) {
        model_flops += m * f64::from(info.represents);
        executed_flops += e * f64::from(info.represents);
    }
    Tally {
        step_s: run.step_time_s,
        gpus: per_gpu,
        links,
        model_flops,
        executed_flops,
        with_hta,
    }
}
