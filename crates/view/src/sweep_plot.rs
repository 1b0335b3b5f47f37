//! A sweep's plot: step time stacked as compute, exposed communication per
//! axis and bubble, with the baseline and memory, against the swept value.

use overlap_core::input::fields::{Field, Kind};
use overlap_core::sweep::{Point, Row};
use overlap_core::timeline::{Axis, Phase};
use serde_json::Value;

use crate::display_list::{text_width_px, Align, Rect, Shape, FONT_PX};
use crate::palette::Role;
use crate::plot::{
    blank, hline, log_ticks, nice_ticks, number_tick, polyline, value_axis, Mark, Plot, Scale,
    Swatch, AXIS_LABEL_PX,
};

/// The gap between the step panel and the memory panel, CSS px.
const GAP_PX: f64 = 26.0;

/// One part of a stacked bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// Its colour.
    pub role: Role,
    /// Its height, ms.
    pub ms: f64,
    /// What the legend calls it.
    pub label: String,
}

/// The parts of a step, bottom to top: compute, the exposed communication
/// of each axis, then the bubble (model.md 5: compute + exposed + bubble =
/// step on a GPU). The bubble part is the rest of the step, so the parts
/// sum to the step exactly.
pub fn stack(p: &Point) -> Vec<Part> {
    let mut parts = vec![Part {
        role: Role::Phase(Phase::Forward),
        ms: p.compute_ms,
        label: "compute".to_string(),
    }];
    for a in Axis::ALL
        .into_iter()
        .filter(|a| p.exposed_ms.contains_key(a.name()))
    {
        parts.push(Part {
            role: Role::Axis(a),
            ms: p.exposed(a),
            label: format!("{} exposed", a.label()),
        });
    }
    let used: f64 = parts.iter().map(|p| p.ms).sum();
    parts.push(Part {
        role: Role::Grid,
        ms: (p.step_time_ms - used).max(0.0),
        label: "bubble".to_string(),
    });
    parts
}

/// Where the rows' values sit along x: by number on a linear (or, over
/// three decades, log) scale for a number field, else evenly as categories.
fn x_positions(field: &Field, rows: &[Row], px0: f64, px1: f64) -> (Vec<f64>, Option<Scale>) {
    let numbers: Option<Vec<f64>> = if matches!(field.kind, Kind::Int { .. } | Kind::Real { .. }) {
        rows.iter().map(|r| r.value().as_f64()).collect()
    } else {
        None
    };
    match numbers {
        Some(xs) if xs.len() > 1 => {
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if hi > lo {
                let pad = (px1 - px0) / (xs.len() as f64 * 2.0).max(8.0);
                let log = lo > 0.0 && hi / lo >= 1000.0;
                let scale = Scale {
                    lo,
                    hi,
                    log,
                    px0: px0 + pad,
                    px1: px1 - pad,
                };
                return (xs.iter().map(|&x| scale.at(x)).collect(), Some(scale));
            }
            (vec![(px0 + px1) / 2.0; xs.len()], None)
        }
        _ => {
            let n = rows.len().max(1) as f64;
            let w = (px1 - px0) / n;
            (
                (0..rows.len())
                    .map(|i| px0 + w * (i as f64 + 0.5))
                    .collect(),
                None,
            )
        }
    }
}

/// The value as the axis writes it: "on"/"off" for a switch.
fn value_text(v: &Value) -> String {
    match v {
        Value::Bool(true) => "on".to_string(),
        Value::Bool(false) => "off".to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), number_tick),
        other => Field::text(other),
    }
}

