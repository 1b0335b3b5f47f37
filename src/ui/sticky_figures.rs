//! The compact figure bar of a phone: while the controls below the timeline
//! are used, the step time, what it was, and the step before and after as
//! two bars stay at the bottom of the screen, so a switch and its effect are
//! seen together. Each bar is the step's length (to the longer of the two),
//! ending in its exposed communication per axis, in the axis colours.
//! The style sheet shows it only where the figures are not beside the
//! controls.
//!
//! The page's "Simulating" status sits above the timeline, off screen when
//! a switch below it is used: the bar says so too while a run is in flight,
//! and dims its figures while they are still the previous scenario's.

use leptos::prelude::*;
use overlap_core::{Axis, Report};
use overlap_view::format;

use crate::state::AppState;

/// One step as a bar: its share of `longest_ms`, the part where compute
/// ran or waited on a bubble, then the exposed communication of each axis.
fn step_bar(report: &Report, longest_ms: f64) -> impl IntoView {
    let pct = |ms: f64| {
        format!(
            "width:{:.3}%",
            (ms / longest_ms.max(1e-12) * 100.0).max(0.0)
        )
    };
    let exposed: f64 = Axis::ALL
        .iter()
        .map(|a| report.axes.get(*a).exposed_ms)
        .sum();
    let rest_ms = (report.step_time_ms - exposed).max(0.0);
    view! {
        <div class="sf-track">
            <span class="sf-seg busy" style=pct(rest_ms)></span>
            {Axis::ALL
                .map(|a| {
                    view! {
                        <span
                            class=format!("sf-seg {}", a.name())
                            style=pct(report.axes.get(a).exposed_ms)
                        ></span>
                    }
                })
                .collect_view()}
        </div>
    }
}

/// The bar. Its figures repeat the headline's, which carry `data-metric`;
/// these carry `data-sticky` so that the tests can find them.
#[component]
pub fn StickyFigures() -> impl IntoView {
    let state = expect_context::<AppState>();
    // The figures shown are the previous scenario's until the new ones
    // arrive (they may come ahead of the timeline: `figures_ahead`).
    let stale = move || state.busy.get() && !state.figures_ahead.get();
    view! {
        <div class="sticky-figures" data-sticky="bar" class:stale=stale>
            <Show when=move || state.busy.get()>
                // The page's own status (`SimStatus`) is the one announced.
                <p class="sf-busy" data-sticky="busy" aria-hidden="true">
                    <span class="spinner"></span>
                    {move || if state.figures_ahead.get() {
                        "Simulating the timeline…"
                    } else {
                        "Simulating… the previous scenario's figures"
                    }}
                </p>
            </Show>
            {move || {
                let report = state.report.get()?;
                let ghost = state.ghost.get();
                let longest = ghost
                    .as_ref()
                    .map_or(report.step_time_ms, |g| g.step_time_ms.max(report.step_time_ms));
                let was = ghost.as_ref().map(|g| {
                    let d = report.step_time_ms - g.step_time_ms;
                    let sign = if d > 0.0 { "+" } else if d < 0.0 { "−" } else { "±" };
                    format!("was {} ({sign}{})", format::ms(g.step_time_ms), format::ms(d.abs()))
                });
                Some(view! {
                    <div class="sf-line">
                        <span>"Step "</span>
                        <span class="sf-step" data-sticky="step" data-value=format::raw(report.step_time_ms)>
                            {format::ms(report.step_time_ms)}
                        </span>
                        {was.map(|w| view! { <span class="sf-was">{w}</span> })}
                        <span class="sf-was">{format!("{} vs no overlap", format::ratio(report.speedup))}</span>
                    </div>
                    <div class="sf-bars" aria-hidden="true">
                        {ghost.as_ref().map(|g| view! { <span class="sf-name">"before"</span>{step_bar(g, longest)} })}
                        <span class="sf-name">"now"</span>
                        {step_bar(&report, longest)}
                    </div>
                })
            }}
        </div>
    }
}
