//! Builds the display list of the scene: the time axis, GPU labels, bars
//! (level-of-detail merged), exposed spans, bar labels, windows (their band
//! and brackets, windows.rs) and link bandwidth. The only place the
//! timeline's look is decided; the canvas and the SVG writer only paint
//! what this returns.

use overlap_core::timeline::{Axis, Interval, Lane, LinkLane, Phase};

use crate::display_list::{text_width_px, Align, DisplayList, Rect, Shape};
use crate::format;
use crate::layout::{Row, RowKind};
use crate::links::link_name;
use crate::lod::{self, Piece};
use crate::morph;
use crate::palette::Role;
use crate::prepared::Prepared;
use crate::scene::{Hit, Scene};
use crate::windows;

/// Bars narrower than this merge with close neighbours, px.
const MIN_BAR_PX: f64 = 1.5;
/// A bar wider than this gets its exposed span hatched, px.
const HATCH_MIN_PX: f64 = 3.0;
/// A bar wider than this gets its op name, px.
const LABEL_MIN_PX: f64 = 46.0;
/// The part of a bar left of its hatch must be this wide for a label, px.
const LABEL_CLEAR_PX: f64 = 20.0;
/// Space kept free between two tick labels, px.
const TICK_GAP_PX: f64 = 10.0;

/// Everything that does not move with the playhead or the pointer, for the
/// window `win` at morph progress `morph` (1 when not morphing).
pub fn timeline(scene: &Scene, win: (f64, f64), morph: f64) -> DisplayList {
    let l = &scene.layout;
    let mut list = DisplayList::new(l.right + 8.0, l.height);
    let Some(p) = scene.current.as_ref() else {
        return list;
    };
    list.rect(Role::Background, 0.0, 0.0, list.width, list.height);
    axis(scene, &mut list, win);
    gpu_labels(scene, p, &mut list);
    for row in &l.rows {
        match row.kind {
            RowKind::Gpu { gpu, lane } => gpu_lane(scene, p, &mut list, win, morph, gpu, lane, row),
            RowKind::Before { lane } => {
                if let (Some(b), Some(gpu)) = (scene.before.as_ref(), scene.before_gpu()) {
                    gpu_lane(scene, b, &mut list, win, 1.0, gpu, lane, row);
                }
            }
            RowKind::Link { link } => {
                if let Some(lk) = p.timeline.links.get(link) {
                    link_lane(scene, p, &mut list, win, lk, row);
                }
            }
        }
    }
    links_heading(scene, p, &mut list);
    before_heading(scene, p, &mut list);
    list
}

/// Names the before lanes: which GPU, and the two step times, so the saved
/// (or lost) time reads at the lanes' right ends.
fn before_heading(scene: &Scene, p: &Prepared, list: &mut DisplayList) {
    let (Some(y), Some(b), Some(gpu)) = (
        scene.layout.before_y,
        scene.before.as_ref(),
        scene.before_gpu(),
    ) else {
        return;
    };
    let l = &scene.layout;
    let g = &b.timeline.gpus[gpu];
    list.text(
        Role::Text,
        4.0,
        y,
        Align::Start,
        if l.left < 80.0 {
            format!(
                "Before, GPU {}: {} (now {})",
                g.rank,
                format::secs(b.step_s()),
                format::secs(p.step_s())
            )
        } else {
            format!(
                "Before the last change, GPU {}: step {} (now {})",
                g.rank,
                format::secs(b.step_s()),
                format::secs(p.step_s())
            )
        },
    );
    if let Some(row) = l.rows.iter().find(|r| {
        r.kind
            == (RowKind::Before {
                lane: Lane::Compute,
            })
    }) {
        list.text(
            Role::Muted,
            4.0,
            row.y + row.h / 2.0,
            Align::Start,
            "before".to_string(),
        );
    }
}

