//! The time window of the "Measured vs simulated" picture: which part of
//! the step it shows, zoomed and panned on one time axis that the measured
//! trace and the simulated run share, and the keys and buttons that move
//! it. Plain data, so that the page only keeps one and repaints.

/// How much one zoom step narrows or widens the window.
pub const ZOOM_FACTOR: f64 = 2.0;
/// How far one pan step moves the window, as a share of its width.
pub const PAN_SHARE: f64 = 0.25;
/// The narrowest window, seconds: a profiler writes whole microseconds
/// (Kineto's `ts` and `dur`), so a narrower one shows nothing more.
pub const MIN_WINDOW_S: f64 = 10e-6;

/// What a key or a button asks of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// Narrower, about its centre.
    ZoomIn,
    /// Wider, about its centre.
    ZoomOut,
    /// Earlier in time.
    PanLeft,
    /// Later in time.
    PanRight,
    /// The whole step.
    Reset,
}

impl Move {
    /// The move of a key (`KeyboardEvent.key`): `+` or `=` zooms in, `-`
    /// zooms out, the arrows pan, `0` or Home shows the whole step.
    pub fn of_key(key: &str) -> Option<Move> {
        match key {
            "+" | "=" => Some(Move::ZoomIn),
            "-" | "_" => Some(Move::ZoomOut),
            "ArrowLeft" => Some(Move::PanLeft),
            "ArrowRight" => Some(Move::PanRight),
            "0" | "Home" => Some(Move::Reset),
            _ => None,
        }
    }
}

/// A window on `[0, span]` seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeWindow {
    /// Its start, seconds from the step's start.
    pub from_s: f64,
    /// Its end, seconds.
    pub to_s: f64,
}

impl TimeWindow {
    /// The whole of `[0, span_s]`.
    pub fn full(span_s: f64) -> Self {
        Self {
            from_s: 0.0,
            to_s: span_s.max(0.0),
        }
    }

    /// Its width, seconds.
    pub fn width_s(&self) -> f64 {
        self.to_s - self.from_s
    }

    /// Whether it shows the whole of `[0, span_s]`.
    pub fn is_full(&self, span_s: f64) -> bool {
        self.from_s <= 0.0 && self.to_s >= span_s
    }

    /// Kept within `[0, span_s]`, at least [`MIN_WINDOW_S`] wide (or the
    /// whole span when that is narrower), its width kept where it fits.
    pub fn clamped(self, span_s: f64) -> Self {
        let span = span_s.max(0.0);
        let width = self.width_s().max(MIN_WINDOW_S.min(span)).min(span);
        if !width.is_finite() || !self.from_s.is_finite() {
            return Self::full(span);
        }
        // Widened about its centre, where it was narrower than allowed.
        let from = if width > self.width_s() {
            (self.from_s + self.to_s) / 2.0 - width / 2.0
        } else {
            self.from_s
        };
        let from = from.clamp(0.0, span - width);
        Self {
            from_s: from,
            to_s: from + width,
        }
    }

    /// After `m`, within `[0, span_s]`.
    pub fn moved(self, m: Move, span_s: f64) -> Self {
        let (w, mid) = (self.width_s(), (self.from_s + self.to_s) / 2.0);
        let next = match m {
            Move::ZoomIn => Self {
                from_s: mid - w / ZOOM_FACTOR / 2.0,
                to_s: mid + w / ZOOM_FACTOR / 2.0,
            },
            Move::ZoomOut => Self {
                from_s: mid - w * ZOOM_FACTOR / 2.0,
                to_s: mid + w * ZOOM_FACTOR / 2.0,
            },
            Move::PanLeft => Self {
                from_s: self.from_s - w * PAN_SHARE,
                to_s: self.to_s - w * PAN_SHARE,
            },
            Move::PanRight => Self {
                from_s: self.from_s + w * PAN_SHARE,
                to_s: self.to_s + w * PAN_SHARE,
            },
            Move::Reset => Self::full(span_s),
        };
        next.clamped(span_s)
    }

