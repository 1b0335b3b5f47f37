//! Where on the timeline a chapter's effect is, so that the page zooms there
//! instead of leaving the reader to find it at Fit zoom.

use overlap_core::timeline::{Axis, Interval, Phase};
use overlap_core::Timeline;

/// A part of the step a chapter points the view at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    /// The whole step (Fit).
    Whole,
    /// The last micro-batch's backward pass on the GPU that finishes last,
    /// and the communication after it: where gradient reductions hide or not.
    LastBackward,
    /// One transformer layer's forward GEMMs and their TP collectives, on the
    /// first micro-batch: where chunking shows.
    OneLayer,
    /// From the first data-parallel reduction to the step's end, with the
    /// link lanes in view: where axes meet on one NIC.
    NetworkLinks,
}

/// Room left on each side of a region, as a share of its length.
const MARGIN: f64 = 0.04;

impl Focus {
    /// Whether the page should bring the link lanes into view.
    pub fn shows_links(self) -> bool {
        matches!(self, Focus::NetworkLinks)
    }

    /// The time window to show, seconds from the step's start; `None` is the
    /// whole step (or a timeline without the region).
    pub fn span_s(self, timeline: &Timeline) -> Option<(f64, f64)> {
        let gpu = last_gpu(timeline)?;
        let g = &timeline.gpus[gpu];
        let region = match self {
            Focus::Whole => return None,
            Focus::LastBackward => {
                let last = g
                    .compute
                    .iter()
                    .filter(|i| i.phase == Phase::Backward)
                    .max_by(|a, b| a.end_s.total_cmp(&b.end_s))?;
                let start = g
                    .compute
                    .iter()
                    .filter(|i| i.phase == Phase::Backward && i.micro_batch == last.micro_batch)
                    .map(|i| i.start_s)
                    .fold(f64::INFINITY, f64::min);
                let end = lane_end(g.compute.iter().chain(g.comm.iter().flatten()));
                (start, end)
            }
            Focus::OneLayer => {
                let tp = &g.comm[Axis::Tp.index()];
                let first = tp
                    .iter()
                    .filter(|i| i.phase == Phase::Forward)
                    .min_by(|a, b| a.start_s.total_cmp(&b.start_s))?;
                let same = |i: &&Interval| {
                    i.phase == Phase::Forward
                        && i.layer == first.layer
                        && i.micro_batch == first.micro_batch
                };
                let ops: Vec<&Interval> = g.compute.iter().chain(tp.iter()).filter(same).collect();
                let start = ops.iter().map(|i| i.start_s).fold(f64::INFINITY, f64::min);
                (start, lane_end(ops.into_iter()))
            }
            Focus::NetworkLinks => {
                // From the first reduction to the step's end, where what the
                // sharing cost (or saved) shows.
                let dp = &g.comm[Axis::Dp.index()];
                let start = dp.iter().map(|i| i.start_s).fold(f64::INFINITY, f64::min);
                (start, timeline.step_time_s)
            }
        };
        let (start, end) = region;
        if !(start.is_finite() && end > start) {
            return None;
        }
        let pad = (end - start) * MARGIN;
        let step = timeline.step_time_s;
        Some(((start - pad).max(0.0), (end + pad).min(step)))
    }
}

fn lane_end<'a>(ops: impl Iterator<Item = &'a Interval>) -> f64 {
    ops.map(|i| i.end_s).fold(f64::NEG_INFINITY, f64::max)
}

/// The GPU whose compute ends last: the one that sets the step.
fn last_gpu(timeline: &Timeline) -> Option<usize> {
    timeline
        .gpus
        .iter()
        .enumerate()
        .max_by(|(_, a), (_, b)| {
            let end = |g: &overlap_core::timeline::GpuLanes| lane_end(g.compute.iter());
            end(a).total_cmp(&end(b))
        })
        .map(|(k, _)| k)
}
