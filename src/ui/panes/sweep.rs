//! The sweep and bus-bandwidth views (`view=sweep`, `view=busbw`): curves
//! computed in a worker of their own, point by point (`overlap_session::
//! sweep`), drawn by `overlap_view::plot` on a canvas with the timeline's
//! painter, and listed as buttons that tests, course authors and the
//! keyboard reach (`data-sweep-value`, `data-step-ms`). A point clicked or
//! pressed loads that scenario.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::html;
use leptos::prelude::*;
use overlap_core::input::fields::{self, Field};
use overlap_core::scenario::CollectiveOp;
use overlap_core::sweep::{self, Candidate, Row};
use overlap_core::{Scenario, ScenarioInput};
use overlap_session::{SweepSession, WorkerReply, WorkerRequest};
use overlap_view::plot::{self, BusCurve, Plot};
use overlap_view::view_query::{Pane, DEFAULT_SWEEP_FIELD};
use serde_json::Value;
use wasm_bindgen::JsCast;

use crate::dom;
use crate::state::AppState;
use crate::web::download::{download_canvas_png, download_text};
use crate::worker::spawn::{spawn, WorkerHandle};

/// The plots' height, CSS px (the width is the column's).
const PLOT_HEIGHT_PX: f64 = 380.0;
/// Exports are painted at twice the CSS size, as the timeline's PNG is.
const PNG_SCALE: f64 = 2.0;

/// The worker of both views and what came from it.
#[derive(Default)]
struct Shared {
    worker: Option<WorkerHandle>,
    ready: bool,
    queue: Vec<WorkerRequest>,
    session: SweepSession,
    /// The scenario a sweep was made for, its swept field cleared: a point
    /// loaded changes only the swept field, which needs no new sweep.
    sweep_key: Option<(String, Option<String>, ScenarioInput)>,
    bus_gen: u64,
    bus_hardware: Option<overlap_core::scenario::HardwareInput>,
    bus: Vec<Option<Result<Vec<sweep::BusPoint>, String>>>,
    /// A redraw is scheduled: replies that come before it share it.
    redraw_pending: bool,
}

/// How long replies are gathered into one redraw, ms: about a frame. One
/// redraw per reply held the main thread for most of a 32-point curve
/// (bench-page's sweep section: 244 ms for 44 ms of the worker's time).
const REDRAW_MS: u32 = 16;

/// Redraws the views once, a frame from now, for every reply until then.
fn redraw_soon(shared: &SharedRef, version: RwSignal<u64>) {
    let mut s = shared.borrow_mut();
    if s.redraw_pending {
        return;
    }
    s.redraw_pending = true;
    let shared = shared.clone();
    gloo_timers::callback::Timeout::new(REDRAW_MS, move || {
        shared.borrow_mut().redraw_pending = false;
        version.update(|v| *v += 1);
    })
    .forget();
}

type SharedRef = Rc<RefCell<Shared>>;

fn post(shared: &SharedRef, request: WorkerRequest) {
    let mut s = shared.borrow_mut();
    match (&s.worker, s.ready) {
        (Some(w), true) => {
            let _ = w.post(&request);
        }
        _ => s.queue.push(request),
    }
}

/// Starts the worker the first time it is needed.
fn ensure_worker(shared: &SharedRef, version: RwSignal<u64>, problem: RwSignal<Option<String>>) {
    if shared.borrow().worker.is_some() {
        return;
    }
    let on_message = {
        let shared = shared.clone();
        move |reply: WorkerReply, _arrays: js_sys::Array| {
            match &reply {
                WorkerReply::Ready => {
                    let mut s = shared.borrow_mut();
                    s.ready = true;
                    let queue = std::mem::take(&mut s.queue);
                    if let Some(w) = &s.worker {
                        for r in &queue {
                            let _ = w.post(r);
                        }
                    }
                }
                WorkerReply::SweepPoint { .. } => {
                    let next = shared.borrow_mut().session.reply(dom::now_ms(), &reply);
                    if let Some(next) = next {
                        post(&shared, next);
                    }
                    redraw_soon(&shared, version);
                }
                WorkerReply::BusCurve {
                    gen,
                    collective,
                    points,
                } => {
                    let mut s = shared.borrow_mut();
                    if *gen == s.bus_gen {
                        if let Some(i) = CollectiveOp::ALL.iter().position(|c| c == collective) {
                            s.bus[i] = Some(points.clone());
                        }
                    }
                    drop(s);
                    redraw_soon(&shared, version);
                }
                WorkerReply::Panic { message } | WorkerReply::Crashed { message } => {
                    let mut s = shared.borrow_mut();
                    s.ready = false;
                    // Dropped after this callback, which the handle owns; the
                    // next sweep starts a new worker.
                    let gone = s.worker.take();
                    gloo_timers::callback::Timeout::new(0, move || drop(gone)).forget();
                    problem.set(Some(format!("The sweep's worker stopped: {message}")));
                }
                _ => {}
            }
        }
    };
    let on_error = move |text: String| problem.set(Some(format!("The sweep's worker: {text}")));
    match spawn(on_message, on_error) {
        Ok(handle) => shared.borrow_mut().worker = Some(handle),
        Err(e) => problem.set(Some(format!("The sweep could not start a worker: {e}"))),
    }
}

