//! The page's state in its address (interface.md, "Share links"). The core's
//! `share_link` writes and reads the scenario part; this module adds the view
//! (zoom, playhead, link lanes, embedding), keeps the address bar in step with
//! the page, and offers "Copy link".
//!
//! A widget keeps the same query string, but in its host rather than in the
//! address bar (`host::WidgetHost`): read from the host at mount and on the
//! host's changes, written back to it after each edit by the user.
//!
//! - On startup the link is decoded and applied. Whatever could not be used is
//!   listed in a `role="alert"` message, and the address bar keeps the link
//!   exactly as it was until the user changes something.
//! - Afterwards every change rewrites the query with `history.replaceState`
//!   (debounced, and never while playing), except a change of preset, which
//!   pushes a history entry so that Back and Forward move between presets.
//! - Text from a link only ever reaches the page as text nodes.

use leptos::prelude::*;
use overlap_core::presets;
use overlap_core::share_link;
use overlap_core::FieldError;
use wasm_bindgen::prelude::*;

use crate::dom;
use crate::frame;
use crate::host::WidgetHost;
use crate::state::AppState;

/// View keys the page understands besides the scenario's. Interface: course
/// material uses them; add keys freely, never rename one.
pub const VIEW_KEYS: &[&str] = &[
    "zoom", "playhead", "link_gpu", "chapter", "embed", "controls",
];

/// Names that stand for several controls: `controls=overlap` is the three
/// overlap switches.
pub const CONTROL_GROUPS: &[(&str, &[&str])] = &[("overlap", &["tp", "pp", "dp"])];

/// Controls an embedded page can show (`controls=tp,pp,dp`).
pub const CONTROL_NAMES: &[&str] = &[
    "tp",
    "pp",
    "dp",
    "tp_chunks",
    "bucket_mb",
    "sm_tax",
    "preset",
    "playback",
];

/// Shown in an embedded page when the link names no `controls`.
pub const DEFAULT_CONTROLS: &[&str] = &["tp", "pp", "dp", "playback"];

/// The view part of a link.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewParams {
    /// Visible part of the step, as fractions of it; `None` shows it all.
    pub zoom: Option<(f64, f64)>,
    /// Playhead as a fraction of the step; `None` is the end (all shown).
    pub playhead: Option<f64>,
    pub link_gpu: usize,
    /// The guided tour's open chapter, 1-based as in the link.
    pub chapter: Option<usize>,
}

/// How the page was opened: fixed for the life of the page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mode {
    pub embed: bool,
    /// The embedded page's controls, in link order.
    pub controls: Vec<&'static str>,
    /// Whether the link named `controls` (kept in rewritten links).
    pub controls_given: bool,
}

#[derive(Clone, Copy)]
pub struct Share {
    /// What could not be used from the link (or the last history entry or
    /// message), each naming its key and what is valid.
    pub link_errors: RwSignal<Vec<FieldError>>,
    pub mode: StoredValue<Mode>,
    /// The query the page's state corresponds to, without the embedding keys.
    pub query: RwSignal<String>,
    /// The query last written to (or found in) the address bar, in canonical form.
    last_query: StoredValue<String>,
    last_preset: StoredValue<String>,
    /// A link's view waits for the first simulation of its scenario.
    pending_view: StoredValue<Option<ViewParams>>,
    debounce: StoredValue<u64>,
    /// `None` on the full page (the address bar); a widget's host otherwise.
    widget: StoredValue<Option<WidgetHost>, LocalStorage>,
}

impl Share {
    /// The widget's mount element, or `None` on the full page.
    pub fn widget_root(&self) -> Option<web_sys::Element> {
        self.widget
            .try_with_value(|w| w.as_ref().map(|w| w.root.clone().into()))
            .flatten()
    }

    /// Where "Open in Overlap Lab" goes: the full app beside the widget's
    /// module, or this page.
    pub fn app_url(&self) -> String {
        self.widget
            .try_with_value(|w| w.as_ref().map(|w| w.app_url.clone()))
            .flatten()
            .unwrap_or_else(base_url)
    }

    fn is_widget(&self) -> bool {
        self.widget.try_with_value(Option::is_some).unwrap_or(false)
    }
}

