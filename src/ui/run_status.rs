//! The run's status above the timeline: "Simulating…" with a Stop button
//! while a run is in flight (the timeline after it is dimmed meanwhile,
//! style.css), and the alert that says why the last run did not show.

use leptos::prelude::*;

use crate::state::AppState;
use crate::worker::runner::RunnerHandle;

/// "Simulating…" with a Stop button while a run is in flight.
#[component]
pub fn SimStatus() -> impl IntoView {
    let state = expect_context::<AppState>();
    let runner = use_context::<RunnerHandle>();
    view! {
        <div class="sim-status" class:busy=move || state.busy.get() data-busy=move || state.busy.get().to_string()>
            <Show when=move || state.busy.get()>
                <p role="status">
                    <span class="spinner" aria-hidden="true"></span>
                    {move || if state.figures_ahead.get() {
                        "Simulating the timeline… the figures are this scenario's; the timeline below is the previous scenario's. "
                    } else {
                        "Simulating… the timeline below is the previous scenario's. "
                    }}
                    <button type="button" class="stop" on:click=move |_| {
                        if let Some(r) = runner {
                            r.stop()
                        }
                    }>"Stop"</button>
                </p>
            </Show>
        </div>
    }
}

/// Why the last run did not show: over budget, stopped, or an internal error.
#[component]
pub fn RunAlertView() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        {move || {
            state
                .run_alert
                .get()
                .map(|a| {
                    view! {
                        <div class="run-alert" role="alert">
                            <p>{a.cause}</p>
                            {a.report_link.map(|l| {
                                let href = l.clone();
                                view! { <p class="report-link"><a href=href>{l}</a></p> }
                            })}
                        </div>
                    }
                })
        }}
    }
}
