//! Where each lane of the timeline sits on the canvas, in CSS pixels.

use overlap_core::timeline::Lane;

use crate::prepared::Prepared;
use crate::scene::Run;

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
        Self::compute_with_before(p, None, width, link_gpu)
    }

    /// As [`Layout::compute`], with the chosen GPU's lanes of the run before
    /// (`before`) under the current GPUs, so that both runs share one time axis.
    pub fn compute_with_before(
        p: &Prepared,
        before: Option<&Prepared>,
        width: f64,
        link_gpu: usize,
    ) -> Layout {
        let narrow = width < 560.0;
        let left = if narrow { 66.0 } else { 104.0 };
        let right = width - 8.0;
        let axis_h = 22.0;
        let gpus = p.timeline.gpus.len().max(1);
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
        for gpu in 0..p.timeline.gpus.len() {
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
