//! The canvas backend of the display list (`overlap_view::draw`): paints its
//! shapes in order, in the palette's colours. Not reactive: called once per
//! animation frame when something changed. The list holds only visible,
//! level-of-detail merged shapes (about one rectangle per pixel per lane),
//! so its cost does not grow with the step's bar count.

use overlap_view::display_list::{Align, DisplayList, Rect, Shape, FONT, HATCH_STEP_PX};
use overlap_view::draw;
use overlap_view::layout::Layout;
use overlap_view::palette::{Palette, DARK};
use overlap_view::scene::Scene;
use overlap_view::shown_gpus::ShownGpus;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

/// Fill style changes cross into JavaScript; skip the ones that change
/// nothing. The stripes and outlines of consecutive hatches are gathered
/// into one path, stroked in one call when another shape comes: a call per
/// stripe took half of a large picture's painting.
struct Pen<'a> {
    ctx: &'a CanvasRenderingContext2d,
    fill: &'static str,
    /// SVG path data of the hatches not stroked yet.
    hatches: String,
    stripe: &'static str,
}

impl Pen<'_> {
    /// Strokes the hatches gathered so far.
    fn flush(&mut self) {
        if self.hatches.is_empty() {
            return;
        }
        if let Ok(path) = web_sys::Path2d::new_with_path_string(&self.hatches) {
            self.ctx.set_stroke_style_str(self.stripe);
            self.ctx.stroke_with_path(&path);
        }
        self.hatches.clear();
    }

    fn fill(&mut self, colour: &'static str) {
        if self.fill != colour {
            self.ctx.set_fill_style_str(colour);
            self.fill = colour;
        }
    }

    fn rect(&mut self, colour: &'static str, r: &Rect) {
        self.fill(colour);
        self.ctx.fill_rect(r.x, r.y, r.w, r.h);
    }
}

/// What the canvas's picture depends on: when none of it changed, the canvas
/// keeps what it shows and is not touched. The playhead, its veils and the
/// hover marks are elements over the canvas (`frame.rs`), so playback and
/// hover never repaint it, however many bars the step holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerKey {
    seq: u64,
    win: (f64, f64),
    size: (u32, u32),
    link_gpu: usize,
    shown_gpus: ShownGpus,
    dark: bool,
}

/// A frame spends at most about this long issuing a new run's shapes: a
/// larger picture is painted over several frames, off screen, and shown
/// whole once complete, so that no frame holds the main thread for long.
const PAINT_BUDGET_MS: f64 = 8.0;
/// Shapes issued between two looks at the clock.
const PAINT_CHUNK: usize = 256;
/// At most this many shapes per frame: the canvas rasterises what a frame
/// issued at the frame's end, which the clock above does not see.
const PAINT_MAX_SHAPES: usize = 6 * PAINT_CHUNK;

/// Where a full redraw's time went, ms, for the page benchmark (read, never
/// asserted on).
#[derive(Clone, Copy, Debug, Default)]
pub struct Redraw {
    /// Reading the canvas's width: nothing once the page's resize observer
    /// has measured it (`frame.rs`); before that, a read that forces the
    /// page's style and layout when the page changed since the last frame.
    pub width_ms: f64,
    /// Laying the rows out.
    pub layout_ms: f64,
    /// Building the display list.
    pub list_ms: f64,
    /// Shapes in it.
    pub shapes: usize,
    /// Issuing the shapes to the canvas, over all frames.
    pub paint_ms: f64,
    /// Frames the picture was painted over.
    pub frames: u32,
    /// Showing the picture painted off screen.
    pub show_ms: f64,
}

impl std::fmt::Display for Redraw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "width {:.1} ms, layout {:.1} ms, list {:.1} ms, {} shapes, paint {:.1} ms over {} frame{}, show {:.1} ms",
            self.width_ms,
            self.layout_ms,
            self.list_ms,
            self.shapes,
            self.paint_ms,
            self.frames,
            if self.frames == 1 { "" } else { "s" },
            self.show_ms
        )
    }
}

/// A new run's picture being painted off screen, a few shapes per frame.
struct Job {
    key: LayerKey,
    list: DisplayList,
    /// The next shape to paint.
    next: usize,
    timing: Redraw,
}

/// What the canvas shows now, and the picture being painted for it.
pub struct Cache {
    /// The off-screen canvas a new run's picture is painted on.
    layer: Option<HtmlCanvasElement>,
    key: Option<LayerKey>,
    merged: bool,
    job: Option<Job>,
    /// The last full redraw, for the page benchmark.
    pub last_redraw: Option<Redraw>,
    /// The height, CSS px, the canvas's clip box was last given.
    shown_px: Option<f64>,
}

