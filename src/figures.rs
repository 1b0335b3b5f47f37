//! The figures: every number comes from the core's `Report`, unchanged. Each
//! element carries `data-metric` (the report's field name, as in
//! interface.md) and `data-value` (the raw number), so tests and course
//! authors can read them exactly. The previous run stays beside each figure as
//! a ghost (`data-run="previous"`), after the current one in document order.

use leptos::prelude::*;
use overlap_core::report::AxisReport;
use overlap_core::Report;

use crate::format;
use crate::state::AppState;

type Getter = fn(&Report) -> f64;
type Formatter = fn(f64) -> String;

/// One figure with its ghost.
#[component]
fn Figure(
    /// Report field name (`step_time_ms`, `axes.tp.exposed_ms`).
    metric: &'static str,
    label: &'static str,
    get: Getter,
    fmt: Formatter,
    /// A sentence for the tooltip and screen readers.
    #[prop(optional)]
    help: &'static str,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let value = Memo::new(move |_| state.report.with(|r| r.as_ref().map(get)));
    let ghost = Memo::new(move |_| state.ghost.with(|r| r.as_ref().map(get)));
    view! {
        <div class="fig" title=help>
            <span class="fig-label">{label}</span>
            <span
                class="fig-value"
                data-metric=metric
                data-run="current"
                data-value=move || value.get().map(format::raw)
            >
                {move || value.get().map(fmt).unwrap_or_else(|| "…".to_string())}
            </span>
            <span
                class="fig-ghost"
                data-metric=metric
                data-run="previous"
                data-value=move || ghost.get().map(format::raw)
                hidden=move || ghost.get().is_none()
            >
                {move || ghost.get().map(|g| format!("was {}", fmt(g)))}
            </span>
        </div>
    }
}

fn axis_of(r: &Report, axis: usize) -> &AxisReport {
    match axis {
        0 => &r.axes.tp,
        1 => &r.axes.pp,
        _ => &r.axes.dp,
    }
}

macro_rules! axis_getter {
    ($axis:literal, $field:ident) => {
        |r: &Report| axis_of(r, $axis).$field
    };
}

/// The per-axis figures and the chart of its window against its traffic.
#[component]
fn AxisCard(axis: usize) -> impl IntoView {
    let name = ["tp", "pp", "dp"][axis];
    let title = ["TP: tensor parallel", "PP: pipeline", "DP: data parallel"][axis];
    let m = |f: &str| -> &'static str {
        // Static names for data-metric, one per axis and field.
        match (axis, f) {
            (0, "comm_ms") => "axes.tp.comm_ms",
            (0, "exposed_ms") => "axes.tp.exposed_ms",
            (0, "hidden") => "axes.tp.hidden",
            (0, "window_ms") => "axes.tp.window_ms",
            (0, "contention_ms") => "axes.tp.contention_ms",
            (1, "comm_ms") => "axes.pp.comm_ms",
            (1, "exposed_ms") => "axes.pp.exposed_ms",
            (1, "hidden") => "axes.pp.hidden",
            (1, "window_ms") => "axes.pp.window_ms",
            (1, "contention_ms") => "axes.pp.contention_ms",
            (_, "comm_ms") => "axes.dp.comm_ms",
            (_, "exposed_ms") => "axes.dp.exposed_ms",
            (_, "hidden") => "axes.dp.hidden",
            (_, "window_ms") => "axes.dp.window_ms",
            _ => "axes.dp.contention_ms",
        }
    };
    let getters: [[Getter; 5]; 3] = [
        [
            axis_getter!(0, comm_ms),
            axis_getter!(0, exposed_ms),
            axis_getter!(0, hidden),
            axis_getter!(0, window_ms),
            axis_getter!(0, contention_ms),
        ],
        [
            axis_getter!(1, comm_ms),
            axis_getter!(1, exposed_ms),
            axis_getter!(1, hidden),
            axis_getter!(1, window_ms),
            axis_getter!(1, contention_ms),
        ],
        [
            axis_getter!(2, comm_ms),
            axis_getter!(2, exposed_ms),
            axis_getter!(2, hidden),
            axis_getter!(2, window_ms),
            axis_getter!(2, contention_ms),
        ],
    ];
    let g = getters[axis];
    view! {
        <article class=format!("axis-card {name}") aria-label=title>
            <h3>{title}</h3>
            <div class="axis-figs">
                <Figure metric=m("comm_ms") label="comm" get=g[0] fmt=format::ms help="Time its collectives were in flight" />
                <Figure metric=m("exposed_ms") label="exposed" get=g[1] fmt=format::ms help="Time compute stood idle waiting on them" />
                <Figure metric=m("hidden") label="hidden" get=g[2] fmt=format::pct help="1 − exposed / comm" />
                <Figure metric=m("window_ms") label="window" get=g[3] fmt=format::ms help="Compute available to hide it" />
                <Figure metric=m("contention_ms") label="contention" get=g[4] fmt=format::ms help="How much longer it took than alone on the same links" />
            </div>
            <WindowChart axis=axis window_metric=m("window_ms") comm_metric=m("comm_ms") exposed_metric=m("exposed_ms") />
        </article>
    }
}

