//! The timeline as a list of plain shapes, in painting order, with colours
//! given as palette roles. The canvas painter (in the app) and the SVG
//! writer ([`crate::svg`]) are two small backends of the same list, so what
//! is exported is what is on screen.

use std::borrow::Cow;

use crate::palette::Role;

/// The font every text shape uses, as CSS.
pub const FONT: &str = "11px system-ui, sans-serif";
/// The font family alone, for SVG's `font-family`.
pub const FONT_FAMILY: &str = "system-ui, sans-serif";
/// The font size, px.
pub const FONT_PX: f64 = 11.0;
/// Spacing of the stripes of an exposed span, px.
pub const HATCH_STEP_PX: f64 = 4.0;

/// A generous estimate of how wide `text` is in [`FONT`], px: wide enough
/// for the common system sans-serif faces (their metrics are near
/// Helvetica's), so that text laid out with it never collides, whichever
/// face the browser picks. No font is measured: the display list is built
/// without a browser.
pub fn text_width_px(text: &str) -> f64 {
    text.chars()
        .map(|c| {
            let em = match c {
                'i' | 'l' | 'j' | 't' | 'f' | 'r' | 'I' | '.' | ',' | ':' | ';' | '\'' | '|'
                | '!' | ' ' | '(' | ')' | '-' => 0.34,
                'm' | 'w' | 'M' | 'W' | '@' | '%' | '×' => 0.9,
                c if c.is_ascii_uppercase() => 0.72,
                _ => 0.58,
            };
            em * FONT_PX
        })
        .sum()
}

/// How a text sits on its x.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// x is the left edge.
    Start,
    /// x is the centre.
    Middle,
    /// x is the right edge.
    End,
}

/// A rectangle in CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

impl Rect {
    /// Right edge.
    pub fn right(&self) -> f64 {
        self.x + self.w
    }
}

/// One thing to paint. Coordinates are CSS pixels.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A filled rectangle.
    Rect {
        /// Where.
        rect: Rect,
        /// Its colour.
        fill: Role,
    },
    /// A translucent highlight.
    Veil {
        /// Where.
        rect: Rect,
        /// Its colour.
        fill: Role,
        /// Opacity, 0..1.
        alpha: f64,
    },
    /// The exposed part of a collective: the background with diagonal
    /// stripes and an outline in [`Role::ExposedStripe`], so that it reads
    /// without colour.
    Hatch {
        /// Where.
        rect: Rect,
    },
    /// A measured rank's wait for later ranks inside its collective's
    /// kernel: stripes falling left to right, in [`Role::ExposedStripe`],
    /// over the bar's own colour, with no outline, so that it reads apart
    /// from an exposed span (background, rising stripes, outline).
    Wait {
        /// Where.
        rect: Rect,
    },
    /// Window brackets of one lane: for each span, a bracket open at the
    /// bottom, from `y + h` up to `y` and down again.
    Brackets {
        /// Top of the brackets.
        y: f64,
        /// Height of their legs.
        h: f64,
        /// (x0, x1) of each bracket.
        spans: Vec<(f64, f64)>,
        /// Their colour.
        stroke: Role,
    },
    /// One line of text, vertically centred on `y`.
    Text {
        /// Anchor x.
        x: f64,
        /// Middle of the text.
        y: f64,
        /// What it says.
        text: Cow<'static, str>,
        /// Its colour.
        fill: Role,
        /// How it sits on x.
        align: Align,
        /// Drawn only inside this rectangle, when given.
        clip: Option<Rect>,
    },
    /// A straight line, 1 px wide.
    Line {
        /// Start.
        from: (f64, f64),
        /// End.
        to: (f64, f64),
        /// Its colour.
        stroke: Role,
        /// Dashed 3 px on, 3 px off.
        dashed: bool,
    },
    /// The outline of a rectangle.
    Outline {
        /// Where.
        rect: Rect,
        /// Its colour.
        stroke: Role,
        /// Line width, px.
        width: f64,
    },
}

/// A picture: its size and its shapes, in painting order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DisplayList {
    /// Width, px.
    pub width: f64,
    /// Height, px.
    pub height: f64,
    /// The shapes, painted first to last.
    pub shapes: Vec<Shape>,
    /// Whether bars narrower than a pixel were merged (level of detail).
    pub merged: bool,
}

impl DisplayList {
    /// An empty picture of the given size.
    pub fn new(width: f64, height: f64) -> Self {
        Self {
            width,
            height,
            shapes: Vec::new(),
            merged: false,
        }
    }

    /// The texts drawn, first to last.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        self.shapes.iter().filter_map(|s| match s {
            Shape::Text { text, .. } => Some(text.as_ref()),
            _ => None,
        })
    }

    /// Adds a filled rectangle.
    pub fn rect(&mut self, fill: Role, x: f64, y: f64, w: f64, h: f64) {
        self.shapes.push(Shape::Rect {
            rect: Rect { x, y, w, h },
            fill,
        });
    }

    /// Adds a line of text.
    pub fn text(
        &mut self,
        fill: Role,
        x: f64,
        y: f64,
        align: Align,
        text: impl Into<Cow<'static, str>>,
    ) {
        self.shapes.push(Shape::Text {
            x,
            y,
            text: text.into(),
            fill,
            align,
            clip: None,
        });
    }
}
