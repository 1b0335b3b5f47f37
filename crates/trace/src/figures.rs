//! A measured GPU's figures, with the definitions of the simulated report
//! (model.md sections 5 and 6) as far as a trace can give them.
//!
//! - Step: when the trace marks `ProfilerStep#N`, the GPU's step window runs
//!   from the first start to the last end of the kernels launched inside
//!   the marked steps, and every time below is per step (the window's
//!   figures over the number of steps); without marks, the window is the
//!   GPU's first kernel start to its last kernel end, one step.
//! - Compute: the union of its compute kernels in the window, on all its
//!   streams. Communication: the union of its communication kernels; per
//!   kind and per axis, the union of that kind's or axis's kernels.
//! - Exposed: time in the window when a communication kernel is in flight
//!   and no compute kernel runs. Each such instant is charged once, to the
//!   axis of the in-flight kernel that ends last (model.md section 5's
//!   rule; a trace cannot tell a wait from a bubble, so a stretch idle for
//!   another reason under communication counts as exposed). Hidden =
//!   1 - exposed / communication. An axis's communication splits in three:
//!   under compute, exposed (charged to it) and under idle charged to
//!   another axis.
//! - Overlap: HolisticTraceAnalysis's figure, |C ∩ K| / |C| over the GPU's
//!   communication kernels C and compute kernels K (`output::hta`), taken
//!   as HTA 0.5.0 takes them, whatever the window, so that it is what
//!   `get_comm_comp_overlap` gives on a trace whose communication is all
//!   NCCL: when the traces hold two or more distinct `ProfilerStep#N`,
//!   only the kernels launched before the file's last step starts
//!   (`Trace._filter_irrelevant_gpu_kernels`); and a file whose `ts` HTA
//!   reads as fractional has every kernel's start rounded up and end down
//!   to whole µs (`round_down_time_stamps`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use overlap_core::hta::{clip, intersection_length, length, overlap_ratio, union};
use overlap_core::Axis;

use crate::classify::{axis_name, Class};
use crate::identify::{candidates, Candidate, Identified};
use crate::matching::Matched;
use crate::read::{FileTrace, Kernel};

/// One axis's communication on one GPU, ms per step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AxisFigures {
    /// Time its kernels were in flight.
    pub comm_ms: f64,
    /// The part of it under some compute kernel.
    pub under_compute_ms: f64,
    /// Time no compute ran while it was the last to end of those in flight.
    pub exposed_ms: f64,
    /// The rest: under idle time charged to another axis.
    pub under_idle_ms: f64,
    /// under compute / comm, as the simulator's report means it (model.md
    /// 6); none without communication.
    pub hidden: Option<f64>,
    /// 1 - exposed / comm; none without communication.
    #[serde(default)]
    pub not_exposed: Option<f64>,
    /// Transfer and wait, where its collectives were matched across ranks.
    #[serde(flatten)]
    pub transfer: Transfer,
}

/// A GPU's communication split into transfer and wait, where its
/// collectives were matched across ranks (`matching`): all `None` where
/// none was. Times are ms per step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    /// The part of its communication kernels' time in flight spent
    /// transferring: per collective the shortest of its ranks' kernels,
    /// the kernel's last part (a collective matched on no other rank
    /// counts whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_ms: Option<f64>,
    /// The rest, comm_ms - transfer_ms: its kernels ran waiting for later
    /// ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<f64>,
    /// Transfer time with no compute running (charged as exposed time is,
    /// to the axis of the transfer in flight that ends last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_exposed_ms: Option<f64>,
    /// The share of the transfer under compute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transfer_hidden: Option<f64>,
}