/// Records one unusable view key, clipped as the core clips a link's own
/// errors, and at most as many as it lists.
fn fail(errors: &mut Vec<FieldError>, field: &str, message: String) {
    if errors.len() < overlap_core::share_link::MAX_LINK_ERRORS {
        errors.push(FieldError::new(field, &message));
    }
}

fn fraction(raw: &str) -> Option<f64> {
    raw.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && (0.0..=1.0).contains(x))
}

/// Reads the view keys, reporting each unusable value with what is valid.
pub fn parse_view(pairs: &[(String, String)], errors: &mut Vec<FieldError>) -> (ViewParams, Mode) {
    let mut view = ViewParams::default();
    let mut mode = Mode::default();
    for (key, raw) in pairs {
        match key.as_str() {
            "zoom" => {
                let parsed = raw
                    .split_once('-')
                    .and_then(|(a, b)| Some((fraction(a)?, fraction(b)?)))
                    .filter(|(a, b)| a < b);
                match parsed {
                    Some((a, b)) if a <= 0.0 && b >= 1.0 => view.zoom = None,
                    Some(z) => view.zoom = Some(z),
                    None => fail(
                        errors,
                        "zoom",
                        format!(
                            "\"{raw}\" is not a part of the step: valid is from-to as fractions, \
                             0 ≤ from < to ≤ 1 (for example 0.25-0.5)"
                        ),
                    ),
                }
            }
            "playhead" => match fraction(raw) {
                Some(p) if p >= 1.0 => view.playhead = None,
                Some(p) => view.playhead = Some(p),
                None => fail(
                    errors,
                    "playhead",
                    format!("\"{raw}\" is not valid: a fraction of the step from 0 to 1"),
                ),
            },
            "link_gpu" => match raw.parse::<usize>() {
                Ok(g) if g < 100_000 => view.link_gpu = g,
                _ => fail(
                    errors,
                    "link_gpu",
                    format!("\"{raw}\" is not valid: the index of a simulated GPU, 0 or more"),
                ),
            },
            "chapter" => match raw.parse::<usize>() {
                Ok(c) if (1..=crate::tour::chapter_count()).contains(&c) => view.chapter = Some(c),
                _ => fail(
                    errors,
                    "chapter",
                    format!(
                        "\"{raw}\" is not a chapter of the guided tour: valid are 1 to {}",
                        crate::tour::chapter_count()
                    ),
                ),
            },
            "embed" => match raw.as_str() {
                "1" | "true" => mode.embed = true,
                "0" | "false" => mode.embed = false,
                _ => fail(errors, "embed", format!("\"{raw}\" is not valid: 1 or 0")),
            },
            "controls" => {
                mode.controls_given = true;
                for name in raw.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    let group = CONTROL_GROUPS.iter().find(|(g, _)| *g == name);
                    let members: &[&'static str] = match group {
                        Some((_, members)) => members,
                        None => CONTROL_NAMES
                            .iter()
                            .position(|c| *c == name)
                            .map_or(&[], |i| &CONTROL_NAMES[i..=i]),
                    };
                    for c in members {
                        if !mode.controls.contains(c) {
                            mode.controls.push(c);
                        }
                    }
                    if members.is_empty() && name != "none" {
                        fail(
                            errors,
                            "controls",
                            format!(
                                "unknown control \"{name}\": valid are {}, overlap (tp,pp,dp) or none",
                                CONTROL_NAMES.join(", ")
                            ),
                        );
                    }
                }
            }
            _ => {}
        }
    }
    if !mode.controls_given {
        mode.controls = DEFAULT_CONTROLS.to_vec();
    }
    (view, mode)
}

/// Keeps what a query value may hold as it is readable: letters, digits,
/// `-_.~` and the comma of control lists.
fn escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A fraction with at most `digits` decimals and no trailing zeros.
fn frac_text(x: f64, digits: usize) -> String {
    let s = format!("{x:.digits$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

fn view_pairs(view: &ViewParams) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some((a, b)) = view.zoom {
        // Enough decimals that the window is the same to a pixel however deep
        // the zoom (the scene allows a millionth of the step).
        let span = (b - a).max(1e-9);
        let digits = ((-span.log10()).ceil().max(0.0) as usize + 4).clamp(5, 12);
        out.push((
            "zoom",
            format!("{}-{}", frac_text(a, digits), frac_text(b, digits)),
        ));
    }
    if let Some(p) = view.playhead {
        out.push(("playhead", frac_text(p, 4)));
    }
    if view.link_gpu > 0 {
        out.push(("link_gpu", view.link_gpu.to_string()));
    }
    if let Some(c) = view.chapter {
        out.push(("chapter", c.to_string()));
    }
    out
}

fn mode_pairs(mode: &Mode) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if mode.embed {
        out.push(("embed", "1".to_string()));
        if mode.controls_given {
            let list = if mode.controls.is_empty() {
                "none".to_string()
            } else {
                mode.controls.join(",")
            };
            out.push(("controls", list));
        }
    }
    out
}

