//! The sweep pane (`view=sweep&sweep=FIELD[&values=A,B]`): step time
//! and memory against one field's values, each point simulated in the
//! curves' worker (`curves`) and drawn as it comes, listed as buttons that
//! tests, course authors and the keyboard reach (`data-sweep-value`,
//! `data-step-ms`). A point clicked or pressed loads that scenario.

use leptos::prelude::*;
use overlap_core::input::fields::{self, Field};
use overlap_core::sweep::{self, Candidate, Row};
use overlap_core::{Scenario, ScenarioInput};
use overlap_view::panes::Pane;
use overlap_view::plot::Plot;
use overlap_view::sweep_plot;
use serde_json::Value;

use super::pane::{curves_job, sweep_field, Frame, PlotPane, PLOT_HEIGHT_PX};
use crate::state::AppState;

/// The sweep pane.
pub struct SweepPane;

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

/// Loads the scenario with `field` at `value`, and the fields that change
/// with it, as the sweep's row was simulated.
fn load(state: AppState, field: &'static Field, value: Value) {
    state.edit(|i| {
        if (field.set)(i, Some(&value)).is_ok() {
            overlap_core::input::companions::follow(field, i);
        }
    });
}

impl PlotPane for SweepPane {
    fn update(&self, frame: Frame, pane: &Pane, input: &ScenarioInput) {
        let Pane::Sweep { field, values } = pane else {
            return;
        };
        let curves = frame.curves();
        let Some(f) = fields::find(field) else {
            curves
                .problem
                .set(Some(format!("{field} is not a scenario field")));
            return;
        };
        let mut key_input = input.clone();
        let _ = (f.set)(&mut key_input, None);
        let key = (field.clone(), values.clone(), key_input);
        if curves.has_sweep(&key) {
            return;
        }
        let scenario = crate::state::resolve(input).ok();
        match sweep_values(f, values.as_deref(), scenario.as_ref()) {
            Ok(list) => {
                curves.problem.set(None);
                curves.sweep(key, input.clone(), f.path, list);
            }
            Err(e) => curves.problem.set(Some(e)),
        }
    }

    curves_job!();

    fn above(&self, frame: Frame) -> AnyView {
        let state = frame.state;
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
            let field = sweep_field(state);
            state.pane.set(Pane::Sweep {
                field,
                values: Some(text).filter(|t| !t.trim().is_empty()),
            });
        };
        view! {
            <div class="sweep-controls">
                <label>"Field "
                    <select class="sweep-field" on:change=on_field prop:value=move || sweep_field(state)>
                        {sweepable().into_iter().map(|f| view! {
                            <option value=f.path selected=move || sweep_field(state) == f.path>
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
            {move || status(frame)}
        }
        .into_any()
    }

    fn below(&self, frame: Frame) -> AnyView {
        view! {
            <ol class="sweep-points" aria-label="Sweep points: press one to load it">{move || points(frame)}</ol>
        }
        .into_any()
    }

    fn picture(&self, frame: Frame, scenario: Option<&Scenario>, width: f64) -> Option<Plot> {
        let curves = frame.curves();
        let session = curves.session();
        let run = session.run()?;
        let field = fields::find(&run.field)?;
        let rows: Vec<Row> = run.rows.iter().flatten().cloned().collect();
        let current = scenario.and_then(|s| (field.resolved)(s));
        Some(sweep_plot::sweep_plot(
            field,
            &rows,
            current.as_ref(),
            width,
            PLOT_HEIGHT_PX,
        ))
    }

    fn csv(&self, frame: Frame) -> String {
        let curves = frame.curves();
        let session = curves.session();
        session.run().map_or_else(String::new, |r| {
            sweep::csv(&r.rows.iter().flatten().cloned().collect::<Vec<_>>())
        })
    }

    fn clicked(&self, frame: Frame, index: usize) {
        let Pane::Sweep { field, .. } = frame.state.pane.get_untracked() else {
            return;
        };
        let Some(f) = fields::find(&field) else {
            return;
        };
        let value = frame.curves().session().run().and_then(|r| {
            r.rows
                .iter()
                .flatten()
                .nth(index)
                .filter(|row| row.point().is_some())
                .map(|row| row.value().clone())
        });
        if let Some(v) = value {
            load(frame.state, f, v);
        }
    }
}

/// How far the sweep is: its points so far, and its times for the tests
/// and the benchmark.
fn status(frame: Frame) -> Option<impl IntoView> {
    frame.curves().version.track();
    let curves = frame.curves();
    let session = curves.session();
    let run = session.run()?;
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

/// The points as buttons: read by tests and screen readers, reached by Tab.
fn points(frame: Frame) -> Vec<AnyView> {
    frame.curves().version.track();
    let state = frame.state;
    let curves = frame.curves();
    let session = curves.session();
    let Some(run) = session.run() else {
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
                                on:click=move |_| load(state, f, v.clone())>
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
        .collect()
}
