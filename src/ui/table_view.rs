//! The timeline as a table, for screen readers and for anyone who wants the
//! numbers behind a bar. Built only while open, from the part of the step in
//! view: it follows the zoom and pan by itself, filters by GPU, lane and
//! kind of operation, and shows a page of rows at a time, so a huge step
//! neither freezes the page nor is cut short.

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use overlap_core::timeline::{Lane, OpKind};

use overlap_view::table::{self, Filter, TablePage};

use crate::state::AppState;

/// Rows per page.
const PAGE_ROWS: usize = 200;

/// The visible window and the run it belongs to: when it changes, the
/// table is rebuilt.
type ViewKey = (u64, u64, u64);

fn view_key(state: AppState) -> ViewKey {
    let scene = state.scene();
    let s = scene.borrow();
    let (t0, t1) = s.window(1.0);
    (s.seq, t0.to_bits(), t1.to_bits())
}

/// A select's choice as an index into a list, "all" being `None`.
fn chosen(ev: &leptos::ev::Event) -> Option<usize> {
    event_target_value(ev).parse().ok()
}

/// The table of the operations in view.
#[component]
pub fn TableView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let open = RwSignal::new(false);
    let view = RwSignal::new(None::<ViewKey>);
    let filter = RwSignal::new(Filter::default());
    let page_no = RwSignal::new(0usize);
    // Zoom and pan live in the non-reactive scene: look again a little after
    // anything that may move them (as the address does), and after each run.
    let pending = StoredValue::new_local(None::<Timeout>);
    let look = move || {
        if !open.get_untracked() {
            return;
        }
        let t = Timeout::new(120, move || {
            let key = view_key(state);
            if view.get_untracked() != Some(key) {
                view.set(Some(key));
                page_no.set(0);
            }
        });
        pending.set_value(Some(t));
    };
    Effect::new(move |_| {
        // Its rows are the timeline's, which may come after the figures.
        state.timeline_seq.track();
        open.track();
        look();
    });
    let listeners = [
        window_event_listener(leptos::ev::wheel, move |_| look()),
        window_event_listener(leptos::ev::pointerup, move |_| look()),
        window_event_listener(leptos::ev::keyup, move |_| look()),
        window_event_listener(leptos::ev::click, move |_| look()),
    ];
    on_cleanup(move || listeners.into_iter().for_each(|l| l.remove()));

    let data = Memo::new(move |_| {
        view.track();
        if open.get() {
            filter.with(|f| table::page(&state.scene().borrow(), f, page_no.get(), PAGE_ROWS))
        } else {
            TablePage::default()
        }
    });
    let on_toggle = move |ev: leptos::ev::Event| {
        let el: Option<web_sys::HtmlDetailsElement> = ev
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into(t).ok());
        open.set(el.map(|d| d.open()).unwrap_or(false));
    };
    let set_filter = move |f: &dyn Fn(&mut Filter)| {
        filter.update(|x| f(x));
        page_no.set(0);
    };
    // The kind list is the page's, for the GPU and lane chosen.
    let kinds = Memo::new(move |_| data.with(|d| d.kinds.clone()));
    let on_gpu = move |ev: leptos::ev::Event| set_filter(&|f| f.gpu = chosen(&ev));
    let on_lane = move |ev: leptos::ev::Event| {
        set_filter(&|f| {
            f.lane = chosen(&ev).and_then(|i| Lane::ALL.get(i).copied());
            f.kind = None;
        })
    };
    let on_kind = move |ev: leptos::ev::Event| {
        let kind: Option<OpKind> =
            chosen(&ev).and_then(|i| kinds.with_untracked(|k| k.get(i).copied()));
        set_filter(&|f| f.kind = kind);
    };
    let status = move || {
        let d = data.get();
        if d.total == 0 {
            "No operation in view matches.".to_string()
        } else {
            format!(
                "Rows {} to {} of {} operations in view (page {} of {}). The table follows the timeline's zoom.",
                d.first + 1,
                d.first + d.rows.len(),
                d.total,
                d.page + 1,
                d.pages
            )
        }
    };
    view! {
        <details class="table-view" on:toggle=on_toggle>
            <summary>"Timeline as a table"</summary>
            <div class="table-filters" role="group" aria-label="Filter the table">
                <label class="inline">
                    "GPU "
                    <select on:change=on_gpu data-filter="gpu">
                        <option value="all">"all"</option>
                        {move || crate::timeline::panel::gpu_options(state)}
                    </select>
                </label>
                <label class="inline">
                    "Lane "
                    <select on:change=on_lane data-filter="lane">
                        <option value="all">"all"</option>
                        {Lane::ALL
                            .iter()
                            .enumerate()
                            .map(|(i, l)| view! { <option value=i.to_string()>{l.label()}</option> })
                            .collect_view()}
                    </select>
                </label>
                <label class="inline">
                    "Kind "
                    <select
                        on:change=on_kind
                        data-filter="kind"
                        prop:value=move || {
                            let k = filter.with(|f| f.kind);
                            kinds
                                .with(|ks| k.and_then(|k| ks.iter().position(|x| *x == k)))
                                .map_or("all".to_string(), |i| i.to_string())
                        }
                    >
                        <option value="all">"all"</option>
                        {move || {
                            kinds
                                .get()
                                .into_iter()
                                .enumerate()
                                .map(|(i, k)| view! { <option value=i.to_string()>{k.label()}</option> })
                                .collect_view()
                        }}
                    </select>
                </label>
            </div>
            <div class="table-pages">
                <span class="note table-status" role="status">{status}</span>
                <button
                    type="button"
                    disabled=move || data.with(|d| d.page == 0)
                    on:click=move |_| page_no.set(data.with_untracked(|d| d.page.saturating_sub(1)))
                >
                    "Previous page"
                </button>
                <button
                    type="button"
                    disabled=move || data.with(|d| d.page + 1 >= d.pages)
                    on:click=move |_| page_no.set(data.with_untracked(|d| d.page + 1))
                >
                    "Next page"
                </button>
            </div>
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
                                .rows
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
