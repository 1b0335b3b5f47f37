//! Plots of curves as display lists, painted by the same canvas and SVG
//! backends as the timeline: a sweep (step time stacked as compute, exposed
//! communication per axis and bubble, with the baseline and memory against
//! the swept value) and bus bandwidth against message size on a log axis.
//!
//! No plotting crate: the plots need bars, lines, squares and text, which
//! the display list already has, so they cost the wasm nothing new and are
//! tested here like the timeline.

use overlap_core::input::fields::{Field, Kind};
use overlap_core::sweep::{BusPoint, Point, Row};
use overlap_core::timeline::{Axis, Phase};
use serde_json::Value;

use crate::display_list::{text_width_px, Align, DisplayList, Rect, Shape, FONT_PX};
use crate::format;
use crate::palette::Role;

/// Where values land along one pixel range: linear or logarithmic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    /// The value at `px0`.
    pub lo: f64,
    /// The value at `px1`.
    pub hi: f64,
    /// Logarithmic (`lo` and `hi` above zero).
    pub log: bool,
    /// The pixel of `lo`.
    pub px0: f64,
    /// The pixel of `hi`.
    pub px1: f64,
}

impl Scale {
    /// The pixel of `v`; values outside the range land outside the pixels.
    pub fn at(&self, v: f64) -> f64 {
        let t = if self.log {
            (v.max(f64::MIN_POSITIVE).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        let t = if t.is_finite() { t } else { 0.0 };
        self.px0 + t * (self.px1 - self.px0)
    }
}

/// Ticks at multiples of a nice step (1, 2 or 5 times a power of ten,
/// [`format::nice_step`]) from zero-or-`lo` up to the first multiple at or
/// past `hi`: about `target` of them. The last tick is the axis's top.
pub fn nice_ticks(lo: f64, hi: f64, target: f64) -> Vec<f64> {
    let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
    let step = format::nice_step(span, target);
    let first = (lo / step).floor();
    let last = (hi / step - 1e-9).ceil().max(first + 1.0);
    (first as i64..=last as i64)
        .map(|k| {
            // Rounded to 12 significant digits, so that 3 x 0.2 is 0.6.
            let v = k as f64 * step;
            format!("{v:.12e}").parse().unwrap_or(v)
        })
        .collect()
}

/// Ticks at the powers of `base` from the one at or below `lo` to the one at
/// or above `hi`: every power when at most `max` fit, else the powers whose
/// exponent is a multiple of 2, 5 or 10 (for bytes: 32 B, 1 KiB, 32 KiB, ...).
pub fn log_ticks(lo: f64, hi: f64, base: f64, max: usize) -> Vec<f64> {
    if lo <= 0.0 || hi <= lo || base <= 1.0 {
        return Vec::new();
    }
    let first = (lo.ln() / base.ln() + 1e-9).floor() as i32;
    let last = (hi.ln() / base.ln() - 1e-9).ceil() as i32;
    let fits = |stride: i32| (first..=last).filter(|p| p % stride == 0).count() <= max.max(1);
    let stride = [1, 2, 5, 10, 20, 50]
        .into_iter()
        .find(|&s| fits(s))
        .unwrap_or(100);
    (first..=last)
        .filter(|p| p % stride == 0)
        .map(|p| base.powi(p))
        .collect()
}

/// A size in bytes as a tick reads it: 8 B, 1 KiB, 256 MiB, 4 GiB.
pub fn bytes_tick(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if v.fract().abs() < 1e-9 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// A tick value as text: no trailing zeros, at most three decimals.
pub fn number_tick(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

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

/// Where one swept value was drawn: for clicks, keyboard focus and tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The row's index.
    pub index: usize,
    /// Its bar (or, refused, the column it would stand in).
    pub rect: Rect,
    /// The value as a link writes it.
    pub value: String,
}

/// A plot with where each value was drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct Plot {
    /// The picture.
    pub list: DisplayList,
    /// One per row, in row order.
    pub marks: Vec<Mark>,
}

pub(crate) const LEFT_PX: f64 = 64.0;
pub(crate) const RIGHT_PX: f64 = 16.0;
const TOP_PX: f64 = 30.0;
pub(crate) const AXIS_LABEL_PX: f64 = 34.0;
const GAP_PX: f64 = 26.0;

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

pub(crate) fn hline(list: &mut DisplayList, x0: f64, x1: f64, y: f64, stroke: Role, dashed: bool) {
    list.shapes.push(Shape::Line {
        from: (x0, y),
        to: (x1, y),
        stroke,
        dashed,
    });
}

/// A value axis from zero up to the nice tick at or past `top` (about
/// `target` ticks), between the pixels `(bottom, top)`, its ticks, grid and
/// title drawn: the scale it makes.
pub(crate) fn value_axis(
    list: &mut DisplayList,
    (top, target): (f64, f64),
    (px_bottom, px_top): (f64, f64),
    (x0, x1): (f64, f64),
    title: &str,
) -> Scale {
    let ticks = nice_ticks(0.0, top.max(1e-6), target);
    let scale = Scale {
        lo: 0.0,
        hi: *ticks.last().unwrap_or(&1.0),
        log: false,
        px0: px_bottom,
        px1: px_top,
    };
    y_axis(list, &scale, &ticks, x0, x1, title);
    scale
}

/// Y ticks and grid of a panel, the ticks' values `ticks` on `scale`.
fn y_axis(list: &mut DisplayList, scale: &Scale, ticks: &[f64], x0: f64, x1: f64, title: &str) {
    for &t in ticks {
        let y = scale.at(t);
        hline(list, x0, x1, y, Role::Grid, false);
        list.text(Role::Muted, x0 - 6.0, y, Align::End, number_tick(t));
    }
    // Above the top tick, left of the plot: clear of the "now" mark over a
    // bar, whatever its value.
    list.text(
        Role::Text,
        4.0,
        scale.px1 - 16.0,
        Align::Start,
        title.to_string(),
    );
}

/// How a legend entry shows its colour.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Swatch {
    /// A filled square.
    Fill,
    /// A dashed line.
    Dash,
    /// An outlined square.
    Square,
}

/// The legend above a plot: entries left to right, wrapping to a new row
/// when the next would pass the right edge.
pub(crate) struct Legend {
    x: f64,
    y: f64,
    /// The plot area's left edge, CSS px.
    pub(crate) left: f64,
    /// The plot area's right edge, CSS px.
    pub(crate) right: f64,
}

impl Legend {
    const ROW_PX: f64 = 16.0;

