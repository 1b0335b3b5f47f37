//! A comm lane's windows drawn: the band behind its bars, where the compute
//! that can hide its collectives runs, seen at every zoom; and the brackets
//! above the compute lane, one per collective, for a closer look.

use overlap_core::timeline::{Axis, Interval};

use crate::display_list::{DisplayList, Rect, Shape};
use crate::layout::{Band, Row};
use crate::palette::Role;
use crate::scene::Scene;

/// At most this many brackets per lane: more would be one smear.
const MAX_BRACKETS: usize = 4000;
/// Opacity of a lane's window band, in its axis colour.
pub const WINDOW_ALPHA: f64 = 0.3;

/// A comm lane's window band: where the compute that can hide its
/// collectives runs, tinted in the axis colour behind the lane's bars, so
/// that at any zoom a bar reads as inside or outside its window. The
/// windows are joined per pixel column (a difference array: one step per
/// collective, however many there are).
pub fn band(
    scene: &Scene,
    list: &mut DisplayList,
    win: (f64, f64),
    axis: Axis,
    bars: &[Interval],
    row: &Row,
) {
    let l = &scene.layout;
    let cols = (l.right - l.left).ceil().max(0.0) as usize;
    if cols == 0 {
        return;
    }
    let mut diff = vec![0i32; cols + 1];
    let mut any = false;
    for iv in bars {
        let Some((w0, w1)) = iv.window else { continue };
        if w1 < win.0 || w0 > win.1 || w1 <= w0 {
            continue;
        }
        let x0 = (scene.x_of(w0, win).max(l.left) - l.left).floor().max(0.0) as usize;
        let x1 = (scene.x_of(w1, win).min(l.right) - l.left).ceil() as usize;
        let (x0, x1) = (x0.min(cols), x1.clamp(x0 + 1, cols + 1).min(cols));
        if x1 > x0 {
            diff[x0] += 1;
            diff[x1] -= 1;
            any = true;
        }
    }
    if !any {
        return;
    }
    let mut depth = 0;
    let mut start = None;
    for (c, d) in diff.iter().enumerate() {
        depth += d;
        match (depth > 0, start) {
            (true, None) => start = Some(c),
            (false, Some(s)) => {
                list.shapes.push(Shape::Veil {
                    rect: Rect {
                        x: l.left + s as f64,
                        y: row.y,
                        w: (c - s) as f64,
                        h: (row.h - 1.0).max(1.0),
                    },
                    fill: Role::Axis(axis),
                    alpha: WINDOW_ALPHA,
                });
                start = None;
            }
            _ => {}
        }
    }
}

