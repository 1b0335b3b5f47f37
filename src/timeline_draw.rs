//! Paints the scene on the canvas. Not reactive: called once per animation
//! frame when something changed, from plain data. Cost is bounded by the
//! level-of-detail merge (about one rectangle per pixel per lane).

use overlap_core::timeline::{Direction, Interval, LinkClass, LinkLane};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use crate::format;
use crate::lod::{self, Piece};
use crate::palette::Palette;
use crate::scene::{Hit, LaneKind, Layout, Prepared, Scene};

/// Fill style changes cross into JavaScript; skip the ones that change nothing.
struct Pen<'a> {
    ctx: &'a CanvasRenderingContext2d,
    fill: &'a str,
}

impl<'a> Pen<'a> {
    fn fill(&mut self, colour: &'a str) {
        if self.fill != colour {
            self.ctx.set_fill_style_str(colour);
            self.fill = colour;
        }
    }
    fn rect(&mut self, colour: &'a str, x: f64, y: f64, w: f64, h: f64) {
        self.fill(colour);
        self.ctx.fill_rect(x, y, w, h);
    }
}

/// What the static layer depends on: when none of it changed, the last
/// painted layer is copied back instead of redrawn, so playback and hover
/// cost a copy plus the overlay, however many bars the step holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerKey {
    seq: u64,
    win: (f64, f64),
    size: (u32, u32),
    link_gpu: usize,
    dark: bool,
}

/// The static layer's cache: an offscreen canvas and what it shows.
pub struct Cache {
    canvas: Option<HtmlCanvasElement>,
    key: Option<LayerKey>,
    merged: bool,
}

impl Cache {
    pub fn new() -> Self {
        let canvas = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.create_element("canvas").ok())
            .and_then(|e| e.dyn_into::<HtmlCanvasElement>().ok());
        Self {
            canvas,
            key: None,
            merged: false,
        }
    }
}

fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
}

/// Draws the whole scene. Returns whether narrow bars were merged.
pub fn draw(
    scene: &mut Scene,
    canvas: &HtmlCanvasElement,
    cache: &mut Cache,
    now_ms: f64,
    pal: &Palette,
) -> Result<bool, JsValue> {
    let Some(ctx) = context(canvas) else {
        return Ok(false);
    };
    let Some(current) = scene.current.as_ref() else {
        return Ok(false);
    };
    let width = f64::from(canvas.client_width().max(300));
    let layout = Layout::compute(current, width, scene.link_gpu);
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    let (pw, ph) = (
        (width * dpr).round() as u32,
        (layout.height * dpr).round() as u32,
    );
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
        let _ = canvas
            .style()
            .set_property("height", &format!("{}px", layout.height));
    }
    scene.layout = layout;
    let morph = scene.morph_progress(now_ms);
    let win = scene.window(morph);
    let key = LayerKey {
        seq: scene.seq,
        win,
        size: (pw, ph),
        link_gpu: scene.link_gpu,
        dark: std::ptr::eq(pal, &crate::palette::DARK),
    };
    // While morphing every frame differs: no point caching.
    let cacheable = morph >= 1.0;
    let mut merged = cache.merged;
    ctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0)?;
    match (&cache.canvas, cacheable && cache.key == Some(key)) {
        (Some(layer), true) => ctx.draw_image_with_html_canvas_element(layer, 0.0, 0.0)?,
        _ => {
            ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0)?;
            merged = draw_static(scene, &ctx, pal, win, morph)?;
            cache.key = None;
            if let (Some(layer), true) = (&cache.canvas, cacheable) {
                if layer.width() != pw || layer.height() != ph {
                    layer.set_width(pw);
                    layer.set_height(ph);
                }
                if let Some(lctx) = context(layer) {
                    lctx.set_transform(1.0, 0.0, 0.0, 1.0, 0.0, 0.0)?;
                    lctx.draw_image_with_html_canvas_element(canvas, 0.0, 0.0)?;
                    cache.key = Some(key);
                    cache.merged = merged;
                }
            }
        }
    }
    ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0)?;
    let mut pen = Pen {
        ctx: &ctx,
        fill: "",
    };
    draw_hover(scene, &mut pen, pal, win);
    Ok(merged)
}

