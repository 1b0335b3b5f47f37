//! The animation loop. One `requestAnimationFrame` callback advances the
//! playhead and the morph, then paints; it re-arms itself only while something
//! moves, so an idle page costs nothing.
//!
//! The playhead and the veil over the part of the step not played yet are
//! positioned elements over the canvas, not pixels in it: a playback frame
//! moves two boxes and leaves the canvas alone, so its cost does not depend on
//! the canvas size or on how many bars the step holds. The hover marks
//! (`overlap_view::draw::hover`) are elements too: moving the pointer never
//! repaints the canvas either.
//!
//! A frame never reads the page's geometry or style: the canvas's width
//! comes from a `ResizeObserver`, its palette is read again only after a
//! change of theme. Such a read after the figures' updates would force the
//! page's style and layout inside the frame callback, and then again at the
//! frame's end. A run just shown waits one frame (`request_after_layout`),
//! which lays out its figures alone, before the canvas paints it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

use crate::dom;
use overlap_view::display_list::{Rect, Shape};
use overlap_view::draw;
use overlap_view::palette::Palette;
use overlap_view::scene::{Scene, PLAY_SECONDS};

use crate::state::AppState;
use crate::timeline::canvas;
use crate::timeline::theme;

type FrameCallback = Closure<dyn FnMut(f64)>;
/// A `ResizeObserver` and the callback it calls.
type Observer = (web_sys::ResizeObserver, Closure<dyn FnMut()>);

struct Driver {
    state: AppState,
    canvas: HtmlCanvasElement,
    pending: Cell<bool>,
    last_ts: Cell<Option<f64>>,
    ready: Cell<bool>,
    frames: Cell<u64>,
    callback: RefCell<Option<FrameCallback>>,
    cache: RefCell<canvas::Cache>,
    /// Something other than the playhead changed: the canvas must be repainted.
    dirty: Cell<bool>,
    /// Playhead line and veils (GPU lanes, link lanes), over the canvas.
    overlay: [Option<web_sys::HtmlElement>; 3],
    /// The hovered collective's window and the hovered bar's outline.
    hover: [Option<web_sys::HtmlElement>; 2],
    /// The canvas's CSS width, px, as its resize observer last measured it.
    width_px: Cell<Option<f64>>,
    /// The palette painted with, and the theme generation it was read at.
    palette: Cell<Option<(u64, &'static Palette)>>,
    /// Frames to let pass before painting: a run just shown changed the
    /// page's figures, whose style and layout the next frame does alone.
    settle_frames: Cell<u32>,
    /// The resize observer that measures the canvas, and its callback.
    observer: RefCell<Option<Observer>>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some((observer, _)) = self.observer.borrow_mut().take() {
            observer.disconnect();
        }
    }
}

thread_local! {
    /// One driver per mounted timeline: the page has one, each widget its own.
    static DRIVERS: RefCell<Vec<Rc<Driver>>> = const { RefCell::new(Vec::new()) };
}

impl Driver {
    /// False once its instance is gone (a widget removed from its page).
    fn alive(&self) -> bool {
        self.state.run_seq.try_get_untracked().is_some()
    }
}

/// The live drivers. A removed instance's driver is dropped here, but only
/// once no frame it asked for is still to come.
fn drivers() -> Vec<Rc<Driver>> {
    DRIVERS.with(|d| {
        let mut d = d.borrow_mut();
        d.retain(|x| x.alive() || x.pending.get());
        d.iter().filter(|x| x.alive()).cloned().collect()
    })
}

