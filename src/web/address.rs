//! The page's state in its address (interface.md, "Share links"). The core's
//! `share_link` writes and reads the scenario part, `overlap_view::view_query`
//! the view (zoom, playhead, link lanes, embedding); this module keeps the
//! address bar in step with the page.
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
use overlap_core::share_link;
use overlap_core::FieldError;
use overlap_view::palette::Theme;
use overlap_view::shown_gpus::ShownGpus;
use overlap_view::view_query::{fail, join, mode_pairs, parse_view, view_pairs};
pub use overlap_view::view_query::{query_part, Mode, ViewParams, VIEW_KEYS};
use wasm_bindgen::prelude::*;

use crate::dom;
use crate::state::AppState;
use crate::timeline::frame;
use crate::web::host::WidgetHost;

#[derive(Clone, Copy)]
pub struct Share {
    /// What could not be used from the link (or the last history entry or
    /// message), each naming its key and what is valid.
    pub link_errors: RwSignal<Vec<FieldError>>,
    /// The link read, but the simulator refused its scenario when it ran:
    /// the page shows the default scenario instead.
    pub link_refused_at_run: RwSignal<bool>,
    pub mode: StoredValue<Mode>,
    /// The theme fixed by the link (`theme=`) or chosen in the share panel,
    /// for the page, its embed code and its exports; `None` follows the
    /// reader's system (and exports are light).
    pub theme: RwSignal<Option<Theme>>,
    /// The query the page's state corresponds to, without the embedding keys.
    pub query: RwSignal<String>,
    /// The query last written to (or found in) the address bar, in canonical form.
    last_query: StoredValue<String>,
    last_preset: StoredValue<String>,
    /// A link's view waits for the first simulation of its scenario.
    pending_view: StoredValue<Option<ViewParams>>,
    /// The pending view is not a link's but one given back (the tour's):
    /// once applied, the address is written.
    give_back_view: StoredValue<bool>,
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

    /// Whether this instance is a widget (its state goes to its host).
    pub fn is_widget(&self) -> bool {
        self.widget.try_with_value(Option::is_some).unwrap_or(false)
    }
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
        shown_gpus: state.shown_gpus.get_untracked(),
        chapter: state.tour_chapter.get_untracked().map(|c| c + 1),
        pane: state.pane.get_untracked(),
        classify: state.classify.get_untracked(),
    }
}

/// What the guided tour borrows and gives back: the scenario and its view.
#[derive(Clone, Debug)]
pub struct Borrowed {
    pub preset_id: String,
    pub input: overlap_core::ScenarioInput,
    /// The view, without a tour chapter.
    pub view: ViewParams,
}

/// The scenario and view the page shows now (or a link asked for, until
/// its view is applied).
pub fn borrow_now(state: AppState, share: Share) -> Borrowed {
    Borrowed {
        preset_id: state.preset_id.get_untracked(),
        input: state.input.get_untracked(),
        view: ViewParams {
            chapter: None,
            ..current_view(state, share)
        },
    }
}

/// Puts a borrowed scenario and view back: the scenario now, its view once
/// the scenario has run (at once when it is the scenario already shown).
pub fn give_back(state: AppState, share: Share, borrowed: &Borrowed) {
    let same = state.preset_id.get_untracked() == borrowed.preset_id
        && state.input.with_untracked(|i| *i == borrowed.input);
    if let Some(p) = overlap_core::presets::find(&borrowed.preset_id) {
        if !same {
            state.load(p, borrowed.input.clone());
        }
    }
    share.pending_view.set_value(Some(borrowed.view.clone()));
    share.give_back_view.set_value(true);
    if same {
        apply_pending_view(state, share);
    }
}

/// The link the page opened counted as written, in a task after the one
/// that mounts the page: its query is the scenario's encoding, which
/// resolves it. The address is written only after a change and a pause,
/// well after.
fn keep_link_as_written(state: AppState, share: Share) {
    gloo_timers::callback::Timeout::new(0, move || {
        // A widget may have been removed in the meantime.
        if state.input.try_with_untracked(|_| ()).is_none() {
            return;
        }
        share.last_query.try_set_value(full_query(state, share));
        share.query.try_set(state_query(state, share));
    })
    .forget();
}

