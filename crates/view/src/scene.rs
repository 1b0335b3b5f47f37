//! The timeline as plain data, outside the reactive graph: the current and the
//! previous simulation (for the morph), the view window, the playhead and the
//! layout. The display list is built from here (`draw`), and the pointer is
//! resolved to a bar here (`hit`).

use overlap_core::timeline::Lane;
use overlap_core::Timeline;

use crate::layout::{Layout, RowKind, Run};
use crate::lod;
use crate::morph::{self, MorphSources, MORPH_MAX_BARS};
use crate::prepared::Prepared;
use crate::shown_gpus::ShownGpus;

/// A step plays in this many seconds at speed 1.
pub const PLAY_SECONDS: f64 = 8.0;

/// The visible time window, seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct View {
    /// Start of the window.
    pub t0: f64,
    /// End of the window.
    pub t1: f64,
    /// Follows the whole step (and the morph between step lengths).
    pub fit: bool,
}

/// What the pointer is over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hit {
    /// A bar of a GPU lane.
    Bar {
        /// The run it belongs to: the current one, or the one drawn under it.
        run: Run,
        /// Index into that run's `Timeline::gpus`.
        gpu: usize,
        /// Which of its lanes.
        lane: Lane,
        /// Index into the (sorted) lane.
        index: usize,
    },
    /// A link lane at a time.
    Link {
        /// Index into `Timeline::links`.
        link: usize,
        /// The time under the pointer, seconds.
        t_s: f64,
    },
}

/// Everything the timeline shows, as plain data.
pub struct Scene {
    /// The timeline shown.
    pub current: Option<Prepared>,
    /// The timeline morphed from, while morphing.
    pub previous: Option<Prepared>,
    /// While morphing: where each current bar comes from.
    pub morph_from: MorphSources,
    /// When the morph started, ms on the page's clock.
    pub morph_start_ms: Option<f64>,
    /// Counts timelines installed: what the painted layer shows.
    pub seq: u64,
    /// The view window.
    pub view: View,
    /// Playhead, seconds; infinity is "at the end".
    pub playhead_s: f64,
    /// Whether playback runs.
    pub playing: bool,
    /// Playback speed (1 plays a step in [`PLAY_SECONDS`]).
    pub speed: f64,
    /// Which simulated GPU the link lanes belong to.
    pub link_gpu: usize,
    /// Which simulated GPUs the lanes are drawn for.
    pub shown_gpus: ShownGpus,
    /// What the pointer is over.
    pub hover: Option<Hit>,
    /// The last layout drawn.
    pub layout: Layout,
    /// The run before the current one, whose lanes of the chosen GPU
    /// (`link_gpu`) are drawn under the current ones: before and after on
    /// one time axis.
    pub before: Option<Prepared>,
    /// Whether the next timeline keeps the current one as `before`: the page
    /// says so when both runs start from the same preset.
    pub keep_before: bool,
}

/// Timelines larger than this are not kept as `before` (memory, paint time).
pub const BEFORE_MAX_BARS: usize = 100_000;