/// Connects the loop to the canvas; called once the canvas is mounted.
pub fn install(state: AppState, canvas: HtmlCanvasElement) {
    // Beside this canvas, in its wrapper: several timelines may share a page.
    let beside = |id: &str| {
        canvas
            .closest(".canvas-wrap")
            .ok()
            .flatten()
            .and_then(|p| p.query_selector(&format!("#{id}")).ok().flatten())
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    };
    let overlay = ["playhead-line", "veil-gpus", "veil-links"].map(beside);
    let hover = ["hover-window", "hover-outline"].map(beside);
    let driver = Rc::new(Driver {
        state,
        canvas,
        pending: Cell::new(false),
        last_ts: Cell::new(None),
        ready: Cell::new(false),
        frames: Cell::new(0),
        callback: RefCell::new(None),
        cache: RefCell::new(canvas::Cache::new()),
        dirty: Cell::new(true),
        overlay,
        hover,
        width_px: Cell::new(None),
        palette: Cell::new(None),
        settle_frames: Cell::new(0),
        observer: RefCell::new(None),
    });
    observe_width(&driver);
    let weak = Rc::downgrade(&driver);
    *driver.callback.borrow_mut() = Some(Closure::new(move |ts: f64| {
        if let Some(d) = weak.upgrade() {
            on_frame(&d, ts);
        }
    }));
    drivers();
    DRIVERS.with(|d| d.borrow_mut().push(driver));
    repaint_on_scheme_change();
    request();
}

/// Asks for one paint on the next animation frame (several asks coalesce).
pub fn request() {
    arm(true);
}

/// Asks for a paint one frame later than [`request`]: a run was just shown,
/// and the next frame's style and layout of its figures is left to run
/// alone, so that it and the canvas's painting are two tasks, not one.
pub fn request_after_layout() {
    for driver in drivers() {
        driver.settle_frames.set(1);
    }
    arm(true);
}

/// Measures the canvas's width whenever its box changes size, from a
/// `ResizeObserver` (called after layout, so reading the width there costs
/// nothing), and asks for a repaint when it changed.
fn observe_width(driver: &Rc<Driver>) {
    let weak = Rc::downgrade(driver);
    let cb = Closure::<dyn FnMut()>::new(move || {
        let Some(d) = weak.upgrade() else { return };
        let width = f64::from(d.canvas.client_width());
        if d.width_px.replace(Some(width)) != Some(width) {
            request();
        }
    });
    // A browser without it: the frame reads the width once (see `on_frame`).
    let Ok(observer) = web_sys::ResizeObserver::new(cb.as_ref().unchecked_ref()) else {
        return;
    };
    observer.observe(&driver.canvas);
    *driver.observer.borrow_mut() = Some((observer, cb));
}

/// The canvas's palette, read from its computed style only after a change
/// of theme (`theme::generation`): the read forces the page's style.
fn palette(d: &Driver) -> &'static Palette {
    let generation = theme::generation();
    match d.palette.get() {
        Some((g, pal)) if g == generation => pal,
        _ => {
            let pal = theme::for_element(&d.canvas);
            d.palette.set(Some((generation, pal)));
            pal
        }
    }
}

fn arm(repaint: bool) {
    for driver in drivers() {
        if repaint {
            driver.dirty.set(true);
        }
        if driver.pending.replace(true) {
            continue;
        }
        let cb = driver.callback.borrow();
        let requested = cb
            .as_ref()
            .zip(dom::window())
            .map(|(cb, w)| {
                w.request_animation_frame(cb.as_ref().unchecked_ref())
                    .is_ok()
            })
            .unwrap_or(false);
        if !requested {
            driver.pending.set(false);
        }
    }
}