    fn new(left: f64, right: f64) -> Self {
        Self {
            x: left,
            y: 12.0,
            left,
            right,
        }
    }

    pub(crate) fn item(&mut self, list: &mut DisplayList, role: Role, swatch: Swatch, label: &str) {
        let w = 18.0 + text_width_px(label);
        if self.x > self.left && self.x + w > self.right {
            self.x = self.left;
            self.y += Self::ROW_PX;
        }
        let (x, y) = (self.x, self.y);
        match swatch {
            Swatch::Fill => list.rect(role, x, y - 5.0, 10.0, 10.0),
            Swatch::Dash => list.shapes.push(Shape::Line {
                from: (x, y),
                to: (x + 14.0, y),
                stroke: role,
                dashed: true,
            }),
            Swatch::Square => list.shapes.push(Shape::Outline {
                rect: Rect {
                    x,
                    y: y - 5.0,
                    w: 10.0,
                    h: 10.0,
                },
                stroke: role,
                width: 1.5,
            }),
        }
        list.text(Role::Text, x + 18.0, y, Align::Start, label.to_string());
        self.x += w + 14.0;
    }

    /// A note without a swatch, in the muted colour.
    pub(crate) fn note(&mut self, list: &mut DisplayList, label: &str) {
        let w = text_width_px(label);
        if self.x > self.left && self.x + w > self.right {
            self.x = self.left;
            self.y += Self::ROW_PX;
        }
        list.text(Role::Muted, self.x, self.y, Align::Start, label.to_string());
        self.x += w + 14.0;
    }