impl Cache {
    /// Nothing painted yet.
    pub fn new() -> Self {
        let layer = crate::dom::document()
            .and_then(|d| d.create_element("canvas").ok())
            .and_then(|e| e.dyn_into::<HtmlCanvasElement>().ok());
        Self {
            layer,
            key: None,
            merged: false,
            job: None,
            last_redraw: None,
            shown_px: None,
        }
    }
}

/// What a frame's drawing did.
#[derive(Clone, Copy, Debug)]
pub struct Drawn {
    /// Whether narrow bars were merged in the picture shown.
    pub merged: bool,
    /// Whether the canvas shows the scene as it is (false: a picture is
    /// still being painted and the next frame goes on with it).
    pub done: bool,
}

fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
}

/// Device-pixel rows a backing store grows by (see [`fit_backing`]).
const BACKING_ROWS_STEP: u32 = 256;

/// Gives a canvas a backing store `pw` device pixels wide and at least `ph`
/// tall; returns whether it was reallocated. Reallocating clears the store
/// and costs 5 to 20 ms on a timeline-sized canvas where the browser
/// rasterises in software, in the frame that shows the picture. So the
/// store keeps its height when a shorter picture comes, up to twice the
/// picture's height, and grows in steps; the rows below the picture are
/// hidden by the canvas's clip box (see [`show_height`]).
fn fit_backing(canvas: &HtmlCanvasElement, (pw, ph): (u32, u32)) -> bool {
    let h = canvas.height();
    let roomy = h >= ph && h <= ph.max(BACKING_ROWS_STEP).saturating_mul(2);
    if canvas.width() == pw && roomy {
        return false;
    }
    canvas.set_width(pw);
    canvas.set_height(ph.max(1).div_ceil(BACKING_ROWS_STEP) * BACKING_ROWS_STEP);
    true
}

/// Sizes the visible canvas for a picture `height_px` CSS pixels tall: its
/// backing store (`fit_backing`), its CSS height one CSS pixel per `dpr`
/// rows of it, and the height of its parent, the clip box that shows the
/// picture's rows only.
///
/// `shown_px` is the clip box's height as last set: an equal one is not
/// written again (it would still invalidate the page's style).
fn show_height(
    canvas: &HtmlCanvasElement,
    size: (u32, u32),
    height_px: f64,
    dpr: f64,
    shown_px: &mut Option<f64>,
) {
    if fit_backing(canvas, size) {
        let css_px = f64::from(canvas.height()) / dpr;
        let _ = canvas
            .style()
            .set_property("height", &format!("{css_px}px"));
    }
    if *shown_px == Some(height_px) {
        return;
    }
    if let Some(clip) = canvas
        .parent_element()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = clip
            .style()
            .set_property("height", &format!("{height_px}px"));
        *shown_px = Some(height_px);
    }
}