impl Scene {
    /// An empty scene: no timeline, whole step in view.
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
            shown_gpus: ShownGpus::All,
            hover: None,
            layout: Layout::default(),
            before: None,
            keep_before: false,
        }
    }

    /// Installs a new timeline. With `animate`, the old one is kept for the
    /// morph; otherwise the new one shows at once in its final state.
    pub fn set_timeline(&mut self, timeline: Timeline, animate: bool, now_ms: f64) {
        self.set_prepared(Prepared::new(timeline), animate, now_ms);
    }

    /// [`Scene::set_timeline`] for a timeline already prepared (a large one
    /// is prepared a slice at a time, `prepared::Preparing`).
    pub fn set_prepared(&mut self, next: Prepared, animate: bool, now_ms: f64) {
        let old = self.current.take();
        let can_morph = animate
            && old.as_ref().is_some_and(|o| {
                o.bars <= MORPH_MAX_BARS
                    && next.bars <= MORPH_MAX_BARS
                    && o.timeline.gpus.len() == next.timeline.gpus.len()
            });
        let old_extent = old.as_ref().map(|o| o.step_s());
        self.morph_from = match (&old, can_morph) {
            (Some(o), true) => morph::morph_sources(o, &next),
            _ => Vec::new(),
        };
        self.previous = if can_morph { old.clone() } else { None };
        self.morph_start_ms = can_morph.then_some(now_ms);
        let comparable = |o: &Prepared| {
            o.bars <= BEFORE_MAX_BARS
                && next.bars <= BEFORE_MAX_BARS
                && o.timeline.gpus.len() == next.timeline.gpus.len()
        };
        self.before = old.filter(|o| self.keep_before && comparable(o));
        let extent = self
            .before
            .as_ref()
            .map_or(0.0, Prepared::step_s)
            .max(next.step_s());
        if self.view.fit {
            self.view.t0 = 0.0;
            self.view.t1 = extent;
        } else if let Some(o) = old_extent {
            // Keep the same part of the step in view when its length changes.
            let ratio = next.step_s() / o;
            self.view.t0 *= ratio;
            self.view.t1 *= ratio;
        }
        if self.link_gpu >= next.timeline.gpus.len() {
            self.link_gpu = 0;
        }
        if !self.shown_gpus.fits(next.timeline.gpus.len()) {
            self.shown_gpus = ShownGpus::All;
        }
        self.current = Some(next);
        self.hover = None;
        self.seq += 1;
    }

    /// Morph progress 0..1, eased; 1 when there is nothing to morph.
    pub fn morph_progress(&self, now_ms: f64) -> f64 {
        match (self.morph_start_ms, &self.previous) {
            (Some(start), Some(_)) => morph::eased(now_ms - start),
            _ => 1.0,
        }
    }

    /// Drops the previous timeline once the morph is over; returns whether
    /// it is still morphing.
    pub fn finish_morph_if_done(&mut self, now_ms: f64) -> bool {
        if self.morph_start_ms.is_some() && self.morph_progress(now_ms) >= 1.0 {
            self.morph_start_ms = None;
            self.previous = None;
            self.morph_from.clear();
        }
        self.morph_start_ms.is_some()
    }

    /// The step's length, seconds (1 before any timeline).
    pub fn step_s(&self) -> f64 {
        self.current.as_ref().map(Prepared::step_s).unwrap_or(1.0)
    }

    /// The time the view can show: the step, or the run before it when
    /// that was longer (its lanes are drawn too).
    pub fn extent_s(&self) -> f64 {
        let before = self.before.as_ref().map_or(0.0, Prepared::step_s);
        self.step_s().max(before)
    }

    /// The window currently shown, following the morph when fitted.
    pub fn window(&self, morph: f64) -> (f64, f64) {
        if self.view.fit {
            let new = self.extent_s();
            let old = self.previous.as_ref().map(Prepared::step_s).unwrap_or(new);
            (0.0, old + (new - old) * morph)
        } else {
            (self.view.t0, self.view.t1)
        }
    }

    /// The x of time `t` in window `win`, px.
    pub fn x_of(&self, t: f64, win: (f64, f64)) -> f64 {
        let l = &self.layout;
        l.left + (t - win.0) / (win.1 - win.0).max(1e-15) * (l.right - l.left)
    }

    /// The time at x, seconds.
    pub fn t_of(&self, x: f64) -> f64 {
        let l = &self.layout;
        let (t0, t1) = self.window(1.0);
        t0 + (x - l.left) / l.plot_w() * (t1 - t0)
    }

    /// Zooms by `factor` (< 1 zooms in) keeping time `at` under the same pixel.
    pub fn zoom(&mut self, factor: f64, at: f64) {
        let step = self.extent_s();
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
        let step = self.extent_s();
        let (t0, t1) = self.window(1.0);
        let span = t1 - t0;
        let n0 = (t0 + frac * span).clamp(0.0, (step - span).max(0.0));
        self.view = View {
            t0: n0,
            t1: n0 + span,
            fit: self.view.fit && n0 == 0.0,
        };
    }

    /// Shows the whole step, and follows it.
    pub fn fit(&mut self) {
        let step = self.extent_s();
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
    /// any lane drawn: one "step" of the animation.
    pub fn step_playhead(&mut self, forward: bool) {
        let Some(p) = &self.current else { return };
        let now = self.playhead();
        let mut best: Option<f64> = None;
        for gpu in self.shown_gpus.range(p.timeline.gpus.len()) {
            for lane in Lane::ALL {
                let bars = p.lane(gpu, lane);
                let candidates = if forward {
                    let r = lod::visible_range(bars, now, f64::INFINITY, p.max_dur_s(gpu, lane));
                    bars[r]
                        .iter()
                        .take(64)
                        .flat_map(|iv| [iv.start_s, iv.end_s])
                        .collect::<Vec<_>>()
                } else {
                    let hi = bars.partition_point(|iv| iv.start_s < now);
                    let lo = hi.saturating_sub(64);
                    bars[lo..hi]
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
        self.current.as_ref()?;
        if x < self.layout.left || x > self.layout.right {
            return None;
        }
        let row = *self.layout.row_at(y)?;
        let t = self.t_of(x);
        match row.kind {
            RowKind::Link { link } => Some(Hit::Link { link, t_s: t }),
            RowKind::Before { lane } => self.bar_near(Run::Before, self.before_gpu()?, lane, t),
            RowKind::Gpu { gpu, lane } => self.bar_near(Run::Current, gpu, lane, t),
        }
    }

    /// The prepared timeline of `run`, if there is one.
    pub fn run(&self, run: Run) -> Option<&Prepared> {
        match run {
            Run::Current => self.current.as_ref(),
            Run::Before => self.before.as_ref(),
        }
    }

    /// The GPU of the run before whose lanes are drawn: the one the link
    /// lanes show, or its last GPU when it simulated fewer.
    pub fn before_gpu(&self) -> Option<usize> {
        let b = self.before.as_ref()?;
        let last = b.timeline.gpus.len().checked_sub(1)?;
        Some(self.link_gpu.min(last))
    }

    /// The bar of a lane of `run` nearest the time `t`, within a few pixels,
    /// so that thin bars can be hovered.
    fn bar_near(&self, run: Run, gpu: usize, lane: Lane, t: f64) -> Option<Hit> {
        let p = self.run(run)?;
        let bars = p.lane(gpu, lane);
        let (t0, t1) = self.window(1.0);
        let tol = 3.0 * (t1 - t0) / self.layout.plot_w();
        let range = lod::visible_range(bars, t - tol, t + tol, p.max_dur_s(gpu, lane));
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
        best.map(|(index, _)| Hit::Bar {
            run,
            gpu,
            lane,
            index,
        })
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
    use crate::testing::{iv, timeline};
    use overlap_core::timeline::OpKind;

    /// A step of `gpus` GPUs; GPU `i` runs one op from `i` to `i + 1` s.
    fn staggered(gpus: usize) -> Timeline {
        let mut t = timeline(vec![iv(0.0, 1.0, OpKind::Qkv, 0)], gpus as f64);
        let one = t.gpus[0].clone();
        t.gpus = (0..gpus)
            .map(|i| {
                let mut g = one.clone();
                g.compute = vec![iv(i as f64, i as f64 + 1.0, OpKind::Qkv, 0)];
                g
            })
            .collect();
        t
    }

    #[test]
    fn the_playhead_steps_over_the_gpus_drawn_and_a_smaller_step_draws_all() {
        let mut s = Scene::new();
        s.set_timeline(staggered(12), false, 0.0);
        s.shown_gpus = ShownGpus::Range { first: 8, last: 11 };
        s.playhead_s = 0.0;
        // GPUs 0 to 7 end their ops by 8 s: the first step lands on GPU 8's start.
        s.step_playhead(true);
        assert_eq!(s.playhead(), 8.0);
        s.set_timeline(staggered(4), false, 0.0);
        assert_eq!(s.shown_gpus, ShownGpus::All);
        s.set_timeline(staggered(12), false, 0.0);
        s.shown_gpus = ShownGpus::Range { first: 0, last: 3 };
        s.set_timeline(staggered(4), false, 0.0);
        assert_eq!(s.shown_gpus, ShownGpus::Range { first: 0, last: 3 });
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

    #[test]
    fn the_pointer_finds_the_bar_under_it() {
        let mut s = Scene::new();
        s.set_timeline(
            timeline(
                vec![iv(0.0, 1.0, OpKind::Qkv, 0), iv(2.0, 3.0, OpKind::Proj, 0)],
                4.0,
            ),
            false,
            0.0,
        );
        s.layout = Layout::compute(s.current.as_ref().unwrap(), 900.0, 0);
        let row = *s.layout.row_of(0, Lane::Compute).unwrap();
        let x = s.x_of(2.5, s.window(1.0));
        assert_eq!(
            s.hit(x, row.y + 1.0),
            Some(Hit::Bar {
                run: Run::Current,
                gpu: 0,
                lane: Lane::Compute,
                index: 1
            })
        );
        assert_eq!(s.hit(s.layout.left - 10.0, row.y + 1.0), None);
    }

    #[test]
    fn the_before_lanes_name_their_bars() {
        let mut s = Scene::new();
        s.keep_before = true;
        s.set_timeline(
            timeline(vec![iv(0.0, 3.0, OpKind::Qkv, 0)], 4.0),
            false,
            0.0,
        );
        s.set_timeline(
            timeline(vec![iv(0.0, 1.0, OpKind::Proj, 0)], 4.0),
            false,
            0.0,
        );
        s.layout = Layout::compute_with_before(
            s.current.as_ref().unwrap(),
            s.before.as_ref(),
            900.0,
            0,
            ShownGpus::All,
        );
        let row = *s.layout.row_in(Run::Before, 0, Lane::Compute).unwrap();
        // At 2 s only the run before had a bar (its QKV, 0 to 3 s).
        let x = s.x_of(2.0, s.window(1.0));
        let hit = s.hit(x, row.y + 1.0).expect("the before lane's bar");
        assert_eq!(
            hit,
            Hit::Bar {
                run: Run::Before,
                gpu: 0,
                lane: Lane::Compute,
                index: 0
            }
        );
        let tip = crate::tip::tip_for(&s, hit, x, row.y).unwrap();
        assert!(
            tip.title.starts_with("Before the last change: QKV"),
            "{}",
            tip.title
        );
        assert!(tip
            .lines
            .contains(&("duration".to_string(), crate::format::secs(3.0))));
        // The hover outline sits on the before row, not on the current one.
        s.hover = Some(hit);
        let outline = crate::draw::hover(&s, s.window(1.0))
            .into_iter()
            .find_map(|sh| match sh {
                crate::display_list::Shape::Outline { rect, .. } => Some(rect),
                _ => None,
            })
            .unwrap();
        assert_eq!(outline.y, row.y - 1.0);
    }
}
