//! The frame the page's plots share, painted by the same canvas and SVG
//! backends as the timeline: scales and their ticks, value axes, the
//! legend, and the picture with where each value was drawn. The plots
//! themselves: `sweep_plot` (a sweep), `bus_plot` (bus bandwidth) and
//! `search_plot` (a layout search).
//!
//! No plotting crate: the plots need bars, lines, squares and text, which
//! the display list already has, so they cost the wasm nothing new and are
//! tested here like the timeline.

use crate::display_list::{text_width_px, Align, DisplayList, Rect, Shape};
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

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

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
}
