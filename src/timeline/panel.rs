//! The timeline panel: the canvas, its pointer and keyboard handling (hover,
//! zoom, pan), the tooltip, the legend and the notes on what a lane stands for.

use leptos::html;
use leptos::prelude::*;
use overlap_core::timeline::Axis;
use overlap_view::shown_gpus::{ShownGpus, GROUP_GPUS};
use overlap_view::tip::tip_for;

use crate::state::AppState;
use crate::timeline::frame;

/// The canvas with its interactions. The drawing itself is `canvas`.
#[component]
pub fn TimelineCanvas() -> impl IntoView {
    let state = expect_context::<AppState>();
    let canvas_ref = NodeRef::<html::Canvas>::new();
    canvas_ref.on_load(move |canvas| frame::install(state, canvas));
    let resize = window_event_listener(leptos::ev::resize, |_| frame::request());
    on_cleanup(move || resize.remove());
    let drag = StoredValue::new(None::<f64>);

    let update_hover = move |x: f64, y: f64| {
        let scene = state.scene();
        let mut scene = scene.borrow_mut();
        let hit = scene.hit(x, y);
        if hit != scene.hover {
            scene.hover = hit;
            let tip = hit.and_then(|h| tip_for(&scene, h, x, y));
            drop(scene);
            state.tip.set(tip);
            frame::request();
        } else if let Some(mut t) = state.tip.get_untracked() {
            t.x = x;
            t.y = y;
            state.tip.set(Some(t));
        }
    };
    let on_move = move |ev: web_sys::PointerEvent| {
        let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
        if let Some(last) = drag.get_value() {
            let scene = state.scene();
            let mut scene = scene.borrow_mut();
            let w = (scene.layout.right - scene.layout.left).max(1.0);
            scene.pan(-(x - last) / w);
            drop(scene);
            drag.set_value(Some(x));
            frame::request();
        } else {
            update_hover(x, y);
        }
    };
    let on_down = move |ev: web_sys::PointerEvent| {
        if ev.button() == 0 {
            drag.set_value(Some(f64::from(ev.offset_x())));
            if let Some(c) = canvas_ref.get() {
                let _ = c.set_pointer_capture(ev.pointer_id());
            }
        }
    };
    let on_up = move |_ev: web_sys::PointerEvent| drag.set_value(None);
    let on_leave = move |_ev: web_sys::PointerEvent| {
        let scene = state.scene();
        scene.borrow_mut().hover = None;
        state.tip.set(None);
        frame::request();
    };
    let on_wheel = move |ev: web_sys::WheelEvent| {
        ev.prevent_default();
        let scene = state.scene();
        let mut scene = scene.borrow_mut();
        let (dx, dy) = (ev.delta_x(), ev.delta_y());
        if ev.shift_key() || dx.abs() > dy.abs() {
            let d = if dx.abs() > dy.abs() { dx } else { dy };
            scene.pan(d / 800.0);
        } else {
            let at = scene.t_of(f64::from(ev.offset_x()));
            scene.zoom((dy * 0.0015).exp(), at);
        }
        drop(scene);
        frame::request();
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let scene = state.scene();
        let mut s = scene.borrow_mut();
        let (t0, t1) = s.window(1.0);
        let mid = (t0 + t1) / 2.0;
        match ev.key().as_str() {
            "ArrowLeft" => s.pan(-0.1),
            "ArrowRight" => s.pan(0.1),
            "+" | "=" => s.zoom(0.8, mid),
            "-" | "_" => s.zoom(1.25, mid),
            "0" => s.fit(),
            "," => s.step_playhead(false),
            "." => s.step_playhead(true),
            _ => return,
        }
        ev.prevent_default();
        drop(s);
        frame::request();
    };
    let zoom = move |factor: f64| {
        let scene = state.scene();
        let mut s = scene.borrow_mut();
        let (t0, t1) = s.window(1.0);
        if factor == 0.0 {
            s.fit();
        } else {
            s.zoom(factor, (t0 + t1) / 2.0);
        }
        drop(s);
        frame::request();
    };
    let on_link_gpu = move |ev: leptos::ev::Event| {
        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
            state.link_gpu.set(i);
            state.scene().borrow_mut().link_gpu = i;
            frame::request();
        }
    };

    let on_shown_gpus = move |ev: leptos::ev::Event| {
        if let Ok(shown) = ShownGpus::parse(&event_target_value(&ev)) {
            state.shown_gpus.set(shown);
            state.scene().borrow_mut().shown_gpus = shown;
            frame::request();
        }
    };
    // Only a step whose lanes the overview shrinks offers groups of GPUs (or
    // one a link showed part of, to return to all of them).
    let offers_groups = move || {
        state.gpu_names.with(|n| n.len() > GROUP_GPUS) || state.shown_gpus.get() != ShownGpus::All
    };

    let no_timeline = move || state.no_timeline();

    view! {
        <section class="timeline" aria-labelledby="timeline-h">
            <div class="timeline-head">
                <h2 id="timeline-h">"Timeline of one step"</h2>
                <div
                    class="zoom"
                    role="group"
                    aria-label="Zoom"
                    title=move || no_timeline().then_some(NO_TIMELINE_CONTROLS)
                >
                    <button type="button" disabled=no_timeline on:click=move |_| zoom(0.5) aria-label="Zoom in">"+"</button>
                    <button type="button" disabled=no_timeline on:click=move |_| zoom(2.0) aria-label="Zoom out">"−"</button>
                    <button type="button" disabled=no_timeline on:click=move |_| zoom(0.0)>"Fit"</button>
                </div>
                <label class="inline">
                    "Links of "
                    // Without a timeline there are no link lanes to pick a GPU
                    // for: the picker says so rather than listing nothing, or
                    // the GPUs of a timeline no longer shown.
                    <select
                        on:change=on_link_gpu
                        disabled=no_timeline
                        title=move || no_timeline().then_some(NO_LINK_LANES)
                        prop:value=move || if no_timeline() { String::new() } else { state.link_gpu.get().to_string() }
                    >
                        {move || if no_timeline() {
                            view! { <option value="">"none: no timeline"</option> }.into_any()
                        } else {
                            gpu_options(state).into_any()
                        }}
                    </select>
                </label>
                <Show when=move || offers_groups() && !no_timeline()>
                    <label class="inline">
                        "Lanes of "
                        <select
                            id="shown-gpus"
                            on:change=on_shown_gpus
                            prop:value=move || state.shown_gpus.get().key()
                        >
                            {move || shown_gpu_options(state)}
                        </select>
                    </label>
                </Show>
            </div>
            <p class="note represents">{move || state.represents_note.get()}</p>
            <div class="canvas-wrap">
                // The clip box shows the picture's rows of the canvas, whose
                // backing store may be taller (canvas.rs, `fit_backing`).
                <div class="canvas-clip">
                    <canvas
                        node_ref=canvas_ref
                        tabindex="0"
                        role="img"
                        aria-label="Timeline of one training step: per simulated GPU a compute lane and one lane per parallelism axis, then link bandwidth lanes. Use the table view below for the same data as text."
                        aria-describedby="canvas-keys"
                        on:pointermove=on_move
                        on:pointerdown=on_down
                        on:pointerup=on_up
                        on:pointercancel=on_up
                        on:pointerleave=on_leave
                        on:wheel=on_wheel
                        on:keydown=on_key
                    ></canvas>
                </div>
                // Positioned by the animation loop (frame.rs), never by Leptos.
                <div class="veil" id="veil-gpus" hidden=true></div>
                <div class="veil" id="veil-links" hidden=true></div>
                <div class="playhead-line" id="playhead-line" hidden=true></div>
                // Hover marks, also positioned by frame.rs: hovering never repaints the canvas.
                <div id="hover-window" hidden=true></div>
                <div id="hover-outline" hidden=true></div>
                // In place of a timeline over the core's limit for one.
                {move || state.timeline_refused.get().map(|text| view! {
                    <div class="timeline-refused" role="status"><p>{text}</p></div>
                })}
                {move || {
                    state
                        .tip
                        .get()
                        .map(|t| {
                            // Keep the tooltip inside the canvas: flip it left of the
                            // pointer near the right edge.
                            let width = state.scene().borrow().layout.right;
                            let style = if t.x > width - 300.0 {
                                format!("right:{}px;top:{}px", (width - t.x + 22.0).max(0.0), t.y + 14.0)
                            } else {
                                format!("left:{}px;top:{}px", t.x + 14.0, t.y + 14.0)
                            };
                            view! {
                                <div class="tooltip" role="tooltip" style=style>
                                    <strong>{t.title}</strong>
                                    <dl>
                                        {t.lines.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
                                    </dl>
                                </div>
                            }
                        })
                }}
            </div>
            <p class="note" id="canvas-keys">
                "Wheel or +/− to zoom, drag or ←/→ to pan, 0 to fit; Space plays, comma and period step. "
                <Show when=move || state.lod_note.get()>
                    <span class="lod">"Bars narrower than a pixel are merged; zoom in to see each operation."</span>
                </Show>
            </p>
            <Legend />
        </section>
    }
}