fn join(base: String, pairs: &[(&str, String)]) -> String {
    let mut q = base;
    for (k, v) in pairs {
        q.push('&');
        q.push_str(k);
        q.push('=');
        q.push_str(&escape(v));
    }
    q
}

/// The view as the page shows it now (or as a link asked, until applied).
fn current_view(state: AppState, share: Share) -> ViewParams {
    if let Some(v) = share.pending_view.get_value() {
        return v;
    }
    let scene = state.scene();
    let s = scene.borrow();
    let step = s.step_s();
    let zoom = (!s.view.fit && s.current.is_some())
        .then(|| (s.view.t0 / step, s.view.t1 / step))
        .filter(|(a, b)| *a > 1e-6 || *b < 1.0 - 1e-6);
    let playhead = state.playhead.get_untracked();
    ViewParams {
        zoom,
        playhead: (playhead < 0.9999).then_some(playhead.max(0.0)),
        link_gpu: state.link_gpu.get_untracked(),
        chapter: state.tour_chapter.get_untracked().map(|c| c + 1),
    }
}

/// The query of the page's state, without the embedding keys.
pub fn state_query(state: AppState, share: Share) -> String {
    let preset = state.preset_id.get_untracked();
    let scenario = state
        .input
        .with_untracked(|i| share_link::encode(i, Some(&preset)));
    join(scenario, &view_pairs(&current_view(state, share)))
}

fn full_query(state: AppState, share: Share) -> String {
    // A widget's mode (its controls) belongs to its host, not to its scenario.
    if share.is_widget() {
        return state_query(state, share);
    }
    join(
        state_query(state, share),
        &mode_pairs(&share.mode.get_value()),
    )
}

/// The page's address without query or fragment.
pub fn base_url() -> String {
    let href = dom::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    href.split(['?', '#'])
        .next()
        .unwrap_or_default()
        .to_string()
}

