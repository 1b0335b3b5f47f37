//! The share panel: "Copy link", "Copy embed code" and the export buttons,
//! and the alert for a link that could not be used entirely.

use leptos::prelude::*;
use overlap_core::presets;
use overlap_view::view_query::attr_escape;
use wasm_bindgen::prelude::*;

use crate::state::AppState;
use crate::web::address::{link, write_now, Share};
use crate::web::dom;

/// The iframe snippet for course material.
pub fn embed_code(state: AppState, share: Share) -> String {
    let src = link(state, share, true);
    format!(
        "<iframe src=\"{}\" title=\"Overlap Lab: interactive timeline\" width=\"100%\" height=\"640\" \
         style=\"border:0;max-width:100%\" loading=\"lazy\"></iframe>",
        attr_escape(&src)
    )
}

/// Puts `text` on the clipboard; when the browser refuses, `fallback` gets
/// the text so that a visible field can offer it for copying by hand.
pub fn copy_text(text: String, done: RwSignal<Option<String>>, fallback: RwSignal<Option<String>>) {
    let Some(w) = dom::window() else { return };
    let promise = w.navigator().clipboard().write_text(&text);
    let ok_text = text.clone();
    let ok = Closure::once(move |_: JsValue| {
        done.set(Some(ok_text));
        fallback.set(None);
    });
    let err = Closure::once(move |_: JsValue| {
        done.set(None);
        fallback.set(Some(text));
    });
    let _ = promise.then2(&ok, &err);
    // One of the two runs once; both live until then.
    ok.forget();
    err.forget();
}

/// The message for a link that could not be used entirely.
#[component]
pub fn LinkErrors() -> impl IntoView {
    let share = expect_context::<Share>();
    let state = expect_context::<AppState>();
    let any = Memo::new(move |_| share.link_errors.with(|e| !e.is_empty()));
    let title = move || {
        let id = state.preset_id.get();
        let name = presets::find(&id).map(|p| p.title).unwrap_or("default");
        format!(
            "Part of this link could not be used. The page shows the \"{name}\" scenario with the parts \
             listed below left at their preset values;"
        )
    };
    let kept = if share.is_widget() {
        "the widget's scenario keeps the text as it was"
    } else {
        "the address bar keeps the link as it was"
    };
    let title = move || format!("{} {kept}.", title());
    view! {
        <Show when=move || any.get()>
            <div class="link-errors" role="alert">
                <p>{title}</p>
                <ul>
                    {move || {
                        share
                            .link_errors
                            .get()
                            .into_iter()
                            .map(|e| {
                                let key = e.field.clone();
                                view! { <li data-field=key><code>{e.field}</code>": "{e.message}</li> }
                            })
                            .collect_view()
                    }}
                </ul>
                <button type="button" on:click=move |_| share.link_errors.set(Vec::new())>"Dismiss"</button>
            </div>
        </Show>
    }
}

/// "Copy link" and "Copy embed code", with a visible field when the
/// clipboard is refused.
#[component]
pub fn ShareButtons() -> impl IntoView {
    let state = expect_context::<AppState>();
    let share = expect_context::<Share>();
    let done = RwSignal::new(None::<String>);
    let fallback = RwSignal::new(None::<String>);
    let what = RwSignal::new("");
    let copy_link = move |_| {
        write_now(state, share);
        what.set("Link");
        copy_text(link(state, share, false), done, fallback);
    };
    let copy_embed = move |_| {
        write_now(state, share);
        what.set("Embed code");
        copy_text(embed_code(state, share), done, fallback);
    };
    view! {
        <div class="share-buttons" role="group" aria-label="Share">
            <button type="button" on:click=copy_link>"Copy link"</button>
            <button type="button" on:click=copy_embed>"Copy embed code"</button>
            <span class="copied" role="status">
                {move || done.get().map(|_| format!("{} copied to the clipboard.", what.get()))}
            </span>
            {move || {
                fallback
                    .get()
                    .map(|text| {
                        view! {
                            <label class="copy-fallback">
                                {format!("The clipboard is not available here: copy the {} from this field.", what.get().to_lowercase())}
                                <textarea readonly=true rows="3" class="copy-field" prop:value=text></textarea>
                            </label>
                        }
                    })
            }}
        </div>
    }
}

/// Share and export, in one panel of the full page.
#[component]
pub fn SharePanel() -> impl IntoView {
    view! {
        <section class="share-export" aria-labelledby="share-h">
            <h2 id="share-h">"Share and export"</h2>
            <ShareButtons />
            <crate::ui::export::ExportButtons />
        </section>
    }
}