/// Why the zoom and playback controls are disabled when the step has no
/// timeline.
pub const NO_TIMELINE_CONTROLS: &str =
    "This step has no timeline (see the note in its place): there is nothing to zoom or play.";

/// Why the link-lane picker is disabled when the step has no timeline.
const NO_LINK_LANES: &str =
    "This step has no timeline (see the note in its place), so there are no link lanes to pick a GPU for.";

/// What the colours and marks mean; the same axis colours as the figures,
/// for the axes the scenario has (EP with experts, CP with cp > 1).
#[component]
fn Legend() -> impl IntoView {
    let state = expect_context::<AppState>();
    let has = move |axis: Axis| state.shows_axis(axis);
    view! {
        <ul class="legend" aria-label="Legend">
            {Axis::ALL
                .map(|axis| view! {
                    <Show when=move || has(axis)>
                        <li><span class=format!("sw {}", axis.name())></span>{axis.label()}</li>
                    </Show>
                })
                .collect_view()}
            <li><span class="sw fwd"></span>"forward"</li>
            <li><span class="sw bwd"></span>"backward"</li>
            <li><span class="sw wgrad"></span>"weight gradient (W)"</li>
            <li><span class="sw rec"></span>"recompute"</li>
            <li><span class="sw opt"></span>"optimizer"</li>
            <li><span class="sw exposed"></span>"exposed: compute waits (hatched)"</li>
            <li><span class="sw window"></span>{overlap_view::slide::WINDOW_BAND_WORDS}</li>
            <li><span class="sw bracket"></span>"window that can hide a collective"</li>
        </ul>
    }
}

/// One `<option>` per simulated GPU, valued by its index: the selects that
/// pick a GPU (the link lanes, the table's filter) list the same names.
pub fn gpu_options(state: AppState) -> impl IntoView {
    state
        .gpu_names
        .get()
        .into_iter()
        .enumerate()
        .map(|(i, n)| view! { <option value=i.to_string()>{n}</option> })
        .collect_view()
}

/// The choices of which simulated GPUs the lanes are drawn for, named by
/// their first and last GPU: the page's, and the one a link named if it is
/// not among them.
pub fn shown_gpu_options(state: AppState) -> impl IntoView {
    let names = state.gpu_names.get();
    let mut choices = ShownGpus::choices(names.len());
    let current = state.shown_gpus.get();
    if !choices.contains(&current) && current.fits(names.len()) {
        choices.push(current);
    }
    choices
        .into_iter()
        .map(|choice| {
            let label = match choice {
                ShownGpus::All => format!("all {} (overview)", names.len()),
                ShownGpus::Range { first, last } => {
                    format!("{} to {}", names[first], names[last])
                }
            };
            view! { <option value=choice.key()>{label}</option> }
        })
        .collect_view()
}
