//! Each lane's kernels on CUDA streams, no two overlapping on one, and
//! each kernel's host launch.

use crate::model::axis::{Axis, Lane};
use crate::output::timeline::{GpuLanes, Interval};

/// Host time a kernel launch takes, µs (a `cudaLaunchKernel` call is a few µs).
pub(super) const LAUNCH_US: i64 = 4;
/// CUDA streams as PyTorch's default compute stream and NCCL's streams often
/// number them; streams beyond these (kernels of one lane that overlap each
/// other) are numbered from `EXTRA_STREAM`.
const COMPUTE_STREAM: u32 = 7;
/// Stream ids are made up, one per axis (13, 17, 21, ...), apart from
/// compute's 7; a lane's further streams are numbered from `EXTRA_STREAM`.
fn axis_stream(axis: Axis) -> u32 {
    13 + 4 * axis.index() as u32
}
const EXTRA_STREAM: u32 = 13 + 4 * Axis::COUNT as u32;

pub(super) fn us(seconds: f64) -> i64 {
    (seconds * 1e6).round() as i64
}

/// A kernel placed on a stream with its launch, before the file is written.
pub(super) struct Placed<'a> {
    pub(super) iv: &'a Interval,
    pub(super) lane: Lane,
    pub(super) ts_us: i64,
    pub(super) end_us: i64,
    pub(super) stream: u32,
    pub(super) launch_us: i64,
}

/// Puts each lane's kernels on streams so that no two overlap on one stream
/// (a CUDA stream runs its kernels one after another), then gives every
/// kernel a host launch that ends by its start, on one host thread, as late
/// as the launches after it allow.
pub(super) fn place(gpu: &GpuLanes) -> (Vec<Placed<'_>>, Vec<(u32, Lane)>) {
    let lanes = std::iter::once((Lane::Compute, &gpu.compute)).chain(
        Axis::ALL
            .iter()
            .map(|&a| (Lane::Comm(a), &gpu.comm[a.index()])),
    );
    let mut placed = Vec::new();
    let mut streams: Vec<(u32, Lane)> = Vec::new();
    let mut next_extra = EXTRA_STREAM;
    for (lane, intervals) in lanes {
        let first = match lane {
            Lane::Compute => COMPUTE_STREAM,
            Lane::Comm(a) => axis_stream(a),
        };
        let mut order: Vec<&Interval> = intervals.iter().collect();
        order.sort_by(|a, b| a.start_s.total_cmp(&b.start_s).then(a.id.cmp(&b.id)));
        // (stream id, end of its last kernel) per stream of this lane.
        let mut lane_streams: Vec<(u32, i64)> = Vec::new();
        for iv in order {
            let (ts_us, end_us) = (us(iv.start_s), us(iv.end_s).max(us(iv.start_s)));
            let stream = match lane_streams.iter_mut().find(|(_, end)| *end <= ts_us) {
                Some(slot) => {
                    slot.1 = end_us;
                    slot.0
                }
                None => {
                    let id = if lane_streams.is_empty() {
                        first
                    } else {
                        next_extra += 1;
                        next_extra - 1
                    };
                    lane_streams.push((id, end_us));
                    streams.push((id, lane));
                    id
                }
            };
            placed.push(Placed {
                iv,
                lane,
                ts_us,
                end_us,
                stream,
                launch_us: 0,
            });
        }
    }
    // Launches from the last kernel backwards: each ends by its kernel's
    // start and before the next launch begins.
    placed.sort_by_key(|k| (k.ts_us, k.stream, k.iv.id));
    let mut next_launch = i64::MAX;
    for k in placed.iter_mut().rev() {
        let end = k.ts_us.min(next_launch);
        k.launch_us = end - LAUNCH_US;
        next_launch = k.launch_us;
    }
    (placed, streams)
}
