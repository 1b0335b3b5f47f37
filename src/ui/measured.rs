//! "Measured vs simulated": open a PyTorch profiler trace by the file
//! picker or by dropping it on the section; it is read in a worker on this
//! machine and never uploaded (`client::importer`). Once read, the trace
//! is drawn above the current scenario's timeline on one time axis (the
//! display list of `overlap_view::measured`, painted by the timeline's
//! canvas backend), with the two sides' figures in two columns and one
//! sentence saying where they differ most. The picture zooms and pans on
//! its one time axis (`overlap_view::time_window`) by its buttons or, with
//! the picture focused, by the keys `+`, `-`, the arrows and `0`.

use leptos::html;
use leptos::prelude::*;
use overlap_view::display_list::Shape;
use overlap_view::measured::{self, Simulated};
use overlap_view::slide;
use overlap_view::time_window::{Move, TimeWindow};
use wasm_bindgen::JsCast;

use crate::client::importer::{ImportView, Importer};
use crate::state::AppState;
use crate::timeline::{canvas, theme};

/// The caption of the simulated side: the scenario's preset, as a slide names it.
fn caption(state: AppState) -> String {
    state.resolved.with_untracked(|scenario| {
        let title = scenario
            .as_ref()
            .and_then(|s| slide::drawn_preset(s, &state.preset_id.get_untracked()))
            .map_or("custom scenario".to_string(), |(title, modified)| {
                if modified {
                    format!("{title} (modified)")
                } else {
                    title.to_string()
                }
            });
        format!("Simulated: {title}, one step")
    })
}

/// The span of the picture's time axis, seconds, if a trace is open.
fn span_now(state: AppState, view: ImportView) -> Option<f64> {
    let run = view.run.get_value()?;
    let scene = state.scene();
    let s = scene.borrow();
    Some(measured::span_s(
        &run.measured,
        s.current.as_ref().map(|p| &p.timeline),
    ))
}

/// Paints the measured trace above the simulated timeline on `el`, over
/// `window` (the whole step when `None`).
fn paint(
    el: &web_sys::HtmlCanvasElement,
    state: AppState,
    view: ImportView,
    window: Option<TimeWindow>,
) {
    let Some(run) = view.run.get_value() else {
        return;
    };
    let width = el
        .parent_element()
        .map_or(800.0, |p| f64::from(p.client_width()))
        .max(320.0);
    let scene = state.scene();
    let s = scene.borrow();
    let caption = caption(state);
    let sim = s.current.as_ref().map(|p| Simulated {
        caption,
        timeline: &p.timeline,
    });
    let list = measured::draw(&run.measured, &run.figures, sim.as_ref(), width, window);
    drop(s);
    let dpr = crate::dom::window().map_or(1.0, |w| w.device_pixel_ratio());
    if !canvas::paint_sized(el, &list, dpr, theme::for_element(el)) {
        return;
    }
    let _ = el.set_attribute("data-rects", &list.shapes.len().to_string());
    // For the browser tests: the wait spans drawn (less the legend's
    // swatch) and the measured lanes.
    let waits = list
        .shapes
        .iter()
        .filter(|s| matches!(s, Shape::Wait { .. }))
        .count();
    let _ = el.set_attribute("data-wait-spans", &waits.saturating_sub(1).to_string());
    let lanes = run.measured.rows.len().min(measured::MAX_MEASURED_ROWS);
    let _ = el.set_attribute("data-lanes", &lanes.to_string());
    let shown = window.map_or("full".to_string(), |w| format!("{} {}", w.from_s, w.to_s));
    let _ = el.set_attribute("data-window", &shown);
}