fn on_frame(d: &Driver, ts: f64) {
    d.pending.set(false);
    if !d.alive() {
        return;
    }
    if d.settle_frames.get() > 0 {
        // This frame lays the page's new figures out; the canvas waits.
        d.settle_frames.set(d.settle_frames.get() - 1);
        arm(false);
        return;
    }
    let scene_ref = d.state.scene();
    let now = dom::now_ms();
    let mut theme_ms = 0.0;
    let (keep_going, playhead_frac, merged, painted_seq, playback_ended, has_timeline, draw_ms) = {
        let mut scene = scene_ref.borrow_mut();
        let step = scene.step_s();
        let mut ended = false;
        if scene.playing {
            let dt_ms = d
                .last_ts
                .get()
                .map(|l| (ts - l).clamp(0.0, 100.0))
                .unwrap_or(0.0);
            let start = if scene.playhead_s.is_finite() {
                scene.playhead_s
            } else {
                0.0
            };
            let next = start + dt_ms / 1000.0 * scene.speed * step / PLAY_SECONDS;
            if next >= step {
                scene.playhead_s = f64::INFINITY;
                scene.playing = false;
                ended = true;
            } else {
                scene.playhead_s = next;
            }
        }
        let morphing = scene.morph_start_ms.is_some();
        let still_morphing = scene.finish_morph_if_done(now);
        let t0 = dom::now_ms();
        let mut painting = false;
        let merged = if d.dirty.replace(false) || morphing {
            let pal = palette(d);
            theme_ms = dom::now_ms() - t0;
            let width_px = || {
                d.width_px.get().unwrap_or_else(|| {
                    // Not measured yet (the observer reports after the first
                    // layout): read once.
                    let w = f64::from(d.canvas.client_width());
                    d.width_px.set(Some(w));
                    w
                })
            };
            let drawn = canvas::draw(
                &mut scene,
                &d.canvas,
                &mut d.cache.borrow_mut(),
                now,
                pal,
                width_px,
            )
            .unwrap_or(canvas::Drawn {
                merged: false,
                done: true,
            });
            place_hover(d, &scene, pal);
            // A large picture is still being painted: the next frame goes on.
            painting = !drawn.done;
            d.dirty.set(painting);
            drawn.merged
        } else {
            d.state.lod_note.get_untracked()
        };
        place_overlay(d, &scene);
        // For the tests: the part of the step in view (fractions), and whether
        // the run before is drawn under the current one.
        let (w0, w1) = scene.window(1.0);
        let _ = d
            .canvas
            .set_attribute("data-view", &format!("{:.6}-{:.6}", w0 / step, w1 / step));
        let before = if scene.before.is_some() { "1" } else { "0" };
        let _ = d.canvas.set_attribute("data-before", before);
        let draw_ms = dom::now_ms() - t0;
        let morphing = still_morphing;
        (
            scene.playing || morphing || painting,
            scene.playhead() / step,
            merged,
            (!morphing && !painting).then_some(scene.seq),
            ended,
            scene.current.is_some(),
            draw_ms,
        )
    };
    d.last_ts.set(keep_going.then_some(ts));
    d.frames.set(d.frames.get() + 1);
    // Counters for the page benchmark and the tests (read, never asserted on time).
    let _ = d
        .canvas
        .set_attribute("data-draw-ms", &format!("{draw_ms:.3}"));
    let _ = d
        .canvas
        .set_attribute("data-frames", &d.frames.get().to_string());
    let redraw = d
        .cache
        .borrow_mut()
        .last_redraw
        .take()
        .map(|r| format!("theme {theme_ms:.1} ms, {r}"));
    if let Some(redraw) = &redraw {
        let _ = d.canvas.set_attribute("data-redraw", redraw);
    }
    let t_signals = dom::now_ms();
    if let Some(seq) = painted_seq {
        let _ = d.canvas.set_attribute("data-painted-seq", &seq.to_string());
    }
    if (d.state.playhead.get_untracked() - playhead_frac).abs() > 1e-9 {
        d.state.playhead.set(playhead_frac);
    }
    if d.state.lod_note.get_untracked() != merged {
        d.state.lod_note.set(merged);
    }
    if playback_ended {
        d.state.playing.set(false);
    }
    if has_timeline && !d.ready.replace(true) {
        dom::set_body_data("ready-ms", &format!("{:.1}", dom::now_ms()));
        dom::set_body_data("ready", "1");
    }
    if keep_going {
        arm(false);
    }
    note_longest(d, now, t_signals, redraw);
}

/// For the page benchmark: the longest frame callback since the benchmark
/// last removed `data-frame-max`, with where its time went.
fn note_longest(d: &Driver, start_ms: f64, signals_from_ms: f64, redraw: Option<String>) {
    let end = dom::now_ms();
    let total_ms = end - start_ms;
    let longest_ms = d
        .canvas
        .get_attribute("data-frame-max")
        .and_then(|v| v.split(' ').next().and_then(|n| n.parse::<f64>().ok()))
        .unwrap_or(0.0);
    if total_ms > longest_ms {
        let text = format!(
            "{total_ms:.1} ms ({}signals {:.1} ms)",
            redraw.map(|r| format!("{r}; ")).unwrap_or_default(),
            end - signals_from_ms
        );
        let _ = d.canvas.set_attribute("data-frame-max", &text);
    }
}