/// The values a sweep of `field` takes: the link's list, or the slider's
/// range with the scenario's own value among them.
fn sweep_values(
    field: &'static Field,
    values: Option<&str>,
    scenario: Option<&Scenario>,
) -> Result<Vec<Value>, String> {
    if let Some(list) = values {
        return Ok(sweep::values_from_list(field, list)?
            .into_iter()
            .map(|c| match c {
                Candidate::Value(v) => v,
                // Sent as text: the worker's row says why it is refused.
                Candidate::Unreadable { text, .. } => Value::from(text),
            })
            .collect());
    }
    let mut list = sweep::slider_values(field);
    if list.is_empty() {
        return Err(format!(
            "{} has no range to sweep: give its values as a list",
            field.path
        ));
    }
    if let Some(own) = scenario.and_then(|s| (field.resolved)(s)) {
        let same = |v: &Value| match (v.as_f64(), own.as_f64()) {
            (Some(a), Some(b)) => a == b,
            _ => *v == own,
        };
        if !list.iter().any(same) {
            match own.as_f64() {
                Some(x) => {
                    let at = list
                        .iter()
                        .position(|v| v.as_f64().is_some_and(|y| y > x))
                        .unwrap_or(list.len());
                    list.insert(at, own);
                }
                None => list.push(own),
            }
        }
    }
    Ok(list)
}

/// The fields a sweep offers: every field with values to sweep.
fn sweepable() -> Vec<&'static Field> {
    fields::FIELDS
        .iter()
        .filter(|f| !sweep::slider_values(f).is_empty())
        .collect()
}

/// Paints `plot` on the canvas at its CSS size.
fn paint(
    canvas: &web_sys::HtmlCanvasElement,
    plot: &Plot,
    scale: f64,
    pal: &overlap_view::palette::Palette,
) {
    crate::timeline::canvas::paint_sized(canvas, &plot.list, scale, pal);
}

/// The plot's width: the canvas's container, at least 320 px.
fn plot_width(canvas: &web_sys::HtmlCanvasElement) -> f64 {
    canvas
        .parent_element()
        .map(|p| f64::from(p.client_width()))
        .filter(|w| *w > 0.0)
        .unwrap_or(720.0)
        .max(320.0)
}

/// The sweep's picture for the current rows.
fn sweep_picture(shared: &SharedRef, scenario: Option<&Scenario>, width: f64) -> Option<Plot> {
    let s = shared.borrow();
    let run = s.session.run()?;
    let field = fields::find(&run.field)?;
    let rows: Vec<Row> = run.rows.iter().flatten().cloned().collect();
    let current = scenario.and_then(|s| (field.resolved)(s));
    Some(plot::sweep_plot(
        field,
        &rows,
        current.as_ref(),
        width,
        PLOT_HEIGHT_PX,
    ))
}

