//! The display list of small timelines: what is drawn where, checked on the
//! list itself and on its SVG, without a browser.

use overlap_core::timeline::{Axis, GpuLanes, Interval, Lane, OpKind, Phase};
use overlap_core::{presets, Timeline};
use overlap_view::display_list::{DisplayList, Rect, Shape};
use overlap_view::draw;
use overlap_view::layout::{Layout, Row};
use overlap_view::palette::{Role, DARK, LIGHT};
use overlap_view::scene::Scene;
use overlap_view::svg;

fn bar(start_s: f64, end_s: f64, op: OpKind, phase: Phase) -> Interval {
    Interval {
        id: 0,
        owner: 0,
        exposed_from_s: 0.0,
        start_s,
        end_s,
        op,
        phase,
        micro_batch: 0,
        layer: 0,
        chunk: 0,
        bytes: 1e6,
        kernel: None,
        achieved_gbps: 100.0,
        contention_s: 0.0,
        exposed_s: 0.0,
        window: None,
        flops: 1e12,
    }
}

/// One GPU: two compute bars, a TP collective whose last 0.3 s left compute
/// waiting, and a DP collective that was hidden.
fn small() -> Timeline {
    let mut tp = bar(0.5, 1.5, OpKind::AllReduce, Phase::Forward);
    tp.exposed_s = 0.3;
    tp.exposed_from_s = 1.2;
    tp.window = Some((0.0, 1.0));
    let dp = bar(1.6, 1.9, OpKind::AllReduce, Phase::Backward);
    Timeline {
        step_time_s: 2.0,
        reduced: false,
        gpus: vec![GpuLanes {
            rank: 0,
            node: 0,
            stage: 0,
            dp_rank: 0,
            tp_rank: 0,
            represents: 1,
            compute: vec![
                bar(0.0, 1.0, OpKind::Qkv, Phase::Forward),
                bar(1.0, 2.0, OpKind::Proj, Phase::Backward),
            ],
            comm: [vec![tp], Vec::new(), vec![dp], Vec::new(), Vec::new()],
        }],
        links: Vec::new(),
    }
}

fn scene_of(timeline: Timeline, width: f64) -> Scene {
    let mut scene = Scene::new();
    scene.set_timeline(timeline, false, 0.0);
    scene.layout = Layout::compute(scene.current.as_ref().unwrap(), width, 0);
    scene
}

fn list_of(scene: &Scene) -> DisplayList {
    draw::timeline(scene, scene.window(1.0), 1.0)
}

fn inside(r: &Rect, row: &Row) -> bool {
    r.y >= row.y - 1e-9 && r.y + r.h <= row.y + row.h + 1e-9
}

fn rects_in<'a>(list: &'a DisplayList, row: &'a Row) -> impl Iterator<Item = (&'a Rect, Role)> {
    list.shapes.iter().filter_map(move |s| match s {
        Shape::Rect { rect, fill } if inside(rect, row) && *fill != Role::Lane => {
            Some((rect, *fill))
        }
        _ => None,
    })
}

#[test]
fn one_rect_per_visible_interval_in_its_lane_colour() {
    let scene = scene_of(small(), 900.0);
    let list = list_of(&scene);
    let l = &scene.layout;
    let compute = l.row_of(0, Lane::Compute).unwrap();
    let roles: Vec<Role> = rects_in(&list, compute).map(|(_, r)| r).collect();
    assert_eq!(
        roles,
        [Role::Phase(Phase::Forward), Role::Phase(Phase::Backward)]
    );
    for axis in [Axis::Tp, Axis::Dp] {
        let row = l.row_of(0, Lane::Comm(axis)).unwrap();
        let roles: Vec<Role> = rects_in(&list, row).map(|(_, r)| r).collect();
        assert_eq!(roles, [Role::Axis(axis)], "{axis:?}");
    }
    assert!(
        l.row_of(0, Lane::Comm(Axis::Pp)).is_none(),
        "PP has no traffic, so no lane"
    );
    assert!(!list.merged);

    // Zoomed on the second half, the first compute bar is gone.
    let mut zoomed = scene_of(small(), 900.0);
    zoomed.zoom(0.4, 1.8);
    let list = list_of(&zoomed);
    let roles: Vec<Role> = rects_in(&list, compute).map(|(_, r)| r).collect();
    assert_eq!(roles, [Role::Phase(Phase::Backward)]);
}

#[test]
fn only_the_exposed_part_is_hatched_and_no_text_crosses_it() {
    let scene = scene_of(small(), 900.0);
    let list = list_of(&scene);
    let win = scene.window(1.0);
    let hatches: Vec<&Rect> = list
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Hatch { rect } => Some(rect),
            _ => None,
        })
        .collect();
    assert_eq!(
        hatches.len(),
        1,
        "only the TP collective left compute waiting"
    );
    let h = hatches[0];
    let tp = scene.layout.row_of(0, Lane::Comm(Axis::Tp)).unwrap();
    assert!(inside(h, tp));
    assert!(
        (h.x - scene.x_of(1.2, win)).abs() < 1e-9,
        "starts when compute began waiting"
    );
    assert!(
        (h.right() - scene.x_of(1.5, win)).abs() < 1.0,
        "runs to the bar's end"
    );
    let mut labels = 0;
    for s in &list.shapes {
        if let Shape::Text { clip: Some(c), .. } = s {
            labels += 1;
            let overlaps_y = c.y < h.y + h.h && h.y < c.y + c.h;
            assert!(
                !(overlaps_y && c.right() > h.x + 1e-9),
                "{c:?} crosses {h:?}"
            );
        }
    }
    assert_eq!(labels, 4, "every bar is wide enough for its name");
}