/// Window brackets: for each visible collective, the compute span that can
/// hide it, drawn in its axis colour in the strip above the compute lane.
pub fn brackets(
    scene: &Scene,
    list: &mut DisplayList,
    win: (f64, f64),
    band: &Band,
    axis: Axis,
    bars: &[Interval],
) {
    if band.bracket_h < 3.0 {
        return;
    }
    let l = &scene.layout;
    let Some(slot) = scene
        .current
        .as_ref()
        .and_then(|p| p.axes.iter().position(|a| *a == axis))
    else {
        return;
    };
    let n = scene.current.as_ref().map_or(1, |p| p.axes.len()).max(1);
    let row_h = band.bracket_h / n as f64;
    let y = band.bracket_y + row_h * slot as f64 + 0.5;
    let mut spans = Vec::new();
    let (mut last_x0, mut last_x1) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    for iv in bars {
        let Some((w0, w1)) = iv.window else { continue };
        if w1 < win.0 || w0 > win.1 || w1 <= w0 {
            continue;
        }
        let x0 = scene.x_of(w0, win).max(l.left);
        let x1 = scene.x_of(w1, win).min(l.right);
        // Brackets that land on the same pixels add nothing.
        if (x0 - last_x0).abs() < 1.0 && (x1 - last_x1).abs() < 1.0 {
            continue;
        }
        (last_x0, last_x1) = (x0, x1);
        spans.push((x0, x1));
        if spans.len() > MAX_BRACKETS {
            break;
        }
    }
    if !spans.is_empty() {
        list.shapes.push(Shape::Brackets {
            y,
            h: row_h,
            spans,
            stroke: Role::Axis(axis),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::timeline;
    use crate::layout::{Layout, RowKind};
    use crate::testing::{iv, timeline as one_gpu};
    use overlap_core::presets;
    use overlap_core::timeline::{Lane, OpKind};
    use overlap_core::Timeline;

    /// `t` laid out `width` px wide, at Fit.
    fn fitted(t: Timeline, width: f64) -> Scene {
        let mut s = Scene::new();
        s.set_timeline(t, false, 0.0);
        s.layout = Layout::compute(s.current.as_ref().unwrap(), width, 0);
        s
    }

    /// At Fit, on a phone and a desktop, every comm lane whose collectives
    /// have windows shows them as a band in its axis colour, the lane's
    /// height, covering the middle of every window: not a 1-px bracket.
    #[test]
    fn at_fit_every_lane_shows_its_windows_as_a_band() {
        let mut lanes_seen = 0;
        for preset in [presets::DEFAULT_ID, "moe-didactic", "long-context-ring"] {
            let scenario = presets::scenario(preset).unwrap();
            let t = overlap_core::simulate(&scenario).timeline;
            for width in [390.0, 1440.0] {
                let s = fitted(t.clone(), width);
                let win = s.window(1.0);
                let list = timeline(&s, win, 1.0);
                let p = s.current.as_ref().unwrap();
                for row in &s.layout.rows {
                    let RowKind::Gpu {
                        gpu,
                        lane: Lane::Comm(axis),
                    } = row.kind
                    else {
                        continue;
                    };
                    let windows: Vec<(f64, f64)> = p
                        .lane(gpu, Lane::Comm(axis))
                        .iter()
                        .filter_map(|iv| iv.window.filter(|w| w.1 > w.0))
                        .collect();
                    if windows.is_empty() {
                        continue;
                    }
                    lanes_seen += 1;
                    let bands: Vec<Rect> = list
                        .shapes
                        .iter()
                        .filter_map(|sh| match sh {
                            Shape::Veil { rect, fill, .. }
                                if *fill == Role::Axis(axis) && rect.y == row.y =>
                            {
                                Some(*rect)
                            }
                            _ => None,
                        })
                        .collect();
                    let at = format!("{preset} at {width} px, GPU {gpu} {}", axis.label());
                    assert!(!bands.is_empty(), "{at}: no window band");
                    for b in &bands {
                        assert!(
                            b.h >= (row.h - 1.0).min(6.0),
                            "{at}: a band {} px high",
                            b.h
                        );
                        assert!(b.w >= 1.0, "{at}: a band {} px wide", b.w);
                    }
                    for (w0, w1) in windows {
                        let mid = s.x_of((w0 + w1) / 2.0, win);
                        assert!(
                            bands
                                .iter()
                                .any(|b| mid >= b.x - 1.0 && mid <= b.right() + 1.0),
                            "{at}: the window {w0}..{w1} s is not drawn"
                        );
                    }
                }
            }
        }
        assert!(lanes_seen >= 10, "{lanes_seen} lanes with windows: too few");
    }

    /// One GPU whose TP lane holds `n` collectives of 40 µs, one every
    /// `period` s, each exposed for `share` of its time (at its end).
    fn tp_lane(n: usize, share: f64, period: f64) -> Timeline {
        let step = n as f64 * period;
        let mut t = one_gpu(vec![iv(0.0, step, OpKind::Qkv, 0)], step);
        t.gpus[0].comm[Axis::Tp.index()] = (0..n)
            .map(|i| {
                let start = i as f64 * period;
                let mut c = iv(start, start + 40e-6, OpKind::AllReduce, 0);
                c.exposed_s = 40e-6 * share;
                c.exposed_from_s = start + 40e-6 * (1.0 - share);
                c.window = Some((start, start + 30e-6));
                c
            })
            .collect();
        t
    }

    /// (painted bar area, hatched area) on the TP lane at Fit.
    fn areas(t: Timeline, width: f64) -> (f64, f64) {
        let s = fitted(t, width);
        let list = timeline(&s, s.window(1.0), 1.0);
        let row = s
            .layout
            .rows
            .iter()
            .find(|r| {
                r.kind
                    == RowKind::Gpu {
                        gpu: 0,
                        lane: Lane::Comm(Axis::Tp),
                    }
            })
            .unwrap();
        let inside = |r: &Rect| r.y >= row.y && r.y < row.y + row.h;
        let (mut bars, mut hatched) = (0.0, 0.0);
        for sh in &list.shapes {
            match sh {
                Shape::Rect { rect, fill } if *fill == Role::Axis(Axis::Tp) && inside(rect) => {
                    bars += rect.w * rect.h
                }
                Shape::Hatch { rect } if inside(rect) => hatched += rect.w * rect.h,
                _ => {}
            }
        }
        (bars, hatched)
    }

    /// Merged bars keep the exposed pattern in proportion to their exposed
    /// time: a lane that is all exposed is all hatched at Fit, one that is
    /// half exposed about half, one that is hidden not at all.
    #[test]
    fn merged_bars_take_their_exposed_shares_pattern() {
        for width in [390.0, 1440.0] {
            // 20 000 collectives on about a thousand pixels: all merged.
            let (bars, hatched) = areas(tp_lane(20_000, 1.0, 50e-6), width);
            assert!(bars > 0.0);
            assert!(
                hatched >= 0.95 * bars,
                "{width} px: {hatched} of {bars} hatched"
            );
            let (bars, hatched) = areas(tp_lane(20_000, 0.5, 50e-6), width);
            let r = hatched / bars;
            assert!(
                (0.35..=0.65).contains(&r),
                "{width} px: half exposed, {r} hatched"
            );
            let (_, hatched) = areas(tp_lane(20_000, 0.0, 50e-6), width);
            assert_eq!(hatched, 0.0, "{width} px: a hidden lane is hatched");
            // Narrow bars more than a pixel apart, drawn one by one, each
            // exposed: hatched too.
            let (bars, hatched) = areas(tp_lane(200, 1.0, 200e-6), width);
            assert!(
                hatched >= 0.9 * bars,
                "{width} px: {hatched} of {bars} hatched"
            );
        }
    }
}