/// Window against traffic, for one axis: the thesis in one picture. Bars are
/// scaled to the larger of the two (current and ghost), so only their ratio
/// reads; the numbers are in the figures beside it.
#[component]
fn WindowChart(
    axis: usize,
    window_metric: &'static str,
    comm_metric: &'static str,
    exposed_metric: &'static str,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let name = ["tp", "pp", "dp"][axis];
    let pick = move |r: &Report| {
        let a = axis_of(r, axis);
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
    let label = move || {
        now.get()
            .map(|(win, comm, exp)| {
                format!(
                    "{}: window {} against traffic {}, of which {} exposed",
                    name.to_uppercase(),
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
                <rect
                    class="bar window"
                    x="0" y="3" height="14"
                    width=move || now.get().map(|v| w(v.0)).unwrap_or_else(|| "0".to_string())
                    data-metric=window_metric
                    data-value=move || now.get().map(|v| format::raw(v.0))
                />
                <rect
                    class="bar comm"
                    x="0" y="25" height="14"
                    width=move || now.get().map(|v| w(v.1)).unwrap_or_else(|| "0".to_string())
                    data-metric=comm_metric
                    data-value=move || now.get().map(|v| format::raw(v.1))
                />
                // The exposed part drawn at the end of the traffic bar, hatched,
                // as on the timeline.
                <rect
                    class="bar exposed"
                    y="25" height="14"
                    fill=pattern_url
                    x=move || now.get().map(|v| w(v.1 - v.2)).unwrap_or_else(|| "0".to_string())
                    width=move || now.get().map(|v| w(v.2)).unwrap_or_else(|| "0".to_string())
                    data-metric=exposed_metric
                    data-value=move || now.get().map(|v| format::raw(v.2))
                />
                <rect
                    class="ghost-bar"
                    x="0" y="2" height="16"
                    data-run="previous"
                    width=move || before.get().map(|v| w(v.0)).unwrap_or_else(|| "0".to_string())
                />
                <rect
                    class="ghost-bar"
                    x="0" y="24" height="16"
                    data-run="previous"
                    width=move || before.get().map(|v| w(v.1)).unwrap_or_else(|| "0".to_string())
                />
            </g>
        </svg>
    }
}

/// The headline figures of the step.
#[component]
pub fn Headline() -> impl IntoView {
    view! {
        <section class="headline" aria-label="Step figures" aria-live="polite">
            <Figure metric="step_time_ms" label="Step time" get=|r| r.step_time_ms fmt=format::ms help="Simulated time of one step, on the slowest GPU" />
            <Figure metric="baseline_ms" label="All-off baseline" get=|r| r.baseline_ms fmt=format::ms help="The same scenario with all three overlaps off" />
            <Figure metric="speedup" label="Speedup" get=|r| r.speedup fmt=format::ratio help="baseline / step time" />
            <Figure metric="mfu" label="MFU" get=|r| r.mfu fmt=format::pct help="Model FLOPs utilisation against peak" />
            <Figure metric="bubble_fraction" label="Pipeline bubble" get=|r| r.bubble_fraction fmt=format::pct />
            <Figure metric="model_tflops_per_gpu" label="Model TFLOP/s per GPU" get=|r| r.model_tflops_per_gpu fmt=format::tflops />
            <Figure metric="hardware_tflops_per_gpu" label="Hardware TFLOP/s per GPU" get=|r| r.hardware_tflops_per_gpu fmt=format::tflops help="Recomputation counted, as Megatron-LM reports" />
            <Figure metric="compute_ms" label="Compute busy" get=|r| r.compute_ms fmt=format::ms />
        </section>
    }
}

/// Per-axis figures with their window charts, and the link figures.
#[component]
pub fn AxisFigures() -> impl IntoView {
    view! {
        <section class="axis-figures" aria-labelledby="axes-h">
            <h2 id="axes-h">"Per axis: is there room to hide it?"</h2>
            <div class="axes">
                <AxisCard axis=0 />
                <AxisCard axis=1 />
                <AxisCard axis=2 />
            </div>
            <div class="links-figs">
                <Figure metric="links.nvlink.busy" label="NVLink busy" get=|r| r.links.nvlink.busy fmt=format::pct />
                <Figure metric="links.nvlink.shared" label="NVLink shared by axes" get=|r| r.links.nvlink.shared fmt=format::pct help="Fraction of busy time two or more axes shared the link" />
                <Figure metric="links.network.busy" label="Network busy" get=|r| r.links.network.busy fmt=format::pct />
                <Figure metric="links.network.shared" label="Network shared by axes" get=|r| r.links.network.shared fmt=format::pct help="Fraction of busy time two or more axes shared the link" />
            </div>
        </section>
    }
}
