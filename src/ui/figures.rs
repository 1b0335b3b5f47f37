//! The figures: every number comes from the core's `Report`, unchanged. Each
//! element carries `data-metric` (the report's field name, as in
//! interface.md) and `data-value` (the raw number), so tests and course
//! authors can read them exactly. The previous run stays beside each figure as
//! a ghost (`data-run="previous"`), after the current one in document order.

use leptos::prelude::*;
use overlap_core::output::metric::{self, AxisFigure, Metric};
use overlap_core::{Axis, Report};

use crate::state::AppState;
use overlap_view::{axis_reading, format};

pub use overlap_view::tour::template::{shown, shown_of};

/// One figure with its ghost.
#[component]
fn Figure(
    /// Which figure of the report.
    metric: Metric,
    /// What it is called here (the metric's own label, or a shorter one
    /// inside an axis's card).
    #[prop(optional)]
    label: Option<&'static str>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let get = move |r: &Report| metric.get(r);
    let value = Memo::new(move |_| state.report.with(|r| r.as_ref().map(get)));
    let ghost = Memo::new(move |_| state.ghost.with(|r| r.as_ref().map(get)));
    let text = Memo::new(move |_| {
        state
            .report
            .with(|r| r.as_ref().map(|r| shown_of(metric, r)))
    });
    let ghost_text = Memo::new(move |_| {
        state
            .ghost
            .with(|r| r.as_ref().map(|r| shown_of(metric, r)))
    });
    let name = metric.name();
    view! {
        <div class="fig" title=metric.help()>
            <span class="fig-label">{label.map_or_else(|| metric.label(), str::to_string)}</span>
            <span
                class="fig-value"
                data-metric=name.clone()
                data-run="current"
                data-value=move || value.get().map(format::raw)
            >
                {move || text.get().unwrap_or_else(|| "…".to_string())}
            </span>
            <span
                class="fig-ghost"
                data-metric=name
                data-run="previous"
                data-value=move || ghost.get().map(format::raw)
                hidden=move || ghost.get().is_none()
            >
                {move || ghost_text.get().map(|g| format!("was {g}"))}
            </span>
        </div>
    }
}

/// The card's heading: what the axis parallelises.
fn title(axis: Axis) -> &'static str {
    overlap_view::axis_words::words(axis).title
}

/// The per-axis figures and the chart of its window against its traffic.
#[component]
fn AxisCard(axis: Axis) -> impl IntoView {
    view! {
        <article class=format!("axis-card {}", axis.name()) aria-label=title(axis)>
            <h3>{title(axis)}</h3>
            <div class="axis-figs">
                {AxisFigure::ALL
                    .map(|f| view! { <Figure metric=Metric::Axis(axis, f) label=f.label() /> })
                    .collect_view()}
            </div>
            <WindowChart axis=axis />
            <AxisDefinitions axis=axis />
        </article>
    }
}

/// An axis in words, visible without hover: why it is exposed as it is
/// (computed from the figures, `overlap_view::axis_reading`) and which axes
/// shared its links. The readings of every axis
/// sit together in [`AxisReadings`], so that a phone reaches all of them in
/// its first two screens (issue 58).
#[component]
fn AxisWords(
    /// The axis whose figures are read.
    axis: Axis,
) -> impl IntoView {
    view! {
        <div class=format!("axis-words axis-row {}", axis.name())>
            <h3>{title(axis)}</h3>
            {axis_note("axis-reading", axis, axis_reading::reading)}
            // Where its contention is non-zero: which axes shared which link.
            {axis_note("axis-contention", axis, axis_reading::contention_note)}
        </div>
    }
}

/// A paragraph of `class` on the axis, read from the report by `note`
/// (`overlap_view::axis_reading`), hidden while it reads nothing.
fn axis_note(
    class: &'static str,
    axis: Axis,
    note: fn(Axis, &Report) -> Option<String>,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let text = Memo::new(move |_| {
        state
            .report
            .with(|r| r.as_ref().and_then(|r| note(axis, r)))
    });
    view! {
        <p class=class data-axis=axis.name() hidden=move || text.with(Option::is_none)>
            {move || text.get()}
        </p>
    }
}

/// Where the axis weighs most (its parts on that GPU), then what window and
/// contention mean, folded under a summary that names the axis's window: the
/// card's words.
#[component]
fn AxisDefinitions(
    /// The axis whose window is named.
    axis: Axis,
) -> impl IntoView {
    view! {
        {axis_note("axis-heaviest", axis, axis_reading::heaviest_note)}
        <details class="axis-def">
            <summary>{format!("{}'s window: {}", axis.label(), axis_reading::window_of(axis))}</summary>
            <p>{axis_reading::WINDOW}</p>
            <p>{axis_reading::CONTENTION}</p>
            <p>"Hidden is the share of the traffic under compute. The rest is exposed (compute stood idle waiting on it) or under another's wait (compute stood idle for another axis or the bubble)."</p>
        </details>
    }
}

/// Every axis of the scenario in words, under the two definitions the page
/// exists for, visible as text: the same readings for every axis the cards
/// show.
#[component]
pub fn AxisReadings() -> impl IntoView {
    view! {
        <section class="axis-readings" aria-labelledby="readings-h">
            <h2 id="readings-h">"Why each axis is exposed"</h2>
            <p class="def-window">{axis_reading::WINDOW}</p>
            <p class="def-contention">{axis_reading::CONTENTION}</p>
            {each_shown_axis(|axis| view! { <AxisWords axis=axis /> })}
        </section>
    }
}

/// A view of each axis the scenario shows a card for
/// (`AppState::shows_axis_card`), made by `each`: the readings and the
/// cards list the same axes.
fn each_shown_axis<V: IntoView + 'static>(each: fn(Axis) -> V) -> impl IntoView {
    let state = expect_context::<AppState>();
    Axis::ALL
        .map(|axis| view! { <Show when=move || state.shows_axis_card(axis)>{each(axis)}</Show> })
        .collect_view()
}

