//! The timeline as a table, for screen readers and for anyone who wants the
//! numbers behind a bar. Built only while open, from the part of the step in
//! view, and capped so that a huge step cannot freeze the page.

use leptos::prelude::*;

use overlap_view::table;

use crate::state::AppState;

const MAX_ROWS: usize = 400;

/// The table of the operations in view, built when opened or refreshed.
#[component]
pub fn TableView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let open = RwSignal::new(false);
    let refresh = RwSignal::new(0u32);
    let data = Memo::new(move |_| {
        state.run_seq.track();
        refresh.track();
        if open.get() {
            table::rows(&state.scene().borrow(), MAX_ROWS)
        } else {
            (Vec::new(), 0)
        }
    });
    let on_toggle = move |ev: leptos::ev::Event| {
        let el: Option<web_sys::HtmlDetailsElement> = ev
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into(t).ok());
        open.set(el.map(|d| d.open()).unwrap_or(false));
    };
    view! {
        <details class="table-view" on:toggle=on_toggle>
            <summary>"Timeline as a table"</summary>
            <p class="note">
                {move || {
                    let (r, total) = data.get();
                    if total > r.len() {
                        format!("Showing the first {} of {} operations in view; zoom the timeline to narrow it.", r.len(), total)
                    } else {
                        format!("{} operations in view.", total)
                    }
                }}
                " "
                <button type="button" on:click=move |_| refresh.update(|n| *n += 1)>"Refresh for the current zoom"</button>
            </p>
            <div class="table-scroll">
                <table>
                    <caption class="sr-only">"Operations of the step, per simulated GPU"</caption>
                    <thead>
                        <tr>
                            {table::COLUMNS.map(|c| view! { <th scope="col">{c}</th> }).collect_view()}
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            data.get()
                                .0
                                .into_iter()
                                .map(|r| view! { <tr>{r.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr> })
                                .collect_view()
                        }}
                    </tbody>
                </table>
            </div>
        </details>
    }
}