/// Everything that does not move with the playhead or the pointer.
fn draw_static(
    scene: &Scene,
    ctx: &CanvasRenderingContext2d,
    pal: &Palette,
    win: (f64, f64),
    morph: f64,
) -> Result<bool, JsValue> {
    let mut pen = Pen { ctx, fill: "" };
    pen.ctx.set_fill_style_str(pal.background);
    ctx.fill_rect(0.0, 0.0, scene.layout.right + 8.0, scene.layout.height);
    ctx.set_font("11px system-ui, sans-serif");
    ctx.set_text_baseline("middle");
    draw_axis(scene, &mut pen, pal, win);
    let merged = draw_gpus(scene, &mut pen, pal, win, morph)?;
    draw_links(scene, &mut pen, pal, win);
    Ok(merged)
}

fn draw_axis<'a>(scene: &Scene, pen: &mut Pen<'a>, pal: &'a Palette, win: (f64, f64)) {
    let l = &scene.layout;
    let ctx = pen.ctx;
    let step = format::nice_step(win.1 - win.0, ((l.right - l.left) / 90.0).max(2.0));
    let first = (win.0 / step).ceil() as i64;
    let last = (win.1 / step).floor() as i64;
    ctx.set_text_align("center");
    for k in first..=last.min(first + 200) {
        let t = k as f64 * step;
        let x = scene.x_of(t, win).round() + 0.5;
        pen.rect(
            pal.grid,
            x,
            l.axis_h - 4.0,
            1.0,
            l.link_area.1 - l.axis_h + 4.0,
        );
        pen.fill(pal.muted);
        // Keep the last label inside the canvas.
        let align = if x > l.right - 24.0 {
            "right"
        } else {
            "center"
        };
        ctx.set_text_align(align);
        let _ = ctx.fill_text(&format::tick(t, step), x.min(l.right), l.axis_h / 2.0 - 1.0);
    }
    ctx.set_text_align("left");
}

/// Bar position, interpolated from the same operation in the previous
/// timeline while morphing.
fn position(cur: &[Interval], from: Option<&[(f64, f64)]>, i: usize, morph: f64) -> (f64, f64) {
    let iv = &cur[i];
    match from.and_then(|f| f.get(i)) {
        Some(&(s0, e0)) if morph < 1.0 && s0.is_finite() => {
            (s0 + (iv.start_s - s0) * morph, e0 + (iv.end_s - e0) * morph)
        }
        _ => (iv.start_s, iv.end_s),
    }
}

