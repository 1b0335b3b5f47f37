//! The figures HolisticTraceAnalysis (HTA) computes from a GPU's kernels,
//! computed here from the timeline so that the report states them without a
//! trace. HTA sorts a rank's kernels into communication (NCCL) and
//! computation; each set is merged into a union of disjoint intervals.
//!
//! - Overlap (`get_comm_comp_overlap`): the length of the communication union
//!   intersected with the computation union, over the length of the
//!   communication union.
//! - Temporal breakdown (`get_temporal_breakdown`): over the span from the
//!   first kernel's start to the last kernel's end, the union of all kernels
//!   is busy and the rest idle; the computation union is compute time.
//!
//! Every compute interval of a GPU is a computation kernel and every
//! interval on its communication lanes an NCCL kernel, exactly as the
//! Kineto export (`kineto.rs`) names them.

use serde::Serialize;

use crate::output::timeline::{GpuLanes, Timeline};

/// Merges intervals `(start, end)` into disjoint ones, sorted by start.
/// Touching intervals merge; empty or reversed ones are dropped.
pub fn union(intervals: impl IntoIterator<Item = (f64, f64)>) -> Vec<(f64, f64)> {
    let mut sorted: Vec<(f64, f64)> = intervals.into_iter().filter(|(a, b)| b > a).collect();
    sorted.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(sorted.len());
    for (start, end) in sorted {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// The part of disjoint sorted intervals within `from..to`.
pub fn clip(disjoint: &[(f64, f64)], from: f64, to: f64) -> Vec<(f64, f64)> {
    disjoint
        .iter()
        .map(|&(a, b)| (a.max(from), b.min(to)))
        .filter(|(a, b)| b > a)
        .collect()
}

/// Total length of disjoint intervals.
pub fn length(disjoint: &[(f64, f64)]) -> f64 {
    disjoint.iter().map(|(a, b)| b - a).sum()
}

/// Length of the intersection of two unions (each disjoint and sorted).
pub fn intersection_length(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let (mut i, mut j, mut total) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        let from = a[i].0.max(b[j].0);
        let to = a[i].1.min(b[j].1);
        if to > from {
            total += to - from;
        }
        // The interval that ends first cannot meet anything further on.
        if a[i].1 <= b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// HTA's overlap ratio: |comm ∩ comp| / |comm|, from the two unions. With no
/// communication at all it is 0: nothing was overlapped (HTA itself divides
/// zero by zero there).
pub fn overlap_ratio(comm: &[(f64, f64)], comp: &[(f64, f64)]) -> f64 {
    let comm_s = length(comm);
    if comm_s > 0.0 {
        intersection_length(comm, comp) / comm_s
    } else {
        0.0
    }
}

/// One GPU's kernels as HTA classifies them, each set merged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelSets {
    /// Union of the computation kernels.
    pub compute: Vec<(f64, f64)>,
    /// Union of the communication (NCCL) kernels.
    pub comm: Vec<(f64, f64)>,
}

impl KernelSets {
    /// The compute lane and the three communication lanes of a GPU.
    pub fn of(gpu: &GpuLanes) -> Self {
        Self {
            compute: union(gpu.compute.iter().map(|iv| (iv.start_s, iv.end_s))),
            comm: union(gpu.comm.iter().flatten().map(|iv| (iv.start_s, iv.end_s))),
        }
    }

    /// HTA's `get_comm_comp_overlap` ratio for this GPU, 0..1.
    pub fn overlap(&self) -> f64 {
        overlap_ratio(&self.comm, &self.compute)
    }

    /// HTA's `get_temporal_breakdown` quantities for this GPU.
    pub fn breakdown(&self) -> Breakdown {
        let all = union(self.compute.iter().chain(&self.comm).copied());
        let span_s = match (all.first(), all.last()) {
            (Some(first), Some(last)) => last.1 - first.0,
            _ => 0.0,
        };
        let busy_s = length(&all);
        Breakdown {
            span_s,
            compute_s: length(&self.compute),
            idle_s: (span_s - busy_s).max(0.0),
        }
    }
}

/// A GPU's kernel time split as HTA's temporal breakdown splits it; the part
/// neither compute nor idle is communication that no compute overlaps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Breakdown {
    /// First kernel's start to last kernel's end (HTA's "kernel time"), s.
    pub span_s: f64,
    /// Union of the computation kernels, s.
    pub compute_s: f64,
    /// The span less the union of all kernels, s.
    pub idle_s: f64,
}

impl Breakdown {
    /// Compute share of the span (HTA's `compute_time_pctg` / 100).
    pub fn compute_share(&self) -> f64 {
        if self.span_s > 0.0 {
            self.compute_s / self.span_s
        } else {
            0.0
        }
    }

    /// Idle share of the span (HTA's `idle_time_pctg` / 100).
    pub fn idle_share(&self) -> f64 {
        if self.span_s > 0.0 {
            self.idle_s / self.span_s
        } else {
            0.0
        }
    }
}

/// HTA's overlap ratio of every simulated GPU, in rank order.
pub fn overlap_per_gpu(t: &Timeline) -> Vec<f64> {
    let mut per: Vec<(u32, f64)> = t
        .gpus
        .iter()
        .map(|g| (g.rank, KernelSets::of(g).overlap()))
        .collect();
    per.sort_by_key(|&(rank, _)| rank);
    per.into_iter().map(|(_, ratio)| ratio).collect()
}

/// The mean of the per-GPU ratios. Under the symmetric reduction every
/// simulated GPU stands for the same number of real ones, so this is also
/// the mean over the cluster.
pub fn mean(per_gpu: &[f64]) -> f64 {
    if per_gpu.is_empty() {
        0.0
    } else {
        per_gpu.iter().sum::<f64>() / per_gpu.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn union_merges_overlapping_and_touching_intervals() {
        let u = union([(5.0, 7.0), (0.0, 2.0), (1.0, 3.0), (3.0, 4.0), (6.0, 6.5)]);
        assert_eq!(u, vec![(0.0, 4.0), (5.0, 7.0)]);
        assert!(close(length(&u), 6.0));
        assert!(union([(2.0, 2.0), (3.0, 1.0)]).is_empty());
    }

    #[test]
    fn overlap_is_comm_union_met_by_compute_over_comm_union() {
        // Two NCCL kernels on different streams overlap each other: their
        // union is [0, 10], 10 long, not 12.
        let comm = union([(0.0, 6.0), (4.0, 10.0)]);
        // Compute covers [2, 3] and [5, 8] of it, and [12, 20] outside it.
        let comp = union([(2.0, 3.0), (5.0, 8.0), (12.0, 20.0)]);
        assert!(close(overlap_ratio(&comm, &comp), 4.0 / 10.0));
    }

    #[test]
    fn compute_covering_all_communication_is_full_overlap() {
        let comm = union([(1.0, 2.0), (3.0, 4.0)]);
        let comp = union([(0.0, 2.5), (2.5, 5.0)]);
        assert!(close(overlap_ratio(&comm, &comp), 1.0));
        assert!(close(overlap_ratio(&comm, &[]), 0.0));
        assert!(close(overlap_ratio(&[], &comp), 0.0));
    }

    #[test]
    fn breakdown_splits_the_span_into_compute_comm_and_idle() {
        let sets = KernelSets {
            compute: union([(0.0, 4.0), (6.0, 8.0)]),
            comm: union([(3.0, 5.0), (9.0, 10.0)]),
        };
        let b = sets.breakdown();
        assert!(close(b.span_s, 10.0));
        assert!(close(b.compute_s, 6.0));
        // Busy: [0, 5], [6, 8], [9, 10] = 8; idle 2.
        assert!(close(b.idle_s, 2.0));
        assert!(close(b.compute_share(), 0.6) && close(b.idle_share(), 0.2));
        assert!(close(sets.overlap(), 1.0 / 3.0));
    }

    #[test]
    fn each_file_stands_for_its_stage_the_full_simulation_agrees() {
        use crate::{presets, simulate_with, Fidelity};
        let s = presets::scenario("didactic").unwrap();
        let reduced = simulate_with(&s, Fidelity::Reduced);
        let full = simulate_with(&s, Fidelity::Full);
        let per_stage = &reduced.report.hta_overlap_per_gpu;
        assert_eq!(per_stage.len(), reduced.timeline.gpus.len());
        assert_eq!(
            full.report.hta_overlap_per_gpu.len() as u64,
            s.hardware.gpus()
        );
        for g in &full.timeline.gpus {
            let ratio = KernelSets::of(g).overlap();
            let want = per_stage[g.stage as usize];
            assert!(
                (ratio - want).abs() < 1e-9,
                "rank {}: {ratio} vs {want}",
                g.rank
            );
        }
        assert!((full.report.hta_overlap - reduced.report.hta_overlap).abs() < 1e-9);
    }

    #[test]
    fn mean_of_no_gpus_is_zero() {
        assert_eq!(mean(&[]), 0.0);
        assert!(close(mean(&[0.25, 0.75]), 0.5));
    }
}