/// One measured GPU's figures; times are ms per step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuFigures {
    /// The file it comes from.
    pub file: String,
    /// `distributedInfo.rank`, when the file states it.
    pub rank: Option<u64>,
    /// The device (`args.device`).
    pub device: i64,
    /// Profiler steps the figures are averaged over.
    pub steps: u32,
    /// GPU events read: kernels, copies and sets.
    pub kernels: usize,
    /// The step window over the steps.
    pub step_ms: f64,
    /// Compute kernels' busy time.
    pub compute_ms: f64,
    /// Communication kernels' time in flight.
    pub comm_ms: f64,
    /// The same by kind ("NCCL AllReduce", "DeepEP dispatch", ...).
    pub comm_by_kind_ms: BTreeMap<String, f64>,
    /// Per axis, "unknown" where the trace does not say.
    pub axes: BTreeMap<String, AxisFigures>,
    /// Communication in flight with no compute running.
    pub exposed_ms: f64,
    /// The share of communication in flight under compute; none without
    /// communication.
    pub hidden: Option<f64>,
    /// 1 - exposed / comm; none without communication.
    #[serde(default)]
    pub not_exposed: Option<f64>,
    /// HTA's overlap figure, 0..1 (0 without communication).
    pub overlap: f64,
    /// Memory copies' busy time (peer-to-peer copies are communication).
    pub memcpy_ms: f64,
    /// Memory sets' busy time.
    pub memset_ms: f64,
    /// Transfer and wait over its collectives.
    #[serde(flatten)]
    pub transfer: Transfer,
    /// Its collectives matched across ranks.
    #[serde(default)]
    pub collectives_matched: usize,
    /// Its collectives found on its rank alone.
    #[serde(default)]
    pub collectives_unmatched: usize,
    /// Where no kernel is recognised as communication: the longest kernels
    /// on its other streams than its compute stream, which may be
    /// communication the table does not know (`--classify` names them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comm_candidates: Vec<Candidate>,
}

