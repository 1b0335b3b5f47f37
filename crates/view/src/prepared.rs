//! A simulation's timeline made ready for drawing: lanes sorted by start for
//! binary search, the longest bar of each lane, the axes that have traffic.

use overlap_core::timeline::{Axis, Direction, Interval, Lane, LinkClass};
use overlap_core::Timeline;

use crate::lod::{Block, BLOCK_BARS};

/// A simulation's timeline, its lanes sorted by start for binary search.
#[derive(Clone)]
pub struct Prepared {
    /// The timeline as the core made it, lanes sorted.
    pub timeline: Timeline,
    /// Axes with any communication in this step; only they get lanes.
    pub axes: Vec<Axis>,
    /// Longest bar per GPU, indexed by `Lane::index`.
    max_dur_s: Vec<[f64; 1 + Axis::COUNT]>,
    /// Each lane's summary for the level of detail, per GPU, by `Lane::index`.
    blocks: Vec<[Vec<Block>; 1 + Axis::COUNT]>,
    /// Bars in the whole step.
    pub bars: usize,
}

impl Prepared {
    /// Sorts what needs sorting and measures the lanes, all at once.
    pub fn new(timeline: Timeline) -> Self {
        let mut p = Preparing::new(timeline);
        while !p.step(usize::MAX) {}
        p.finish()
    }

    /// The bars of one lane of one simulated GPU, sorted by start.
    pub fn lane(&self, gpu: usize, lane: Lane) -> &[Interval] {
        let g = &self.timeline.gpus[gpu];
        match lane {
            Lane::Compute => &g.compute,
            Lane::Comm(axis) => &g.comm[axis.index()],
        }
    }

    /// A lane's summary, one [`Block`] per `lod::BLOCK_BARS` bars.
    pub fn blocks(&self, gpu: usize, lane: Lane) -> &[Block] {
        self.blocks.get(gpu).map_or(&[], |b| &b[lane.index()])
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

/// A timeline being prepared a slice at a time: the page measures a large
/// one across several short tasks, so that none holds its main thread for
/// long. Lanes arrive sorted from the simulation worker, so a slice is
/// normally a plain scan.
pub struct Preparing {
    timeline: Timeline,
    max_dur_s: Vec<[f64; 1 + Axis::COUNT]>,
    blocks: Vec<[Vec<Block>; 1 + Axis::COUNT]>,
    any: [bool; Axis::COUNT],
    /// The GPU, lane (by `Lane::index`) and bar the next slice starts at;
    /// GPUs past the last are the links, one per lane index.
    gpu: usize,
    lane: usize,
    at: usize,
}

impl Preparing {
    /// Starts preparing `timeline`.
    pub fn new(timeline: Timeline) -> Self {
        let gpus = timeline.gpus.len();
        Self {
            timeline,
            max_dur_s: vec![[0.0; 1 + Axis::COUNT]; gpus],
            blocks: (0..gpus).map(|_| Default::default()).collect(),
            any: [false; Axis::COUNT],
            gpu: 0,
            lane: 0,
            at: 0,
        }
    }

    /// Bars in the whole step.
    pub fn bars(&self) -> usize {
        self.timeline.interval_count()
    }

    /// Measures up to about `max_bars` more bars (or link samples); true
    /// once everything is measured.
    pub fn step(&mut self, max_bars: usize) -> bool {
        let mut budget = max_bars.max(1);
        while budget > 0 {
            let gpus = self.timeline.gpus.len();
            if self.gpu < gpus {
                let lane = Lane::from_index(self.lane).unwrap_or(Lane::Compute);
                let g = &mut self.timeline.gpus[self.gpu];
                let bars = match lane {
                    Lane::Compute => &mut g.compute,
                    Lane::Comm(axis) => &mut g.comm[axis.index()],
                };
                if self.at == 0 {
                    // Normally sorted already: one check, no sort.
                    sort_by_start(bars);
                }
                // Whole blocks: `at` stays on a block boundary until the lane's tail.
                let end = bars.len().min(
                    self.at
                        .saturating_add(budget)
                        .div_ceil(BLOCK_BARS)
                        .saturating_mul(BLOCK_BARS),
                );
                let md = &mut self.max_dur_s[self.gpu][self.lane];
                *md = md.max(longest(&bars[self.at..end]));
                self.blocks[self.gpu][self.lane]
                    .extend(bars[self.at..end].chunks_exact(BLOCK_BARS).map(Block::of));
                budget = budget.saturating_sub(end - self.at);
                self.at = end;
                if self.at < bars.len() {
                    continue;
                }
                if let Lane::Comm(axis) = lane {
                    self.any[axis.index()] |= !bars.is_empty();
                }
                self.at = 0;
                self.lane += 1;
                if Lane::from_index(self.lane).is_none() {
                    self.lane = 0;
                    self.gpu += 1;
                }
            } else if let Some(link) = self.timeline.links.get_mut(self.gpu - gpus) {
                if !link.samples.windows(2).all(|w| w[0].t_s <= w[1].t_s) {
                    link.samples.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
                }
                budget = budget.saturating_sub(link.samples.len().max(1));
                self.gpu += 1;
            } else {
                return true;
            }
        }
        self.gpu >= self.timeline.gpus.len() + self.timeline.links.len()
    }

    /// The prepared timeline; call once [`Preparing::step`] returned true
    /// (any lane not reached yet is measured here).
    pub fn finish(mut self) -> Prepared {
        while !self.step(usize::MAX) {}
        let any = self.any;
        let axes = Axis::ALL.into_iter().filter(|a| any[a.index()]).collect();
        let bars = self.timeline.interval_count();
        Prepared {
            timeline: self.timeline,
            axes,
            max_dur_s: self.max_dur_s,
            blocks: self.blocks,
            bars,
        }
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

    #[test]
    fn preparing_in_slices_equals_preparing_at_once() {
        let bars: Vec<_> = (0..50)
            .map(|i| {
                let start = f64::from((i * 7) % 50);
                iv(start, start + 0.5 + f64::from(i % 5), OpKind::Qkv, 0)
            })
            .collect();
        let whole = Prepared::new(timeline(bars.clone(), 60.0));
        let mut sliced = Preparing::new(timeline(bars, 60.0));
        let mut slices = 1;
        while !sliced.step(3) {
            slices += 1;
        }
        // Slices end on whole blocks of the level-of-detail summary.
        assert!(slices > 50 / BLOCK_BARS, "{slices} slices");
        let sliced = sliced.finish();
        assert_eq!(
            sliced.max_dur_s(0, Lane::Compute),
            whole.max_dur_s(0, Lane::Compute)
        );
        assert_eq!(sliced.max_dur_s(0, Lane::Compute), 4.5);
        assert_eq!(sliced.lane(0, Lane::Compute), whole.lane(0, Lane::Compute));
        assert_eq!(sliced.bars, 50);
        assert_eq!(sliced.axes, whole.axes);
        assert_eq!(
            sliced.blocks(0, Lane::Compute),
            crate::lod::blocks(sliced.lane(0, Lane::Compute)).as_slice()
        );
        assert_eq!(sliced.blocks(0, Lane::Compute).len(), 50 / BLOCK_BARS);
    }
}