    /// Where the plot under it may start: its last row and room for a label.
    pub(crate) fn top(&self) -> f64 {
        self.y + TOP_PX - 8.0
    }
}

/// An empty picture on the background, and its legend's place above the
/// plot area (which spans `legend.left..legend.right`).
pub(crate) fn blank(width: f64, height: f64) -> (DisplayList, Legend) {
    let mut list = DisplayList::new(width, height);
    list.rect(Role::Background, 0.0, 0.0, width, height);
    (list, Legend::new(LEFT_PX, width - RIGHT_PX))
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

/// A line through the points; a lone point is a short flat line as wide
/// as its bar.
pub(crate) fn polyline(
    list: &mut DisplayList,
    points: &[(f64, f64)],
    stroke: Role,
    dashed: bool,
    w: f64,
) {
    if let [(x, y)] = points {
        hline(list, x - w / 2.0, x + w / 2.0, *y, stroke, dashed);
    }
    for pair in points.windows(2) {
        list.shapes.push(Shape::Line {
            from: pair[0],
            to: pair[1],
            stroke,
            dashed,
        });
    }
}

/// One collective's curve for [`bus_plot`].
#[derive(Clone, Debug, PartialEq)]
pub struct BusCurve {
    /// Its name ("all_reduce").
    pub name: String,
    /// nccl-tests' sizes, simulated.
    pub points: Vec<BusPoint>,
}

/// A published bus bandwidth (published.md section 8) to draw beside the curves.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    /// The buffer, bytes.
    pub bytes: f64,
    /// Bus bandwidth, GB/s.
    pub bus_gbps: f64,
    /// What was measured and where it was published.
    pub source: &'static str,
}

/// MiB.
const MIB: f64 = 1024.0 * 1024.0;

/// The public nccl-tests figures of published.md section 8 for an AllReduce
/// over `nodes` nodes of the hardware preset `preset` (with `nic_gbps` per
/// GPU), empty when none were published for that system. Each is drawn at
/// the size its source names, or at 4 GiB (nccl-tests' `-e 4G`) where the
/// source says "large sizes".
pub fn published_all_reduce(preset: &str, nodes: u32, nic_gbps: f64) -> Vec<Published> {
    use overlap_core::HardwarePreset::{DgxA100, DgxH100};
    match (overlap_core::HardwarePreset::from_name(preset), nodes) {
        (Some(DgxH100), 1) => vec![
            Published {
                bytes: 4096.0 * MIB,
                bus_gbps: 368.8,
                source: "Ring, NVLS off: 368.8 (nccl-tests issue 309)",
            },
            Published {
                bytes: 512.0 * MIB,
                bus_gbps: 480.0,
                source: "NVLS past 256 MB: about 480 (nccl-tests issue 212)",
            },
        ],
        (Some(DgxA100), 1) => vec![
            Published {
                bytes: 4096.0 * MIB,
                bus_gbps: 200.0,
                source: "8 x A100: 200 (nccl-tests issue 149)",
            },
            Published {
                bytes: 4096.0 * MIB,
                bus_gbps: 230.0,
                source: "8 x A100: 230 (nccl-tests issue 178)",
            },
        ],
        // Four HDR NICs for eight GPUs: 12.5 GB/s per GPU.
        (Some(DgxA100), 3) if (nic_gbps - 12.5).abs() < 1e-9 => vec![Published {
            bytes: 4096.0 * MIB,
            bus_gbps: 96.0,
            source: "3 DGX A100, 4 HDR NICs each: 96 at best (nccl-tests issue 119)",
        }],
        _ => Vec::new(),
    }
}

/// The role of the `i`-th collective's curve.
fn curve_role(i: usize) -> Role {
    match i {
        0 => Role::Axis(Axis::Tp),
        1 => Role::Axis(Axis::Pp),
        2 => Role::Axis(Axis::Dp),
        _ => Role::Phase(Phase::Step),
    }
}

/// Bus bandwidth against message size: each curve on a log x axis (bytes)
/// and linear y axis (GB/s), where NCCL's algorithm or protocol changes a
/// tick and its name; published figures as outlined squares with their
/// source; and each of `marks` (bytes, text) as a dashed vertical line:
/// "your TP chunks are 3 MiB each: here". `group` names the GPUs the
/// curves are measured on ("TP's group: 4 GPUs in 1 node"). Each curve's
/// points are its marks.
pub fn bus_plot(
    curves: &[BusCurve],
    published: &[Published],
    marks_at: &[(f64, String)],
    group: Option<&str>,
    width: f64,
    height: f64,
) -> Plot {
    let (mut list, mut legend) = blank(width, height);
    if let Some(g) = group {
        legend.note(&mut list, &format!("measured on {g}"));
    }
    let (x0, x1) = (legend.left, legend.right);
    let bottom = height - AXIS_LABEL_PX - 6.0 - 14.0 * published.len() as f64;
    for (i, curve) in curves.iter().enumerate() {
        // The choice at the smallest size goes in the legend; each switch
        // after it is written on the curve.
        let label = match curve.points.first() {
            Some(p) => format!(
                "{} ({}/{} at {})",
                curve.name,
                p.algorithm,
                p.protocol,
                bytes_tick(p.bytes)
            ),
            None => curve.name.clone(),
        };
        legend.item(&mut list, curve_role(i), Swatch::Fill, &label);
    }
    if published.is_empty() {
        legend.note(&mut list, "no published nccl-tests figures for this system");
    } else {
        legend.item(
            &mut list,
            Role::Text,
            Swatch::Square,
            "nccl-tests, published",
        );
    }
    let top = legend.top() + 8.0;
    let all = curves.iter().flat_map(|c| c.points.iter());
    let (lo, hi) = all.clone().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.bytes), hi.max(p.bytes))
    });
    let (lo, hi) = if lo.is_finite() && hi > lo {
        (lo, hi)
    } else {
        (8.0, 4096.0 * MIB)
    };
    let xs = Scale {
        lo,
        hi,
        log: true,
        px0: x0 + 4.0,
        px1: x1 - 4.0,
    };
    let top_gbps = all
        .map(|p| p.bus_gbps)
        .chain(published.iter().map(|p| p.bus_gbps))
        .fold(0.0, f64::max);
    let ys = value_axis(
        &mut list,
        (top_gbps.max(1.0), 5.0),
        (bottom, top),
        (x0, x1),
        "bus bandwidth, GB/s",
    );
    // Powers of two, at most ten of them labelled: 8 B, 128 B, 2 KiB, ...
    for t in log_ticks(lo, hi, 2.0, 10) {
        let x = xs.at(t);
        list.shapes.push(Shape::Line {
            from: (x, top),
            to: (x, bottom),
            stroke: Role::Grid,
            dashed: false,
        });
        list.text(Role::Muted, x, bottom + 12.0, Align::Middle, bytes_tick(t));
    }
    list.text(
        Role::Text,
        (x0 + x1) / 2.0,
        bottom + 12.0 + FONT_PX + 6.0,
        Align::Middle,
        "message size (log scale)",
    );
    hline(&mut list, x0, x1, bottom, Role::Muted, false);

    let mut marks = Vec::new();
    for (i, curve) in curves.iter().enumerate() {
        let role = curve_role(i);
        let pts: Vec<(f64, f64)> = curve
            .points
            .iter()
            .map(|p| (xs.at(p.bytes), ys.at(p.bus_gbps)))
            .collect();
        polyline(&mut list, &pts, role, false, 6.0);
        let mut previous: Option<(&str, &str)> = None;
        for (k, (p, &(x, y))) in curve.points.iter().zip(&pts).enumerate() {
            list.rect(role, x - 2.0, y - 2.0, 4.0, 4.0);
            marks.push(Mark {
                index: k,
                rect: Rect {
                    x: x - 4.0,
                    y: y - 4.0,
                    w: 8.0,
                    h: 8.0,
                },
                value: format::raw(p.bytes),
            });
            let now = (p.algorithm.as_str(), p.protocol.as_str());
            if previous.is_some_and(|p| p != now) {
                // Where NCCL switches: the new choice, written above the point.
                list.shapes.push(Shape::Line {
                    from: (x, y - 4.0),
                    to: (x, y - 12.0),
                    stroke: role,
                    dashed: false,
                });
                list.text(
                    role,
                    x + 2.0,
                    y - 18.0 - 12.0 * i as f64,
                    Align::Start,
                    format!("{}/{}", now.0, now.1),
                );
            }
            previous = Some(now);
        }
    }
    // Published figures: outlined squares, numbered, their sources listed below.
    for (n, p) in published.iter().enumerate() {
        let (x, y) = (xs.at(p.bytes), ys.at(p.bus_gbps));
        list.shapes.push(Shape::Outline {
            rect: Rect {
                x: x - 4.0,
                y: y - 4.0,
                w: 8.0,
                h: 8.0,
            },
            stroke: Role::Text,
            width: 1.5,
        });
        list.text(
            Role::Text,
            x,
            y - 13.0,
            Align::Middle,
            format!("[{}]", n + 1),
        );
        list.text(
            Role::Muted,
            x0,
            height - 10.0 - 14.0 * (published.len() - 1 - n) as f64,
            Align::Start,
            format!("[{}] published: {}", n + 1, p.source),
        );
    }
    for (k, (bytes, text)) in marks_at.iter().enumerate() {
        let (bytes, text) = (*bytes, text.clone());
        let x = xs.at(bytes.clamp(lo, hi));
        list.shapes.push(Shape::Line {
            from: (x, top),
            to: (x, bottom),
            stroke: Role::Text,
            dashed: true,
        });
        let align = if x > (x0 + x1) / 2.0 {
            Align::End
        } else {
            Align::Start
        };
        let tx = if align == Align::End {
            x - 4.0
        } else {
            x + 4.0
        };
        list.text(Role::Text, tx, top + 6.0 + 14.0 * k as f64, align, text);
    }
    Plot { list, marks }
}

