//! Form widgets bound to the scenario: a slider paired with a number field, a
//! select, a switch, and the inline error list that sits under each of them.
//! Every widget has an accessible name from a `<label>`.

use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::state::fields::NumField;
use crate::state::AppState;
use overlap_core::input::fields::{DefaultFrom, Field};

/// True while the guided tour's chapter is about this field.
fn tour_focus(state: AppState, field: &'static str) -> bool {
    state
        .tour_chapter
        .get()
        .is_some_and(|c| crate::ui::tour::focus_fields(c).contains(&field))
}

/// The core's messages for one field, shown under its control.
#[component]
pub fn FieldErrors(
    /// Dotted field name as the core reports it.
    field: &'static str,
    /// Element id, referenced by the control's `aria-describedby`.
    id: String,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let messages = Memo::new(move |_| {
        state.errors.with(|errs| {
            errs.iter()
                .filter(|e| e.field == field)
                .map(|e| e.message.clone())
                .collect::<Vec<_>>()
        })
    });
    view! {
        <div class="field-error" id=id aria-live="polite">
            {move || messages.get().into_iter().map(|m| view! { <p>{m}</p> }).collect_view()}
        </div>
    }
}

/// A slider and a number field for one numeric scenario field. The number
/// field keeps whatever the user typed; the core judges the value and its
/// message appears right below.
#[component]
pub fn NumberPair(
    /// The scenario field this control edits.
    field: &'static NumField,
) -> impl IntoView {
    let state = expect_context::<AppState>();
    let id = field.id();
    let err_id = format!("{id}-err");
    let local_error = RwSignal::new(None::<String>);
    let value = Memo::new(move |_| {
        state
            .input
            .with(|i| state.resolved.with(|r| field.shown(i, r.as_ref())))
    });
    let invalid = Memo::new(move |_| {
        local_error.with(Option::is_some)
            || state
                .errors
                .with(|e| e.iter().any(|e| e.field == field.field))
    });
    let inert = inert_reason(state, Some(field.row));
    let number_ref = NodeRef::<html::Input>::new();
    // Write the value into the number field only when the user is not typing
    // in it, so that a half-typed number is never replaced.
    Effect::new(move |_| {
        let v = value.get();
        if let Some(el) = number_ref.get() {
            // Inside a widget the document only knows the widget's element.
            let focused = crate::web::host::active_element_near(el.as_ref()).is_some_and(|a| {
                let el: &web_sys::Element = el.as_ref();
                a == *el
            });
            if !focused {
                el.set_value(&v.map(|v| format!("{v}")).unwrap_or_default());
            }
        }
    });
    // A field whose absence has a meaning of its own (`sm_tax`) may be
    // emptied: the box then says "none" and the slider rests, dimmed, at
    // its low end, rather than at the middle a range input takes unset.
    let optional = matches!(field.row.default, DefaultFrom::Absent);
    let commit = move |raw: String, as_number: f64| {
        if optional && raw.trim().is_empty() {
            local_error.set(None);
            if value.get_untracked().is_some() {
                state.clear_field(field);
            }
            return;
        }
        let unreadable = raw.trim().is_empty() || !as_number.is_finite();
        let message =
            if field.integer && as_number.fract() == 0.0 && as_number > f64::from(u32::MAX) {
                // A whole number past u32 would reach the scenario clamped, and
                // its message would quote the clamped value, not the one typed.
                Some(field.row.out_of_range(raw.trim()))
            } else if unreadable || (field.integer && (as_number.fract() != 0.0 || as_number < 0.0))
            {
                // The core's words, with the field's valid range.
                Some(
                    field
                        .row
                        .parse_text(raw.trim())
                        .err()
                        .unwrap_or_else(|| format!("\"{raw}\" is not valid here")),
                )
            } else {
                None
            };
        if let Some(message) = message {
            // Clipped: a pasted megabyte must not come back in the message.
            local_error.set(Some(overlap_core::scenario::clip_echoes(&message)));
            return;
        }
        local_error.set(None);
        if value.get_untracked() != Some(as_number) {
            state.set_number(field, as_number);
        }
    };
    let (lo, hi, step) = field.slider;
    let slider_max = move || value.get().map(|v| v.max(hi)).unwrap_or(hi);
    let slider_label = format!("{} (slider)", field.label);
    let number_id = id.clone();
    let described = described_by(&id);
    let note = inert_note(inert, &id);
    view! {
        <div
            class="field num"
            class:invalid=move || invalid.get()
            class:inert=move || inert.with(Option::is_some)
            class:tour-focus=move || tour_focus(state, field.field)
        >
            <label for=number_id.clone()>{field.label}</label>
            <div class="pair">
                <input
                    type="range"
                    min=lo
                    max=slider_max
                    step=step
                    aria-label=slider_label
                    class:unset=move || value.with(Option::is_none)
                    prop:value=move || value.get().unwrap_or(lo).to_string()
                    on:input=move |ev| {
                        let el: web_sys::HtmlInputElement = event_target(&ev);
                        commit(el.value(), el.value_as_number());
                    }
                />
                <input
                    node_ref=number_ref
                    id=number_id
                    type="number"
                    inputmode="decimal"
                    step="any"
                    placeholder=optional.then_some("none")
                    aria-describedby=described
                    aria-invalid=move || invalid.get().to_string()
                    on:input=move |ev| {
                        let el: web_sys::HtmlInputElement = event_target(&ev);
                        commit(el.value(), el.value_as_number());
                    }
                />
                <span class="unit">{field.unit}</span>
            </div>
            <div class="field-error" aria-live="polite">
                {move || local_error.get().map(|m| view! { <p>{m}</p> })}
            </div>
            <FieldErrors field=field.field id=err_id />
            {note}
        </div>
    }
}