fn draw_gpus<'a>(
    scene: &Scene,
    pen: &mut Pen<'a>,
    pal: &'a Palette,
    win: (f64, f64),
    morph: f64,
) -> Result<bool, JsValue> {
    let Some(p) = scene.current.as_ref() else {
        return Ok(false);
    };
    let morphing = morph < 1.0 && !scene.morph_from.is_empty();
    let l = &scene.layout;
    let ctx = pen.ctx;
    let clip = (l.left, l.right);
    let mut merged_any = false;
    for band in &l.bands {
        let g = &p.timeline.gpus[band.gpu];
        if l.label_lanes || band.gpu % label_every(l.bands.len()) == 0 {
            pen.fill(pal.text);
            // The narrow gutter of a phone fits only the short form.
            let narrow = l.left < 80.0;
            let label = if l.label_lanes && !narrow {
                format!("GPU {} · st {}", g.rank, g.stage)
            } else if l.label_lanes {
                format!("GPU {}", g.rank)
            } else {
                format!("st {}", g.stage)
            };
            let _ = ctx.fill_text(&label, 4.0, band.y0 + band.bracket_h + 8.0);
            if g.represents > 1 && l.label_lanes {
                pen.fill(pal.muted);
                let _ = ctx.fill_text(
                    &format!("×{} GPUs", g.represents),
                    4.0,
                    band.y0 + band.bracket_h + 21.0,
                );
            }
        }
    }
    for lane in &l.lanes {
        let LaneKind::Gpu { gpu, slot } = lane.kind else {
            continue;
        };
        pen.rect(
            pal.lane,
            l.left,
            lane.y,
            l.right - l.left,
            lane.h.max(1.0) - 0.5,
        );
        if slot > 0 && l.label_lanes {
            pen.fill(pal.axis[slot - 1]);
            let name = ["TP", "PP", "DP"][slot - 1];
            let _ = ctx.fill_text(name, l.left - 24.0, lane.y + lane.h / 2.0);
        }
        let bars = p.lane(gpu, slot);
        let from = morphing
            .then(|| scene.morph_from.get(gpu).map(|f| f[slot].as_slice()))
            .flatten();
        let range = if from.is_some() {
            0..bars.len()
        } else {
            lod::visible_range(bars, win.0, win.1, p.max_dur[gpu][slot])
        };
        let pos = |i: usize| {
            let (s, e) = position(bars, from, i, morph);
            (scene.x_of(s, win), scene.x_of(e, win))
        };
        let h = (lane.h - 1.0).max(1.0);
        let y = lane.y;
        let mut wide = Vec::new();
        let merged = lod::pieces(bars, range, clip, 1.5, pos, |piece| match piece {
            Piece::Bar { index, x0, x1 } => {
                let iv = &bars[index];
                let colour = if slot == 0 {
                    pal.phase(iv.phase)
                } else {
                    pal.axis[slot - 1]
                };
                // A hairline gap between wide neighbours, so that ops read as separate.
                let w = if x1 - x0 > 4.0 {
                    x1 - x0 - 1.0
                } else {
                    (x1 - x0).max(1.0)
                };
                pen.rect(colour, x0, y, w, h);
                if x1 - x0 > 3.0 {
                    wide.push((index, x0, x1));
                }
            }
            Piece::Merged {
                first,
                x0,
                x1,
                exposed,
                ..
            } => {
                let iv = &bars[first];
                let colour = if slot == 0 {
                    pal.phase(iv.phase)
                } else {
                    pal.axis[slot - 1]
                };
                pen.rect(colour, x0, y, x1 - x0, h);
                if exposed && slot > 0 {
                    pen.rect(pal.exposed_stripe, x0, y + h - 2.0, x1 - x0, 2.0);
                }
            }
        });
        merged_any |= merged;
        for (index, x0, x1) in wide {
            let iv = &bars[index];
            if slot > 0 && iv.exposed_s > 0.0 {
                // Compute waited from `exposed_from_s` to the end of the bar.
                // As a fraction of the bar, so that it follows the morph too.
                let dur = (iv.end_s - iv.start_s).max(1e-15);
                let frac = ((iv.end_s - iv.exposed_from_s) / dur).clamp(0.0, 1.0);
                let (s0, e0) = position(bars, from, index, morph);
                let (ux0, ux1) = (scene.x_of(s0, win), scene.x_of(e0, win));
                let ex0 = (ux1 - (ux1 - ux0) * frac).clamp(x0, x1);
                draw_exposed(pen, pal, ex0, y, x1 - ex0, h);
            }
            if l.label_lanes && x1 - x0 > 46.0 && h >= 10.0 {
                let text_colour = if slot == 0 { pal.background } else { "#ffffff" };
                pen.fill(text_colour);
                ctx.save();
                ctx.begin_path();
                ctx.rect(x0 + 1.0, y, x1 - x0 - 2.0, h);
                ctx.clip();
                let _ = ctx.fill_text(iv.op.label(), x0 + 3.0, y + h / 2.0);
                ctx.restore();
            }
        }
        if slot > 0 {
            draw_brackets(scene, pen, pal, win, gpu, slot, bars);
        }
    }
    Ok(merged_any)
}

fn label_every(bands: usize) -> usize {
    (bands / 16).max(1)
}

