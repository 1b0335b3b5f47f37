//! The timeline as plain data, outside the reactive graph: the current and the
//! previous simulation (for the morph), the view window, the playhead and the
//! lane layout. The canvas is painted from here by `timeline_draw`.

use std::collections::HashMap;

use overlap_core::timeline::{Axis, Direction, Interval, LinkClass};
use overlap_core::Timeline;

use crate::lod;

/// Bars above this count are not morphed: interpolating millions of bars per
/// frame would cost more than the animation is worth.
pub const MORPH_MAX_BARS: usize = 60_000;
pub const MORPH_MS: f64 = 450.0;
/// A step plays in this many seconds at speed 1.
pub const PLAY_SECONDS: f64 = 8.0;

/// A simulation's timeline, its lanes sorted by start for binary search.
pub struct Prepared {
    pub timeline: Timeline,
    /// Axes with any communication in this step; only they get lanes.
    pub axes: Vec<Axis>,
    /// Longest bar per GPU and lane slot (0 compute, 1 + axis index comm).
    pub max_dur: Vec<[f64; 4]>,
    pub bars: usize,
}

impl Prepared {
    pub fn new(mut timeline: Timeline) -> Self {
        let mut max_dur = Vec::with_capacity(timeline.gpus.len());
        let mut any = [false; 3];
        for gpu in &mut timeline.gpus {
            let mut md = [0.0; 4];
            sort_by_start(&mut gpu.compute);
            md[0] = longest(&gpu.compute);
            for (a, lane) in gpu.comm.iter_mut().enumerate() {
                sort_by_start(lane);
                md[a + 1] = longest(lane);
                any[a] |= !lane.is_empty();
            }
            max_dur.push(md);
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
            max_dur,
            bars,
        }
    }

    pub fn lane(&self, gpu: usize, slot: usize) -> &[Interval] {
        let g = &self.timeline.gpus[gpu];
        if slot == 0 {
            &g.compute
        } else {
            &g.comm[slot - 1]
        }
    }

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
        let mut out = Vec::new();
        for (class, dir) in order {
            out.extend(
                self.timeline
                    .links
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.gpu == Some(gpu) && l.class == class && l.direction == dir)
                    .map(|(i, _)| i),
            );
        }
        out.extend(
            self.timeline
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| l.gpu.is_none())
                .map(|(i, _)| i),
        );
        out
    }
}

/// What identifies "the same operation" across two runs: op, phase,
/// micro-batch, layer, chunk, and which repeat of that combination it is.
type OpKey = (u32, u32, u32, u32, u32, u32);

fn op_keys(lane: &[Interval], with_chunk: bool) -> Vec<OpKey> {
    let mut seen: HashMap<OpKey, u32> = HashMap::new();
    lane.iter()
        .map(|iv| {
            let chunk = if with_chunk { iv.chunk } else { 0 };
            let base = (
                iv.op as u32,
                iv.phase as u32,
                iv.micro_batch,
                iv.layer,
                chunk,
                0,
            );
            let n = seen.entry(base).or_insert(0);
            *n += 1;
            (base.0, base.1, base.2, base.3, base.4, *n - 1)
        })
        .collect()
}