/// The bus plot for the curves that came.
fn bus_picture(shared: &SharedRef, scenario: Option<&Scenario>, width: f64) -> Plot {
    let s = shared.borrow();
    let curves: Vec<BusCurve> = CollectiveOp::ALL
        .iter()
        .zip(&s.bus)
        .filter_map(|(c, r)| match r {
            Some(Ok(points)) => Some(BusCurve {
                name: collective_name(*c).to_string(),
                points: points.clone(),
            }),
            _ => None,
        })
        .collect();
    let published = scenario.map_or_else(Vec::new, |s| {
        plot::published_all_reduce(
            s.hardware_preset.name(),
            s.hardware.nodes,
            s.hardware.nic_gbps,
        )
    });
    let mark = scenario.and_then(|s| {
        let bytes = sweep::tp_call_bytes(s)?;
        let chunks = if s.overlap.tp { s.overlap.tp_chunks } else { 1 };
        Some((bytes, plot::tp_mark_text(bytes, chunks)))
    });
    plot::bus_plot(&curves, &published, mark, width, PLOT_HEIGHT_PX)
}

fn collective_name(c: CollectiveOp) -> &'static str {
    match c {
        CollectiveOp::AllReduce => "all_reduce",
        CollectiveOp::AllGather => "all_gather",
        CollectiveOp::ReduceScatter => "reduce_scatter",
        CollectiveOp::AllToAll => "all_to_all",
    }
}