/// Per-axis figures with their window charts, and the link figures.
#[component]
pub fn AxisFigures() -> impl IntoView {
    view! {
        <section class="axis-figures" aria-labelledby="axes-h">
            <h2 id="axes-h">"Per axis: is there room to hide it?"</h2>
            <div class="axes">{each_shown_axis(|axis| view! { <AxisCard axis=axis /> })}</div>
            <div class="links-figs">
                {metric::LINKS.map(|m| view! { <Figure metric=m /> }).collect_view()}
            </div>
        </section>
    }
}

/// An axis's window, traffic and exposed time, ms, as its chart draws them.
type Parts = (f64, f64, f64);

/// Window against traffic, for one axis: the thesis in one picture. Bars are
/// scaled to the larger of the two (current and ghost), so only their ratio
/// reads; the numbers are in the figures beside it.
///
/// The window is drawn whether the axis's overlap is on or off: it is a
/// property of the axis and the schedule, the room there would be.
#[component]
fn WindowChart(
    /// The axis whose window and traffic are drawn.
    axis: Axis,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let name = axis.name();
    let [window_metric, comm_metric, exposed_metric] =
        [AxisFigure::Window, AxisFigure::Comm, AxisFigure::Exposed]
            .map(|f| Metric::Axis(axis, f).name());
    let pick = move |r: &Report| -> Parts {
        let a = r.axes.get(axis);
        (a.window_ms, a.comm_ms, a.exposed_ms)
    };
    let now = Memo::new(move |_| state.report.with(|r| r.as_ref().map(pick)));
    let before = Memo::new(move |_| state.ghost.with(|r| r.as_ref().map(pick)));
    let scale = Memo::new(move |_| {
        let mut m: f64 = 1e-12;
        for (w, c, _) in [now.get(), before.get()].into_iter().flatten() {
            m = m.max(w).max(c);
        }
        180.0 / m
    });
    let w = move |v: f64| format!("{:.2}", (v * scale.get()).max(0.0));
    // A bar's width: `part` of a run's (window, traffic, exposed), scaled;
    // nothing drawn before the run is there.
    let width = move |run: Memo<Option<Parts>>, part: fn(Parts) -> f64| {
        move || {
            run.get()
                .map(|v| w(part(v)))
                .unwrap_or_else(|| "0".to_string())
        }
    };
    // The current run's bar of `part`, with its figure, at height `y`.
    let bar = move |class: &'static str, y: &'static str, part: fn(Parts) -> f64, metric| {
        view! {
            <rect class=class x="0" y=y height="14" width=width(now, part)
                data-metric=metric data-value=move || now.get().map(|v| format::raw(part(v))) />
        }
    };
    // The previous run's bar of `part`, its ghost, at height `y`.
    let ghost = move |y: &'static str, part: fn(Parts) -> f64| {
        view! { <rect class="ghost-bar" x="0" y=y height="16" data-run="previous" width=width(before, part) /> }
    };
    let label = move || {
        now.get()
            .map(|(win, comm, exp)| {
                format!(
                    "{}: window {} against traffic {}, of which {} exposed",
                    axis.label(),
                    format::ms(win),
                    format::ms(comm),
                    format::ms(exp)
                )
            })
            .unwrap_or_default()
    };
    let pattern = format!("hatch-{name}");
    let pattern_url = format!("url(#{pattern})");
    view! {
        <svg class=format!("window-chart {name}") viewBox="0 0 236 46" role="img" aria-label=label>
            <defs>
                <pattern id=pattern width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
                    <rect width="4" height="4" class="hatch-bg" />
                    <line x1="0" y1="0" x2="0" y2="4" class="hatch-line" />
                </pattern>
            </defs>
            <text x="0" y="13" class="chart-label">"window"</text>
            <text x="0" y="35" class="chart-label">"traffic"</text>
            <g transform="translate(50,0)">
                {bar("bar window", "3", |v| v.0, window_metric)}
                {bar("bar comm", "25", |v| v.1, comm_metric)}
                // The exposed part drawn at the end of the traffic bar, hatched,
                // as on the timeline.
                <rect
                    class="bar exposed"
                    y="25" height="14"
                    fill=pattern_url
                    x=move || now.get().map(|v| w(v.1 - v.2)).unwrap_or_else(|| "0".to_string())
                    width=width(now, |v| v.2)
                    data-metric=exposed_metric
                    data-value=move || now.get().map(|v| format::raw(v.2))
                />
                {ghost("2", |v| v.0)}
                {ghost("24", |v| v.1)}
            </g>
        </svg>
    }
}

/// The headline figures of the step, and the step in one sentence
/// (`overlap_view::summary`): what overlap saves and what stays exposed.
#[component]
pub fn Headline() -> impl IntoView {
    let state = expect_context::<AppState>();
    let summary = Memo::new(move |_| {
        state
            .report
            .with(|r| r.as_ref().map(overlap_view::summary::sentence))
    });
    view! {
        <section class="headline" aria-label="Step figures" aria-live="polite">
            {metric::HEADLINE.map(|m| view! { <Figure metric=m /> }).collect_view()}
            <p class="step-summary" hidden=move || summary.get().is_none()>{move || summary.get()}</p>
            <Why />
        </section>
    }
}

/// Why the step moved from the run before, in one sentence
/// (`overlap_view::why`): on the page, in the table view and in embeds.
#[component]
pub fn Why() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <p class="step-why" data-why=move || state.why.get() hidden=move || state.why.with(Option::is_none)>
            {move || state.why.get()}
        </p>
    }
}