/// The hover marks, drawn over the timeline: the hovered bar's outline and,
/// for a collective, its window on the compute lane.
pub fn hover(scene: &Scene, win: (f64, f64)) -> Vec<Shape> {
    let mut out = Vec::new();
    let Some(Hit::Bar {
        run,
        gpu,
        lane,
        index,
    }) = scene.hover
    else {
        return out;
    };
    let Some(iv) = scene.run(run).and_then(|p| p.lane(gpu, lane).get(index)) else {
        return out;
    };
    let l = &scene.layout;
    if let (Some((w0, w1)), Some(compute), Some(axis)) =
        (iv.window, l.row_in(run, gpu, Lane::Compute), lane.axis())
    {
        let x0 = scene.x_of(w0, win).max(l.left);
        let x1 = scene.x_of(w1, win).min(l.right);
        out.push(Shape::Veil {
            rect: Rect {
                x: x0,
                y: compute.y - 2.0,
                w: (x1 - x0).max(1.0),
                h: compute.h + 4.0,
            },
            fill: Role::Axis(axis),
            alpha: 0.3,
        });
    }
    if let Some(row) = l.row_in(run, gpu, lane) {
        let x0 = scene.x_of(iv.start_s, win).max(l.left);
        let x1 = scene.x_of(iv.end_s, win).min(l.right);
        out.push(Shape::Outline {
            rect: Rect {
                x: x0 - 1.0,
                y: row.y - 1.0,
                w: (x1 - x0).max(1.0) + 2.0,
                h: row.h + 1.0,
            },
            stroke: Role::Text,
            width: 2.0,
        });
    }
    out
}

fn axis(scene: &Scene, list: &mut DisplayList, win: (f64, f64)) {
    let l = &scene.layout;
    let step = format::nice_step(win.1 - win.0, ((l.right - l.left) / 90.0).max(2.0));
    let first = (win.0 / step).ceil() as i64;
    let last = (win.1 / step).floor() as i64;
    let ticks: Vec<(i64, f64, String)> = (first..=last.min(first + 200))
        .map(|k| {
            let t = k as f64 * step;
            (k, scene.x_of(t, win).round() + 0.5, format::tick(t, step))
        })
        .collect();
    for (_, x, _) in &ticks {
        list.rect(
            Role::Grid,
            *x,
            l.axis_h - 4.0,
            1.0,
            l.link_area.1 - l.axis_h + 4.0,
        );
    }
    // Labels on every n-th tick only, n such that the widest label fits
    // between two: at deep zoom the labels are long and the ticks close.
    let spacing_px = (step / (win.1 - win.0).max(1e-300) * (l.right - l.left)).max(1e-9);
    let widest = ticks
        .iter()
        .map(|(_, _, text)| text_width_px(text))
        .fold(0.0, f64::max);
    let every = ((widest + TICK_GAP_PX) / spacing_px).ceil().max(1.0) as i64;
    let mut free_from = f64::NEG_INFINITY;
    for (k, x, text) in ticks {
        if k.rem_euclid(every) != 0 {
            continue;
        }
        // Keep the last label inside the picture.
        let (align, x0) = if x > l.right - 24.0 {
            (Align::End, x.min(l.right) - text_width_px(&text))
        } else {
            (Align::Middle, x - text_width_px(&text) / 2.0)
        };
        // An end-aligned last label may still reach its neighbour.
        if x0 < free_from {
            continue;
        }
        free_from = x0 + text_width_px(&text) + TICK_GAP_PX;
        list.text(
            Role::Muted,
            x.min(l.right),
            l.axis_h / 2.0 - 1.0,
            align,
            text,
        );
    }
}

