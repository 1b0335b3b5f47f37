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
    /// The first pipeline boundary: the sender's last forward layer before
    /// its first send, the send, and the receiver's first layer after it,
    /// where a blocking send and a sliced boundary show.
    FirstSend,
    /// One collective of the axis on the GPU that finishes last, with the
    /// compute just before, beside and after it: the one that stalls compute
    /// longest; among equals, or when none stalls, the one nearest the
    /// step's middle (away from the warm-up and the drain). Where an axis
    /// whose collectives are short next to the step waits, or hides.
    Wait(Axis),
}

/// Room left on each side of a region, as a share of its length.
const MARGIN: f64 = 0.04;

/// How much of the step around a [`Focus::Wait`] collective is shown, on
/// each side, in lengths of the collective: enough for the compute before
/// and after it, short enough that a sub-millisecond collective is wide.
const WAIT_CONTEXT: f64 = 3.0;

/// Stalls within this share of the longest count as equal for
/// [`Focus::Wait`]: the same collective repeats in every layer.
const WAIT_TIE: f64 = 0.01;

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
            Focus::FirstSend => first_send(timeline)?,
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
            Focus::Wait(axis) => {
                let ops = &g.comm[axis.index()];
                let longest_s = ops.iter().map(|i| i.exposed_s).fold(0.0, f64::max);
                let middle_s = timeline.step_time_s / 2.0;
                let from_middle = |i: &Interval| (i.start_s - middle_s).abs();
                let op = ops
                    .iter()
                    .filter(|i| i.exposed_s >= longest_s * (1.0 - WAIT_TIE))
                    .min_by(|a, b| from_middle(a).total_cmp(&from_middle(b)))?;
                let context_s = WAIT_CONTEXT * (op.end_s - op.start_s);
                (op.start_s - context_s, op.end_s + context_s)
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

/// The span of [`Focus::FirstSend`]: from the start of the layer the sender
/// computed last before its first forward send to the end of the first layer
/// the receiver computes after the data arrived.
fn first_send(timeline: &Timeline) -> Option<(f64, f64)> {
    let pp = Axis::Pp.index();
    let send = timeline
        .gpus
        .iter()
        .flat_map(|g| g.comm[pp].iter())
        .filter(|i| i.phase == Phase::Forward)
        .min_by(|a, b| a.start_s.total_cmp(&b.start_s))?;
    let sender = timeline.gpus.get(send.owner as usize)?;
    // The whole layer around an op: its other ops (GEMM chunks, norms) too.
    let layer_span = |g: &overlap_core::timeline::GpuLanes, op: &Interval| {
        let ops = g.compute.iter().filter(|i| {
            i.phase == op.phase && i.micro_batch == op.micro_batch && i.layer == op.layer
        });
        ops.fold((op.start_s, op.end_s), |(a, b), i| {
            (a.min(i.start_s), b.max(i.end_s))
        })
    };
    let before = sender
        .compute
        .iter()
        .filter(|i| i.end_s <= send.start_s + 1e-12)
        .max_by(|a, b| a.end_s.total_cmp(&b.end_s))
        .map(|op| layer_span(sender, op).0)
        .unwrap_or(send.start_s);
    // The receiver shows the same send on its lane; without one, the sender.
    let receiver = timeline
        .gpus
        .iter()
        .enumerate()
        .find(|(k, g)| *k != send.owner as usize && g.comm[pp].iter().any(|i| i.id == send.id))
        .map_or(sender, |(_, g)| g);
    let after = receiver
        .compute
        .iter()
        .filter(|i| i.start_s >= send.end_s - 1e-12)
        .min_by(|a, b| a.start_s.total_cmp(&b.start_s))
        .map(|op| layer_span(receiver, op).1)
        .unwrap_or(send.end_s);
    Some((before, after))
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