/// Lays the scene out for the canvas's width and draws it, unless the canvas
/// already shows it. `width_px` is the canvas's CSS width as last measured
/// by a resize observer: reading it from the element here would force the
/// page's style and layout in the middle of a frame, after the figures'
/// updates, so that layout ran twice in one task.
///
/// A new run (or a new size) is painted off screen, within a budget per
/// frame, and shown whole when complete: until then the canvas keeps the
/// picture before. A new window (zoom, pan), link GPU or theme on the same
/// run, and the morph, paint straight onto the canvas in the frame.
pub fn draw(
    scene: &mut Scene,
    canvas: &HtmlCanvasElement,
    cache: &mut Cache,
    now_ms: f64,
    pal: &'static Palette,
    width_px: impl FnOnce() -> f64,
) -> Result<Drawn, JsValue> {
    let shown = Drawn {
        merged: cache.merged,
        done: true,
    };
    let Some(ctx) = context(canvas) else {
        return Ok(shown);
    };
    let Some(current) = scene.current.as_ref() else {
        return Ok(shown);
    };
    let now = crate::dom::now_ms;
    let started = now();
    let mut timing = Redraw::default();
    let width = width_px().max(300.0);
    timing.width_ms = now() - started;
    let t = now();
    let layout = Layout::compute_with_before(
        current,
        scene.before.as_ref(),
        width,
        scene.link_gpu,
        scene.shown_gpus,
    );
    timing.layout_ms = now() - t;
    let dpr = crate::dom::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    let size = (
        (width * dpr).round() as u32,
        (layout.height * dpr).round() as u32,
    );
    let height_px = layout.height;
    scene.layout = layout;
    let morph = scene.morph_progress(now_ms);
    let win = scene.window(morph);
    let key = LayerKey {
        seq: scene.seq,
        win,
        size,
        link_gpu: scene.link_gpu,
        shown_gpus: scene.shown_gpus,
        // By value: a constant has no single address to compare.
        dark: *pal == DARK,
    };
    // While morphing every frame differs.
    let still = morph >= 1.0;
    if still && cache.key == Some(key) {
        cache.job = None;
        return Ok(shown);
    }
    let same_run = cache
        .key
        .is_some_and(|k| k.seq == key.seq && k.size == key.size);
    let layer = cache.layer.clone();
    let off_screen = still && !same_run && layer.is_some();
    if !off_screen {
        cache.job = None;
        show_height(canvas, size, height_px, dpr, &mut cache.shown_px);
        ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0)?;
        let t = now();
        let list = draw::timeline(scene, win, morph);
        timing.list_ms = now() - t;
        timing.shapes = list.shapes.len();
        let t = now();
        paint(&ctx, &list.shapes, pal);
        timing.paint_ms = now() - t;
        timing.frames = 1;
        cache.last_redraw = Some(timing);
        cache.key = still.then_some(key);
        cache.merged = list.merged;
        return Ok(Drawn {
            merged: list.merged,
            done: true,
        });
    }
    let (Some(layer), Some(lctx)) = (layer.as_ref(), layer.as_ref().and_then(context)) else {
        return Ok(shown);
    };
    if cache.job.as_ref().map(|j| j.key) != Some(key) {
        let t = now();
        let list = draw::timeline(scene, win, morph);
        timing.list_ms = now() - t;
        timing.shapes = list.shapes.len();
        // The list's first shape fills the picture with the background,
        // so whatever the layer held before is painted over.
        fit_backing(layer, size);
        cache.job = Some(Job {
            key,
            list,
            next: 0,
            timing,
        });
    }
    let Some(job) = cache.job.as_mut() else {
        return Ok(shown);
    };
    if job.next == 0 && now() - started > PAINT_BUDGET_MS {
        // Laying the rows out and building the list took this frame's
        // budget: painting starts on the next.
        return Ok(Drawn {
            merged: cache.merged,
            done: false,
        });
    }
    job.timing.frames += 1;
    lctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0)?;
    let t = now();
    let first = job.next;
    // At least one chunk per frame, so that the picture always advances.
    loop {
        let end = (job.next + PAINT_CHUNK).min(job.list.shapes.len());
        paint(&lctx, &job.list.shapes[job.next..end], pal);
        job.next = end;
        if end == job.list.shapes.len()
            || now() - started > PAINT_BUDGET_MS
            || end - first >= PAINT_MAX_SHAPES
        {
            break;
        }
    }
    job.timing.paint_ms += now() - t;
    if job.next < job.list.shapes.len() {
        return Ok(Drawn {
            merged: cache.merged,
            done: false,
        });
    }
    // Complete: show it whole.
    let t = now();
    show_height(canvas, size, height_px, dpr, &mut cache.shown_px);
    ctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0)?;
    ctx.draw_image_with_html_canvas_element(layer, 0.0, 0.0)?;
    job.timing.show_ms = now() - t;
    let merged = job.list.merged;
    cache.last_redraw = Some(job.timing);
    cache.job = None;
    cache.key = Some(key);
    cache.merged = merged;
    Ok(Drawn { merged, done: true })
}

/// Sizes `el` to `list` at its CSS size, `scale` device pixels to a CSS
/// pixel (sharp on high-density screens), and paints it; false when the
/// canvas gives no 2D context.
pub fn paint_sized(el: &HtmlCanvasElement, list: &DisplayList, scale: f64, pal: &Palette) -> bool {
    el.set_width((list.width * scale).ceil() as u32);
    el.set_height((list.height * scale).ceil() as u32);
    let _ = el.set_attribute(
        "style",
        &format!("width:{}px;height:{}px", list.width, list.height),
    );
    let Some(ctx) = el
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
    else {
        return false;
    };
    let _ = ctx.set_transform(scale, 0.0, 0.0, scale, 0.0, 0.0);
    paint(&ctx, &list.shapes, pal);
    true
}