fn gpu_labels(scene: &Scene, p: &Prepared, list: &mut DisplayList) {
    let l = &scene.layout;
    let every = (l.bands.len() / 16).max(1);
    for band in &l.bands {
        let g = &p.timeline.gpus[band.gpu];
        if !(l.label_lanes || band.gpu % every == 0) {
            continue;
        }
        // The narrow gutter of a phone fits only the short form.
        let narrow = l.left < 80.0;
        let label = if l.label_lanes && !narrow {
            format!("GPU {} · st {}", g.rank, g.stage)
        } else if l.label_lanes {
            format!("GPU {}", g.rank)
        } else {
            format!("st {}", g.stage)
        };
        list.text(
            Role::Text,
            4.0,
            band.y0 + band.bracket_h + 8.0,
            Align::Start,
            label,
        );
        // Under the name, where the compute lane is tall enough; a phone's
        // gutter puts the lane names there otherwise (the note above the
        // timeline says what a GPU stands for).
        let roomy = l
            .row_of(band.gpu, Lane::Compute)
            .is_some_and(|r| r.h >= 24.0);
        if g.represents > 1 && l.label_lanes && (roomy || !narrow) {
            list.text(
                Role::Muted,
                4.0,
                band.y0 + band.bracket_h + 21.0,
                Align::Start,
                format!("×{} GPUs", g.represents),
            );
        }
    }
}

fn bar_role(lane: Lane, iv: &Interval) -> Role {
    match lane {
        Lane::Compute if iv.op.is_weight_gradient() && iv.phase == Phase::Backward => {
            Role::WeightGradient
        }
        Lane::Compute => Role::Phase(iv.phase),
        Lane::Comm(axis) => Role::Axis(axis),
    }
}

