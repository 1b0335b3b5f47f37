//! Before and after on one time axis: after a change within one preset, the
//! chosen GPU's lanes of the run before are drawn under the current ones,
//! and Fit shows the longer of the two steps, so the saved (or lost) time is
//! visible without zooming.

use overlap_core::timeline::{Axis, Lane};
use overlap_core::{presets, simulate, ScenarioInput, Timeline};
use overlap_view::display_list::Shape;
use overlap_view::draw;
use overlap_view::layout::{Layout, RowKind};
use overlap_view::scene::Scene;

fn timeline_of(edit: impl FnOnce(&mut ScenarioInput)) -> Timeline {
    let mut input = presets::default_preset().input();
    edit(&mut input);
    simulate(&input.resolve().expect("resolves")).timeline
}

fn layout(scene: &mut Scene) {
    scene.layout = Layout::compute_with_before(
        scene.current.as_ref().unwrap(),
        scene.before.as_ref(),
        900.0,
        0,
        scene.shown_gpus,
    );
}

fn texts(scene: &Scene) -> Vec<String> {
    draw::timeline(scene, scene.window(1.0), 1.0)
        .texts()
        .map(str::to_string)
        .collect()
}

#[test]
fn switching_an_axis_draws_the_lanes_before_under_the_lanes_after() {
    let off = timeline_of(|i| i.overlap.dp = Some(false));
    let on = timeline_of(|i| i.overlap.dp = Some(true));
    let (off_s, on_s) = (off.step_time_s, on.step_time_s);
    assert!(off_s > on_s, "DP overlap shortens the didactic step");
    let mut scene = Scene::new();
    scene.set_timeline(off, false, 0.0);
    scene.keep_before = true;
    scene.set_timeline(on, false, 0.0);
    layout(&mut scene);
    let before_rows: Vec<_> = scene
        .layout
        .rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Before { .. }))
        .collect();
    assert!(before_rows.iter().any(|r| r.kind
        == RowKind::Before {
            lane: Lane::Compute
        }));
    assert!(before_rows.iter().any(|r| r.kind
        == RowKind::Before {
            lane: Lane::Comm(Axis::Dp)
        }));
    // Under every current GPU lane, above the links.
    let last_gpu_row = scene
        .layout
        .rows
        .iter()
        .filter(|r| matches!(r.kind, RowKind::Gpu { .. }))
        .map(|r| r.y)
        .fold(0.0, f64::max);
    assert!(before_rows.iter().all(|r| r.y > last_gpu_row));
    // Fit shows the longer, earlier step: the saved time is on screen.
    assert_eq!(scene.window(1.0), (0.0, off_s));
    assert!(
        texts(&scene)
            .iter()
            .any(|t| t.starts_with("Before the last change, GPU 0")),
        "{:?}",
        texts(&scene)
    );
    // The before lanes carry bars: something is drawn inside them.
    let list = draw::timeline(&scene, scene.window(1.0), 1.0);
    let row = before_rows[0];
    let drawn = list.shapes.iter().any(|s| match s {
        Shape::Rect { rect, fill } => {
            *fill != overlap_view::palette::Role::Lane
                && *fill != overlap_view::palette::Role::Background
                && rect.y >= row.y - 1e-9
                && rect.y + rect.h <= row.y + row.h + 1e-9
        }
        _ => false,
    });
    assert!(drawn, "the before compute lane is empty");
}

#[test]
fn a_new_preset_or_a_large_step_keeps_no_before() {
    let mut scene = Scene::new();
    scene.set_timeline(timeline_of(|_| {}), false, 0.0);
    scene.keep_before = false;
    scene.set_timeline(timeline_of(|i| i.overlap.tp = Some(false)), false, 0.0);
    assert!(scene.before.is_none());
    layout(&mut scene);
    assert!(scene.layout.before_y.is_none());
    assert!(!scene
        .layout
        .rows
        .iter()
        .any(|r| matches!(r.kind, RowKind::Before { .. })));
    assert_eq!(scene.window(1.0).1, scene.step_s());
}
