//! Small timelines for the unit tests.

use overlap_core::timeline::{GpuLanes, Interval, OpKind, Phase};
use overlap_core::Timeline;

/// A forward bar of `op` from `start_s` to `end_s`.
pub fn iv(start_s: f64, end_s: f64, op: OpKind, chunk: u32) -> Interval {
    Interval {
        id: 0,
        owner: 0,
        exposed_from_s: 0.0,
        start_s,
        end_s,
        op,
        phase: Phase::Forward,
        micro_batch: 0,
        layer: 0,
        chunk,
        bytes: 0.0,
        kernel: None,
        achieved_gbps: 0.0,
        contention_s: 0.0,
        exposed_s: 0.0,
        window: None,
        flops: 0.0,
    }
}

/// One GPU with these compute bars and no communication.
pub fn timeline(compute: Vec<Interval>, step_time_s: f64) -> Timeline {
    Timeline {
        step_time_s,
        reduced: false,
        gpus: vec![GpuLanes {
            rank: 0,
            node: 0,
            stage: 0,
            dp_rank: 0,
            tp_rank: 0,
            represents: 1,
            compute,
            comm: Default::default(),
        }],
        links: Vec::new(),
    }
}
