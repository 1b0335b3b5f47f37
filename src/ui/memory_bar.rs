//! The fullest GPU's memory: the report's `memory_gb` as one stacked bar
//! (weights, gradients, optimizer states, activations) against the GPU's
//! capacity, each part's figure beside its swatch, and the warning
//! `overlap_view::memory_advice` writes when the parts do not fit. The page
//! computes nothing: segments and sentence come from the view crate, the
//! numbers from the core's report.

use leptos::prelude::*;
use overlap_core::output::metric::{MemoryFigure, Metric};
use overlap_core::report::MemoryGb;
use overlap_view::format;
use overlap_view::memory_advice::{self, PARTS};

use crate::state::AppState;

/// The CSS class of a part (its colour in both themes, style.css): the
/// report's field name.
fn class_of(part: MemoryFigure) -> &'static str {
    part.field()
}

fn pct(v: f64) -> String {
    format!("{:.3}%", (v * 100.0).clamp(0.0, 100.0))
}

/// One figure of the memory report with its swatch, readable by tests
/// (`data-metric`, `data-value`) like every other figure.
#[component]
fn Part(
    /// Which part (or the total or the capacity).
    part: MemoryFigure,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let value = Memo::new(move |_| {
        state.report.with(|r| {
            r.as_ref()
                .map(|r| memory_advice::part_gb(&r.memory_gb, part))
        })
    });
    let swatch = PARTS.contains(&part);
    view! {
        <li class=format!("mem-part {}", class_of(part))>
            {swatch.then(|| view! { <span class="mem-swatch" aria-hidden="true"></span> })}
            <span class="mem-name">{memory_advice::part_name(part)}</span>
            <span
                class="mem-value"
                data-metric=Metric::Memory(part).name()
                data-run="current"
                data-value=move || value.get().map(format::raw)
            >
                {move || value.get().map(format::gb).unwrap_or_else(|| "…".to_string())}
            </span>
        </li>
    }
}

/// The stacked bar, its legend with the figures, and the warning when the
/// configuration does not fit.
#[component]
pub fn MemoryBar() -> impl IntoView {
    let state = expect_context::<AppState>();
    let memory = Memo::new(move |_| {
        state
            .report
            .with(|r| r.as_ref().map(|r| r.memory_gb.clone()))
    });
    let label = move || {
        memory
            .get()
            .map(|m: MemoryGb| {
                format!(
                    "Memory of the fullest GPU: {} of {} ({}): weights {}, gradients {}, optimizer states {}, activations {}",
                    format::gb(m.total),
                    format::gb(m.capacity),
                    if m.fits { "fits" } else { "does not fit" },
                    format::gb(m.weights),
                    format::gb(m.gradients),
                    format::gb(m.optimizer),
                    format::gb(m.activations),
                )
            })
            .unwrap_or_default()
    };
    let warning = Memo::new(move |_| {
        let m = memory.get()?;
        state
            .resolved
            .with(|s| s.as_ref().and_then(|s| memory_advice::advice(&m, s)))
    });
    let bar = move || {
        memory.get().map(|m| {
            let (segments, capacity) = memory_advice::segments(&m);
            view! {
                {segments
                    .map(|s| {
                        view! {
                            <span
                                class=format!("mem-seg {}", class_of(s.part))
                                style=format!("left:{};width:{}", pct(s.start), pct(s.width))
                            ></span>
                        }
                    })
                    .collect_view()}
                <span class="mem-capacity" style=format!("left:{}", pct(capacity))></span>
            }
        })
    };
    view! {
        <section class="memory" aria-labelledby="memory-h" data-fits=move || memory.get().map(|m| m.fits.to_string())>
            <h2 id="memory-h">"Memory per GPU: does it fit?"</h2>
            <div class="mem-bar" role="img" aria-label=label>{bar}</div>
            <ul class="mem-legend">
                {PARTS.map(|p| view! { <Part part=p /> }).collect_view()}
                <Part part=MemoryFigure::Total />
                <Part part=MemoryFigure::Capacity />
            </ul>
            {move || warning.get().map(|w| view! { <p class="memory-warning" role="status">{w}</p> })}
        </section>
    }
}

/// The same warning at the top of the page when the scenario does not fit
/// (issue 58: a published layout that cannot run said so only near the
/// bottom, under a step time with no sign of it), with the change the
/// memory advice proposes; the bar below has the parts.
#[component]
pub fn MemoryNotice() -> impl IntoView {
    let state = expect_context::<AppState>();
    let advice = Memo::new(move |_| {
        let m = state
            .report
            .with(|r| r.as_ref().map(|r| r.memory_gb.clone()))?;
        state
            .resolved
            .with(|s| s.as_ref().and_then(|s| memory_advice::advice(&m, s)))
    });
    view! {
        <Show when=move || advice.with(Option::is_some)>
            <div class="memory-notice" role="status" data-memory-notice="">
                <p>
                    <strong>"This scenario cannot run as set. "</strong>
                    {move || advice.get()}
                    " Its step time is what it would take if it did fit; the memory bar below shows each part."
                </p>
            </div>
        </Show>
    }
}
