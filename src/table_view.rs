//! The timeline as a table, for screen readers and for anyone who wants the
//! numbers behind a bar. Built only while open, from the part of the step in
//! view, and capped so that a huge step cannot freeze the page.

use leptos::prelude::*;

use crate::format;
use crate::lod;
use crate::state::AppState;

const MAX_ROWS: usize = 400;
const AXES: [&str; 3] = ["TP", "PP", "DP"];

#[derive(Clone, PartialEq)]
struct Row {
    cells: [String; 10],
}

/// Rows for the visible window, GPU by GPU, lane by lane, in time order.
fn rows(state: AppState) -> (Vec<Row>, usize) {
    let scene = state.scene();
    let scene = scene.borrow();
    let Some(p) = scene.current.as_ref() else {
        return (Vec::new(), 0);
    };
    let (t0, t1) = scene.window(1.0);
    let mut out = Vec::new();
    let mut total = 0;
    for (gi, g) in p.timeline.gpus.iter().enumerate() {
        for slot in 0..4 {
            let lane = p.lane(gi, slot);
            let range = lod::visible_range(lane, t0, t1, p.max_dur[gi][slot]);
            for iv in &lane[range] {
                if iv.end_s < t0 {
                    continue;
                }
                total += 1;
                if out.len() >= MAX_ROWS {
                    continue;
                }
                let comm = slot > 0;
                out.push(Row {
                    cells: [
                        format!("{} (stage {})", g.rank, g.stage),
                        if comm {
                            AXES[slot - 1].to_string()
                        } else {
                            "compute".to_string()
                        },
                        iv.op.label().to_string(),
                        format!("{:?}", iv.phase).to_lowercase(),
                        format::secs(iv.start_s),
                        format::secs(iv.end_s - iv.start_s),
                        if comm {
                            format::bytes(iv.bytes)
                        } else {
                            String::new()
                        },
                        if comm {
                            format::gbps(iv.achieved_gbps)
                        } else {
                            String::new()
                        },
                        if comm {
                            format::secs(iv.contention_s)
                        } else {
                            String::new()
                        },
                        if comm {
                            format::secs(iv.exposed_s)
                        } else {
                            String::new()
                        },
                    ],
                });
            }
        }
    }
    (out, total)
}

#[component]
pub fn TableView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let open = RwSignal::new(false);
    let refresh = RwSignal::new(0u32);
    let data = Memo::new(move |_| {
        state.run_seq.track();
        refresh.track();
        if open.get() {
            rows(state)
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
                            <th scope="col">"GPU"</th>
                            <th scope="col">"lane"</th>
                            <th scope="col">"op"</th>
                            <th scope="col">"phase"</th>
                            <th scope="col">"start"</th>
                            <th scope="col">"duration"</th>
                            <th scope="col">"bytes"</th>
                            <th scope="col">"bandwidth"</th>
                            <th scope="col">"contention"</th>
                            <th scope="col">"exposed"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            data.get()
                                .0
                                .into_iter()
                                .map(|r| view! { <tr>{r.cells.into_iter().map(|c| view! { <td>{c}</td> }).collect_view()}</tr> })
                                .collect_view()
                        }}
                    </tbody>
                </table>
            </div>
        </details>
    }
}