fn event_target<T: JsCast>(ev: &web_sys::Event) -> T {
    ev.target()
        .and_then(|t| t.dyn_into::<T>().ok())
        .expect("input events come from the input they are bound to")
}

/// Whether the last edit left an error on `field`: its control is marked.
fn field_invalid(field: &'static str) -> Memo<bool> {
    Memo::new(move |_| {
        expect_context::<AppState>()
            .errors
            .with(|e| e.iter().any(|e| e.field == field))
    })
}

/// A labelled select for an enum field.
#[component]
pub fn SelectField(
    /// Visible label and accessible name.
    label: &'static str,
    /// Dotted field name (error placement).
    field: &'static str,
    /// (value, text) pairs.
    options: Vec<(String, String)>,
    /// The value currently in effect.
    #[prop(into)]
    current: Signal<String>,
    /// Called with the chosen value.
    on_change: Callback<String>,
) -> impl IntoView {
    let (id, err_id, described) = control_ids(field);
    let invalid = field_invalid(field);
    let inert = inert_reason(
        expect_context::<AppState>(),
        overlap_core::input::fields::find(field),
    );
    let note = inert_note(inert, &id);
    view! {
        <div
            class="field sel"
            class:invalid=move || invalid.get()
            class:inert=move || inert.with(Option::is_some)
        >
            <label for=id.clone()>{label}</label>
            <select
                id=id
                aria-describedby=described
                on:change=move |ev| on_change.run(event_target_value(&ev))
                prop:value=move || current.get()
            >
                {options
                    .into_iter()
                    .map(|(v, t)| {
                        let selected = {
                            let v = v.clone();
                            move || current.get() == v
                        };
                        view! { <option value=v selected=selected>{t}</option> }
                    })
                    .collect_view()}
            </select>
            <FieldErrors field=field id=err_id />
            {note}
        </div>
    }
}

/// A labelled line of text for a field written as text (a pipeline
/// layout's entries joined by `|`); the value applies when the reader
/// leaves the box or presses Enter, and an empty box clears the field.
#[component]
pub fn TextField(
    /// Visible label and accessible name.
    label: &'static str,
    /// Dotted field name (error placement).
    field: &'static str,
    /// What an empty box means, shown in it.
    placeholder: &'static str,
    /// The value currently in effect, as text.
    #[prop(into)]
    current: Signal<String>,
    /// Called with the text given.
    on_change: Callback<String>,
) -> impl IntoView {
    let (id, err_id, described) = control_ids(field);
    let invalid = field_invalid(field);
    view! {
        <div class="field text" class:invalid=move || invalid.get()>
            <label for=id.clone()>{label}</label>
            <input
                type="text"
                id=id
                placeholder=placeholder
                aria-describedby=described
                aria-invalid=move || invalid.get().to_string()
                prop:value=move || current.get()
                on:change=move |ev| on_change.run(event_target_value(&ev))
            />
            <FieldErrors field=field id=err_id />
        </div>
    }
}

