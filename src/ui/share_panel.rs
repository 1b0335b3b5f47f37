//! The share panel: "Copy link", "Copy embed code" and the export buttons,
//! and the alert for a link that could not be used entirely.

use leptos::prelude::*;
use overlap_core::presets;
use overlap_view::palette::Theme;
use overlap_view::view_query::attr_escape;
use wasm_bindgen::prelude::*;

use crate::dom;
use crate::state::AppState;
use crate::web::address::{embed_link, link, write_now, Share};
use overlap_view::view_query::{CONTROL_NAMES, DEFAULT_CONTROLS};

/// The frame's height before the embedded page has said how tall it is, and
/// wherever the host page runs no scripts: the timeline as laid out now plus
/// the compact page's other parts (controls, figures, legend, playback) as
/// they wrap in a 640 px column, so that nothing, the legend included, is
/// cut off. Rounded up to 20 px.
fn fallback_height_px(timeline_px: f64) -> u32 {
    /// The compact page around the canvas in a 640 px frame, px: about 365
    /// with the default controls (720 px for a 356 px timeline), plus room
    /// for a line of further controls and a wrapped line of figures and
    /// legend.
    const AROUND_CANVAS_PX: f64 = 520.0;
    let px = (timeline_px.max(200.0) + AROUND_CANVAS_PX) / 20.0;
    (px.ceil() * 20.0) as u32
}