/// Moves the playhead line and the veils to the playhead; hides them when the
/// playhead is at the end (the final state).
fn place_overlay(d: &Driver, scene: &Scene) {
    let [line, veil_gpus, veil_links] = &d.overlay;
    let l = &scene.layout;
    let step = scene.step_s();
    let t = scene.playhead();
    let shown = scene.current.is_some() && t < step * 0.999_999;
    let x = scene.x_of(t, scene.window(1.0)).clamp(l.left, l.right);
    // The canvas has a 1 px border; the overlay is positioned in its wrapper.
    let boxes = [
        (
            line,
            x - 1.0,
            2.0,
            l.axis_h - 4.0,
            l.link_area.1 - l.axis_h + 4.0,
        ),
        (
            veil_gpus,
            x,
            l.right - x,
            l.gpu_area.0,
            l.gpu_area.1 - l.gpu_area.0,
        ),
        (
            veil_links,
            x,
            l.right - x,
            l.link_area.0,
            l.link_area.1 - l.link_area.0,
        ),
    ];
    for (el, left, width, top, height) in boxes {
        let Some(el) = el else { continue };
        el.set_hidden(!shown);
        if shown {
            let _ = el.style().set_property(
                "transform",
                &format!("translate({:.1}px, {:.1}px)", left + 1.0, top + 1.0),
            );
            let _ = el
                .style()
                .set_property("width", &format!("{:.1}px", width.max(0.0)));
            let _ = el
                .style()
                .set_property("height", &format!("{:.1}px", height.max(0.0)));
        }
    }
}

/// Shows the hover marks (`draw::hover`) as the two elements over the canvas:
/// the window as a translucent box in its axis colour, the bar's outline as
/// a bordered box; hides the ones the hover does not have.
fn place_hover(d: &Driver, scene: &Scene, pal: &Palette) {
    let [window, outline] = &d.hover;
    let mut shown = [false; 2];
    for shape in draw::hover(scene, scene.window(1.0)) {
        // The canvas has a 1 px border; the marks are positioned in its wrapper.
        let (el, rect, style) = match shape {
            Shape::Veil { rect, fill, alpha } => {
                shown[0] = true;
                let style = format!("background:{};opacity:{alpha}", pal.colour(fill));
                (window, rect, style)
            }
            // A stroke of `width` is centred on the rectangle's edge.
            Shape::Outline {
                rect,
                stroke,
                width,
            } => {
                shown[1] = true;
                let grown = Rect {
                    x: rect.x - width / 2.0,
                    y: rect.y - width / 2.0,
                    w: rect.w + width,
                    h: rect.h + width,
                };
                let style = format!("border:{width}px solid {}", pal.colour(stroke));
                (outline, grown, style)
            }
            _ => continue,
        };
        let Some(el) = el else { continue };
        let _ = el.set_attribute(
            "style",
            &format!(
                "{HOVER_MARK_STYLE};transform:translate({:.2}px,{:.2}px);width:{:.2}px;height:{:.2}px;{style}",
                rect.x + 1.0,
                rect.y + 1.0,
                rect.w.max(0.0),
                rect.h.max(0.0)
            ),
        );
        el.set_hidden(false);
    }
    for (el, shown) in d.hover.iter().zip(shown) {
        if let (Some(el), false) = (el, shown) {
            el.set_hidden(true);
        }
    }
}

/// How a hover mark sits over the canvas: out of the flow, never in the
/// pointer's way, its border inside its box.
const HOVER_MARK_STYLE: &str =
    "position:absolute;left:0;top:0;pointer-events:none;box-sizing:border-box";

/// The canvas reads its colours at paint time; repaint when the user's
/// light/dark preference flips while the page is open.
fn repaint_on_scheme_change() {
    let Some(mql) =
        dom::window().and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
    else {
        return;
    };
    let cb: Closure<dyn FnMut()> = Closure::new(|| {
        theme::restyled();
        request();
    });
    let _ = mql.add_event_listener_with_callback("change", cb.as_ref().unchecked_ref());
    // Lives as long as the page: the listener is never removed.
    cb.forget();
}
