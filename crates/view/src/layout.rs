//! Where each lane of the timeline sits on the canvas, in CSS pixels.

use overlap_core::timeline::Lane;

use crate::prepared::Prepared;
use crate::shown_gpus::ShownGpus;

/// Which run a timeline row draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// The latest simulation.
    Current,
    /// The run before it (`Scene::before`), whose lanes of one GPU are
    /// drawn under the current ones.
    Before,
}

/// What a row of the timeline shows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RowKind {
    /// One lane (compute or an axis's communication) of a simulated GPU.
    Gpu {
        /// Index into `Timeline::gpus`.
        gpu: usize,
        /// Which of its lanes.
        lane: Lane,
    },
    /// One lane of the chosen GPU in the run before the current one, drawn
    /// under the current lanes on the same time axis.
    Before {
        /// Which of its lanes.
        lane: Lane,
    },
    /// A link's bandwidth.
    Link {
        /// Index into `Timeline::links`.
        link: usize,
    },
}

/// One row of the timeline: what it shows, its top and its height.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// What the row shows.
    pub kind: RowKind,
    /// Top, px.
    pub y: f64,
    /// Height, px.
    pub h: f64,
}

/// Where a GPU's group of lanes sits, with the strip for window brackets.
#[derive(Clone, Copy, Debug)]
pub struct Band {
    /// Index into `Timeline::gpus`.
    pub gpu: usize,
    /// Top of the group, px.
    pub y0: f64,
    /// Top of the bracket strip, px.
    pub bracket_y: f64,
    /// Height of the bracket strip, px (0 when brackets do not fit).
    pub bracket_h: f64,
}

/// The rows of the timeline and the plot's edges, CSS pixels.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    /// Total height.
    pub height: f64,
    /// Left edge of the plot (the gutter holds labels).
    pub left: f64,
    /// Right edge of the plot.
    pub right: f64,
    /// Height of the time axis strip at the top.
    pub axis_h: f64,
    /// Every row, top to bottom.
    pub rows: Vec<Row>,
    /// One per simulated GPU.
    pub bands: Vec<Band>,
    /// Baseline of the link section's heading.
    pub links_y: f64,
    /// Top and bottom of the GPU rows.
    pub gpu_area: (f64, f64),
    /// Top and bottom of the link rows.
    pub link_area: (f64, f64),
    /// Whether lanes are tall enough for their labels.
    pub label_lanes: bool,
    /// Baseline of the heading over the before lanes, when they are shown.
    pub before_y: Option<f64>,
}

impl Layout {
    /// Lane heights shrink with the number of simulated GPUs, so that a 64-stage
    /// pipeline still fits on a screen; labels and brackets go when too small.
    pub fn compute(p: &Prepared, width: f64, link_gpu: usize) -> Layout {
        Self::compute_with_before(p, None, width, link_gpu, ShownGpus::All)
    }

    /// As [`Layout::compute`], with the chosen GPU's lanes of the run before
    /// (`before`) under the current GPUs, so that both runs share one time
    /// axis, and only the GPUs `shown` (the lanes share the height among them).
    pub fn compute_with_before(
        p: &Prepared,
        before: Option<&Prepared>,
        width: f64,
        link_gpu: usize,
        shown: ShownGpus,
    ) -> Layout {
        let narrow = width < 560.0;
        let left = if narrow { 66.0 } else { 104.0 };
        let right = width - 8.0;
        let axis_h = 22.0;
        let shown = shown.range(p.timeline.gpus.len());
        let gpus = shown.len().max(1);
        let n_axes = p.axes.len() as f64;
        // Few GPUs get roomy lanes, so bar labels fit.
        let (compute_h, comm_h, bracket_h, gap) = if gpus <= 4 {
            (26.0, 15.0, 10.0, 10.0)
        } else {
            (18.0, 12.0, 9.0, 8.0)
        };
        let full = compute_h + n_axes * comm_h + bracket_h + gap;
        let budget = if narrow { 420.0 } else { 560.0 };
        let per_gpu = full.min((budget / gpus as f64).max(8.0));
        let k = per_gpu / full;
        let show_brackets = k > 0.75;
        let mut rows = Vec::new();
        let mut bands = Vec::new();
        let mut y = axis_h + 4.0;
        for gpu in shown {
            let y0 = y;
            let bh = if show_brackets { bracket_h * k } else { 0.0 };
            let bracket_y = y;
            y += bh;
            rows.push(Row {
                kind: RowKind::Gpu {
                    gpu,
                    lane: Lane::Compute,
                },
                y,
                h: compute_h * k,
            });
            y += compute_h * k;
            for axis in &p.axes {
                rows.push(Row {
                    kind: RowKind::Gpu {
                        gpu,
                        lane: Lane::Comm(*axis),
                    },
                    y,
                    h: comm_h * k,
                });
                y += comm_h * k;
            }
            bands.push(Band {
                gpu,
                y0,
                bracket_y,
                bracket_h: bh,
            });
            y += gap * k;
        }
        let mut before_y = None;
        if let Some(b) = before {
            y += 14.0;
            before_y = Some(y - 4.0);
            let lanes = std::iter::once(Lane::Compute).chain(b.axes.iter().map(|a| Lane::Comm(*a)));
            for lane in lanes {
                let h = if lane == Lane::Compute {
                    compute_h
                } else {
                    comm_h
                } * k;
                rows.push(Row {
                    kind: RowKind::Before { lane },
                    y,
                    h,
                });
                y += h;
            }
            y += gap * k;
        }
        let gpu_area = (axis_h, y);
        y += 22.0;
        let links_y = y - 16.0;
        let link_start = y;
        for link in p.links_of(link_gpu.min(p.timeline.gpus.len().saturating_sub(1))) {
            rows.push(Row {
                kind: RowKind::Link { link },
                y,
                h: 26.0,
            });
            y += 30.0;
        }
        Layout {
            height: y + 6.0,
            left,
            right,
            axis_h,
            rows,
            bands,
            links_y,
            gpu_area,
            link_area: (link_start, y),
            label_lanes: k > 0.6,
            before_y,
        }
    }