/// A total order on times, for the set of kernels in flight.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Time(f64);
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Time {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The length of `from..to` that no interval of `compute` (disjoint,
/// sorted) covers; `first` moves forward over intervals ended by `from`.
fn idle_in(compute: &[(f64, f64)], first: &mut usize, from: f64, to: f64) -> f64 {
    while *first < compute.len() && compute[*first].1 <= from {
        *first += 1;
    }
    let mut covered = 0.0;
    for &(a, b) in &compute[*first..] {
        if a >= to {
            break;
        }
        covered += (b.min(to) - a.max(from)).max(0.0);
    }
    (to - from - covered).max(0.0)
}

/// Exposed time per axis index: each instant some kernel of `comm`
/// (`(start, end, axis)`) is in flight and no compute runs is charged to the
/// axis of the in-flight kernel that ends last.
pub fn exposed_by_axis(
    comm: &[(f64, f64, usize)],
    compute: &[(f64, f64)],
    axes: usize,
) -> Vec<f64> {
    let mut out = vec![0.0; axes];
    // (time, 0 for an end and 1 for a start: ends first at a tie, kernel).
    let mut events: Vec<(f64, u8, usize)> = Vec::with_capacity(2 * comm.len());
    for (i, &(a, b, _)) in comm.iter().enumerate() {
        if b > a {
            events.push((a, 1, i));
            events.push((b, 0, i));
        }
    }
    events.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let mut active: BTreeSet<(Time, usize)> = BTreeSet::new();
    let mut first = 0;
    let mut prev = f64::NEG_INFINITY;
    for (t, kind, i) in events {
        if t > prev {
            if let Some(&(_, last)) = active.last() {
                out[comm[last].2] += idle_in(compute, &mut first, prev, t);
            }
            prev = t;
        }
        let key = (Time(comm[i].1), i);
        if kind == 1 {
            active.insert(key);
        } else {
            active.remove(&key);
        }
    }
    out
}

/// Every GPU of one file (its place `f` in the import's order), in device
/// order; `hta_steps` when the import holds two or more distinct profiler
/// steps (HTA's overlap then keeps the kernels launched before the last).
pub(crate) fn gpus_of(
    file: &FileTrace,
    f: usize,
    id: &Identified,
    matched: &Matched,
    first_gpu: usize,
    hta_steps: bool,
) -> Vec<GpuFigures> {
    id.devices
        .iter()
        .enumerate()
        .map(|(i, (d, indices))| {
            let (matched_here, alone) =
                matched.counts.get(first_gpu + i).copied().unwrap_or((0, 0));
            let transfer = |kernel: u32| matched.transfer_of(f, kernel);
            let mut g = gpu_figures(
                file,
                id,
                *d,
                indices,
                &transfer,
                matched_here > 0,
                hta_steps,
            );
            g.collectives_matched = matched_here;
            g.collectives_unmatched = alone;
            if g.comm_by_kind_ms.is_empty() {
                let kernels: Vec<&Kernel> =
                    indices.iter().map(|&k| &file.kernels[k as usize]).collect();
                let (steps, from, to) = window_of(file, &kernels);
                g.comm_candidates = candidates(file, id, indices, from, to, steps);
            }
            g
        })
        .collect()
}

/// HTA's overlap figure of one GPU's kernels (see the module's notes).
fn hta_overlap(
    file: &FileTrace,
    kernels: &[&Kernel],
    class: impl Fn(&Kernel) -> Class,
    hta_steps: bool,
) -> f64 {
    // HTA compares the launches' and the step's starts as it rounds them.
    let start = |t: f64| if file.hta_rounds { t.ceil() } else { t };
    let taken = kernels.iter().filter(|k| {
        !hta_steps
            || matches!((k.launch_us, file.last_step_start_us),
                (Some(l), Some(s)) if start(l) < start(s))
    });
    let interval = |k: &Kernel| {
        if file.hta_rounds {
            (k.ts_us.ceil(), k.end_us.floor())
        } else {
            (k.ts_us, k.end_us)
        }
    };
    let (mut comm, mut compute) = (Vec::new(), Vec::new());
    for k in taken {
        match class(k) {
            Class::Comm { .. } => comm.push(interval(k)),
            Class::Compute => compute.push(interval(k)),
            _ => {}
        }
    }
    overlap_ratio(&union(comm), &union(compute))
}

/// A GPU's step window: the profiler steps it spans and its first start
/// and last end, µs, over the kernels launched inside the marked steps,
/// else over all of them.
pub(crate) fn window_of(file: &FileTrace, kernels: &[&Kernel]) -> (u32, f64, f64) {
    let marked: Vec<&&Kernel> = kernels.iter().filter(|k| k.in_step).collect();
    let (steps, span_of): (u32, Vec<&&Kernel>) = if file.steps > 0 && !marked.is_empty() {
        (file.steps, marked)
    } else {
        (1, kernels.iter().collect())
    };
    let from = span_of
        .iter()
        .map(|k| k.ts_us)
        .fold(f64::INFINITY, f64::min);
    let to = span_of
        .iter()
        .map(|k| k.end_us)
        .fold(f64::NEG_INFINITY, f64::max);
    (steps, from, to)
}

/// One GPU's figures from its kernels (`indices` into the file's, in file
/// order); `transfer(k)` is the transfer of kernel `k` where matched across
/// ranks, and `matched` whether any of the GPU's was.
fn gpu_figures(
    file: &FileTrace,
    id: &Identified,
    device: i64,
    indices: &[u32],
    transfer: &dyn Fn(u32) -> Option<f64>,
    matched: bool,
    hta_steps: bool,
) -> GpuFigures {
    let kernels: Vec<&Kernel> = indices.iter().map(|&k| &file.kernels[k as usize]).collect();
    let kernels = kernels.as_slice();
    let class = |k: &Kernel| id.classes[k.name as usize];
    let (steps, from, to) = window_of(file, kernels);
    // `+ 0.0` writes an empty sum (-0.0 in Rust) as 0.
    let per_step_ms = |us: f64| us / 1e3 / f64::from(steps) + 0.0;

    let all = |keep: &dyn Fn(Class) -> bool| {
        union(
            kernels
                .iter()
                .filter(|k| keep(class(k)))
                .map(|k| (k.ts_us, k.end_us)),
        )
    };
    let compute_all = all(&|c| c == Class::Compute);
    let comm_all = all(&|c| matches!(c, Class::Comm { .. }));
    let overlap = hta_overlap(file, kernels, class, hta_steps);

    let compute = clip(&compute_all, from, to);
    let comm = clip(&comm_all, from, to);
    let memcpy = clip(&all(&|c| c == Class::Memcpy), from, to);
    let memset = clip(&all(&|c| c == Class::Memset), from, to);

    // Communication kernels with their axis and kind, clipped to the window.
    let mut axis_names: Vec<Option<Axis>> = Vec::new();
    let mut by_kind: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    let mut in_flight: Vec<(f64, f64, usize)> = Vec::new();
    // The same kernels' transfer parts: each kernel's last part, as long as
    // its collective's shortest kernel over the ranks.
    let mut transferring: Vec<(f64, f64, usize)> = Vec::new();
    for &ki in indices {
        let k = &file.kernels[ki as usize];
        let Some(c) = id.comm[ki as usize] else {
            continue;
        };
        let (axis, kind) = (c.axis, id.kinds[c.kind as usize].clone());
        let (a, b) = (k.ts_us.max(from), k.end_us.min(to));
        if b <= a {
            continue;
        }
        let ai = match axis_names.iter().position(|&x| x == axis) {
            Some(i) => i,
            None => {
                axis_names.push(axis);
                axis_names.len() - 1
            }
        };
        by_kind.entry(kind).or_default().push((a, b));
        in_flight.push((a, b, ai));
        let t_from = transfer(ki).map_or(k.ts_us, |t| (k.end_us - t).max(k.ts_us));
        let (ta, tb) = (t_from.max(from), b);
        if tb > ta {
            transferring.push((ta, tb, ai));
        }
    }
    let exposed = exposed_by_axis(&in_flight, &compute, axis_names.len());
    let transfer_exposed = exposed_by_axis(&transferring, &compute, axis_names.len());
    // Transfer figures of the kernels `keep` selects (by axis index).
    let transfer_of = |keep: &dyn Fn(usize) -> bool, comm_us: f64, exposed_us: f64| {
        if !matched {
            return Transfer::default();
        }
        let mine = union(
            transferring
                .iter()
                .filter(|c| keep(c.2))
                .map(|c| (c.0, c.1)),
        );
        let t_us = length(&mine);
        Transfer {
            transfer_ms: Some(per_step_ms(t_us)),
            wait_ms: Some(per_step_ms((comm_us - t_us).max(0.0))),
            transfer_exposed_ms: Some(per_step_ms(exposed_us)),
            transfer_hidden: share(intersection_length(&mine, &compute), t_us),
        }
    };
    let mut axes = BTreeMap::new();
    for (ai, axis) in axis_names.iter().enumerate() {
        let mine = union(in_flight.iter().filter(|c| c.2 == ai).map(|c| (c.0, c.1)));
        let comm_us = length(&mine);
        let under_compute_us = intersection_length(&mine, &compute);
        let exposed_us = exposed[ai];
        axes.insert(
            axis_name(*axis).to_string(),
            AxisFigures {
                comm_ms: per_step_ms(comm_us),
                under_compute_ms: per_step_ms(under_compute_us),
                exposed_ms: per_step_ms(exposed_us),
                under_idle_ms: per_step_ms((comm_us - under_compute_us - exposed_us).max(0.0)),
                hidden: share(under_compute_us, comm_us),
                not_exposed: not_exposed(exposed_us, comm_us),
                transfer: transfer_of(&|x| x == ai, comm_us, transfer_exposed[ai]),
            },
        );
    }
    let comm_us = length(&comm);
    let exposed_us: f64 = exposed.iter().sum();
    let all_transfer = transfer_of(&|_| true, comm_us, transfer_exposed.iter().sum());
    GpuFigures {
        file: file.source.clone(),
        rank: file.rank,
        device,
        steps,
        kernels: kernels.len(),
        step_ms: per_step_ms((to - from).max(0.0)),
        compute_ms: per_step_ms(length(&compute)),
        comm_ms: per_step_ms(comm_us),
        comm_by_kind_ms: by_kind
            .into_iter()
            .map(|(kind, list)| (kind, per_step_ms(length(&union(list)))))
            .collect(),
        axes,
        exposed_ms: per_step_ms(exposed_us),
        hidden: share(intersection_length(&comm, &compute), comm_us),
        not_exposed: not_exposed(exposed_us, comm_us),
        overlap,
        memcpy_ms: per_step_ms(length(&memcpy)),
        memset_ms: per_step_ms(length(&memset)),
        transfer: all_transfer,
        collectives_matched: 0,
        collectives_unmatched: 0,
        comm_candidates: Vec::new(),
    }
}

/// 1 - exposed / comm; none without communication.
pub(crate) fn not_exposed(exposed: f64, comm: f64) -> Option<f64> {
    (comm > 0.0).then(|| (1.0 - exposed / comm).clamp(0.0, 1.0))
}

/// part / whole, the share hidden under compute (model.md 6: `hidden`'s one
/// meaning); none without a whole.
pub(crate) fn share(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| (part / whole).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_under_communication_goes_to_the_kernel_that_ends_last() {
        // Axis 0 in flight 0..10, axis 1 in flight 4..6; compute 2..3.
        let comm = [(0.0, 10.0, 0), (4.0, 6.0, 1)];
        let compute = [(2.0, 3.0)];
        let e = exposed_by_axis(&comm, &compute, 2);
        // Axis 0 ends last throughout: 10 - 1 of compute.
        assert_eq!(e, vec![9.0, 0.0]);
        // Axis 1 now ends last while in flight (4..12).
        let comm = [(0.0, 10.0, 0), (4.0, 12.0, 1)];
        let e = exposed_by_axis(&comm, &compute, 2);
        assert_eq!(e, vec![3.0, 8.0]);
        assert_eq!(e.iter().sum::<f64>(), 12.0 - 1.0);
    }
}
