//! The run's status above the timeline: "Simulating…" with a Stop button
//! while a run is in flight (the timeline after it is dimmed meanwhile,
//! style.css), and the alert that says why the last run did not show.

use leptos::prelude::*;

use crate::client::runner::RunnerHandle;
use crate::state::AppState;

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

/// How long a run may be pending before the figures it will replace are
/// marked stale: the 300 ms of issue 46 (a toggle on a small preset answers
/// well within it, so they do not flicker).
const PENDING_STALE_MS: u32 = 300;

/// Whether the figures and timeline shown are not the current controls'
/// (refused, or a run pending for longer than [`PENDING_STALE_MS`]), and
/// why, next to the figures: the page dims them (`body[data-stale]`,
/// style.css) and links to the control that was refused.
#[component]
pub fn StaleNote() -> impl IntoView {
    let state = expect_context::<AppState>();
    let pending_long = RwSignal::new(false);
    let epoch = StoredValue::new(0u64);
    Effect::new(move |_| {
        let busy = state.busy.get();
        let seq = epoch.get_value() + 1;
        epoch.set_value(seq);
        if !busy {
            pending_long.set(false);
            return;
        }
        gloo_timers::callback::Timeout::new(PENDING_STALE_MS, move || {
            if epoch.try_get_value() == Some(seq) && state.busy.get_untracked() {
                pending_long.set(true);
            }
        })
        .forget();
    });
    // The reader's clock starts at the edit, not when the run is posted: a
    // large scenario's resolve on the main thread can take part of the
    // 300 ms before the page is busy (Qwen3-235B chosen from the preset
    // picker), and the figures shown are stale from the edit on. Only the
    // newest edit's timer counts.
    let edits = StoredValue::new(0u64);
    Effect::new(move |_| {
        state.input.track();
        let seq = edits.get_value() + 1;
        edits.set_value(seq);
        gloo_timers::callback::Timeout::new(PENDING_STALE_MS, move || {
            if edits.try_get_value() == Some(seq) && state.busy.get_untracked() {
                pending_long.set(true);
            }
        })
        .forget();
    });
    // The refused field to point at: one the user just changed, else the
    // first refusal that has a control.
    let refused = Memo::new(move |_| {
        let culprits = state.culprits.get();
        state.errors.with(|errors| {
            let with_control = |f: &str| crate::state::fields::has_control(f);
            let first = errors.first()?;
            let field = culprits
                .iter()
                .find(|c| with_control(c))
                .cloned()
                .or_else(|| {
                    errors
                        .iter()
                        .map(|e| e.field.clone())
                        .find(|f| with_control(f))
                });
            let message = field
                .as_ref()
                .and_then(|f| errors.iter().find(|e| e.field == *f))
                .unwrap_or(first);
            Some((field, format!("{}: {}", message.field, message.message)))
        })
    });
    // Pending only dims figures that exist: before the first run's figures
    // there is no previous scenario to warn about (a page or embed still
    // loading its worker would otherwise show the note, and an embed would
    // post a second height for it).
    let stale = Memo::new(move |_| {
        refused.with(Option::is_some)
            || (pending_long.get()
                && !state.figures_ahead.get()
                && state.report.with(Option::is_some))
    });
    Effect::new(move |_| {
        let why = if refused.with(Option::is_some) {
            "refused"
        } else if stale.get() {
            "pending"
        } else {
            ""
        };
        crate::dom::set_body_data("stale", why);
    });
    view! {
        <div class="stale-note" role="status" hidden=move || !stale.get()>
            {move || match refused.get() {
                Some((field, message)) => view! {
                    <p>
                        <strong>"Not these controls: "</strong>
                        "the figures and timeline below are the last valid scenario's. "
                        <span class="stale-why">{message}</span>
                        " "
                        {field.map(|f| {
                            let label = overlap_core::input::fields::find(&f).map_or(f.clone(), |r| r.label.to_string());
                            let href = format!("#{}", crate::state::fields::control_id(&f));
                            view! { <a class="stale-fix" href=href on:click=move |ev| go_to_control(ev, &f)>{format!("Change {label}")}</a> }
                        })}
                    </p>
                }.into_any(),
                None => view! {
                    <p>"Still simulating: the figures and timeline below are the previous scenario's."</p>
                }.into_any(),
            }}
        </div>
    }
}

/// Focuses the refused control (in the side panel, which may scroll on its own).
fn go_to_control(ev: leptos::ev::MouseEvent, field: &str) {
    let id = crate::state::fields::control_id(field);
    let Some(el) = crate::dom::document().and_then(|d| d.get_element_by_id(&id)) else {
        return;
    };
    ev.prevent_default();
    el.scroll_into_view_with_bool(false);
    if let Some(el) = wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlElement>(&el) {
        let _ = el.focus();
    }
}