#[test]
fn window_brackets_sit_above_the_compute_lane_in_the_axis_colour() {
    let scene = scene_of(small(), 900.0);
    let list = list_of(&scene);
    let compute = scene.layout.row_of(0, Lane::Compute).unwrap();
    let brackets: Vec<_> = list
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Brackets {
                y,
                h,
                spans,
                stroke,
            } => Some((*y, *h, spans.clone(), *stroke)),
            _ => None,
        })
        .collect();
    assert_eq!(brackets.len(), 1);
    let (y, h, spans, stroke) = &brackets[0];
    assert_eq!(*stroke, Role::Axis(Axis::Tp));
    assert!(y + h <= compute.y + 1.0);
    let win = scene.window(1.0);
    assert_eq!(spans.len(), 1);
    assert!((spans[0].1 - scene.x_of(1.0, win)).abs() < 1e-9);
}

#[test]
fn narrow_bars_merge_to_about_one_rect_per_pixel() {
    let compute: Vec<Interval> = (0..200_000)
        .map(|i| bar(i as f64, i as f64 + 0.8, OpKind::Qkv, Phase::Forward))
        .collect();
    let mut t = small();
    t.step_time_s = 200_000.0;
    t.gpus[0].compute = compute;
    let scene = scene_of(t, 900.0);
    let list = list_of(&scene);
    let row = scene.layout.row_of(0, Lane::Compute).unwrap();
    let rects = rects_in(&list, row).count();
    let plot_w = scene.layout.plot_w();
    assert!(list.merged);
    assert!(rects as f64 <= plot_w, "{rects} rects on {plot_w} px");
}

#[test]
fn the_svg_has_every_shape_of_the_list_in_the_palette_colours() {
    for id in [presets::DEFAULT_ID, "contention"] {
        let scenario = presets::scenario(id).expect("presets resolve");
        let sim = overlap_core::simulate(&scenario);
        for width in [900.0, 375.0] {
            let scene = scene_of(sim.timeline.clone(), width);
            let list = list_of(&scene);
            for pal in [&LIGHT, &DARK] {
                let text = svg::write(&list, pal, "Overlap Lab: timeline of one step");
                assert!(text.starts_with("<?xml") && text.trim_end().ends_with("</svg>"));
                let body = text.split("</defs>").nth(1).unwrap();
                assert_eq!(body.matches("\n<").count(), list.shapes.len() + 1, "{id}");
                // The colour of every axis the scenario has (EP only with experts).
                let axes = overlap_core::Axis::ALL
                    .into_iter()
                    .filter(|&a| scenario.has_axis(a));
                for colour in axes.map(|a| pal.axis[a.index()]) {
                    assert!(text.contains(colour), "{id}: no {colour}");
                }
                assert_eq!(text.matches('<').count(), text.matches('>').count());
            }
            // Nothing is drawn outside the picture.
            for s in &list.shapes {
                if let Shape::Rect { rect, .. } = s {
                    assert!(
                        rect.x >= -1e-9 && rect.right() <= list.width + 1e-9,
                        "{id}: {rect:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn hover_outlines_the_bar_and_veils_its_window() {
    let mut scene = scene_of(small(), 900.0);
    let tp = *scene.layout.row_of(0, Lane::Comm(Axis::Tp)).unwrap();
    let x = scene.x_of(1.0, scene.window(1.0));
    scene.hover = scene.hit(x, tp.y + 1.0);
    let shapes = draw::hover(&scene, scene.window(1.0));
    assert!(matches!(
        shapes[0],
        Shape::Veil {
            fill: Role::Axis(Axis::Tp),
            ..
        }
    ));
    assert!(matches!(
        shapes[1],
        Shape::Outline {
            stroke: Role::Text,
            ..
        }
    ));
    scene.hover = None;
    assert!(draw::hover(&scene, scene.window(1.0)).is_empty());
}

#[test]
fn on_a_preset_no_bar_label_crosses_a_hatch() {
    let scenario = presets::scenario("contention").expect("presets resolve");
    let sim = overlap_core::simulate(&scenario);
    let mut scene = scene_of(sim.timeline, 1040.0);
    // Zoomed to the last tenth, where the DP buckets wait: at Fit no name
    // fits whole in its bar, and a name is drawn whole or not at all.
    let step = scene.step_s();
    scene.zoom(0.1, step);
    let list = list_of(&scene);
    let hatches: Vec<&Rect> = list
        .shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Hatch { rect } => Some(rect),
            _ => None,
        })
        .collect();
    assert!(!hatches.is_empty(), "this preset leaves compute waiting");
    let mut labels = 0;
    for s in &list.shapes {
        let Shape::Text { clip: Some(c), .. } = s else {
            continue;
        };
        labels += 1;
        for h in &hatches {
            let same_row = c.y < h.y + h.h && h.y < c.y + c.h;
            let overlap = c.x < h.right() && h.x < c.right();
            assert!(!(same_row && overlap), "{c:?} crosses {h:?}");
        }
    }
    assert!(labels > 0, "some bars are wide enough for their names");
}