    /// The row at height `y`, if any.
    pub fn row_at(&self, y: f64) -> Option<&Row> {
        self.rows.iter().find(|l| y >= l.y && y < l.y + l.h)
    }

    /// The row of one lane of one GPU.
    pub fn row_of(&self, gpu: usize, lane: Lane) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.kind == RowKind::Gpu { gpu, lane })
    }

    /// The row of one lane of `run`'s GPU `gpu`: the run before has rows for
    /// one GPU only (`Scene::before_gpu`).
    pub fn row_in(&self, run: Run, gpu: usize, lane: Lane) -> Option<&Row> {
        match run {
            Run::Current => self.row_of(gpu, lane),
            Run::Before => self
                .rows
                .iter()
                .find(|r| r.kind == RowKind::Before { lane }),
        }
    }

    /// The plot's width, px (at least 1).
    pub fn plot_w(&self) -> f64 {
        (self.right - self.left).max(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;
    use overlap_core::timeline::OpKind;

    /// A step of `gpus` simulated GPUs, each with a compute bar and a
    /// collective on every axis.
    fn step_of(gpus: usize) -> Prepared {
        let mut t = testing::timeline(vec![testing::iv(0.0, 1.0, OpKind::Qkv, 0)], 1.0);
        t.gpus[0].comm = std::array::from_fn(|_| vec![testing::iv(0.0, 0.5, OpKind::AllReduce, 0)]);
        let one = t.gpus[0].clone();
        t.gpus = (0..gpus)
            .map(|i| {
                let mut g = one.clone();
                g.rank = i as u32;
                g.stage = i as u32;
                g
            })
            .collect();
        Prepared::new(t)
    }

    fn compute_h(l: &Layout, gpu: usize) -> Option<f64> {
        l.row_of(gpu, Lane::Compute).map(|r| r.h)
    }

    #[test]
    fn a_group_of_a_large_step_gets_the_lane_height_of_a_small_one() {
        let step = step_of(64);
        let all = Layout::compute(&step, 1000.0, 0);
        assert_eq!(all.bands.len(), 64);
        let group = ShownGpus::Range { first: 8, last: 15 };
        let l = Layout::compute_with_before(&step, None, 1000.0, 0, group);
        let drawn: Vec<usize> = l.bands.iter().map(|b| b.gpu).collect();
        assert_eq!(drawn, (8..16).collect::<Vec<_>>());
        assert!(compute_h(&l, 7).is_none() && compute_h(&l, 16).is_none());
        // As tall as the lanes of a step of eight GPUs, and several times
        // the overview's.
        let eight = Layout::compute(&step_of(8), 1000.0, 0);
        assert_eq!(compute_h(&l, 8), compute_h(&eight, 0));
        assert!(compute_h(&l, 8).unwrap() > 6.0 * compute_h(&all, 8).unwrap());
        assert!(l.label_lanes && !all.label_lanes);
        // The first group starts where the overview's first GPU does.
        assert_eq!(l.bands[0].y0, all.bands[0].y0);
    }

    #[test]
    fn a_group_past_the_step_draws_every_gpu() {
        let step = step_of(12);
        let past = ShownGpus::Range {
            first: 16,
            last: 23,
        };
        let l = Layout::compute_with_before(&step, None, 1000.0, 0, past);
        assert_eq!(l.bands.len(), 12);
    }
}