/// "your TP chunks are 3 MiB each: here", for the bus plot's mark.
pub fn tp_mark_text(bytes: f64, chunks: u32) -> String {
    let what = if chunks > 1 {
        "your TP chunks are"
    } else {
        "your TP collectives are"
    };
    format!("{what} {} each: here", bytes_tick(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use overlap_core::input::fields;
    use overlap_core::presets;
    use overlap_core::sweep::{values_from_list, Sweep};

    #[test]
    fn nice_ticks_are_round_and_cover_the_range() {
        assert_eq!(
            nice_ticks(0.0, 108.2, 4.0),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0, 120.0]
        );
        assert_eq!(
            nice_ticks(0.0, 1.0, 4.0),
            vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        );
        let t = nice_ticks(0.0, 0.3, 3.0);
        assert_eq!(t, vec![0.0, 0.1, 0.2, 0.3]);
        assert_eq!(number_tick(0.1 + 0.2), "0.3");
        assert_eq!(nice_ticks(1.0, 64.0, 6.0).first(), Some(&0.0));
        assert_eq!(nice_ticks(1.0, 64.0, 6.0).last(), Some(&70.0));
    }

    #[test]
    fn log_ticks_are_powers_and_the_log_scale_spaces_them_evenly() {
        let t = log_ticks(8.0, 4096.0 * MIB, 2.0, 10);
        assert_eq!(t.first(), Some(&32.0));
        assert_eq!(t.get(1), Some(&1024.0));
        assert!(t.len() <= 10, "{t:?}");
        assert!(t.iter().all(|v| v.log2().fract() == 0.0));
        assert_eq!(
            log_ticks(3.0, 2000.0, 10.0, 10),
            vec![1.0, 10.0, 100.0, 1000.0, 10000.0]
        );
        let s = Scale {
            lo: 1.0,
            hi: 1e4,
            log: true,
            px0: 0.0,
            px1: 400.0,
        };
        assert_eq!(s.at(1.0), 0.0);
        assert!((s.at(10.0) - 100.0).abs() < 1e-9);
        assert!((s.at(100.0) - 200.0).abs() < 1e-9);
        assert!((s.at(1e4) - 400.0).abs() < 1e-9);
        assert_eq!(bytes_tick(8.0), "8 B");
        assert_eq!(bytes_tick(3.0 * MIB), "3 MiB");
        assert_eq!(bytes_tick(4096.0 * MIB), "4 GiB");
    }

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
    fn the_bus_plot_has_a_log_axis_switch_labels_published_points_and_the_mark() {
        let input = presets::find("didactic").unwrap().input();
        let mut hw = input.hardware.clone();
        hw.preset = Some(overlap_core::HardwarePreset::DgxH100);
        hw.nodes = Some(1);
        let points =
            overlap_core::sweep::bus_curve(&hw, overlap_core::scenario::CollectiveOp::AllReduce)
                .unwrap();
        let curve = BusCurve {
            name: "all_reduce".into(),
            points,
        };
        let published = published_all_reduce("dgx-h100", 1, 0.0);
        let plot = bus_plot(
            &[curve],
            &published,
            &[(3.0 * MIB, tp_mark_text(3.0 * MIB, 4))],
            Some("TP's group: 8 GPUs in 1 node"),
            720.0,
            400.0,
        );
        let texts: Vec<&str> = plot.list.texts().collect();
        // nccl-tests issue 309's switch on one H100 node, both named.
        assert!(
            texts.contains(&"all_reduce (Ring/LL at 8 B)") && texts.contains(&"NVLS/Simple"),
            "{texts:?}"
        );
        assert!(texts.contains(&"your TP chunks are 3 MiB each: here"));
        assert!(
            texts.contains(&"measured on TP's group: 8 GPUs in 1 node"),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t.contains("nccl-tests issue 212")));
        // Powers of two spaced evenly: each doubling the same width.
        let xs: Vec<f64> = plot.marks.iter().map(|m| m.rect.x).collect();
        assert_eq!(xs.len(), 30);
        let d0 = xs[1] - xs[0];
        assert!(xs.windows(2).all(|w| ((w[1] - w[0]) - d0).abs() < 1e-6));
        assert!(
            texts.contains(&"32 B") && texts.contains(&"1 KiB"),
            "{texts:?}"
        );
        assert!(published_all_reduce("dgx-h100", 2, 0.0).is_empty());
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
