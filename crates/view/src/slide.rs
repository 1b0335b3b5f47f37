//! The timeline made ready for a slide: the display list the canvas paints,
//! with a one-line caption that says which scenario it shows above it and a
//! legend of its colours and marks below it, so that the picture explains
//! itself once it has left the page. The SVG and the PNG export both use it.

use overlap_core::timeline::{Axis, Phase};
use overlap_core::{Report, Scenario};

use crate::display_list::{text_width_px, Align, DisplayList, Rect, Shape};
use crate::format;
use crate::palette::Role;

/// Height of the caption strip above the timeline, px.
const CAPTION_H: f64 = 24.0;
/// Height of one line of the legend, px.
const LEGEND_LINE_H: f64 = 18.0;
/// A legend swatch, px.
const SWATCH_W: f64 = 16.0;
/// A legend swatch, px.
const SWATCH_H: f64 = 9.0;
/// Space between the swatch and its words, and between two entries, px.
const GAP_PX: f64 = 6.0;
/// Space between two legend entries, px.
const ENTRY_GAP_PX: f64 = 16.0;
/// Left and right margin, px.
const MARGIN_PX: f64 = 6.0;

/// What one legend entry shows beside its words.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mark {
    /// A filled swatch in this role's colour.
    Fill(Role),
    /// A hatched swatch: an exposed span.
    Hatch,
    /// A tint in an axis colour: a lane's window band.
    Window,
    /// A bracket: a window that can hide a collective.
    Bracket,
}

/// The legend's words for a lane's window band (the page's legend says the same).
pub const WINDOW_BAND_WORDS: &str = "window band: tinted behind a lane, where compute can hide it";