/// The section: the picker, the drop zone, the progress bar, the alert,
/// and once a trace is read, the sentence, the picture and the figures.
#[component]
pub fn MeasuredPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let importer = Importer::new();
    let view = importer.view();
    let importer = StoredValue::new_local(importer);
    let canvas_ref = NodeRef::<html::Canvas>::new();
    let dragging = RwSignal::new(false);
    // The time window shown; `None` is the whole step. A new trace shows
    // its whole step.
    let window = RwSignal::new(None::<TimeWindow>);
    Effect::new(move |_| {
        view.shown.track();
        window.set(None);
    });

    Effect::new(move |_| {
        view.shown.track();
        // A new simulated run redraws the lower half.
        state.timeline_seq.track();
        let w = window.get();
        if let Some(el) = canvas_ref.get() {
            paint(&el, state, view, w);
        }
    });

    // The picture is as wide as the section: drawn again when the window
    // changes width.
    let resized = window_event_listener(leptos::ev::resize, move |_| {
        if let Some(el) = canvas_ref.get_untracked() {
            paint(&el, state, view, window.get_untracked());
        }
    });
    on_cleanup(move || resized.remove());

    let on_pick = {
        move |ev: leptos::ev::Event| {
            let Some(input) = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
            else {
                return;
            };
            if let Some(list) = input.files() {
                importer.with_value(|i| i.open(&list));
            }
            // The same file picked again is a new import.
            input.set_value("");
        }
    };
    let on_drop = {
        move |ev: leptos::ev::DragEvent| {
            ev.prevent_default();
            dragging.set(false);
            if let Some(list) = ev.data_transfer().and_then(|d| d.files()) {
                importer.with_value(|i| i.open(&list));
            }
        }
    };
    let on_close = move |_| importer.with_value(Importer::close);
    let move_window = move |m: Move| {
        let Some(span) = span_now(state, view) else {
            return;
        };
        let now = window.get_untracked().unwrap_or(TimeWindow::full(span));
        let next = now.moved(m, span);
        window.set((!next.is_full(span)).then_some(next));
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        if let Some(m) = Move::of_key(&ev.key()) {
            ev.prevent_default();
            move_window(m);
        }
    };
    // The reader's own classification rules, as `overlap-lab import
    // --classify-file` reads them: checked here, a refusal naming the line.
    // Kept in the link (`classify=`): the rules the state holds are the
    // ones the importer uses, from the link or from "Apply rules".
    let rules_ref = NodeRef::<html::Textarea>::new();
    let rules_error = RwSignal::new(None::<String>);
    let on_classify = move |_| {
        let Some(text) = rules_ref.get_untracked().map(|t| t.value()) else {
            return;
        };
        match overlap_view::classify_link::classify_rules(&text) {
            Ok(rules) => {
                rules_error.set(None);
                state.classify.set(rules);
            }
            Err(e) => rules_error.set(Some(e)),
        }
    };
    // The importer follows the state's rules; none given is nothing to
    // tell it until some were.
    let applied = StoredValue::new(None::<String>);
    Effect::new(move |_| {
        let rules = state.classify.get();
        if rules != applied.get_value() {
            applied.set_value(rules.clone());
            importer.with_value(|i| i.classify(rules.unwrap_or_default()));
        }
    });
    let has_run = move || {
        view.shown.track();
        view.run.with_value(Option::is_some)
    };
    let figures = move || {
        view.shown.track();
        let run = view.run.get_value()?;
        let report = state.report.get()?;
        Some((
            measured::sentence(&run.figures, &report),
            measured::rows(&run.figures, &report),
            measured::notes(&run.figures, &report),
        ))
    };

    view! {
        <section
            class="measured"
            class:dragging=move || dragging.get()
            aria-labelledby="measured-heading"
            // For the browser tests: the reader's figure, bit for bit.
            data-measured-step-ms=move || {
                view.shown.track();
                view.run.with_value(|r| {
                    r.as_ref()
                        .map(|r| overlap_view::format::raw(r.figures.over_ranks.step_ms))
                })
            }
            // The slowest GPU's communication, for the classification test.
            data-measured-comm-ms=move || {
                view.shown.track();
                view.run.with_value(|r| {
                    r.as_ref()
                        .and_then(|r| r.figures.gpus.first())
                        .map(|g| overlap_view::format::raw(g.comm_ms))
                })
            }
            on:dragover=move |ev: leptos::ev::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |_| dragging.set(false)
            on:drop=on_drop
        >
            <h2 id="measured-heading">"Measured vs simulated"</h2>
            <p class="measured-intro">
                "Open a PyTorch profiler trace (" <code>".json"</code> " or " <code>".json.gz"</code>
                ", one file per rank, several at once) or drop it here. It is read on this machine and never uploaded."
            </p>
            <p class="measured-actions">
                <label class="button-like">
                    "Open trace…"
                    <input
                        type="file"
                        class="trace-file"
                        accept=".json,.gz,application/json,application/gzip"
                        multiple
                        on:change=on_pick
                    />
                </label>
                <Show when=has_run>
                    <button type="button" class="measured-close" on:click=on_close>"Close trace"</button>
                </Show>
            </p>
            <details class="classify" prop:open=move || state.classify.with(Option::is_some)>
                <summary>"Name kernels the table does not know"</summary>
                <label class="classify-label" for="classify-rules">
                    "One rule a line, " <code>"PATTERN=KIND[:AXIS]"</code> ": a regular expression on the kernel's name; "
                    {format!("KIND is one of {}; AXIS one of {}. ", overlap_trace::rules::kinds(), overlap_trace::rules::axes())}
                    "The first rule that matches decides, before the built-in table."
                </label>
                <textarea id="classify-rules" class="classify-rules" rows="3" node_ref=rules_ref
                    placeholder="my_a2a_kernel=all_to_all:ep" spellcheck="false"
                    prop:value=move || state.classify.get().unwrap_or_default()></textarea>
                <button type="button" class="classify-apply" on:click=on_classify>"Apply rules"</button>
                {move || rules_error.get().map(|e| view! { <p class="classify-error" role="alert">{e}</p> })}
            </details>
            {move || view.progress.get().map(|(fraction, label)| view! {
                <div class="import-progress" role="status">
                    <progress max="1" value=fraction.to_string()></progress>
                    <span>{label}</span>
                </div>
            })}
            {move || view.alert.get().map(|text| view! {
                <div class="run-alert import-alert" role="alert"><p>{text}</p></div>
            })}
            <Show when=has_run>
                {move || figures().map(|(sentence, _, _)| view! {
                    <p class="measured-sentence">{sentence}</p>
                })}
                <p class="measured-note">{move || {
                    view.shown.track();
                    view.run.with_value(|run| run.as_ref().map(|run| {
                        let kernels: usize = run.figures.gpus.iter().map(|g| g.kernels).sum();
                        format!(
                            "{} GPU events from {} read in {} in this page's worker.",
                            overlap_view::format::count(kernels),
                            run.figures.files.join(", "),
                            overlap_view::format::ms(run.import_ms),
                        )
                    }))
                }}</p>
                <div class="measured-zoom" role="toolbar" aria-label="Zoom and pan the time axis">
                    <button type="button" class="zoom-out" aria-label="Zoom the trace out" title="Zoom out (-)"
                        on:click=move |_| move_window(Move::ZoomOut)>"−"</button>
                    <button type="button" class="zoom-in" aria-label="Zoom the trace in" title="Zoom in (+)"
                        on:click=move |_| move_window(Move::ZoomIn)>"+"</button>
                    <button type="button" class="pan-left" aria-label="Earlier in the trace" title="Earlier (←)"
                        on:click=move |_| move_window(Move::PanLeft)>"←"</button>
                    <button type="button" class="pan-right" aria-label="Later in the trace" title="Later (→)"
                        on:click=move |_| move_window(Move::PanRight)>"→"</button>
                    <button type="button" class="zoom-reset" title="The whole step (0)"
                        prop:disabled=move || window.get().is_none()
                        on:click=move |_| move_window(Move::Reset)>"Whole step"</button>
                </div>
                <div class="measured-picture" tabindex="0" role="group" on:keydown=on_key
                    aria-label="The picture: + and - zoom, the arrows pan, 0 shows the whole step">
                    <canvas node_ref=canvas_ref class="measured-canvas" role="img"
                        aria-label="The measured trace above the simulated step, on one time axis"></canvas>
                </div>
                {move || figures().map(|(_, rows, notes)| view! {
                    <table class="measured-figures">
                        <thead><tr><th scope="col">"per step"</th><th scope="col">"measured"</th><th scope="col">"simulated"</th></tr></thead>
                        <tbody>
                            {rows.into_iter().map(|(label, m, s)| view! {
                                <tr><th scope="row">{label}</th><td>{m}</td><td>{s}</td></tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                    <p class="measured-note">{move || {
                        view.shown.track();
                        let ranks = view.run.with_value(|r| r.as_ref().map_or(0, |r| r.figures.gpus.len()));
                        if ranks > 1 {
                            "Times are per step, of the slowest GPU on each side. With the ranks' traces read \
                             together, each collective is matched across its ranks: its transfer is its shortest \
                             duration among them, and the rest of each rank's time in it is waiting (below)."
                        } else {
                            "Times are per step, of the slowest GPU on each side. One rank's trace cannot tell \
                             waiting on a collective from transfer: open every rank's trace to tell them apart. \
                             Measured exposed time includes what the simulator counts as pipeline bubble, and is \
                             charged to the collective in flight that ends last."
                        }
                    }}</p>
                    // Transfer and wait, the late ranks, and what the
                    // import could not say (crates/view's `notes`).
                    <ul class="measured-notes">
                        {notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
                    </ul>
                })}
            </Show>
        </section>
    }
}
