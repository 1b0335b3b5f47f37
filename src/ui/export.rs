//! The export buttons: the Chrome trace and the Kineto traces of the current
//! scenario (built in a worker of their own, byte for byte what
//! `overlap-lab trace` writes), the timeline as SVG (the display list the
//! canvas paints, through `overlap_view::svg`) and as PNG, and the figures
//! as CSV.
//!
//! The SVG and the PNG are for slides: the timeline as on screen with a
//! caption naming the scenario and a legend (`overlap_view::slide`), in the
//! chosen theme or light. The PNG paints the same display list with the
//! canvas backend on a canvas of its own, at twice the CSS pixels.

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use overlap_core::ScenarioInput;
use overlap_view::display_list::DisplayList;
use overlap_view::palette::Palette;
use overlap_view::report_csv::figures_csv;
use overlap_view::trace_size::{trace_refusal, TraceKind};
use overlap_view::{draw, slide, svg};
use wasm_bindgen::JsCast;

use crate::client::no_timeline::export_refusal;
use crate::client::worker_client::{NotSent, Received, WorkerClient};
use crate::dom;
use crate::state::AppState;
use crate::timeline::theme;
use crate::web::address::Share;
use crate::web::download::{download_bytes, download_canvas_png, download_text};
use overlap_session::{WorkerReply, WorkerRequest};

/// A trace that takes longer than this to build is abandoned.
const TRACE_BUDGET_MS: u32 = 60_000;

/// The timeline as the canvas shows it now (same window, rows, bars) for a
/// slide: with the scenario's caption above and the legend below (the
/// display list of `overlap_view::slide`), in the chosen theme, light
/// without one.
fn slide_list(state: AppState) -> Option<(DisplayList, &'static Palette)> {
    let share = expect_context::<Share>();
    let scene = state.scene();
    let s = scene.borrow();
    if s.current.is_none() || s.layout.rows.is_empty() {
        return None;
    }
    let win = s.window(1.0);
    let list = draw::timeline(&s, win, 1.0);
    let caption = state.resolved.with_untracked(|scenario| {
        state.report.with_untracked(|report| {
            let (scenario, report) = (scenario.as_ref()?, report.as_ref()?);
            // Named by the scenario drawn, not by the controls: after a run
            // is stopped the page draws the last one that finished.
            let (title, modified) = slide::drawn_preset(scenario, &state.preset_id.get_untracked())
                .unwrap_or(("Custom scenario", false));
            Some(slide::caption(
                title,
                modified,
                scenario,
                report,
                (win.0 * 1e3, win.1 * 1e3),
            ))
        })
    })?;
    Some((
        slide::slide(&list, &caption),
        theme::for_export(share.theme.get_untracked()),
    ))
}

fn timeline_svg(state: AppState) -> Option<String> {
    let (list, palette) = slide_list(state)?;
    Some(svg::write(
        &list,
        palette,
        "Overlap Lab: timeline of one step",
    ))
}

/// Scale of the PNG: twice the CSS pixels, sharp on a projector and in print.
const PNG_SCALE: f64 = 2.0;

/// The slide painted by the canvas backend on a canvas of its own: the
/// same display list as the SVG.
fn timeline_png(state: AppState) -> Option<web_sys::HtmlCanvasElement> {
    let (list, palette) = slide_list(state)?;
    let canvas: web_sys::HtmlCanvasElement = dom::document()?
        .create_element("canvas")
        .ok()?
        .dyn_into()
        .ok()?;
    canvas.set_width((list.width * PNG_SCALE).ceil() as u32);
    canvas.set_height((list.height * PNG_SCALE).ceil() as u32);
    let ctx: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    ctx.scale(PNG_SCALE, PNG_SCALE).ok()?;
    crate::timeline::canvas::paint(&ctx, &list.shapes, palette);
    Some(canvas)
}

pub(crate) fn file_stem(state: AppState) -> String {
    // Preset ids are the core's own (letters, digits, dashes).
    let id = state.preset_id.get_untracked();
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    format!("overlap-lab-{safe}")
}