/// The legend's entries, in the order the page's legend lists them.
pub fn legend_entries() -> Vec<(Mark, &'static str)> {
    let mut out: Vec<(Mark, &'static str)> = Axis::ALL
        .iter()
        .map(|a| (Mark::Fill(Role::Axis(*a)), a.label()))
        .collect();
    out.extend([
        (Mark::Fill(Role::Phase(Phase::Forward)), "forward"),
        (Mark::Fill(Role::Phase(Phase::Backward)), "backward"),
        (Mark::Fill(Role::WeightGradient), "weight gradient (W)"),
        (Mark::Fill(Role::Phase(Phase::Recompute)), "recompute"),
        (Mark::Fill(Role::Phase(Phase::Step)), "optimizer"),
        (Mark::Hatch, "exposed: compute waits (hatched)"),
        (Mark::Window, WINDOW_BAND_WORDS),
        (Mark::Bracket, "window that can hide a collective"),
    ]);
    out
}

/// The preset a drawn scenario is named by in its caption, and whether it
/// differs from it: the controls' preset (`current_id`) when the scenario
/// is it or was changed from it, else another preset it equals (the page
/// draws the last scenario that finished: a run stopped after a preset was
/// chosen leaves the one before). `None`: a custom scenario.
pub fn drawn_preset(scenario: &Scenario, current_id: &str) -> Option<(&'static str, bool)> {
    use overlap_core::presets;
    let current = presets::find(current_id);
    // The controls' preset first: the others are resolved only when the
    // scenario drawn is not it.
    current
        .into_iter()
        .chain(presets::PRESETS.iter().filter(|p| p.id != current_id))
        .find(|p| presets::scenario(p.id).is_ok_and(|s| s == *scenario))
        .map(|p| (p.title, false))
        .or_else(|| current.map(|p| (p.title, true)))
}

/// The one-line caption: the scenario (its preset, whether it was changed,
/// the parallel layout and the overlap switches), the step time with the
/// speed-up, and the part of the step shown.
pub fn caption(
    preset_title: &str,
    modified: bool,
    scenario: &Scenario,
    report: &Report,
    window_ms: (f64, f64),
) -> String {
    let p = &scenario.parallel;
    let o = &scenario.overlap;
    let on = |b: bool| if b { "on" } else { "off" };
    let shown = if window_ms.0 <= 0.0 && window_ms.1 >= report.step_time_ms * (1.0 - 1e-9) {
        "whole step".to_string()
    } else {
        format!(
            "{} to {} shown",
            format::ms(window_ms.0),
            format::ms(window_ms.1)
        )
    };
    format!(
        "{preset_title}{} · {}, TP {} × PP {} × DP {} · overlap {} {}, {} {}, {} {} · step {} ({} vs no overlap) · {shown}",
        if modified { " (modified)" } else { "" },
        overlap_core::counted(u64::from(p.tp * p.pp * p.dp), "GPU"),
        p.tp,
        p.pp,
        p.dp,
        Axis::Tp.label(),
        on(o.tp),
        Axis::Pp.label(),
        on(o.pp),
        Axis::Dp.label(),
        on(o.dp),
        format::ms(report.step_time_ms),
        format::ratio(report.speedup),
    )
}

/// Moves a shape down by `dy`.
fn shifted(shape: &Shape, dy: f64) -> Shape {
    let down = |r: &Rect| Rect { y: r.y + dy, ..*r };
    match shape {
        Shape::Rect { rect, fill } => Shape::Rect {
            rect: down(rect),
            fill: *fill,
        },
        Shape::Veil { rect, fill, alpha } => Shape::Veil {
            rect: down(rect),
            fill: *fill,
            alpha: *alpha,
        },
        Shape::Hatch { rect } => Shape::Hatch { rect: down(rect) },
        Shape::Wait { rect } => Shape::Wait { rect: down(rect) },
        Shape::Brackets {
            y,
            h,
            spans,
            stroke,
        } => Shape::Brackets {
            y: y + dy,
            h: *h,
            spans: spans.clone(),
            stroke: *stroke,
        },
        Shape::Text {
            x,
            y,
            text,
            fill,
            align,
            clip,
        } => Shape::Text {
            x: *x,
            y: y + dy,
            text: text.clone(),
            fill: *fill,
            align: *align,
            clip: clip.as_ref().map(down),
        },
        Shape::Line {
            from,
            to,
            stroke,
            dashed,
        } => Shape::Line {
            from: (from.0, from.1 + dy),
            to: (to.0, to.1 + dy),
            stroke: *stroke,
            dashed: *dashed,
        },
        Shape::Outline {
            rect,
            stroke,
            width,
        } => Shape::Outline {
            rect: down(rect),
            stroke: *stroke,
            width: *width,
        },
    }
}

/// The legend laid out in lines no wider than `width`: its shapes and its height.
fn legend(width: f64, top: f64) -> (Vec<Shape>, f64) {
    let mut shapes = Vec::new();
    let (mut x, mut line) = (MARGIN_PX, 0.0);
    for (mark, words) in legend_entries() {
        let w = SWATCH_W + GAP_PX + text_width_px(words);
        if x > MARGIN_PX && x + w > width - MARGIN_PX {
            x = MARGIN_PX;
            line += 1.0;
        }
        let mid = top + line * LEGEND_LINE_H + LEGEND_LINE_H / 2.0;
        let swatch = Rect {
            x,
            y: mid - SWATCH_H / 2.0,
            w: SWATCH_W,
            h: SWATCH_H,
        };
        shapes.push(match mark {
            Mark::Fill(role) => Shape::Rect {
                rect: swatch,
                fill: role,
            },
            Mark::Hatch => Shape::Hatch { rect: swatch },
            Mark::Window => Shape::Veil {
                rect: swatch,
                fill: Role::Axis(Axis::Tp),
                alpha: crate::windows::WINDOW_ALPHA,
            },
            Mark::Bracket => Shape::Brackets {
                y: swatch.y,
                h: SWATCH_H,
                spans: vec![(swatch.x, swatch.right())],
                stroke: Role::Muted,
            },
        });
        shapes.push(Shape::Text {
            x: x + SWATCH_W + GAP_PX,
            y: mid,
            text: words.into(),
            fill: Role::Text,
            align: Align::Start,
            clip: None,
        });
        x += w + ENTRY_GAP_PX;
    }
    (shapes, (line + 1.0) * LEGEND_LINE_H + 4.0)
}

/// The timeline's display list with `caption` above it and the legend
/// below it, on the background colour throughout.
pub fn slide(timeline: &DisplayList, caption: &str) -> DisplayList {
    let width = timeline.width;
    let legend_top = CAPTION_H + timeline.height + 4.0;
    let (legend_shapes, legend_h) = legend(width, legend_top);
    let mut out = DisplayList::new(width, legend_top + legend_h);
    out.merged = timeline.merged;
    out.rect(Role::Background, 0.0, 0.0, out.width, out.height);
    out.shapes.push(Shape::Text {
        x: MARGIN_PX,
        y: CAPTION_H / 2.0,
        text: caption.to_string().into(),
        fill: Role::Text,
        align: Align::Start,
        // A caption longer than the picture is cut at its edge, not spilled.
        clip: Some(Rect {
            x: 0.0,
            y: 0.0,
            w: width - MARGIN_PX,
            h: CAPTION_H,
        }),
    });
    out.shapes
        .extend(timeline.shapes.iter().map(|s| shifted(s, CAPTION_H)));
    out.shapes.extend(legend_shapes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::presets;

    #[test]
    fn a_caption_names_the_preset_of_the_scenario_drawn_not_of_the_controls() {
        let one_t = presets::scenario("megatron-1t").unwrap();
        let title = presets::find("megatron-1t").unwrap().title;
        assert_eq!(drawn_preset(&one_t, "megatron-1t"), Some((title, false)));
        let mut changed = one_t.clone();
        changed.overlap.tp = true;
        assert_eq!(drawn_preset(&changed, "megatron-1t"), Some((title, true)));
        // A run stopped after another preset was chosen: the drawn one is
        // still the 1T preset, unchanged.
        assert_eq!(drawn_preset(&one_t, "didactic"), Some((title, false)));
        assert_eq!(drawn_preset(&changed, "no-such-preset"), None);
    }

    fn texts(list: &DisplayList) -> Vec<(f64, f64, String)> {
        list.shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Text { x, y, text, .. } => Some((*x, *y, text.to_string())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_caption_names_the_scenario_and_its_figures() {
        let scenario = presets::scenario(presets::DEFAULT_ID).unwrap();
        let report = overlap_core::simulate(&scenario).report;
        let p = &scenario.parallel;
        let text = caption(
            "Didactic",
            false,
            &scenario,
            &report,
            (0.0, report.step_time_ms),
        );
        assert!(text.starts_with("Didactic · "), "{text}");
        assert!(
            text.contains(&format!("TP {} × PP {} × DP {}", p.tp, p.pp, p.dp)),
            "{text}"
        );
        assert!(text.contains(&format::ms(report.step_time_ms)), "{text}");
        assert!(text.ends_with("whole step"), "{text}");
        assert!(!text.contains('\n'));
        let zoomed = caption("Didactic", true, &scenario, &report, (10.0, 20.0));
        assert!(zoomed.contains("(modified)") && zoomed.ends_with("10.00 ms to 20.00 ms shown"));
    }

    #[test]
    fn a_slide_has_the_caption_above_and_every_legend_entry_below() {
        for width in [375.0, 1440.0] {
            let mut timeline = DisplayList::new(width, 300.0);
            timeline.rect(Role::Axis(Axis::Tp), 10.0, 40.0, 50.0, 10.0);
            let s = slide(&timeline, "the caption");
            let texts = texts(&s);
            assert_eq!(texts[0].2, "the caption");
            assert!(texts[0].1 < CAPTION_H);
            // The timeline moved down under the caption, unchanged.
            assert!(s.shapes.contains(&Shape::Rect {
                rect: Rect {
                    x: 10.0,
                    y: 40.0 + CAPTION_H,
                    w: 50.0,
                    h: 10.0
                },
                fill: Role::Axis(Axis::Tp)
            }));
            for (_, words) in legend_entries() {
                let (x, y, _) = texts
                    .iter()
                    .find(|t| t.2 == words)
                    .unwrap_or_else(|| panic!("legend lacks {words}"));
                assert!(*y > CAPTION_H + 300.0 && *y < s.height, "{words} at {y}");
                assert!(
                    x + text_width_px(words) <= width,
                    "{words} leaves the picture"
                );
            }
            assert!(s
                .shapes
                .iter()
                .any(|s| matches!(s, Shape::Hatch { rect } if rect.y > CAPTION_H + 300.0)));
        }
    }
}