/// The exposed part of a collective: hatched, so that it reads without colour.
fn draw_exposed<'a>(pen: &mut Pen<'a>, pal: &'a Palette, x: f64, y: f64, w: f64, h: f64) {
    let ctx = pen.ctx;
    pen.rect(pal.background, x, y, w, h);
    ctx.save();
    ctx.begin_path();
    ctx.rect(x, y, w, h);
    ctx.clip();
    ctx.set_stroke_style_str(pal.exposed_stripe);
    ctx.set_line_width(1.0);
    ctx.begin_path();
    let mut sx = x - h;
    while sx < x + w {
        ctx.move_to(sx, y + h);
        ctx.line_to(sx + h, y);
        sx += 4.0;
    }
    ctx.stroke();
    ctx.restore();
    ctx.set_stroke_style_str(pal.exposed_stripe);
    ctx.stroke_rect(x + 0.5, y + 0.5, (w - 1.0).max(0.5), (h - 1.0).max(0.5));
}

/// Window brackets: for each visible collective, the compute span that can
/// hide it, drawn in its axis colour in the strip above the compute lane.
#[allow(clippy::too_many_arguments)]
fn draw_brackets<'a>(
    scene: &Scene,
    pen: &mut Pen<'a>,
    pal: &'a Palette,
    win: (f64, f64),
    gpu: usize,
    slot: usize,
    bars: &[Interval],
) {
    let l = &scene.layout;
    let Some(band) = l.bands.iter().find(|b| b.gpu == gpu) else {
        return;
    };
    if band.bracket_h < 3.0 {
        return;
    }
    let row_h = band.bracket_h / 3.0;
    let y = band.bracket_y + row_h * (slot - 1) as f64 + 0.5;
    let ctx = pen.ctx;
    ctx.set_stroke_style_str(pal.axis[slot - 1]);
    ctx.set_line_width(1.0);
    ctx.begin_path();
    let mut drawn = 0;
    let mut last_x1 = f64::NEG_INFINITY;
    let mut last_x0 = f64::NEG_INFINITY;
    for iv in bars {
        let Some((w0, w1)) = iv.window else { continue };
        if w1 < win.0 || w0 > win.1 || w1 <= w0 {
            continue;
        }
        let x0 = scene.x_of(w0, win).max(l.left);
        let x1 = scene.x_of(w1, win).min(l.right);
        // Brackets that land on the same pixels add nothing.
        if (x0 - last_x0).abs() < 1.0 && (x1 - last_x1).abs() < 1.0 {
            continue;
        }
        last_x0 = x0;
        last_x1 = x1;
        ctx.move_to(x0 + 0.5, y + row_h);
        ctx.line_to(x0 + 0.5, y);
        ctx.line_to(x1 - 0.5, y);
        ctx.line_to(x1 - 0.5, y + row_h);
        drawn += 1;
        if drawn > 4000 {
            break;
        }
    }
    ctx.stroke();
}

fn link_name(link: &LinkLane) -> &'static str {
    match (link.gpu, link.class, link.direction) {
        (None, _, _) => "net core",
        (_, LinkClass::Nvlink, Direction::Out) => "NVLink out",
        (_, LinkClass::Nvlink, Direction::In) => "NVLink in",
        (_, LinkClass::Network, Direction::Out) => "NIC out",
        (_, LinkClass::Network, Direction::In) => "NIC in",
    }
}