fn location_search() -> String {
    dom::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

/// The query of a scenario given as `?v=1&...`, `v=1&...` or a whole link.
pub fn query_part(text: &str) -> &str {
    let text = text.trim();
    let query = text.split_once('?').map_or(text, |(_, q)| q);
    query.split('#').next().unwrap_or_default()
}

/// Applies a link: preset and scenario now, the view once simulated; what
/// could not be used goes to the alert. Returns the link's mode.
fn apply_query(state: AppState, share: Share, query: &str) -> Mode {
    let decoded = share_link::decode(query, VIEW_KEYS);
    let mut errors = decoded.errors;
    let (view, mode) = parse_view(&decoded.view, &mut errors);
    state.preset_id.set(decoded.preset.to_string());
    state.input.set(decoded.input);
    state.tour_chapter.set(view.chapter.map(|c| c - 1));
    share.pending_view.set_value(Some(view));
    share.link_errors.set(errors);
    mode
}

/// Moves a link's view onto the scene once its timeline exists.
fn apply_pending_view(state: AppState, share: Share) {
    let Some(view) = share.pending_view.get_value() else {
        return;
    };
    share.pending_view.set_value(None);
    let scene = state.scene();
    let mut s = scene.borrow_mut();
    let step = s.step_s();
    match view.zoom {
        Some((a, b)) => {
            s.view.t0 = a * step;
            s.view.t1 = b * step;
            s.view.fit = false;
        }
        None => s.fit(),
    }
    if let Some(p) = view.playhead {
        s.playing = false;
        s.playhead_s = p * step;
    }
    let gpus = s.current.as_ref().map_or(1, |c| c.timeline.gpus.len());
    let gpu = if view.link_gpu < gpus {
        view.link_gpu
    } else {
        share.link_errors.update(|e| {
            fail(
                e,
                "link_gpu",
                format!(
                    "{} is not a simulated GPU of this scenario: valid are 0 to {}",
                    view.link_gpu,
                    gpus - 1
                ),
            )
        });
        0
    };
    s.link_gpu = gpu;
    drop(s);
    state.link_gpu.set(gpu);
    state.playing.set(false);
    if let Some(p) = view.playhead {
        state.playhead.set(p);
    }
    frame::request();
    // What the page could not take from the link (an out-of-range GPU) is
    // not a change by the user: the address keeps the link until one.
    share.last_query.set_value(full_query(state, share));
}

fn history() -> Option<web_sys::History> {
    dom::window()?.history().ok()
}

/// Writes the page's state into the address bar if it changed since the
/// last write (or since the link was opened).
pub fn write_now(state: AppState, share: Share) {
    if state.playing.get_untracked() || share.pending_view.get_value().is_some() {
        return;
    }
    let query = full_query(state, share);
    let plain = state_query(state, share);
    if share.query.get_untracked() != plain {
        share.query.set(plain);
    }
    if query == share.last_query.get_value() {
        return;
    }
    let preset = state.preset_id.get_untracked();
    let url = format!("?{query}");
    if let Some(host) = share.widget.get_value() {
        // Recorded first: the host may hand the same text straight back.
        share.last_query.set_value(query.clone());
        share.last_preset.set_value(preset);
        host.write(&query);
        return;
    }
    if let Some(h) = history() {
        // Inside course material a history entry would hijack the host
        // page's Back button: an embedded page only ever replaces.
        let new_preset =
            preset != share.last_preset.get_value() && !share.mode.with_value(|m| m.embed);
        let _ = if new_preset {
            h.push_state_with_url(&JsValue::NULL, "", Some(&url))
        } else {
            h.replace_state_with_url(&JsValue::NULL, "", Some(&url))
        };
    }
    share.last_query.set_value(query);
    share.last_preset.set_value(preset);
}

/// Writes a little after the last change, so that dragging a slider or
/// zooming with the wheel costs one history update, not hundreds.
pub fn schedule_write(state: AppState, share: Share) {
    let Some(seq) = share.debounce.try_get_value().map(|s| s + 1) else {
        return;
    };
    share.debounce.set_value(seq);
    set_timeout(
        move || {
            // A widget may have been removed in the meantime.
            if share.debounce.try_get_value() == Some(seq) {
                write_now(state, share);
            }
        },
        std::time::Duration::from_millis(250),
    );
}

/// Reads the address (or, for a widget, its host's scenario), applies it and
/// installs the writers. Call before the runner, so that the first
/// simulation is already the link's scenario.
pub fn install(state: AppState, widget: Option<WidgetHost>) -> Share {
    let share = Share {
        link_errors: RwSignal::new(Vec::new()),
        mode: StoredValue::new(Mode::default()),
        query: RwSignal::new(String::new()),
        last_query: StoredValue::new(String::new()),
        last_preset: StoredValue::new(state.preset_id.get_untracked()),
        pending_view: StoredValue::new(None),
        debounce: StoredValue::new(0),
        widget: StoredValue::new_local(widget.clone()),
    };
    let search = match &widget {
        Some(host) => host.query.clone(),
        None => location_search(),
    };
    let query = query_part(&search);
    if !query.is_empty() {
        let mode = apply_query(state, share, query);
        share.mode.set_value(mode);
    }
    if let Some(host) = &widget {
        share.mode.set_value(widget_mode(share, host));
    }
    share.last_preset.set_value(state.preset_id.get_untracked());
    // The address keeps the link as typed: it is "written" already.
    share.last_query.set_value(full_query(state, share));
    share.query.set(state_query(state, share));
    provide_context(share);

    // A link's view applies once its scenario has been simulated.
    Effect::new(move |_| {
        if state.run_seq.get() > 0 {
            apply_pending_view(state, share);
            schedule_write(state, share);
        }
    });
    // Everything the signals carry (nothing is written while playing:
    // the playhead moves every frame)...
    Effect::new(move |_| {
        state.input.track();
        state.preset_id.track();
        state.link_gpu.track();
        state.playhead.track();
        state.tour_chapter.track();
        if !state.playing.get() {
            schedule_write(state, share);
        }
    });
    // ...and zoom and pan, which live in the non-reactive scene.
    let mut listeners = vec![
        window_event_listener(leptos::ev::wheel, move |_| schedule_write(state, share)),
        window_event_listener(leptos::ev::pointerup, move |_| schedule_write(state, share)),
        window_event_listener(leptos::ev::keyup, move |_| schedule_write(state, share)),
        window_event_listener(leptos::ev::click, move |_| schedule_write(state, share)),
    ];
    // Back and Forward between presets: read the address again. A widget's
    // scenario is not in the address: the host page's history is its own.
    if widget.is_none() {
        listeners.push(window_event_listener(leptos::ev::popstate, move |_| {
            let search = location_search();
            apply_query(state, share, search.trim_start_matches('?'));
            share.last_preset.set_value(state.preset_id.get_untracked());
            share.last_query.set_value(full_query(state, share));
        }));
    }
    // A widget can be removed while its page lives on.
    on_cleanup(move || listeners.into_iter().for_each(|l| l.remove()));
    share
}

/// A widget's mode: the compact layout with the host's `controls`, read as
/// an embed link's; an unknown name is listed in the alert.
fn widget_mode(share: Share, host: &WidgetHost) -> Mode {
    let mut errors = Vec::new();
    let pairs: Vec<(String, String)> = host
        .controls
        .iter()
        .filter(|c| !c.trim().is_empty())
        .map(|c| ("controls".to_string(), c.clone()))
        .collect();
    let (_, mut mode) = parse_view(&pairs, &mut errors);
    mode.embed = true;
    if !errors.is_empty() {
        share.link_errors.update(|e| e.extend(errors));
    }
    mode
}

/// Applies a scenario the widget's host changed (the anywidget model, the
/// element's attribute). The widget's own edits come back this way too:
/// they are recognised and change nothing.
pub fn apply_host_query(state: AppState, share: Share, text: &str) {
    let query = query_part(text);
    if query == share.last_query.get_value() || query == share.query.get_untracked() {
        return;
    }
    apply_query(state, share, query);
    share.last_preset.set_value(state.preset_id.get_untracked());
    // As for a link: the host keeps the text as given until the user edits.
    share.last_query.set_value(full_query(state, share));
}

/// Applies a query that arrived by message (embedding): like a link, but the
/// address is then rewritten to match (no new history entry) by
/// [`write_address`] once the scenario has run.
pub fn apply_message_query(state: AppState, share: Share, query: &str) {
    apply_query(state, share, query);
    share.last_preset.set_value(state.preset_id.get_untracked());
}

/// Writes the page's state into the address now, even where the address
/// still holds the link the page was opened with: after a set-scenario
/// message, reloading the frame must keep the scenario.
pub fn write_address(state: AppState, share: Share) {
    share.last_query.set_value(String::new());
    write_now(state, share);
}

/// The link to the page's current state; `embed` adds the embedding keys.
pub fn link(state: AppState, share: Share, embed: bool) -> String {
    let q = state_query(state, share);
    if embed {
        let mut mode = share.mode.get_value();
        mode.embed = true;
        format!("{}?{}", base_url(), join(q, &mode_pairs(&mode)))
    } else {
        format!("{}?{q}", base_url())
    }
}

/// Escapes text for an HTML attribute value in double quotes.
pub fn attr_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

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
            <crate::export::ExportButtons />
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(q: &str) -> Vec<(String, String)> {
        share_link::decode(q, VIEW_KEYS).view
    }

    #[test]
    fn view_key_errors_are_clipped_and_counted_like_the_links_own() {
        let long = "9".repeat(10_000);
        let mut errors = Vec::new();
        parse_view(&[("zoom".to_string(), long)], &mut errors);
        assert_eq!(errors.len(), 1);
        let shown = errors[0].to_string();
        assert!(
            shown.chars().count() < 800,
            "{} characters",
            shown.chars().count()
        );
        let many: Vec<(String, String)> = (0..100)
            .map(|i| ("playhead".to_string(), format!("bad{i}")))
            .collect();
        let mut errors = Vec::new();
        parse_view(&many, &mut errors);
        assert_eq!(errors.len(), share_link::MAX_LINK_ERRORS);
    }

    #[test]
    fn view_keys_round_trip_through_their_text() {
        let view = ViewParams {
            zoom: Some((0.25, 0.5)),
            playhead: Some(0.3),
            link_gpu: 3,
            chapter: Some(2),
        };
        let q = join(
            share_link::encode(&presets::default_preset().input(), None),
            &view_pairs(&view),
        );
        assert_eq!(q, "v=1&zoom=0.25-0.5&playhead=0.3&link_gpu=3&chapter=2");
        let mut errors = Vec::new();
        let (back, mode) = parse_view(&pairs(&q), &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(back, view);
        assert!(!mode.embed);
    }

    #[test]
    fn defaults_are_left_out_of_links() {
        assert!(view_pairs(&ViewParams::default()).is_empty());
        let mut errors = Vec::new();
        let (view, _) = parse_view(&pairs("zoom=0-1&playhead=1"), &mut errors);
        assert_eq!(view, ViewParams::default());
        assert!(errors.is_empty());
    }

    #[test]
    fn bad_view_values_are_named_with_what_is_valid() {
        let mut errors = Vec::new();
        parse_view(
            &pairs("zoom=0.5-0.2&playhead=2&link_gpu=-1&chapter=0&embed=yes&controls=tp,nope"),
            &mut errors,
        );
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["zoom", "playhead", "link_gpu", "chapter", "embed", "controls"]
        );
        assert!(
            errors.iter().all(|e| e.message.contains("valid")),
            "{errors:?}"
        );
    }

    #[test]
    fn controls_keep_link_order_and_default_without_the_key() {
        let mut errors = Vec::new();
        let (_, mode) = parse_view(&pairs("embed=1&controls=dp,tp,dp"), &mut errors);
        assert_eq!(mode.controls, ["dp", "tp"]);
        assert_eq!(
            mode_pairs(&mode),
            [
                ("embed", "1".to_string()),
                ("controls", "dp,tp".to_string())
            ]
        );
        let (_, mode) = parse_view(&pairs("embed=1"), &mut errors);
        assert_eq!(mode.controls, DEFAULT_CONTROLS);
        let (_, mode) = parse_view(&pairs("embed=1&controls="), &mut errors);
        assert!(mode.controls.is_empty());
        assert_eq!(mode_pairs(&mode)[1].1, "none");
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn overlap_names_the_three_switches() {
        let mut errors = Vec::new();
        let (_, mode) = parse_view(&pairs("controls=overlap,preset,tp"), &mut errors);
        assert_eq!(mode.controls, ["tp", "pp", "dp", "preset"]);
        parse_view(&pairs("controls=overlaps"), &mut errors);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].message.contains("overlap (tp,pp,dp)"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_scenario_is_read_from_a_query_or_a_whole_link() {
        assert_eq!(
            query_part(" ?v=1&preset=contention "),
            "v=1&preset=contention"
        );
        assert_eq!(query_part("v=1&tp_overlap=0"), "v=1&tp_overlap=0");
        assert_eq!(
            query_part("https://example.org/lab/?v=1&preset=contention#top"),
            "v=1&preset=contention"
        );
        assert_eq!(query_part(""), "");
    }

    #[test]
    fn embed_code_escapes_its_attribute() {
        assert_eq!(
            attr_escape("a?b=1&c=\"<x>\""),
            "a?b=1&amp;c=&quot;&lt;x&gt;&quot;"
        );
        assert_eq!(escape("a b,c<"), "a%20b,c%3C");
        assert_eq!(frac_text(0.300_04, 4), "0.3");
        assert_eq!(frac_text(1.0, 5), "1");
    }

    #[test]
    fn deep_zoom_keeps_enough_digits() {
        let view = ViewParams {
            zoom: Some((0.123_456_789, 0.123_457_789)),
            ..ViewParams::default()
        };
        let text = &view_pairs(&view)[0].1;
        let mut errors = Vec::new();
        let (back, _) = parse_view(&[("zoom".to_string(), text.clone())], &mut errors);
        let (a, b) = back.zoom.unwrap();
        assert!(
            (a - 0.123_456_789).abs() < 1e-9 && (b - 0.123_457_789).abs() < 1e-9,
            "{text}"
        );
        assert_eq!(
            view_pairs(&ViewParams {
                zoom: Some((0.25, 0.5)),
                ..ViewParams::default()
            })[0]
                .1,
            "0.25-0.5"
        );
    }
}
