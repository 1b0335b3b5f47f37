//! A simulation's timeline made ready for drawing: lanes sorted by start for
//! binary search, the longest bar of each lane, the axes that have traffic.

use overlap_core::timeline::{Axis, Direction, Interval, Lane, LinkClass};
use overlap_core::Timeline;

/// A simulation's timeline, its lanes sorted by start for binary search.
#[derive(Clone)]
pub struct Prepared {
    /// The timeline as the core made it, lanes sorted.
    pub timeline: Timeline,
    /// Axes with any communication in this step; only they get lanes.
    pub axes: Vec<Axis>,
    /// Longest bar per GPU, indexed by `Lane::index`.
    max_dur_s: Vec<[f64; 4]>,
    /// Bars in the whole step.
    pub bars: usize,
}

impl Prepared {
    /// Sorts what needs sorting and measures the lanes.
    pub fn new(mut timeline: Timeline) -> Self {
        let mut max_dur_s = Vec::with_capacity(timeline.gpus.len());
        let mut any = [false; 3];
        for gpu in &mut timeline.gpus {
            let mut md = [0.0; 4];
            sort_by_start(&mut gpu.compute);
            md[Lane::Compute.index()] = longest(&gpu.compute);
            for axis in Axis::ALL {
                let lane = &mut gpu.comm[axis.index()];
                sort_by_start(lane);
                md[Lane::Comm(axis).index()] = longest(lane);
                any[axis.index()] |= !lane.is_empty();
            }
            max_dur_s.push(md);
        }
        for link in &mut timeline.links {
            if !link.samples.windows(2).all(|w| w[0].t_s <= w[1].t_s) {
                link.samples.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
            }
        }
        let axes = Axis::ALL.into_iter().filter(|a| any[a.index()]).collect();
        let bars = timeline.interval_count();
        Self {
            timeline,
            axes,
            max_dur_s,
            bars,
        }
    }

    /// The bars of one lane of one simulated GPU, sorted by start.
    pub fn lane(&self, gpu: usize, lane: Lane) -> &[Interval] {
        let g = &self.timeline.gpus[gpu];
        match lane {
            Lane::Compute => &g.compute,
            Lane::Comm(axis) => &g.comm[axis.index()],
        }
    }

    /// The longest bar of a lane, seconds: how far before a window a bar
    /// that reaches into it can start.
    pub fn max_dur_s(&self, gpu: usize, lane: Lane) -> f64 {
        self.max_dur_s.get(gpu).map_or(0.0, |md| md[lane.index()])
    }

    /// The step's length, seconds (never zero).
    pub fn step_s(&self) -> f64 {
        self.timeline.step_time_s.max(1e-12)
    }

    /// Link lanes to draw for one simulated GPU, in a fixed order, plus the
    /// shared network core when there is one.
    pub fn links_of(&self, gpu: usize) -> Vec<usize> {
        let order = [
            (LinkClass::Nvlink, Direction::Out),
            (LinkClass::Nvlink, Direction::In),
            (LinkClass::Network, Direction::Out),
            (LinkClass::Network, Direction::In),
        ];
        let links = &self.timeline.links;
        let mut out = Vec::new();
        for (class, dir) in order {
            out.extend(
                links
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.gpu == Some(gpu) && l.class == class && l.direction == dir)
                    .map(|(i, _)| i),
            );
        }
        out.extend(
            links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.gpu.is_none())
                .map(|(i, _)| i),
        );
        out
    }
}

fn sort_by_start(lane: &mut [Interval]) {
    if !lane.windows(2).all(|w| w[0].start_s <= w[1].start_s) {
        lane.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    }
}

fn longest(lane: &[Interval]) -> f64 {
    lane.iter()
        .map(|iv| iv.end_s - iv.start_s)
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{iv, timeline};
    use overlap_core::timeline::OpKind;

    #[test]
    fn lanes_are_sorted_for_binary_search() {
        let p = Prepared::new(timeline(
            vec![iv(2.0, 3.0, OpKind::Qkv, 0), iv(0.0, 1.0, OpKind::Proj, 0)],
            3.0,
        ));
        assert_eq!(p.lane(0, Lane::Compute)[0].op, OpKind::Proj);
        assert_eq!(p.max_dur_s(0, Lane::Compute), 1.0);
        assert!(p.axes.is_empty());
    }
}