fn draw_links<'a>(scene: &Scene, pen: &mut Pen<'a>, pal: &'a Palette, win: (f64, f64)) {
    let Some(p) = scene.current.as_ref() else {
        return;
    };
    let l = &scene.layout;
    let ctx = pen.ctx;
    let gpu = scene.link_gpu.min(p.timeline.gpus.len().saturating_sub(1));
    if let Some(g) = p.timeline.gpus.get(gpu) {
        pen.fill(pal.text);
        let _ = ctx.fill_text(
            &if l.left < 80.0 {
                format!("Links of GPU {}, by axis", g.rank)
            } else {
                format!(
                    "Links of GPU {} (stage {}): bandwidth by axis, dashed = usable capacity",
                    g.rank, g.stage
                )
            },
            4.0,
            l.links_y,
        );
    }
    for lane in &l.lanes {
        let LaneKind::Link { link } = lane.kind else {
            continue;
        };
        let lk = &p.timeline.links[link];
        pen.rect(pal.lane, l.left, lane.y, l.right - l.left, lane.h);
        pen.fill(pal.muted);
        let _ = ctx.fill_text(link_name(lk), 4.0, lane.y + lane.h / 2.0);
        draw_link_samples(scene, pen, pal, win, lk, lane.y, lane.h, p);
        ctx.set_stroke_style_str(pal.muted);
        ctx.set_line_dash(&js_sys::Array::of2(&3.into(), &3.into()))
            .ok();
        ctx.begin_path();
        ctx.move_to(l.left, lane.y + 0.5);
        ctx.line_to(l.right, lane.y + 0.5);
        ctx.stroke();
        ctx.set_line_dash(&js_sys::Array::new()).ok();
    }
}

/// Bandwidth per axis, stacked, scaled to the link's usable capacity. Samples
/// narrower than a pixel are averaged over the pixel (time-weighted).
#[allow(clippy::too_many_arguments)]
fn draw_link_samples<'a>(
    scene: &Scene,
    pen: &mut Pen<'a>,
    pal: &'a Palette,
    win: (f64, f64),
    lk: &LinkLane,
    y: f64,
    h: f64,
    p: &Prepared,
) {
    let l = &scene.layout;
    let cap = lk.capacity_gbps.max(1e-9);
    let s = &lk.samples;
    if s.is_empty() {
        return;
    }
    let stack = |pen: &mut Pen<'a>, x0: f64, w: f64, gbps: [f64; 3]| {
        let mut top = y + h;
        for (a, v) in gbps.iter().enumerate() {
            if *v <= 0.0 {
                continue;
            }
            let bh = (v / cap * h).min(top - y);
            top -= bh;
            pen.rect(pal.axis[a], x0, top, w, bh);
        }
    };
    crate::lod::link_columns(
        s,
        win,
        p.step_s(),
        (l.left, l.right),
        |t| scene.x_of(t, win),
        |x, w, gbps| stack(pen, x, w, gbps),
    );
}

fn draw_hover<'a>(scene: &Scene, pen: &mut Pen<'a>, pal: &'a Palette, win: (f64, f64)) {
    let (Some(Hit::Bar { gpu, slot, index }), Some(p)) = (scene.hover, scene.current.as_ref())
    else {
        return;
    };
    let Some(iv) = p.lane(gpu, slot).get(index) else {
        return;
    };
    let l = &scene.layout;
    let ctx = pen.ctx;
    if let (Some((w0, w1)), Some(compute)) = (
        iv.window,
        l.lanes
            .iter()
            .find(|x| x.kind == LaneKind::Gpu { gpu, slot: 0 }),
    ) {
        let x0 = scene.x_of(w0, win).max(l.left);
        let x1 = scene.x_of(w1, win).min(l.right);
        ctx.set_global_alpha(0.3);
        pen.rect(
            pal.axis[slot.max(1) - 1],
            x0,
            compute.y - 2.0,
            (x1 - x0).max(1.0),
            compute.h + 4.0,
        );
        ctx.set_global_alpha(1.0);
    }
    if let Some(lane) = l
        .lanes
        .iter()
        .find(|x| x.kind == LaneKind::Gpu { gpu, slot })
    {
        let x0 = scene.x_of(iv.start_s, win).max(l.left);
        let x1 = scene.x_of(iv.end_s, win).min(l.right);
        ctx.set_stroke_style_str(pal.text);
        ctx.set_line_width(2.0);
        ctx.stroke_rect(
            x0 - 1.0,
            lane.y - 1.0,
            (x1 - x0).max(1.0) + 2.0,
            lane.h + 1.0,
        );
        ctx.set_line_width(1.0);
    }
}