/// A trace being built in a worker of its own (the simulation worker stays
/// free for the controls); dropping it stops the build.
struct TraceJob {
    _worker: WorkerClient,
    _budget: Timeout,
}

/// Builds the trace of `input` in a new worker; `done` gets the bytes or why not.
fn build_trace(
    kind: TraceKind,
    input: &ScenarioInput,
    folder: String,
    done: impl Fn(Result<js_sys::Uint8Array, String>) + Clone + 'static,
) -> Result<TraceJob, String> {
    let request = match kind {
        TraceKind::Chrome => WorkerRequest::Trace {
            gen: 0,
            input: input.clone(),
        },
        TraceKind::Kineto => WorkerRequest::Kineto {
            gen: 0,
            input: input.clone(),
            folder,
        },
    };
    let on_reply = {
        let done = done.clone();
        move |heard: Received| match heard.reply {
            WorkerReply::Trace { .. } | WorkerReply::Kineto { .. } => {
                match heard.arrays.get(0).dyn_into::<js_sys::Uint8Array>() {
                    Ok(bytes) => done(Ok(bytes)),
                    Err(_) => done(Err("the worker sent no trace".to_string())),
                }
            }
            WorkerReply::Refused { message, .. }
            | WorkerReply::Panic { message }
            | WorkerReply::Crashed { message } => done(Err(message)),
            _ => {}
        }
    };
    let worker = WorkerClient::new(on_reply);
    // Started here, and read by the worker once it is ready.
    worker.post(&request).map_err(|e| match e {
        NotSent::Spawn(why) => why,
        NotSent::Post => "the worker did not take the request".to_string(),
    })?;
    let budget = Timeout::new(TRACE_BUDGET_MS, move || {
        done(Err(format!(
            "building it took longer than {} s",
            TRACE_BUDGET_MS / 1000
        )))
    });
    Ok(TraceJob {
        _worker: worker,
        _budget: budget,
    })
}