/// Why the field changes nothing in the scenario in effect, if it does
/// not (`Field::inert`): said beside its control, so that a control moved
/// to no effect is not a mystery.
fn inert_reason(state: AppState, field: Option<&'static Field>) -> Memo<Option<String>> {
    Memo::new(move |_| {
        let inert = field?.inert;
        state.resolved.with(|r| r.as_ref().and_then(inert))
    })
}

/// The reason of [`inert_reason`], as the control shows it, with the id
/// its control's `aria-describedby` names ([`described_by`]).
fn inert_note(inert: Memo<Option<String>>, control_id: &str) -> impl IntoView {
    let id = format!("{control_id}-why");
    move || {
        inert
            .get()
            .map(|why| view! { <p class="hint inert-why" id=id.clone()>{why}</p> })
    }
}

/// The ids of `field`'s control (`state::fields::control_id`), of its
/// errors ([`FieldErrors`]) and what describes it ([`described_by`]).
fn control_ids(field: &'static str) -> (String, String, String) {
    let id = crate::state::fields::control_id(field);
    let err_id = format!("{id}-err");
    let described = described_by(&id);
    (id, err_id, described)
}

/// What describes a control to assistive technology: its field's errors,
/// and the reason it changes nothing when it does not ([`inert_note`]).
fn described_by(control_id: &str) -> String {
    format!("{control_id}-err {control_id}-why")
}

/// A checkbox; with `switch`, announced as a switch (the overlap toggles).
#[component]
pub fn Toggle(
    /// Accessible name, exactly ("TP overlap").
    label: &'static str,
    /// Dotted field name (error placement).
    field: &'static str,
    /// Whether it is on.
    #[prop(into)]
    checked: Signal<bool>,
    /// Called with the new state.
    on_change: Callback<bool>,
    /// Render as `role="switch"`.
    #[prop(optional)]
    switch: bool,
    /// An axis class (`tp`, `pp`, `dp`) that colours the switch.
    #[prop(optional)]
    axis: &'static str,
) -> impl IntoView {
    let (id, err_id, described) = control_ids(field);
    let state = expect_context::<AppState>();
    let named = Memo::new(move |_| state.errors.with(|e| e.iter().any(|e| e.field == field)));
    // Flipping this switch is what made the scenario invalid, though the
    // core's message may name another field: say so here, next to the switch.
    let culprit = Memo::new(move |_| {
        if named.get() || !state.culprits.with(|c| c.iter().any(|c| c == field)) {
            return None;
        }
        state.errors.with(|e| {
            e.first().map(|e| {
                format!(
                    "Switching this made the scenario invalid ({}: {}). Switch it back, or change that field.",
                    e.field, e.message
                )
            })
        })
    });
    let invalid = move || named.get() || culprit.with(Option::is_some);
    let inert = inert_reason(state, overlap_core::input::fields::find(field));
    let note = inert_note(inert, &id);
    view! {
        <div
            class=format!("field toggle {axis}")
            class:invalid=invalid
            class:inert=move || inert.with(Option::is_some)
            class:tour-focus=move || tour_focus(state, field)
        >
            <input
                type="checkbox"
                id=id.clone()
                role=switch.then_some("switch")
                aria-describedby=described
                aria-invalid=move || invalid().to_string()
                prop:checked=move || checked.get()
                on:change=move |ev| on_change.run(event_target_checked(&ev))
            />
            <label for=id>{label}</label>
            <FieldErrors field=field id=err_id />
            {move || culprit.get().map(|m| view! { <div class="field-error culprit" aria-live="polite"><p>{m}</p></div> })}
            {note}
        </div>
    }
}