#[allow(clippy::too_many_arguments)]
fn gpu_lane(
    scene: &Scene,
    p: &Prepared,
    list: &mut DisplayList,
    win: (f64, f64),
    morph: f64,
    gpu: usize,
    lane: Lane,
    row: &Row,
) {
    let l = &scene.layout;
    list.rect(
        Role::Lane,
        l.left,
        row.y,
        l.right - l.left,
        row.h.max(1.0) - 0.5,
    );
    if let Lane::Comm(axis) = lane {
        windows::band(scene, list, win, axis, p.lane(gpu, lane), row);
    }
    if let (Lane::Comm(axis), true) = (lane, l.label_lanes) {
        list.text(
            Role::Axis(axis),
            l.left - 24.0,
            row.y + row.h / 2.0,
            Align::Start,
            axis.label(),
        );
    }
    let bars = p.lane(gpu, lane);
    let from = (morph < 1.0)
        .then(|| {
            scene
                .morph_from
                .get(gpu)
                .map(|f| f[lane.index()].as_slice())
        })
        .flatten();
    // While morphing, bars move in from outside the window: walk them all
    // (morphing is limited to small timelines).
    let range = if from.is_some() {
        0..bars.len()
    } else {
        lod::visible_range(bars, win.0, win.1, p.max_dur_s(gpu, lane))
    };
    let pos = |i: usize| {
        let (s, e) = morph::position(bars, from, i, morph);
        (scene.x_of(s, win), scene.x_of(e, win))
    };
    let h = (row.h - 1.0).max(1.0);
    let y = row.y;
    let mut wide = Vec::new();
    // The exposed share of narrow and merged bars, whose exposed instants
    // are too close to place: their lower part hatched, as high as the share
    // of their time compute waited (the whole bar when all of it), joined
    // with a neighbour of the same height, so that a lane that is all
    // exposed reads hatched at every zoom.
    let mut narrow_exposed: Vec<(f64, f64, f64)> = Vec::new();
    let comm = matches!(lane, Lane::Comm(_));
    let mut exposed_span = |x0: f64, x1: f64, share: f64| {
        if !comm || share <= 0.0 {
            return;
        }
        let hh = (h * share).round().clamp(2.0_f64.min(h), h);
        match narrow_exposed.last_mut() {
            Some(last) if x0 <= last.1 + 1.0 && (hh - last.2).abs() < 0.5 => {
                last.1 = last.1.max(x1)
            }
            _ => narrow_exposed.push((x0, x1, hh)),
        }
    };
    let emit = |piece| {
        match piece {
            Piece::Bar { index, x0, x1 } => {
                // A hairline gap between wide neighbours, so that ops read as separate.
                let w = if x1 - x0 > 4.0 {
                    x1 - x0 - 1.0
                } else {
                    (x1 - x0).max(1.0)
                };
                list.rect(bar_role(lane, &bars[index]), x0, y, w, h);
                if x1 - x0 > HATCH_MIN_PX {
                    wide.push((index, x0, x1));
                } else {
                    exposed_span(x0, x0 + w, exposed_fraction(&bars[index]));
                }
            }
            Piece::Merged {
                first,
                x0,
                x1,
                exposed_share,
                ..
            } => {
                list.rect(bar_role(lane, &bars[first]), x0, y, x1 - x0, h);
                exposed_span(x0, x1, exposed_share);
            }
        }
    };
    let clip = (l.left, l.right);
    let merged = if from.is_some() {
        lod::pieces(bars, range, clip, MIN_BAR_PX, pos, emit)
    } else {
        // Not morphing: bars sit linearly in time, so the lane's summary can
        // merge whole blocks at once (same pieces, far fewer steps).
        let px_per_s = (l.right - l.left) / (win.1 - win.0).max(1e-15);
        let blocks = p.blocks(gpu, lane);
        lod::pieces_by_blocks(bars, blocks, px_per_s, range, clip, MIN_BAR_PX, pos, emit)
    };
    list.merged |= merged;
    // Hatches first, then labels: bars of one lane may overlap in time (a
    // send beside a receive), so a label must keep clear of every hatch in
    // its lane, not only its own bar's.
    let mut hatches = Vec::new();
    for (x0, x1, hh) in narrow_exposed {
        let rect = Rect {
            x: x0,
            y: y + h - hh,
            w: (x1 - x0).max(1.0),
            h: hh,
        };
        list.shapes.push(Shape::Hatch { rect });
        hatches.push(rect);
    }
    let mut clear = Vec::with_capacity(wide.len());
    for &(index, x0, x1) in &wide {
        let iv = &bars[index];
        let mut clear_x1 = x1;
        if let (Lane::Comm(_), true) = (lane, iv.exposed_s > 0.0) {
            // Compute waited from `exposed_from_s` to the end of the bar. As a
            // fraction of the bar, so that it follows the morph too.
            let frac = exposed_fraction(iv);
            let (ux0, ux1) = pos(index);
            let ex0 = (ux1 - (ux1 - ux0) * frac).clamp(x0, x1);
            let rect = Rect {
                x: ex0,
                y,
                w: x1 - ex0,
                h,
            };
            list.shapes.push(Shape::Hatch { rect });
            hatches.push(rect);
            clear_x1 = ex0;
        }
        clear.push(clear_x1);
    }
    for (&(index, x0, x1), clear_x1) in wide.iter().zip(clear) {
        let iv = &bars[index];
        // Labels stay left of the hatch: text over stripes does not read.
        let clip = Rect {
            x: x0 + 1.0,
            y,
            w: clear_x1 - x0 - 2.0,
            h,
        };
        // Whole or not at all: a label cut at the hatch reads as another word.
        let label = iv.op.label();
        let text_x1 = x0 + 3.0 + text_width_px(label);
        let fits = text_x1 <= clip.right() - 1.0
            && hatches
                .iter()
                .all(|r| text_x1 <= r.x || x0 + 3.0 >= r.right());
        if l.label_lanes && x1 - x0 > LABEL_MIN_PX && h >= 10.0 && clip.w > LABEL_CLEAR_PX && fits {
            let fill = match lane {
                Lane::Compute => Role::OnCompute,
                Lane::Comm(_) => Role::OnComm,
            };
            list.shapes.push(Shape::Text {
                x: x0 + 3.0,
                y: y + h / 2.0,
                text: label.into(),
                fill,
                align: Align::Start,
                clip: Some(clip),
            });
        }
    }
    if let (Lane::Comm(axis), RowKind::Gpu { .. }) = (lane, row.kind) {
        if let Some(band) = l.bands.iter().find(|b| b.gpu == gpu) {
            windows::brackets(scene, list, win, band, axis, bars);
        }
    }
}