/// The sweep's plot: step time stacked as compute, exposed per axis and
/// bubble against the value, the baseline (every overlap off) as a dashed
/// line and the current value outlined; below it memory of the fullest GPU
/// against the value with the capacity as a dashed line. A refused value
/// is a cross on the axis. `current` is the scenario's own value.
pub fn sweep_plot(
    field: &Field,
    rows: &[Row],
    current: Option<&Value>,
    width: f64,
    height: f64,
) -> Plot {
    let (mut list, mut legend) = blank(width, height);
    let (x0, x1) = (legend.left, legend.right);
    // The legend names every axis some value has (EP, CP only where the
    // scenario has them).
    let mut sample = Point::of(Value::Null, &overlap_core::Report::default());
    for p in rows.iter().filter_map(Row::point) {
        for axis in p.exposed_ms.keys() {
            sample.exposed_ms.entry(axis.clone()).or_insert(0.0);
        }
    }
    for part in stack(&sample) {
        legend.item(&mut list, part.role, Swatch::Fill, &part.label);
    }
    legend.item(&mut list, Role::Text, Swatch::Dash, "all overlap off");
    let top_px = legend.top();
    let plot_h = height - top_px - AXIS_LABEL_PX - GAP_PX;
    let step_h = (plot_h * 0.64).max(40.0);
    let mem_h = (plot_h - step_h).max(24.0);
    let step_bottom = top_px + step_h;
    let mem_top = step_bottom + GAP_PX;
    let mem_bottom = mem_top + mem_h;

    let points: Vec<&Point> = rows.iter().filter_map(Row::point).collect();
    // Each panel's scale: the largest value drawn in it, ticks wanted,
    // pixels from its bottom to its top, title.
    type Panel = (fn(&Point) -> f64, f64, f64, f64, &'static str);
    let panels: [Panel; 2] = [
        (
            |p| p.step_time_ms.max(p.baseline_ms),
            4.0,
            step_bottom,
            top_px + 8.0,
            "step, ms",
        ),
        (
            |p| p.memory_gb_total.max(p.memory_gb_capacity),
            2.0,
            mem_bottom,
            mem_top + 8.0,
            "memory, GB",
        ),
    ];
    let [step_scale, mem_scale] = panels.map(|(largest, target, bottom, top, title)| {
        let most = points.iter().map(|p| largest(p)).fold(0.0, f64::max);
        value_axis(&mut list, (most, target), (bottom, top), (x0, x1), title)
    });

    let (xs, scale) = x_positions(field, rows, x0, x1);
    let spacing = xs
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .filter(|d| *d > 0.5)
        .fold(f64::INFINITY, f64::min);
    let bar_w = if spacing.is_finite() {
        (spacing * 0.7).clamp(2.0, 48.0)
    } else {
        48.0
    };

    // X ticks: by number on a number scale, else every value's name (as
    // many as fit).
    let axis_y = mem_bottom + 12.0;
    match scale {
        Some(s) => {
            let ticks = if s.log {
                log_ticks(s.lo, s.hi, 10.0, 8)
            } else {
                nice_ticks(s.lo, s.hi, ((x1 - x0) / 70.0).max(2.0))
            };
            // A whole-number field has no ticks between its values.
            let ticks: Vec<f64> = ticks
                .into_iter()
                .filter(|t| !field.is_integer() || t.fract() == 0.0)
                .collect();
            for t in ticks.into_iter().filter(|t| *t >= s.lo && *t <= s.hi) {
                let x = s.at(t);
                list.shapes.push(Shape::Line {
                    from: (x, mem_bottom),
                    to: (x, mem_bottom + 4.0),
                    stroke: Role::Muted,
                    dashed: false,
                });
                list.text(Role::Muted, x, axis_y, Align::Middle, number_tick(t));
            }
        }
        None => {
            let room = if xs.len() > 1 { spacing } else { x1 - x0 };
            let mut last_right = f64::NEG_INFINITY;
            for (row, &x) in rows.iter().zip(&xs) {
                let text = value_text(row.value());
                let w = text_width_px(&text);
                if x - w / 2.0 > last_right + 4.0 && w <= room * 2.0 {
                    list.text(Role::Muted, x, axis_y, Align::Middle, text);
                    last_right = x + w / 2.0;
                }
            }
        }
    }
    let label = if field.unit.is_empty() {
        field.label.to_string()
    } else {
        format!("{} ({})", field.label, field.unit)
    };
    list.text(
        Role::Text,
        (x0 + x1) / 2.0,
        axis_y + FONT_PX + 6.0,
        Align::Middle,
        label,
    );

    // Bars, memory dots, baseline and capacity.
    let mut marks = Vec::with_capacity(rows.len());
    let mut baseline: Vec<(f64, f64)> = Vec::new();
    let mut capacity: Vec<(f64, f64)> = Vec::new();
    let mut memory: Vec<(f64, f64)> = Vec::new();
    for (index, (row, &x)) in rows.iter().zip(&xs).enumerate() {
        let left = x - bar_w / 2.0;
        let value = Field::text(row.value());
        match row.point() {
            Some(p) => {
                let mut ms = 0.0;
                for part in stack(p) {
                    let y_top = step_scale.at(ms + part.ms);
                    let y_bottom = step_scale.at(ms);
                    if part.ms > 0.0 {
                        list.rect(part.role, left, y_top, bar_w, y_bottom - y_top);
                    }
                    ms += part.ms;
                }
                let top = step_scale.at(p.step_time_ms);
                marks.push(Mark {
                    index,
                    rect: Rect {
                        x: left,
                        y: top,
                        w: bar_w,
                        h: step_bottom - top,
                    },
                    value: value.clone(),
                });
                baseline.push((x, step_scale.at(p.baseline_ms)));
                capacity.push((x, mem_scale.at(p.memory_gb_capacity)));
                let my = mem_scale.at(p.memory_gb_total);
                memory.push((x, my));
                let role = if p.fits {
                    Role::Phase(Phase::Forward)
                } else {
                    Role::Phase(Phase::Step)
                };
                list.rect(role, left, my, bar_w, mem_bottom - my);
            }
            None => {
                list.text(Role::Muted, x, step_bottom - 7.0, Align::Middle, "×");
                marks.push(Mark {
                    index,
                    rect: Rect {
                        x: left,
                        y: top_px,
                        w: bar_w,
                        h: step_bottom - top_px,
                    },
                    value,
                });
            }
        }
        if current.is_some_and(|c| same_value(c, row.value())) {
            list.shapes.push(Shape::Outline {
                rect: Rect {
                    x: left - 2.0,
                    y: top_px + 2.0,
                    w: bar_w + 4.0,
                    h: mem_bottom - top_px - 2.0,
                },
                stroke: Role::Text,
                width: 1.5,
            });
            list.text(Role::Text, x, top_px - 4.0, Align::Middle, "now");
        }
    }
    // The scenario's own value between swept ones: a line where it falls.
    let listed = current.is_some_and(|c| rows.iter().any(|r| same_value(c, r.value())));
    if let (Some(c), Some(s), false) = (current.and_then(Value::as_f64), scale, listed) {
        if c >= s.lo && c <= s.hi {
            let x = s.at(c);
            list.shapes.push(Shape::Line {
                from: (x, top_px + 2.0),
                to: (x, mem_bottom),
                stroke: Role::Text,
                dashed: false,
            });
            list.text(Role::Text, x, top_px - 4.0, Align::Middle, "now");
        }
    }
    polyline(&mut list, &baseline, Role::Text, true, bar_w);
    polyline(&mut list, &capacity, Role::Muted, true, bar_w);
    if let Some(&(_, y)) = capacity.last() {
        list.text(Role::Muted, x1, y - 7.0, Align::End, "capacity");
    }
    // Axes' base lines.
    hline(&mut list, x0, x1, step_bottom, Role::Muted, false);
    hline(&mut list, x0, x1, mem_bottom, Role::Muted, false);
    Plot { list, marks }
}

/// Whether two values are the same setting (25 and 25.0 are).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::input::fields;
    use overlap_core::presets;
    use overlap_core::sweep::{values_from_list, Sweep};

    fn didactic_rows(path: &str, list: &str) -> Vec<Row> {
        let input = presets::find("didactic").unwrap().input();
        let f = fields::field(path);
        Sweep::new(input, f).rows(&values_from_list(f, list).unwrap())
    }

    #[test]
    fn stacked_bars_sum_to_the_step_and_stand_as_tall_as_it() {
        let rows = didactic_rows("overlap.tp_chunks", "1,2,4,8,32");
        let f = fields::field("overlap.tp_chunks");
        let plot = sweep_plot(f, &rows, Some(&Value::from(4)), 640.0, 360.0);
        for (row, mark) in rows.iter().zip(&plot.marks) {
            let p = row.point().unwrap();
            let sum: f64 = stack(p).iter().map(|part| part.ms).sum();
            assert!(
                (sum - p.step_time_ms).abs() < 1e-9,
                "{sum} vs {}",
                p.step_time_ms
            );
            // The bubble part is the report's bubble, to within a hundredth of the step.
            let bubble = stack(p).last().unwrap().ms;
            assert!(
                (bubble - p.bubble_fraction * p.step_time_ms).abs() < 0.01 * p.step_time_ms,
                "{bubble} vs {}",
                p.bubble_fraction * p.step_time_ms
            );
            // The bar's rectangles, stacked, fill the mark from the axis to the step.
            let rects: Vec<&Rect> = plot
                .list
                .shapes
                .iter()
                .filter_map(|s| match s {
                    Shape::Rect { rect, .. }
                        if rect.x == mark.rect.x
                            && rect.w == mark.rect.w
                            && rect.y < mark.rect.y + mark.rect.h + 1e-6
                            && rect.y + rect.h <= mark.rect.y + mark.rect.h + 1e-6 =>
                    {
                        Some(rect)
                    }
                    _ => None,
                })
                .collect();
            let height: f64 = rects.iter().map(|r| r.h).sum();
            assert!(
                (height - mark.rect.h).abs() < 1e-6,
                "{height} vs {}",
                mark.rect.h
            );
        }
        // Wider chunk counts stand to the right, in order.
        let xs: Vec<f64> = plot.marks.iter().map(|m| m.rect.x).collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
        // The current value is outlined and labelled.
        assert!(plot
            .list
            .shapes
            .iter()
            .any(|s| matches!(s, Shape::Outline { .. })));
        assert!(plot
            .list
            .shapes
            .iter()
            .any(|s| matches!(s, Shape::Text { text, .. } if text == "now")));
    }

    #[test]
    fn refused_values_are_drawn_as_crosses_and_enums_as_categories() {
        let rows = didactic_rows("parallel.tp", "1,3,4");
        let plot = sweep_plot(fields::field("parallel.tp"), &rows, None, 480.0, 300.0);
        assert_eq!(plot.marks.len(), 3);
        let crosses = plot
            .list
            .shapes
            .iter()
            .filter(|s| matches!(s, Shape::Text { text, .. } if text == "×"))
            .count();
        assert_eq!(crosses, 2, "tp 1 and 3 are refused on didactic");
        let rows = didactic_rows("parallel.schedule", "gpipe,1f1b,zb-v");
        let plot = sweep_plot(
            fields::field("parallel.schedule"),
            &rows,
            None,
            480.0,
            300.0,
        );
        for name in ["gpipe", "1f1b"] {
            assert!(
                plot.list
                    .shapes
                    .iter()
                    .any(|s| matches!(s, Shape::Text { text, .. } if text == name)),
                "{name}"
            );
        }
    }

    #[test]
    fn legends_wrap_to_stay_within_a_narrow_plot() {
        let rows = didactic_rows("overlap.tp_chunks", "1,2");
        let plot = sweep_plot(
            fields::field("overlap.tp_chunks"),
            &rows,
            None,
            360.0,
            360.0,
        );
        let legend: Vec<(f64, f64, f64)> = plot
            .list
            .shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Text {
                    x,
                    y,
                    text,
                    align: Align::Start,
                    ..
                } if *y < 30.0 => Some((*x, *y, text_width_px(text))),
                _ => None,
            })
            .collect();
        assert_eq!(legend.len(), 6, "{legend:?}");
        assert!(legend.iter().all(|(x, _, w)| x + w <= 360.0), "{legend:?}");
        let rows_used: std::collections::BTreeSet<u64> =
            legend.iter().map(|(_, y, _)| y.to_bits()).collect();
        assert!(rows_used.len() >= 2, "{legend:?}");
        // The plot starts under the legend's last row.
        let last_row = legend.iter().map(|l| l.1).fold(0.0, f64::max);
        assert!(plot.marks.iter().all(|m| m.rect.y > last_row + 8.0));
    }
}