/// Paints shapes in order.
pub fn paint(ctx: &CanvasRenderingContext2d, shapes: &[Shape], pal: &Palette) {
    let mut pen = Pen {
        ctx,
        fill: "",
        hatches: String::new(),
        stripe: pal.exposed_stripe,
    };
    ctx.set_font(FONT);
    ctx.set_text_baseline("middle");
    ctx.set_text_align("left");
    ctx.set_line_width(1.0);
    let mut align = Align::Start;
    for shape in shapes {
        if !matches!(shape, Shape::Hatch { .. } | Shape::Wait { .. }) {
            pen.flush();
        }
        match shape {
            Shape::Rect { rect, fill } => pen.rect(pal.colour(*fill), rect),
            Shape::Veil { rect, fill, alpha } => {
                ctx.set_global_alpha(*alpha);
                pen.rect(pal.colour(*fill), rect);
                ctx.set_global_alpha(1.0);
            }
            Shape::Hatch { rect } => hatch(&mut pen, pal, rect),
            Shape::Wait { rect } => wait_stripes(&mut pen.hatches, rect),
            Shape::Brackets {
                y,
                h,
                spans,
                stroke,
            } => {
                ctx.set_stroke_style_str(pal.colour(*stroke));
                ctx.begin_path();
                for (x0, x1) in spans {
                    ctx.move_to(x0 + 0.5, y + h);
                    ctx.line_to(x0 + 0.5, *y);
                    ctx.line_to(x1 - 0.5, *y);
                    ctx.line_to(x1 - 0.5, y + h);
                }
                ctx.stroke();
            }
            Shape::Text {
                x,
                y,
                text,
                fill,
                align: a,
                clip,
            } => {
                if *a != align {
                    align = *a;
                    ctx.set_text_align(match align {
                        Align::Start => "left",
                        Align::Middle => "center",
                        Align::End => "right",
                    });
                }
                pen.fill(pal.colour(*fill));
                match clip {
                    Some(c) => {
                        ctx.save();
                        ctx.begin_path();
                        ctx.rect(c.x, c.y, c.w, c.h);
                        ctx.clip();
                        let _ = ctx.fill_text(text, *x, *y);
                        ctx.restore();
                    }
                    None => {
                        let _ = ctx.fill_text(text, *x, *y);
                    }
                }
            }
            Shape::Line {
                from,
                to,
                stroke,
                dashed,
            } => {
                ctx.set_stroke_style_str(pal.colour(*stroke));
                if *dashed {
                    let _ = ctx.set_line_dash(&js_sys::Array::of2(&3.into(), &3.into()));
                }
                ctx.begin_path();
                ctx.move_to(from.0, from.1);
                ctx.line_to(to.0, to.1);
                ctx.stroke();
                if *dashed {
                    let _ = ctx.set_line_dash(&js_sys::Array::new());
                }
            }
            Shape::Outline {
                rect,
                stroke,
                width,
            } => {
                ctx.set_stroke_style_str(pal.colour(*stroke));
                ctx.set_line_width(*width);
                ctx.stroke_rect(rect.x, rect.y, rect.w, rect.h);
                ctx.set_line_width(1.0);
            }
        }
    }
    pen.flush();
}

/// A measured rank's wait: stripes falling left to right over the bar's
/// own colour, joining the pen's path (no background, no outline: an
/// exposed span has both).
fn wait_stripes(path: &mut String, r: &Rect) {
    stripes(path, r, Slope::Falling);
}

/// Which way a rectangle's stripes run, left to right.
#[derive(Clone, Copy)]
enum Slope {
    /// From the bottom up: an exposed span's hatch.
    Rising,
    /// From the top down: a measured rank's wait.
    Falling,
}

/// Diagonal stripes one pixel per pixel across `r`'s height, cut at its
/// sides, joining `path`. They start on a grid fixed to the canvas, so
/// that the stripes of neighbouring pieces line up.
fn stripes(path: &mut String, r: &Rect, slope: Slope) {
    use std::fmt::Write;
    let (x0, x1, bottom) = (r.x, r.x + r.w, r.y + r.h);
    let y_at = |dx: f64| match slope {
        Slope::Rising => bottom - dx,
        Slope::Falling => r.y + dx,
    };
    let mut sx = ((r.x - r.h) / HATCH_STEP_PX).floor() * HATCH_STEP_PX;
    while sx < x1 {
        let (xa, xb) = (sx.max(x0), (sx + r.h).min(x1));
        if xa < xb {
            let _ = write!(
                path,
                "M{:.2} {:.2}L{:.2} {:.2}",
                xa,
                y_at(xa - sx),
                xb,
                y_at(xb - sx)
            );
        }
        sx += HATCH_STEP_PX;
    }
}

/// The exposed part of a collective: background, rising stripes, outline.
/// The background is filled now; the stripes and the outline join the
/// pen's path, stroked by [`Pen::flush`].
fn hatch(pen: &mut Pen<'_>, pal: &Palette, r: &Rect) {
    use std::fmt::Write;
    pen.rect(pal.background, r);
    let path = &mut pen.hatches;
    stripes(path, r, Slope::Rising);
    let _ = write!(
        path,
        "M{:.2} {:.2}h{:.2}v{:.2}h{:.2}Z",
        r.x + 0.5,
        r.y + 0.5,
        (r.w - 1.0).max(0.5),
        (r.h - 1.0).max(0.5),
        -(r.w - 1.0).max(0.5)
    );
}