/// The share of a collective's bar, from its right end, during which
/// compute waited on it (0 when it is hidden).
fn exposed_fraction(iv: &Interval) -> f64 {
    if iv.exposed_s <= 0.0 {
        return 0.0;
    }
    let dur = (iv.end_s - iv.start_s).max(1e-15);
    ((iv.end_s - iv.exposed_from_s) / dur).clamp(0.0, 1.0)
}

fn links_heading(scene: &Scene, p: &Prepared, list: &mut DisplayList) {
    let l = &scene.layout;
    let gpu = scene.link_gpu.min(p.timeline.gpus.len().saturating_sub(1));
    let Some(g) = p.timeline.gpus.get(gpu) else {
        return;
    };
    let text = if l.left < 80.0 {
        format!("Links of GPU {}, by axis", g.rank)
    } else {
        format!(
            "Links of GPU {} (stage {}): bandwidth by axis, dashed = usable capacity",
            g.rank, g.stage
        )
    };
    list.text(Role::Text, 4.0, l.links_y, Align::Start, text);
}

/// Bandwidth per axis, stacked, scaled to the link's usable capacity. Samples
/// narrower than a pixel are averaged over the pixel (time-weighted).
fn link_lane(
    scene: &Scene,
    p: &Prepared,
    list: &mut DisplayList,
    win: (f64, f64),
    lk: &LinkLane,
    row: &Row,
) {
    let l = &scene.layout;
    let (y, h) = (row.y, row.h);
    list.rect(Role::Lane, l.left, y, l.right - l.left, h);
    list.text(Role::Muted, 4.0, y + h / 2.0, Align::Start, link_name(lk));
    let cap = lk.capacity_gbps.max(1e-9);
    lod::link_columns(
        &lk.samples,
        win,
        p.step_s(),
        (l.left, l.right),
        |t| scene.x_of(t, win),
        |x, w, gbps| {
            let mut top = y + h;
            for axis in Axis::ALL {
                let v = gbps[axis.index()];
                if v <= 0.0 {
                    continue;
                }
                let bh = (v / cap * h).min(top - y);
                top -= bh;
                list.rect(Role::Axis(axis), x, top, w, bh);
            }
        },
    );
    list.shapes.push(Shape::Line {
        from: (l.left, y + 0.5),
        to: (l.right, y + 0.5),
        stroke: Role::Muted,
        dashed: true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;

    /// A preset's step laid out `width_px` wide, the view at `win` (fractions of the step).
    fn scene_of(preset: &str, width_px: f64, win: (f64, f64)) -> Scene {
        let scenario = presets::scenario(preset).unwrap();
        let timeline = overlap_core::simulate(&scenario).timeline;
        let mut s = Scene::new();
        s.set_timeline(timeline, false, 0.0);
        s.layout = crate::layout::Layout::compute(s.current.as_ref().unwrap(), width_px, 0);
        let step = s.step_s();
        s.view = crate::scene::View {
            t0: win.0 * step,
            t1: win.1 * step,
            fit: false,
        };
        s
    }

    /// (x0, x1, y) of every text, by its estimated width.
    fn text_extents(list: &DisplayList) -> Vec<(f64, f64, f64, String)> {
        list.shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Text {
                    x, y, text, align, ..
                } => {
                    let w = text_width_px(text);
                    let x0 = match align {
                        Align::Start => *x,
                        Align::Middle => x - w / 2.0,
                        Align::End => x - w,
                    };
                    Some((x0, x0 + w, *y, text.to_string()))
                }
                _ => None,
            })
            .collect()
    }

    const WINDOWS: [(f64, f64); 6] = [
        (0.0, 1.0),
        (0.3, 0.5),
        (0.45, 0.46),
        (0.6, 0.6004),
        (0.99, 0.999_99),
        (0.123_456, 0.123_456_2),
    ];

    #[test]
    fn axis_labels_never_collide_at_any_zoom_or_width() {
        use crate::testing::{iv, timeline as one_gpu};
        use overlap_core::timeline::OpKind;
        // Steps from milliseconds to minutes: the labels' length follows.
        for step_s in [0.004, 0.1087, 12.5, 106.77] {
            for width in [375.0, 700.0, 1000.0, 1440.0, 2400.0] {
                for win in WINDOWS {
                    let mut s = Scene::new();
                    let bars = vec![iv(0.0, step_s, OpKind::Qkv, 0)];
                    s.set_timeline(one_gpu(bars, step_s), false, 0.0);
                    s.layout =
                        crate::layout::Layout::compute(s.current.as_ref().unwrap(), width, 0);
                    s.view = crate::scene::View {
                        t0: win.0 * step_s,
                        t1: win.1 * step_s,
                        fit: false,
                    };
                    let preset = format!("a {step_s} s step");
                    let list = timeline(&s, s.window(1.0), 1.0);
                    let y_axis = s.layout.axis_h / 2.0 - 1.0;
                    let mut labels: Vec<_> = text_extents(&list)
                        .into_iter()
                        .filter(|t| t.2 == y_axis)
                        .collect();
                    labels.sort_by(|a, b| a.0.total_cmp(&b.0));
                    assert!(
                        !labels.is_empty(),
                        "{preset} {width} {win:?}: no tick label"
                    );
                    for pair in labels.windows(2) {
                        assert!(
                            pair[0].1 + 4.0 <= pair[1].0,
                            "{preset} at {width} px, {win:?}: \"{}\" reaches \"{}\"",
                            pair[0].3,
                            pair[1].3
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn bar_labels_are_whole_and_never_cross_hatching() {
        let mut labels_seen = 0;
        let mut hatches_seen = 0;
        for preset in [presets::DEFAULT_ID, "contention", "coconet"] {
            for width in [375.0, 1440.0, 2400.0] {
                for win in [(0.0, 1.0), (0.0, 0.1), (0.5, 0.55), (0.9, 1.0), (0.97, 1.0)] {
                    let s = scene_of(preset, width, win);
                    let list = timeline(&s, s.window(1.0), 1.0);
                    let hatches: Vec<Rect> = list
                        .shapes
                        .iter()
                        .filter_map(|s| match s {
                            Shape::Hatch { rect } => Some(*rect),
                            _ => None,
                        })
                        .collect();
                    hatches_seen += hatches.len();
                    for shape in &list.shapes {
                        let Shape::Text {
                            x,
                            y,
                            text,
                            clip: Some(clip),
                            ..
                        } = shape
                        else {
                            continue;
                        };
                        labels_seen += 1;
                        let x1 = x + text_width_px(text);
                        assert!(x1 <= clip.right(), "\"{text}\" is cut by its bar's end");
                        for h in hatches.iter().filter(|h| *y >= h.y && *y <= h.y + h.h) {
                            assert!(
                                x1 <= h.x || *x >= h.right(),
                                "{preset} {width} {win:?}: \"{text}\" ({x:.1}-{x1:.1}) crosses a hatch ({:.1}-{:.1})",
                                h.x,
                                h.right()
                            );
                        }
                    }
                }
            }
        }
        assert!(
            labels_seen > 50,
            "{labels_seen} labels: the test saw too few"
        );
        assert!(
            hatches_seen > 10,
            "{hatches_seen} hatches: the test saw too few"
        );
    }
}