/// The picker of the picture beside the timeline, and the sweep and
/// bus-bandwidth views.
#[component]
pub fn PlotViews() -> impl IntoView {
    let state = expect_context::<AppState>();
    let share = use_context::<crate::web::address::Share>();
    let shared: SharedRef = Rc::new(RefCell::new(Shared {
        bus: vec![None; CollectiveOp::ALL.len()],
        ..Shared::default()
    }));
    let shared = StoredValue::new_local(shared);
    let version = RwSignal::new(0u64);
    let problem = RwSignal::new(None::<String>);
    let canvas_ref = NodeRef::<html::Canvas>::new();
    let marks = StoredValue::new_local(Vec::<plot::Mark>::new());

    // A new sweep whenever the field, the values or the rest of the scenario change.
    Effect::new(move |_| {
        let pane = state.pane.get();
        let input = state.input.get();
        let sh = shared.get_value();
        match pane {
            Pane::Sweep { field, values } => {
                let Some(f) = fields::find(&field) else {
                    problem.set(Some(format!("{field} is not a scenario field")));
                    return;
                };
                let mut key_input = input.clone();
                let _ = (f.set)(&mut key_input, None);
                let key = (field.clone(), values.clone(), key_input);
                if sh.borrow().sweep_key.as_ref() == Some(&key) {
                    return;
                }
                let scenario = crate::state::resolve(&input).ok();
                match sweep_values(f, values.as_deref(), scenario.as_ref()) {
                    Ok(list) => {
                        problem.set(None);
                        ensure_worker(&sh, version, problem);
                        sh.borrow_mut().sweep_key = Some(key);
                        let first =
                            sh.borrow_mut()
                                .session
                                .start(dom::now_ms(), input, f.path, list);
                        for first in first {
                            post(&sh, first);
                        }
                        version.update(|v| *v += 1);
                    }
                    Err(e) => problem.set(Some(e)),
                }
            }
            Pane::BusBandwidth => {
                if sh.borrow().bus_hardware.as_ref() == Some(&input.hardware) {
                    return;
                }
                ensure_worker(&sh, version, problem);
                let gen = {
                    let mut s = sh.borrow_mut();
                    s.bus_gen += 1;
                    s.bus_hardware = Some(input.hardware.clone());
                    s.bus = vec![None; CollectiveOp::ALL.len()];
                    s.bus_gen
                };
                for c in CollectiveOp::ALL {
                    post(
                        &sh,
                        WorkerRequest::BusCurve {
                            gen,
                            hardware: input.hardware.clone(),
                            collective: c,
                        },
                    );
                }
                version.update(|v| *v += 1);
            }
            Pane::Timeline => {
                // Closed: its worker and the memory it grew go; reopening
                // starts afresh.
                let mut s = sh.borrow_mut();
                s.worker = None;
                s.ready = false;
                s.queue.clear();
                s.sweep_key = None;
                s.bus_hardware = None;
            }
        }
    });

    // Drawn after each point, and when the scenario (its current value) moves.
    Effect::new(move |_| {
        version.track();
        let pane = state.pane.get();
        let scenario = state.resolved.get();
        let Some(canvas) = canvas_ref.get() else {
            return;
        };
        let canvas: web_sys::HtmlCanvasElement = canvas;
        let width = plot_width(&canvas);
        let sh = shared.get_value();
        let picture = match pane {
            Pane::Sweep { .. } => sweep_picture(&sh, scenario.as_ref(), width),
            Pane::BusBandwidth => Some(bus_picture(&sh, scenario.as_ref(), width)),
            Pane::Timeline => None,
        };
        if let Some(p) = picture {
            let pal = crate::timeline::theme::for_element(&canvas);
            paint(&canvas, &p, dom_scale(), pal);
            marks.set_value(p.marks);
        }
    });

    let load = move |field: &'static Field, value: Value| {
        state.edit(|i| {
            let _ = (field.set)(i, Some(&value));
        });
    };
    let on_canvas_click = move |ev: leptos::ev::MouseEvent| {
        let Pane::Sweep { field, .. } = state.pane.get_untracked() else {
            return;
        };
        let Some(f) = fields::find(&field) else {
            return;
        };
        let x = f64::from(ev.offset_x());
        let hit = marks.with_value(|m| {
            m.iter()
                .min_by(|a, b| {
                    let da = (a.rect.x + a.rect.w / 2.0 - x).abs();
                    let db = (b.rect.x + b.rect.w / 2.0 - x).abs();
                    da.total_cmp(&db)
                })
                .filter(|m| (m.rect.x + m.rect.w / 2.0 - x).abs() <= m.rect.w.max(8.0))
                .map(|m| m.index)
        });
        let row = hit.and_then(|i| {
            shared.get_value().borrow().session.run().and_then(|r| {
                r.rows
                    .iter()
                    .flatten()
                    .nth(i)
                    .filter(|row| row.point().is_some())
                    .map(|row| row.value().clone())
            })
        });
        if let Some(v) = row {
            load(f, v);
        }
    };

    let pick = move |pane: Pane| state.pane.set(pane);
    let sweep_field = move || match state.pane.get() {
        Pane::Sweep { field, .. } => field,
        _ => DEFAULT_SWEEP_FIELD.to_string(),
    };
    let sweep_values_text = move || match state.pane.get() {
        Pane::Sweep { values, .. } => values.unwrap_or_default(),
        _ => String::new(),
    };
    let on_field = move |ev: leptos::ev::Event| {
        let field = event_target_value(&ev);
        state.pane.set(Pane::Sweep {
            field,
            values: None,
        });
    };
    let on_values = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        let field = sweep_field();
        state.pane.set(Pane::Sweep {
            field,
            values: Some(text).filter(|t| !t.trim().is_empty()),
        });
    };

    // The points as buttons: read by tests and screen readers, reached by Tab.
    let points = move || {
        version.track();
        let sh = shared.get_value();
        let s = sh.borrow();
        let Some(run) = s.session.run() else {
            return Vec::new();
        };
        let Some(f) = fields::find(&run.field) else {
            return Vec::new();
        };
        run.rows
            .iter()
            .flatten()
            .map(|row| {
                let value = Field::text(row.value());
                match row {
                    Row::Point(p) => {
                        let v = row.value().clone();
                        let label = format!(
                            "{} {}: step {}, speedup {}, memory {}{}",
                            f.label,
                            value,
                            overlap_view::format::ms(p.step_time_ms),
                            overlap_view::format::ratio(p.speedup),
                            overlap_view::format::gb(p.memory_gb_total),
                            if p.fits { "" } else { " (does not fit)" }
                        );
                        view! {
                            <li>
                                <button type="button" class="sweep-point"
                                    data-sweep-value=value.clone()
                                    data-step-ms=overlap_view::format::raw(p.step_time_ms)
                                    data-baseline-ms=overlap_view::format::raw(p.baseline_ms)
                                    data-memory-gb=overlap_view::format::raw(p.memory_gb_total)
                                    title="Load this scenario"
                                    on:click=move |_| load(f, v.clone())>
                                    {label}
                                </button>
                            </li>
                        }
                        .into_any()
                    }
                    Row::Refused { error, .. } => view! {
                        <li class="sweep-refused" data-sweep-value=value.clone() data-refused="1">
                            {format!("{} {}: refused: {}", f.label, value, error)}
                        </li>
                    }
                    .into_any(),
                }
            })
            .collect::<Vec<_>>()
    };
    let status = move || {
        version.track();
        let sh = shared.get_value();
        let s = sh.borrow();
        match (state.pane.get(), s.session.run()) {
            (Pane::Sweep { .. }, Some(run)) => {
                let first = run.first_ms.map_or(-1.0, |t| t - run.started_ms);
                let total = run.done_ms.map_or(-1.0, |t| t - run.started_ms);
                let text = if run.done() {
                    format!(
                        "{} points in {:.0} ms (first after {:.0} ms)",
                        run.values.len(),
                        total,
                        first
                    )
                } else {
                    format!("{} of {} points…", run.arrived(), run.values.len())
                };
                Some(view! {
                    <p class="sweep-status" role="status"
                        data-sweep-arrived=run.arrived().to_string()
                        data-sweep-count=run.values.len().to_string()
                        data-sweep-first-ms=format!("{first}")
                        data-sweep-total-ms=format!("{total}")
                        data-sweep-worker-ms=format!("{}", run.sim_ms)>
                        {text}
                    </p>
                })
            }
            _ => None,
        }
    };
    let bus_rows = move || {
        version.track();
        let sh = shared.get_value();
        let s = sh.borrow();
        CollectiveOp::ALL
            .iter()
            .zip(&s.bus)
            .flat_map(|(c, r)| match r {
                Some(Ok(points)) => points
                    .iter()
                    .map(|p| {
                        view! {
                            <li class="bus-point" data-bus-collective=collective_name(*c)
                                data-bus-bytes=overlap_view::format::raw(p.bytes)
                                data-bus-gbps=overlap_view::format::raw(p.bus_gbps)
                                data-algorithm=p.algorithm.clone() data-protocol=p.protocol.clone()>
                                {format!("{} {}: {:.1} GB/s, {}/{}", collective_name(*c), plot::bytes_tick(p.bytes), p.bus_gbps, p.algorithm, p.protocol)}
                            </li>
                        }
                        .into_any()
                    })
                    .collect::<Vec<_>>(),
                Some(Err(e)) => vec![view! { <li>{format!("{}: {e}", collective_name(*c))}</li> }.into_any()],
                None => Vec::new(),
            })
            .collect::<Vec<_>>()
    };

    // Exports of what is drawn.
    let stem = move || crate::ui::export::file_stem(state);
    let current_plot = move || {
        let canvas = canvas_ref.get_untracked()?;
        let width = plot_width(&canvas);
        let scenario = state.resolved.get_untracked();
        let sh = shared.get_value();
        match state.pane.get_untracked() {
            Pane::Sweep { .. } => sweep_picture(&sh, scenario.as_ref(), width),
            Pane::BusBandwidth => Some(bus_picture(&sh, scenario.as_ref(), width)),
            Pane::Timeline => None,
        }
    };
    let kind = move || match state.pane.get_untracked() {
        Pane::BusBandwidth => "busbw",
        _ => "sweep",
    };
    let export_svg = move |_| {
        if let Some(p) = current_plot() {
            let pal = export_palette(share);
            let svg = overlap_view::svg::write(&p.list, pal, "Overlap Lab");
            let _ = download_text(&format!("{}-{}.svg", stem(), kind()), "image/svg+xml", &svg);
        }
    };
    let export_png = move |_| {
        let Some(p) = current_plot() else { return };
        let Some(canvas) = dom::document()
            .and_then(|d| d.create_element("canvas").ok())
            .and_then(|c| c.dyn_into::<web_sys::HtmlCanvasElement>().ok())
        else {
            return;
        };
        paint(&canvas, &p, PNG_SCALE, export_palette(share));
        let _ = download_canvas_png(&format!("{}-{}.png", stem(), kind()), &canvas, |_| {});
    };
    let export_csv = move |_| {
        let sh = shared.get_value();
        let s = sh.borrow();
        let text = match state.pane.get_untracked() {
            Pane::BusBandwidth => {
                let mut out =
                    String::from("collective,bytes,time_us,alg_gbps,bus_gbps,algorithm,protocol\n");
                for (c, r) in CollectiveOp::ALL.iter().zip(&s.bus) {
                    for p in r.iter().flatten().flatten() {
                        out += &format!(
                            "{},{},{},{},{},{},{}\n",
                            collective_name(*c),
                            p.bytes,
                            p.time_us,
                            p.alg_gbps,
                            p.bus_gbps,
                            p.algorithm,
                            p.protocol
                        );
                    }
                }
                out
            }
            _ => s.session.run().map_or_else(String::new, |r| {
                sweep::csv(&r.rows.iter().flatten().cloned().collect::<Vec<_>>())
            }),
        };
        let _ = download_text(&format!("{}-{}.csv", stem(), kind()), "text/csv", &text);
    };

    let is = move |which: &'static str| {
        move || {
            let p = state.pane.get();
            let now = match p {
                Pane::Timeline => "timeline",
                Pane::Sweep { .. } => "sweep",
                Pane::BusBandwidth => "busbw",
            };
            (now == which).to_string()
        }
    };
    view! {
        <section class="plot-views" aria-label="Curves">
            <div class="pane-picker" role="group" aria-label="Picture">
                <button type="button" class="pane-timeline" aria-pressed=is("timeline")
                    on:click=move |_| pick(Pane::Timeline)>"Timeline only"</button>
                <button type="button" class="pane-sweep" aria-pressed=is("sweep")
                    on:click=move |_| pick(Pane::Sweep { field: sweep_field(), values: None })>"Sweep a field"</button>
                <button type="button" class="pane-busbw" aria-pressed=is("busbw")
                    on:click=move |_| pick(Pane::BusBandwidth)>"Bus bandwidth"</button>
            </div>
            <Show when=move || state.pane.get() != Pane::Timeline>
                <div class="plot-view" data-pane=move || if matches!(state.pane.get(), Pane::Sweep { .. }) { "sweep" } else { "busbw" }>
                    <Show when=move || matches!(state.pane.get(), Pane::Sweep { .. })>
                        <div class="sweep-controls">
                            <label>"Field "
                                <select class="sweep-field" on:change=on_field prop:value=sweep_field>
                                    {sweepable().into_iter().map(|f| view! {
                                        <option value=f.path selected=move || sweep_field() == f.path>
                                            {format!("{} ({})", f.label, f.path)}
                                        </option>
                                    }).collect::<Vec<_>>()}
                                </select>
                            </label>
                            <label>" Values "
                                <input type="text" class="sweep-values" placeholder="the slider's range, or a list: 1,2,4,8"
                                    prop:value=sweep_values_text on:change=on_values />
                            </label>
                        </div>
                    </Show>
                    {status}
                    <p class="plot-problem" role="alert">{move || problem.get()}</p>
                    <div class="plot-canvas-wrap">
                        <canvas class="plot-canvas" node_ref=canvas_ref on:click=on_canvas_click
                            role="img" aria-label=move || match state.pane.get() {
                                Pane::BusBandwidth => "Bus bandwidth against message size; the points are listed below".to_string(),
                                _ => "Step time and memory against the swept value; the points are listed below as buttons".to_string(),
                            }></canvas>
                    </div>
                    <div class="plot-export">
                        <button type="button" on:click=export_svg>"Download plot SVG"</button>
                        <button type="button" on:click=export_png>"Download plot PNG"</button>
                        <button type="button" on:click=export_csv>"Download plot CSV"</button>
                    </div>
                    <Show when=move || matches!(state.pane.get(), Pane::Sweep { .. })>
                        <ol class="sweep-points" aria-label="Sweep points: press one to load it">{points}</ol>
                    </Show>
                    <Show when=move || state.pane.get() == Pane::BusBandwidth>
                        <details class="bus-table">
                            <summary>"Every point"</summary>
                            <ol class="bus-points">{bus_rows}</ol>
                        </details>
                    </Show>
                </div>
            </Show>
        </section>
    }
}

/// The exports' colours: the theme the link or the share panel fixed, else light.
fn export_palette(
    share: Option<crate::web::address::Share>,
) -> &'static overlap_view::palette::Palette {
    crate::timeline::theme::for_export(share.and_then(|s| s.theme.get_untracked()))
}

/// The canvas's scale: the screen's pixel ratio.
fn dom_scale() -> f64 {
    dom::window()
        .map(|w| w.device_pixel_ratio())
        .filter(|r| *r > 0.0)
        .unwrap_or(1.0)
}