/// Counts the page's state as written to the address without writing it:
/// what the page did on its own to show a link (a tour chapter's zoom) is
/// not a change by the reader, and the address keeps the link until one.
pub fn keep_address(state: AppState, share: Share) {
    share.last_query.set_value(full_query(state, share));
}

/// The query of the page's state, without the embedding keys.
pub fn state_query(state: AppState, share: Share) -> String {
    let preset = state.preset_id.get_untracked();
    let scenario = state.input.with_untracked(|i| {
        share_link::encode_resolving(i, Some(&preset), &[], &crate::state::resolve)
    });
    join(scenario, &view_pairs(&current_view(state, share)))
}

fn full_query(state: AppState, share: Share) -> String {
    // A widget's mode (its controls) belongs to its host, not to its scenario.
    if share.is_widget() {
        return state_query(state, share);
    }
    join(state_query(state, share), &mode_pairs(&mode_now(share)))
}

/// The page's mode with the theme as chosen now.
fn mode_now(share: Share) -> Mode {
    let mut mode = share.mode.get_value();
    mode.theme = share.theme.get_untracked();
    mode
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

/// Applies a link: preset and scenario now, the view once simulated; what
/// could not be used goes to the alert. Returns the link's mode.
fn apply_query(state: AppState, share: Share, query: &str) -> Mode {
    let decoded = share_link::decode_resolving(query, VIEW_KEYS, &crate::state::resolve);
    let mut errors = decoded.errors;
    let (view, mode) = parse_view(
        &decoded.view,
        overlap_view::tour::chapter_count(),
        &mut errors,
    );
    state.preset_id.set(decoded.preset.to_string());
    state.input.set(decoded.input);
    state.tour_chapter.set(view.chapter.map(|c| c - 1));
    // A sweep or bus plot needs no timeline: opened at once.
    state.pane.set(view.pane.clone());
    state.classify.set(view.classify.clone());
    share.pending_view.set_value(Some(view));
    share.give_back_view.set_value(false);
    share.link_errors.set(errors);
    share.link_refused_at_run.set(false);
    mode
}

/// The scenario the page opened with was refused when it ran, before
/// anything was shown (too costly, or a steady state that does not hold):
/// the default scenario opens with the refusal in the link's message, and
/// the address keeps the link as it was (interface.md, share links).
pub fn open_default_after_refusal(state: AppState, share: Share, field: &str, message: &str) {
    share.pending_view.set_value(None);
    // Named as the link names it (`global_batch`), as its other problems are.
    let key = share_link::key_for_path(field).unwrap_or(field);
    share.link_errors.set(vec![FieldError::new(key, message)]);
    share.link_refused_at_run.set(true);
    state.load_preset(overlap_core::presets::default_preset());
    keep_address(state, share);
}

/// Moves a link's view onto the scene once its timeline exists: the zoom is
/// a part of that step, and the GPUs are among its GPUs. A large step's
/// figures come before its timeline (`AppState::timeline_seq`). A step the
/// page draws no timeline for takes the view as its figures come: its GPUs
/// are kept unchecked (the scene lets go of any a later timeline lacks),
/// and there is no step to zoom into.
fn apply_pending_view(state: AppState, share: Share) {
    let drawn = !state.no_timeline_untracked();
    let shown = state.timeline_seq.get_untracked() == state.run_seq.get_untracked();
    if !shown && drawn {
        return;
    }
    let Some(view) = share.pending_view.get_value() else {
        return;
    };
    share.pending_view.set_value(None);
    let scene = state.scene();
    let mut s = scene.borrow_mut();
    let step = s.step_s();
    // A tour chapter's view is the chapter's region, which the tour sets.
    if drawn && view.chapter.is_none() {
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
    }
    let gpus = s.current.as_ref().map_or(1, |c| c.timeline.gpus.len());
    let gpu = if !drawn || view.link_gpu < gpus {
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
    let shown = match view.shown_gpus.refusal(gpus).filter(|_| drawn) {
        None => view.shown_gpus,
        Some(message) => {
            share.link_errors.update(|e| fail(e, "gpus", message));
            ShownGpus::All
        }
    };
    s.shown_gpus = shown;
    drop(s);
    state.link_gpu.set(gpu);
    state.shown_gpus.set(shown);
    state.playing.set(false);
    if let Some(p) = view.playhead.filter(|_| drawn) {
        state.playhead.set(p);
    }
    frame::request();
    // What the page could not take from the link (an out-of-range GPU) is
    // not a change by the user: the address keeps the link until one. A
    // view given back is the page's state to write.
    if share.give_back_view.get_value() {
        share.give_back_view.set_value(false);
        write_address(state, share);
    } else {
        share.last_query.set_value(full_query(state, share));
    }
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
    gloo_timers::callback::Timeout::new(250, move || {
        // A widget may have been removed in the meantime.
        if share.debounce.try_get_value() == Some(seq) {
            write_now(state, share);
        }
    })
    .forget();
}

/// Reads the address (or, for a widget, its host's scenario), applies it and
/// installs the writers. Call before the runner, so that the first
/// simulation is already the link's scenario.
pub fn install(state: AppState, widget: Option<WidgetHost>) -> Share {
    let share = Share {
        link_errors: RwSignal::new(Vec::new()),
        link_refused_at_run: RwSignal::new(false),
        mode: StoredValue::new(Mode::default()),
        theme: RwSignal::new(None),
        query: RwSignal::new(String::new()),
        last_query: StoredValue::new(String::new()),
        last_preset: StoredValue::new(state.preset_id.get_untracked()),
        pending_view: StoredValue::new(None),
        give_back_view: StoredValue::new(false),
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
    } else {
        // A widget's theme is its host's `theme` attribute, never the page's.
        let theme = share.mode.with_value(|m| m.theme);
        share.theme.set(theme);
        crate::timeline::theme::apply(theme);
    }
    share.last_preset.set_value(state.preset_id.get_untracked());
    // The address keeps the link as typed: it is "written" already
    // (`keep_link_as_written`).
    keep_link_as_written(state, share);
    provide_context(share);

    // A link's view applies once its scenario has been simulated (and its
    // timeline shown, or refused).
    Effect::new(move |_| {
        state.timeline_seq.track();
        state.timeline_refused.track();
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
        state.shown_gpus.track();
        state.pane.track();
        state.classify.track();
        state.playhead.track();
        state.tour_chapter.track();
        share.theme.track();
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
/// an embed link's, and `figures=` from its scenario's query string; an
/// unknown name is listed in the alert.
fn widget_mode(share: Share, host: &WidgetHost) -> Mode {
    let mut errors = Vec::new();
    let mut pairs: Vec<(String, String)> = host
        .controls
        .iter()
        .filter(|c| !c.trim().is_empty())
        .map(|c| ("controls".to_string(), c.clone()))
        .collect();
    // Only its view is read here. `apply_query` decoded the same query
    // just before, and its resolutions are remembered (`state::resolve`,
    // without the cost check the worker makes): none is made again.
    let view_only = share_link::decode_resolving(
        query_part(&host.query),
        &["figures"],
        &crate::state::resolve,
    );
    pairs.extend(view_only.view);
    let (_, mut mode) = parse_view(&pairs, overlap_view::tour::chapter_count(), &mut errors);
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

/// The embed link of the page's current state showing `controls` (the
/// share panel's choice), with its theme if one is fixed; the default
/// controls are left out of the link.
pub fn embed_link(
    state: AppState,
    share: Share,
    controls: &[&'static str],
    figures_axes: bool,
) -> String {
    let mut mode = mode_now(share);
    mode.embed = true;
    mode.figures_axes = figures_axes;
    mode.controls = controls.to_vec();
    mode.controls_given = controls != overlap_view::view_query::DEFAULT_CONTROLS;
    format!(
        "{}?{}",
        base_url(),
        join(state_query(state, share), &mode_pairs(&mode))
    )
}

/// The link to the page's current state, with its theme if one is fixed;
/// `embed` adds the embedding keys.
pub fn link(state: AppState, share: Share, embed: bool) -> String {
    let q = state_query(state, share);
    let mut mode = mode_now(share);
    if embed {
        mode.embed = true;
        format!("{}?{}", base_url(), join(q, &mode_pairs(&mode)))
    } else {
        let theme = Mode {
            theme: mode.theme,
            ..Mode::default()
        };
        format!("{}?{}", base_url(), join(q, &mode_pairs(&theme)))
    }
}