/// The export buttons. Each says what it saves; a failure is said next to them.
#[component]
pub fn ExportButtons() -> impl IntoView {
    let state = expect_context::<AppState>();
    let problem = RwSignal::new(None::<String>);
    let tracing = RwSignal::new(false);
    let job = StoredValue::new_local(None::<TraceJob>);
    let report = move |ok: Option<()>, what: &'static str| {
        problem.set(ok.is_none().then(|| what.to_string()))
    };
    // A step whose timeline the page does not build: every export that
    // needs it says why, naming the control that would draw it.
    let no_timeline = move |what: &str| {
        state
            .timeline_refused
            .with_untracked(|t| t.as_ref().map(|t| export_refusal(t, what)))
    };
    // While a run is in flight the timeline drawn is the previous scenario's
    // (dimmed under "Simulating"), and the figures may already be the new
    // one's: a slide would caption one scenario's timeline with the other's
    // figures. The picture waits; the message goes when the run ends.
    let waiting = RwSignal::new(None::<&'static str>);
    let in_flight = move |what: &'static str| {
        let busy = state.busy.get_untracked();
        waiting.set(busy.then_some(what));
        busy
    };
    let trace = move |kind: TraceKind| {
        let what = match kind {
            TraceKind::Chrome => "trace",
            TraceKind::Kineto => "Kineto trace",
        };
        if let Some(why) = no_timeline(what) {
            problem.set(Some(why));
            return;
        }
        if state.resolved.with_untracked(Option::is_none) {
            report(
                None,
                "The trace could not be made: no valid scenario has been simulated yet.",
            );
            return;
        }
        let bars = state
            .scene()
            .borrow()
            .current
            .as_ref()
            .map_or(0, |p| p.bars);
        let preset_id = state.preset_id.get_untracked();
        let input = state.input.get_untracked();
        let is_preset = overlap_core::presets::find(&preset_id).is_some_and(|p| p.input() == input);
        if let Some(why) = trace_refusal(kind, bars, &preset_id, is_preset) {
            problem.set(Some(why));
            return;
        }
        problem.set(None);
        tracing.set(true);
        let stem = file_stem(state);
        let (name, mime) = kind.file_name(&stem);
        let done = move |result: Result<js_sys::Uint8Array, String>| {
            if !tracing.get_untracked() {
                return;
            }
            tracing.set(false);
            match result {
                Ok(bytes) => {
                    if download_bytes(&name, mime, &bytes).is_none() {
                        problem.set(Some(
                            "The trace could not be saved: it came out empty or the browser refused the download."
                                .to_string(),
                        ));
                    }
                }
                Err(why) => problem.set(Some(format!("The trace could not be made: {why}."))),
            }
            // Ends the worker, once this callback has returned.
            Timeout::new(0, move || job.set_value(None)).forget();
        };
        match build_trace(kind, &input, format!("{stem}-kineto"), done) {
            Ok(j) => job.set_value(Some(j)),
            Err(e) => {
                tracing.set(false);
                problem.set(Some(format!("The trace could not be made: {e}.")));
            }
        }
    };
    let svg = move |_| {
        if let Some(why) = no_timeline("SVG") {
            problem.set(Some(why));
            return;
        }
        if in_flight("SVG") {
            problem.set(None);
            return;
        }
        let text = timeline_svg(state);
        let ok = text
            .and_then(|t| download_text(&format!("{}.svg", file_stem(state)), "image/svg+xml", &t));
        report(
            ok,
            "The SVG could not be made: the timeline has not been drawn yet.",
        );
    };
    let png = move |_| {
        if let Some(why) = no_timeline("PNG") {
            problem.set(Some(why));
            return;
        }
        if in_flight("PNG") {
            problem.set(None);
            return;
        }
        let name = format!("{}.png", file_stem(state));
        let ok = timeline_png(state).and_then(|canvas| {
            download_canvas_png(&name, &canvas, move |saved| {
                if !saved {
                    problem.set(Some(
                        "The PNG could not be saved: the browser made no picture of it or refused the download."
                            .to_string(),
                    ));
                }
            })
        });
        report(
            ok,
            "The PNG could not be made: the timeline has not been drawn yet.",
        );
    };
    let csv = move |_| {
        let ok = state.report.get_untracked().and_then(|r| {
            download_text(
                &format!("{}.figures.csv", file_stem(state)),
                "text/csv",
                &figures_csv(&r),
            )
        });
        report(
            ok,
            "The figures could not be saved: no valid scenario has been simulated yet.",
        );
    };
    view! {
        <div class="export-buttons" role="group" aria-label="Export">
            <button type="button" on:click=move |_| trace(TraceKind::Chrome) disabled=move || tracing.get() title="Chrome trace-event JSON: open it in Perfetto or chrome://tracing">"Download trace (JSON)"</button>
            <button type="button" on:click=move |_| trace(TraceKind::Kineto) disabled=move || tracing.get() title="PyTorch-profiler (Kineto) traces, one per simulated GPU: unzip and open the folder with HolisticTraceAnalysis">"Download traces for HTA (zip)"</button>
            <button type="button" on:click=svg title="The timeline as on screen, with a caption and a legend, as a vector image for slides">"Download SVG"</button>
            <button type="button" on:click=png title="The timeline as on screen, with a caption and a legend, as a picture for slides">"Download PNG"</button>
            <button type="button" on:click=csv title="Every figure of the report, one per row">"Download figures (CSV)"</button>
            {move || tracing.get().then(|| view! { <p class="note" role="status">"Building the trace in the background…"</p> })}
            {move || problem.get().map(|p| view! { <p class="field-error trace-problem" role="status">{p}</p> })}
            {move || waiting.get().filter(|_| state.busy.get()).map(|what| view! {
                <p class="note export-waits" role="status">
                    {format!("The {what} waits for the simulation in flight: the timeline drawn is still the previous scenario's. Save it once the new one is drawn.")}
                </p>
            })}
        </div>
    }
}