/// For each bar of `next`, the span of the same operation in `prev`. Bars of a
/// newly split GEMM have no exact counterpart: they grow out of the unsplit
/// one (same op, micro-batch and layer), so chunking reads as a split.
fn morph_sources(prev: &Prepared, next: &Prepared) -> Vec<[Vec<(f64, f64)>; 4]> {
    let none = (f64::NAN, f64::NAN);
    (0..next.timeline.gpus.len())
        .map(|gpu| {
            std::array::from_fn(|slot| {
                let new_lane = next.lane(gpu, slot);
                if gpu >= prev.timeline.gpus.len() {
                    return vec![none; new_lane.len()];
                }
                let old_lane = prev.lane(gpu, slot);
                let exact: HashMap<OpKey, (f64, f64)> = op_keys(old_lane, true)
                    .into_iter()
                    .zip(old_lane.iter().map(|iv| (iv.start_s, iv.end_s)))
                    .collect();
                let mut loose: HashMap<(u32, u32, u32, u32), (f64, f64)> = HashMap::new();
                for iv in old_lane {
                    let k = (iv.op as u32, iv.phase as u32, iv.micro_batch, iv.layer);
                    let e = loose.entry(k).or_insert((iv.start_s, iv.end_s));
                    e.0 = e.0.min(iv.start_s);
                    e.1 = e.1.max(iv.end_s);
                }
                op_keys(new_lane, true)
                    .into_iter()
                    .zip(new_lane)
                    .map(|(k, iv)| {
                        exact.get(&k).copied().unwrap_or_else(|| {
                            loose
                                .get(&(iv.op as u32, iv.phase as u32, iv.micro_batch, iv.layer))
                                .copied()
                                .unwrap_or(none)
                        })
                    })
                    .collect()
            })
        })
        .collect()
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

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LaneKind {
    /// slot 0 is compute, 1 + axis index a communication lane.
    Gpu {
        gpu: usize,
        slot: usize,
    },
    Link {
        link: usize,
    },
}

#[derive(Clone, Copy, Debug)]
pub struct Lane {
    pub kind: LaneKind,
    pub y: f64,
    pub h: f64,
}

/// Where a GPU's group of lanes sits, with the strip for window brackets.
#[derive(Clone, Copy, Debug)]
pub struct Band {
    pub gpu: usize,
    pub y0: f64,
    pub bracket_y: f64,
    pub bracket_h: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Layout {
    pub height: f64,
    /// Left edge of the plot (the gutter holds labels) and its right edge.
    pub left: f64,
    pub right: f64,
    pub axis_h: f64,
    pub lanes: Vec<Lane>,
    pub bands: Vec<Band>,
    /// Top of the link section, for its heading.
    pub links_y: f64,
    pub gpu_area: (f64, f64),
    pub link_area: (f64, f64),
    pub label_lanes: bool,
}

impl Layout {
    /// Lane heights shrink with the number of simulated GPUs, so that a 64-stage
    /// pipeline still fits on a screen; labels and brackets go when too small.
    pub fn compute(p: &Prepared, width: f64, link_gpu: usize) -> Layout {
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
        let mut lanes = Vec::new();
        let mut bands = Vec::new();
        let mut y = axis_h + 4.0;
        for gpu in 0..p.timeline.gpus.len() {
            let y0 = y;
            let bh = if show_brackets { bracket_h * k } else { 0.0 };
            let bracket_y = y;
            y += bh;
            lanes.push(Lane {
                kind: LaneKind::Gpu { gpu, slot: 0 },
                y,
                h: compute_h * k,
            });
            y += compute_h * k;
            for axis in &p.axes {
                lanes.push(Lane {
                    kind: LaneKind::Gpu {
                        gpu,
                        slot: axis.index() + 1,
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
        let gpu_area = (axis_h, y);
        y += 22.0;
        let links_y = y - 16.0;
        let link_start = y;
        for link in p.links_of(link_gpu.min(p.timeline.gpus.len().saturating_sub(1))) {
            lanes.push(Lane {
                kind: LaneKind::Link { link },
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
            lanes,
            bands,
            links_y,
            gpu_area,
            link_area: (link_start, y),
            label_lanes: k > 0.6,
        }
    }

    pub fn lane_at(&self, y: f64) -> Option<&Lane> {
        self.lanes.iter().find(|l| y >= l.y && y < l.y + l.h)
    }
}

/// The visible time window, seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    pub t0: f64,
    pub t1: f64,
    /// Follows the whole step (and the morph between step lengths).
    pub fit: bool,
}

/// What the pointer is over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hit {
    Bar {
        gpu: usize,
        slot: usize,
        index: usize,
    },
    Link {
        link: usize,
        t_s: f64,
    },
}

pub struct Scene {
    pub current: Option<Prepared>,
    pub previous: Option<Prepared>,
    /// While morphing: per GPU and lane slot, where each current bar comes
    /// from in the previous timeline (NaN when it has no counterpart).
    pub morph_from: Vec<[Vec<(f64, f64)>; 4]>,
    pub morph_start_ms: Option<f64>,
    pub seq: u64,
    pub view: View,
    pub playhead_s: f64,
    pub playing: bool,
    pub speed: f64,
    pub link_gpu: usize,
    pub hover: Option<Hit>,
    pub layout: Layout,
}

impl Scene {
    pub fn new() -> Self {
        Self {
            current: None,
            previous: None,
            morph_from: Vec::new(),
            morph_start_ms: None,
            seq: 0,
            view: View {
                t0: 0.0,
                t1: 1.0,
                fit: true,
            },
            playhead_s: f64::INFINITY,
            playing: false,
            speed: 1.0,
            link_gpu: 0,
            hover: None,
            layout: Layout::default(),
        }
    }

    /// Installs a new timeline. With `animate`, the old one is kept for the
    /// morph; otherwise the new one shows at once in its final state.
    pub fn set_timeline(&mut self, timeline: Timeline, animate: bool, now_ms: f64) {
        let next = Prepared::new(timeline);
        let old = self.current.take();
        let can_morph = animate
            && old.as_ref().is_some_and(|o| {
                o.bars <= MORPH_MAX_BARS
                    && next.bars <= MORPH_MAX_BARS
                    && o.timeline.gpus.len() == next.timeline.gpus.len()
            });
        if self.view.fit {
            self.view.t0 = 0.0;
            self.view.t1 = next.step_s();
        } else if let Some(o) = &old {
            // Keep the same part of the step in view when its length changes.
            let ratio = next.step_s() / o.step_s();
            self.view.t0 *= ratio;
            self.view.t1 *= ratio;
        }
        self.morph_from = match (&old, can_morph) {
            (Some(o), true) => morph_sources(o, &next),
            _ => Vec::new(),
        };
        self.previous = if can_morph { old } else { None };
        self.morph_start_ms = can_morph.then_some(now_ms);
        if self.link_gpu >= next.timeline.gpus.len() {
            self.link_gpu = 0;
        }
        self.current = Some(next);
        self.hover = None;
        self.seq += 1;
    }

    /// Morph progress 0..1, eased; 1 when there is nothing to morph.
    pub fn morph_progress(&self, now_ms: f64) -> f64 {
        match (self.morph_start_ms, &self.previous) {
            (Some(start), Some(_)) => {
                let t = ((now_ms - start) / MORPH_MS).clamp(0.0, 1.0);
                // Ease in-out, so that bars do not jump at the start or stop abruptly.
                t * t * (3.0 - 2.0 * t)
            }
            _ => 1.0,
        }
    }

    pub fn finish_morph_if_done(&mut self, now_ms: f64) -> bool {
        if self.morph_start_ms.is_some() && self.morph_progress(now_ms) >= 1.0 {
            self.morph_start_ms = None;
            self.previous = None;
            self.morph_from.clear();
        }
        self.morph_start_ms.is_some()
    }

    pub fn step_s(&self) -> f64 {
        self.current.as_ref().map(Prepared::step_s).unwrap_or(1.0)
    }

    /// The window currently shown, following the morph when fitted.
    pub fn window(&self, morph: f64) -> (f64, f64) {
        if self.view.fit {
            let new = self.step_s();
            let old = self.previous.as_ref().map(Prepared::step_s).unwrap_or(new);
            (0.0, old + (new - old) * morph)
        } else {
            (self.view.t0, self.view.t1)
        }
    }

    pub fn x_of(&self, t: f64, win: (f64, f64)) -> f64 {
        let l = &self.layout;
        l.left + (t - win.0) / (win.1 - win.0).max(1e-15) * (l.right - l.left)
    }

    pub fn t_of(&self, x: f64) -> f64 {
        let l = &self.layout;
        let (t0, t1) = self.window(1.0);
        t0 + (x - l.left) / (l.right - l.left).max(1.0) * (t1 - t0)
    }

    /// Zooms by `factor` (< 1 zooms in) keeping time `at` under the same pixel.
    pub fn zoom(&mut self, factor: f64, at: f64) {
        let step = self.step_s();
        let (t0, t1) = self.window(1.0);
        let span = ((t1 - t0) * factor).clamp(step * 1e-6, step);
        let frac = ((at - t0) / (t1 - t0)).clamp(0.0, 1.0);
        let mut n0 = at - frac * span;
        n0 = n0.clamp(0.0, (step - span).max(0.0));
        self.view = View {
            t0: n0,
            t1: n0 + span,
            fit: span >= step * 0.999_999,
        };
    }

    /// Pans by `frac` of the visible span (negative moves left).
    pub fn pan(&mut self, frac: f64) {
        let step = self.step_s();
        let (t0, t1) = self.window(1.0);
        let span = t1 - t0;
        let n0 = (t0 + frac * span).clamp(0.0, (step - span).max(0.0));
        self.view = View {
            t0: n0,
            t1: n0 + span,
            fit: self.view.fit && n0 == 0.0,
        };
    }

    pub fn fit(&mut self) {
        let step = self.step_s();
        self.view = View {
            t0: 0.0,
            t1: step,
            fit: true,
        };
    }

    /// The playhead, clamped to the step (infinity means "at the end").
    pub fn playhead(&self) -> f64 {
        self.playhead_s.min(self.step_s())
    }

    /// Moves the playhead to the next (or previous) start or end of a bar on
    /// any GPU lane: one "step" of the animation.
    pub fn step_playhead(&mut self, forward: bool) {
        let Some(p) = &self.current else { return };
        let now = self.playhead();
        let mut best: Option<f64> = None;
        for gpu in 0..p.timeline.gpus.len() {
            for slot in 0..4 {
                let lane = p.lane(gpu, slot);
                let md = p.max_dur[gpu][slot];
                let candidates = if forward {
                    let r = lod::visible_range(lane, now, f64::INFINITY, md);
                    lane[r]
                        .iter()
                        .take(64)
                        .flat_map(|iv| [iv.start_s, iv.end_s])
                        .collect::<Vec<_>>()
                } else {
                    let hi = lane.partition_point(|iv| iv.start_s < now);
                    let lo = hi.saturating_sub(64);
                    lane[lo..hi]
                        .iter()
                        .flat_map(|iv| [iv.start_s, iv.end_s])
                        .collect()
                };
                for t in candidates {
                    let better = if forward {
                        t > now + 1e-12 && best.is_none_or(|b| t < b)
                    } else {
                        t < now - 1e-12 && best.is_none_or(|b| t > b)
                    };
                    if better {
                        best = Some(t);
                    }
                }
            }
        }
        self.playhead_s = best.unwrap_or(if forward { p.step_s() } else { 0.0 });
    }

    /// What is under the pointer at (x, y) in CSS pixels.
    pub fn hit(&self, x: f64, y: f64) -> Option<Hit> {
        let p = self.current.as_ref()?;
        if x < self.layout.left || x > self.layout.right {
            return None;
        }
        let lane = *self.layout.lane_at(y)?;
        let t = self.t_of(x);
        match lane.kind {
            LaneKind::Link { link } => Some(Hit::Link { link, t_s: t }),
            LaneKind::Gpu { gpu, slot } => {
                let bars = p.lane(gpu, slot);
                // A few pixels of slack, so that thin bars can be hovered.
                let (t0, t1) = self.window(1.0);
                let tol = 3.0 * (t1 - t0) / (self.layout.right - self.layout.left).max(1.0);
                let range = lod::visible_range(bars, t - tol, t + tol, p.max_dur[gpu][slot]);
                let mut best: Option<(usize, f64)> = None;
                for i in range {
                    let iv = &bars[i];
                    let d = if t < iv.start_s {
                        iv.start_s - t
                    } else if t > iv.end_s {
                        t - iv.end_s
                    } else {
                        0.0
                    };
                    if d <= tol && best.is_none_or(|(_, bd)| d < bd) {
                        best = Some((i, d));
                    }
                }
                best.map(|(index, _)| Hit::Bar { gpu, slot, index })
            }
        }
    }
}

impl Default for Scene {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::timeline::{GpuLanes, OpKind, Phase};

    fn iv(start_s: f64, end_s: f64, op: OpKind, chunk: u32) -> Interval {
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
            achieved_gbps: 0.0,
            contention_s: 0.0,
            exposed_s: 0.0,
            window: None,
            flops: 0.0,
        }
    }

    fn timeline(compute: Vec<Interval>, step_time_s: f64) -> Timeline {
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

    #[test]
    fn lanes_are_sorted_for_binary_search() {
        let p = Prepared::new(timeline(
            vec![iv(2.0, 3.0, OpKind::Qkv, 0), iv(0.0, 1.0, OpKind::Proj, 0)],
            3.0,
        ));
        assert_eq!(p.lane(0, 0)[0].op, OpKind::Proj);
        assert_eq!(p.max_dur[0][0], 1.0);
        assert!(p.axes.is_empty());
    }

    #[test]
    fn zoom_keeps_the_time_under_the_pointer_and_stays_inside_the_step() {
        let mut s = Scene::new();
        s.set_timeline(
            timeline(vec![iv(0.0, 10.0, OpKind::Qkv, 0)], 10.0),
            false,
            0.0,
        );
        s.layout = Layout {
            left: 0.0,
            right: 1000.0,
            ..Layout::default()
        };
        s.zoom(0.5, 2.0);
        let (t0, t1) = s.window(1.0);
        assert!((t1 - t0 - 5.0).abs() < 1e-9);
        assert!(
            (t0 + 0.2 * 5.0 - 2.0).abs() < 1e-9,
            "2.0 s stays at 20% of the view"
        );
        s.pan(-10.0);
        assert_eq!(s.window(1.0).0, 0.0);
        s.zoom(100.0, 5.0);
        assert_eq!(s.window(1.0), (0.0, 10.0));
    }

    #[test]
    fn a_split_gemm_morphs_out_of_the_unsplit_one() {
        let old = Prepared::new(timeline(vec![iv(0.0, 4.0, OpKind::Gemm, 0)], 4.0));
        let new = Prepared::new(timeline(
            vec![iv(0.0, 1.5, OpKind::Gemm, 0), iv(1.5, 3.0, OpKind::Gemm, 1)],
            3.0,
        ));
        let from = morph_sources(&old, &new);
        assert_eq!(from[0][0], vec![(0.0, 4.0), (0.0, 4.0)]);
    }

    #[test]
    fn stepping_the_playhead_visits_bar_edges() {
        let mut s = Scene::new();
        s.set_timeline(
            timeline(
                vec![iv(0.0, 1.0, OpKind::Qkv, 0), iv(1.5, 3.0, OpKind::Proj, 0)],
                3.0,
            ),
            false,
            0.0,
        );
        s.playhead_s = 0.0;
        let mut seen = Vec::new();
        for _ in 0..4 {
            s.step_playhead(true);
            seen.push(s.playhead());
        }
        assert_eq!(seen, vec![1.0, 1.5, 3.0, 3.0]);
        s.step_playhead(false);
        assert_eq!(s.playhead(), 1.5);
    }
}