/// The embed code for course material: the frame, and a small script that
/// sets the frame's height to the one the embedded page posts
/// (`overlap-lab:height`, see `embed.rs`), so that the frame always fits
/// its content. The script finds its frame by the message's source window,
/// so several embeds on one page each get their own height; it reads only a
/// positive number from a message of that type.
pub fn embed_code(
    state: AppState,
    share: Share,
    controls: &[&'static str],
    figures_axes: bool,
) -> String {
    let src = embed_link(state, share, controls, figures_axes);
    let timeline_px = state.scene().borrow().layout.height;
    format!(
        "<iframe src=\"{}\" title=\"Overlap Lab: interactive timeline\" width=\"100%\" height=\"{}\" \
         style=\"border:0;max-width:100%\" loading=\"lazy\"></iframe>\n\
         <script>addEventListener(\"message\",function(e){{var d=e.data,h=d&&d.type===\"overlap-lab:height\"&&Number(d.height);\
         if(!(h>0))return;document.querySelectorAll(\"iframe\").forEach(function(f){{\
         if(f.contentWindow===e.source)f.style.height=Math.ceil(h)+\"px\";}});}});</script>",
        attr_escape(&src),
        fallback_height_px(timeline_px)
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
        if share.link_refused_at_run.get() {
            format!(
                "The simulator refused this link's scenario when it ran, for the reason below. The page \
                 shows the \"{name}\" scenario instead;"
            )
        } else {
            format!(
                "Part of this link could not be used. The page shows the \"{name}\" scenario with the parts \
                 listed below left at their preset values;"
            )
        }
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
                <button type="button" on:click=move |_| {
                    share.link_errors.set(Vec::new());
                    share.link_refused_at_run.set(false);
                }>"Dismiss"</button>
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
    // The embed's controls: the page's own when it is an embed with a
    // `controls=` list, else the default; the author picks below.
    let chosen = RwSignal::new(share.mode.with_value(|m| {
        if m.controls_given {
            m.controls.clone()
        } else {
            DEFAULT_CONTROLS.to_vec()
        }
    }));
    // The per-axis cards in the embed (`figures=axes`).
    let axis_cards = RwSignal::new(share.mode.with_value(|m| m.figures_axes));
    let copy_embed = move |_| {
        write_now(state, share);
        what.set("Embed code");
        copy_text(
            embed_code(
                state,
                share,
                &chosen.get_untracked(),
                axis_cards.get_untracked(),
            ),
            done,
            fallback,
        );
    };
    let toggle = move |name: &'static str, on: bool| {
        chosen.update(|c| {
            c.retain(|x| *x != name);
            if on {
                c.push(name);
            }
            // In the order of CONTROL_NAMES, as the embed lays them out.
            c.sort_by_key(|x| CONTROL_NAMES.iter().position(|n| n == x));
        });
    };
    view! {
        <div class="share-buttons" role="group" aria-label="Share">
            <button type="button" on:click=copy_link>"Copy link"</button>
            <button type="button" on:click=copy_embed>"Copy embed code"</button>
            <fieldset class="embed-pick">
                <legend>"Controls in the embed (" <code>"controls="</code> ")"</legend>
                {CONTROL_NAMES.iter().map(|&name| view! {
                    <label class="inline">
                        // Its own name, not the scenario switch's ("TP
                        // overlap"), so a screen reader tells the two apart.
                        <input
                            type="checkbox"
                            data-control=name
                            aria-label=embed_pick_name(name)
                            prop:checked=move || chosen.with(|c| c.contains(&name))
                            on:change=move |ev| toggle(name, event_target_checked(&ev))
                        />
                        {control_label(name)}
                    </label>
                }).collect_view()}
            </fieldset>
            <fieldset class="embed-pick embed-figures">
                <legend>"Figures in the embed (" <code>"figures="</code> ")"</legend>
                <label class="inline">
                    <input
                        type="checkbox"
                        data-figures="axes"
                        aria-label="Include the per-axis cards in the embed"
                        prop:checked=move || axis_cards.get()
                        on:change=move |ev| axis_cards.set(event_target_checked(&ev))
                    />
                    "Per-axis cards: window, exposed, contention"
                </label>
            </fieldset>
            <span class="copied" role="status">
                {move || done.get().map(|_| format!("{} copied to the clipboard.", what.get()))}
            </span>
            // The embed code just copied, to read before pasting it into a
            // course page (issue 58): what the clipboard holds, verbatim.
            {move || {
                (what.get() == "Embed code")
                    .then(|| done.get())
                    .flatten()
                    .map(|text| {
                        view! {
                            <label class="copied-code">
                                "The embed code copied, to read before pasting:"
                                <textarea readonly=true rows="4" class="copy-field embed-code-shown" prop:value=text></textarea>
                            </label>
                        }
                    })
            }}
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

/// The accessible name of an embed control's checkbox: "Include TP overlap
/// in the embed", "Include bucket size in the embed".
fn embed_pick_name(name: &str) -> String {
    let label = control_label(name);
    // A label that starts with an acronym ("TP overlap") keeps its capitals.
    let acronym = label.chars().nth(1).is_some_and(char::is_uppercase);
    let label = if acronym {
        label.to_string()
    } else {
        label.to_lowercase()
    };
    format!("Include {label} in the embed")
}

/// What an embed control is called in the share panel.
fn control_label(name: &str) -> &'static str {
    match name {
        "tp" => "TP overlap",
        "pp" => "PP overlap",
        "dp" => "DP overlap",
        "ep" => "EP overlap",
        "cp" => "CP overlap",
        "tp_chunks" => "TP chunks",
        "bucket_mb" => "Bucket size",
        "sm_tax" => "SM tax",
        "preset" => "Preset",
        "playback" => "Playback",
        _ => "",
    }
}

/// The theme of the page, its links, its embed code and its exports: the
/// reader's system (exports light), or fixed light or dark (`theme=`).
#[component]
pub fn ThemePick() -> impl IntoView {
    let share = expect_context::<Share>();
    let on_change = move |ev: leptos::ev::Event| {
        let theme = Theme::from_name(&event_target_value(&ev));
        share.theme.set(theme);
        crate::timeline::theme::apply(theme);
        crate::timeline::frame::request();
    };
    let current = move || share.theme.get().map_or("system", Theme::name);
    view! {
        <label class="inline theme-pick">
            "Theme of the page, links, embeds and exports "
            <select on:change=on_change prop:value=current>
                <option value="system">"Reader's system (exports light)"</option>
                {Theme::ALL
                    .map(|t| view! { <option value=t.name()>{t.name()}</option> })
                    .collect_view()}
            </select>
        </label>
    }
}

/// Share and export, in one panel of the full page.
#[component]
pub fn SharePanel() -> impl IntoView {
    view! {
        <section class="share-export" aria-labelledby="share-h">
            <h2 id="share-h">"Share and export"</h2>
            <ThemePick />
            <ShareButtons />
            <crate::ui::export::ExportButtons />
        </section>
    }
}