    /// The x of time `t_s` between `left` and `right` px (outside them for
    /// a time outside the window).
    pub fn x_of(&self, t_s: f64, left: f64, right: f64) -> f64 {
        let w = self.width_s().max(1e-12);
        left + (t_s - self.from_s) / w * (right - left)
    }

    /// The part of `[a, b]` seconds inside the window, if any.
    pub fn clip(&self, a: f64, b: f64) -> Option<(f64, f64)> {
        let (a, b) = (a.max(self.from_s), b.min(self.to_s));
        (b > a || (b == a && a > self.from_s && a < self.to_s)).then_some((a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zooming_in_and_out_keeps_the_centre_and_the_span() {
        let full = TimeWindow::full(8.0);
        let z = full.moved(Move::ZoomIn, 8.0);
        assert_eq!(
            z,
            TimeWindow {
                from_s: 2.0,
                to_s: 6.0
            }
        );
        assert_eq!(z.moved(Move::ZoomOut, 8.0), full);
        // Out past the step: the whole step, never more.
        assert_eq!(full.moved(Move::ZoomOut, 8.0), full);
        assert!(full.is_full(8.0) && !z.is_full(8.0));
    }

    #[test]
    fn panning_moves_a_quarter_and_stops_at_the_ends() {
        let z = TimeWindow {
            from_s: 2.0,
            to_s: 6.0,
        };
        assert_eq!(
            z.moved(Move::PanRight, 8.0),
            TimeWindow {
                from_s: 3.0,
                to_s: 7.0
            }
        );
        let mut w = z;
        for _ in 0..10 {
            w = w.moved(Move::PanLeft, 8.0);
        }
        assert_eq!(
            w,
            TimeWindow {
                from_s: 0.0,
                to_s: 4.0
            }
        );
        assert_eq!(w.moved(Move::Reset, 8.0), TimeWindow::full(8.0));
    }

    #[test]
    fn zoom_stops_at_ten_microseconds() {
        let mut w = TimeWindow::full(0.1);
        for _ in 0..40 {
            w = w.moved(Move::ZoomIn, 0.1);
        }
        assert!((w.width_s() - MIN_WINDOW_S).abs() < 1e-12, "{w:?}");
        assert!((w.from_s + w.to_s - 0.1).abs() < 1e-9, "centred: {w:?}");
        // A span shorter than the narrowest window is shown whole.
        assert_eq!(
            TimeWindow::full(4e-6).moved(Move::ZoomIn, 4e-6),
            TimeWindow::full(4e-6)
        );
    }

    #[test]
    fn time_maps_to_pixels_and_clips_to_the_window() {
        let w = TimeWindow {
            from_s: 1.0,
            to_s: 3.0,
        };
        assert_eq!(w.x_of(1.0, 100.0, 300.0), 100.0);
        assert_eq!(w.x_of(2.5, 100.0, 300.0), 250.0);
        assert_eq!(w.clip(0.0, 1.5), Some((1.0, 1.5)));
        assert_eq!(w.clip(3.5, 4.0), None);
        assert_eq!(w.clip(0.0, 1.0), None);
        // A window shifted by a new, shorter span stays inside it.
        let shifted = TimeWindow {
            from_s: 5.0,
            to_s: 7.0,
        }
        .clamped(4.0);
        assert_eq!(
            shifted,
            TimeWindow {
                from_s: 2.0,
                to_s: 4.0
            }
        );
    }

    #[test]
    fn keys_map_to_moves() {
        assert_eq!(Move::of_key("+"), Some(Move::ZoomIn));
        assert_eq!(Move::of_key("="), Some(Move::ZoomIn));
        assert_eq!(Move::of_key("-"), Some(Move::ZoomOut));
        assert_eq!(Move::of_key("ArrowLeft"), Some(Move::PanLeft));
        assert_eq!(Move::of_key("ArrowRight"), Some(Move::PanRight));
        assert_eq!(Move::of_key("0"), Some(Move::Reset));
        assert_eq!(Move::of_key("a"), None);
    }
}
