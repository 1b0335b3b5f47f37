//! The page inside course material (`embed=1`): the figures and the
//! timeline with little chrome, the controls the link names
//! (`controls=tp,pp,dp`), and a link back to the full app.
//!
//! When framed, it tells its parent its height and accepts exactly these
//! messages, checked field by field and never evaluated:
//! - `{type: "overlap-lab:set-scenario", query: "v=1&..."}`: a share-link
//!   query, decoded by the core (problems are shown in the alert);
//! - `{type: "overlap-lab:request-height"}`: post the height once the burst
//!   of messages has been read (many requests, one reply).
//!
//! It posts `{type: "overlap-lab:height", height}` (CSS pixels) once its
//! first run is shown, and then whenever the height it needs changes (once
//! per change, after the layout settles), and in answer to a request. Messages from anything but the parent frame are ignored.

use std::cell::Cell;

use gloo_timers::callback::Timeout;
use leptos::html;
use leptos::prelude::*;
use overlap_core::{Axis, FieldError};
use wasm_bindgen::prelude::*;

use crate::dom;
use crate::state::fields;
use crate::state::AppState;
use crate::timeline::panel;
use crate::ui::controls;
use crate::ui::figures;
use crate::ui::playback;
use crate::ui::share_panel;
use crate::ui::widgets::{NumberPair, SelectField};
use crate::web::address::{self as share, Share};

/// Longest query a set-scenario message may carry.
pub const MAX_QUERY_CHARS: usize = 4000;

thread_local! {
    static LAST_HEIGHT: Cell<i32> = const { Cell::new(-1) };
    static OBSERVER: std::cell::RefCell<Option<JsValue>> = const { std::cell::RefCell::new(None) };
    /// The first run is shown: heights are posted from then on, not while
    /// the page is still filling in (a host page would jump each time).
    static READY: Cell<bool> = const { Cell::new(false) };
    /// A post waiting for the layout to settle: the changes of one run
    /// (figures, canvas, notes) cost the host one resize.
    static PENDING_POST: std::cell::RefCell<Option<Timeout>> = const { std::cell::RefCell::new(None) };
}

/// How long a height change waits for the layout to settle before it is
/// posted, ms: the figures, the canvas and the notes of one run change
/// within a frame or two of each other (16 ms each at 60 Hz).
const SETTLE_MS: u32 = 100;

/// The parent frame, when this page is inside one.
fn parent_frame() -> Option<web_sys::Window> {
    let w = dom::window()?;
    let parent = w.parent().ok().flatten()?;
    (!js_sys::Object::is(&parent, &w)).then_some(parent)
}

/// The height the compact page needs to show everything without scrolling:
/// the frame is filled (style.css, `body.embed-mode .embed`) with the
/// timeline's lanes taking what the other parts leave, so this is the
/// content's height with the lanes' box replaced by the lanes' own height.
fn content_height(root: &web_sys::Element) -> i32 {
    let scroll_y = dom::window().and_then(|w| w.scroll_y().ok()).unwrap_or(0.0);
    let top = root.get_bounding_client_rect().top() + scroll_y;
    let laid_out = top + f64::from(root.scroll_height());
    let lanes = root.query_selector(".canvas-wrap").ok().flatten();
    let picture = root.query_selector(".canvas-clip").ok().flatten();
    let natural = match (lanes, picture) {
        (Some(lanes), Some(picture)) => {
            laid_out - f64::from(lanes.client_height())
                + picture.get_bounding_client_rect().height()
        }
        _ => laid_out,
    };
    natural.ceil() as i32
}

/// Posts the height once the layout has settled, if it changed.
fn post_height_soon(root: &web_sys::Element) {
    if !READY.with(Cell::get) || PENDING_POST.with_borrow(Option::is_some) {
        return;
    }
    let root = root.clone();
    let timer = Timeout::new(SETTLE_MS, move || {
        PENDING_POST.with_borrow_mut(|p| *p = None);
        post_height(&root, false);
    });
    PENDING_POST.with_borrow_mut(|p| *p = Some(timer));
}

/// Posts the height to the parent if it changed (or when `force`).
fn post_height(root: &web_sys::Element, force: bool) {
    let Some(parent) = parent_frame() else { return };
    let height = content_height(root);
    if !force && LAST_HEIGHT.with(|h| h.replace(height)) == height {
        return;
    }
    LAST_HEIGHT.with(|h| h.set(height));
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"type".into(), &"overlap-lab:height".into());
    let _ = js_sys::Reflect::set(&msg, &"height".into(), &JsValue::from(height));
    // The height is no secret: any parent origin may read it.
    let _ = parent.post_message(&msg, "*");
}

/// Reports the height whenever the content's box changes size.
fn observe_height(root: web_sys::Element) -> Option<()> {
    let w = dom::window()?;
    let ctor: js_sys::Function = js_sys::Reflect::get(&w, &"ResizeObserver".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let target = root.clone();
    let cb = Closure::<dyn Fn()>::new(move || post_height_soon(&target));
    let observer = js_sys::Reflect::construct(&ctor, &js_sys::Array::of1(cb.as_ref())).ok()?;
    cb.forget();
    let observe: js_sys::Function = js_sys::Reflect::get(&observer, &"observe".into())
        .ok()?
        .dyn_into()
        .ok()?;
    // The compact page fills the frame: its own box changes with the frame,
    // its parts and the lanes' picture with the content.
    observe.call1(&observer, &root).ok()?;
    let children = root.children();
    for k in 0..children.length() {
        if let Some(child) = children.item(k) {
            observe.call1(&observer, &child).ok()?;
        }
    }
    if let Ok(Some(picture)) = root.query_selector(".canvas-clip") {
        observe.call1(&observer, &picture).ok()?;
    }
    OBSERVER.with(|o| *o.borrow_mut() = Some(observer));
    Some(())
}

fn string_field(data: &JsValue, key: &str) -> Option<String> {
    js_sys::Reflect::get(data, &key.into()).ok()?.as_string()
}

/// The newest set-scenario query not yet applied, and the timer that applies
/// it: a burst of messages costs one scenario change, the last one.
#[derive(Clone, Copy)]
struct Coalesce {
    query: StoredValue<Option<String>, LocalStorage>,
    timer: StoredValue<Option<Timeout>, LocalStorage>,
    /// A message's scenario was applied: its run is to rewrite the address.
    rewrite: StoredValue<bool, LocalStorage>,
    /// A height reply is due once the burst of requests has been read.
    height_timer: StoredValue<Option<Timeout>, LocalStorage>,
}

impl Coalesce {
    fn new() -> Self {
        Self {
            query: StoredValue::new_local(None),
            timer: StoredValue::new_local(None),
            rewrite: StoredValue::new_local(false),
            height_timer: StoredValue::new_local(None),
        }
    }

    /// Answers a burst of height requests once, after the burst: a host that
    /// floods the frame with requests gets one reply, not one per message.
    fn request_height(self, root: &web_sys::Element) {
        if self.height_timer.with_value(Option::is_some) {
            return;
        }
        let root = root.clone();
        // 50 ms: under a flood of messages a zero timeout can run between
        // two of them; a twentieth of a second is still "now" to a host.
        let timer = Timeout::new(50, move || {
            self.height_timer.set_value(None);
            post_height(&root, true);
        });
        self.height_timer.set_value(Some(timer));
    }

    /// Keeps `query` as the newest; applies it once the burst has been read.
    fn set_scenario(self, state: AppState, share: Share, query: String) {
        self.query.set_value(Some(query));
        if self.timer.with_value(Option::is_some) {
            return;
        }
        let timer = Timeout::new(0, move || {
            self.timer.set_value(None);
            if let Some(q) = self.query.try_update_value(Option::take).flatten() {
                share::apply_message_query(state, share, &q);
                self.rewrite.set_value(true);
            }
        });
        self.timer.set_value(Some(timer));
    }
}

/// Acts on a message only if it comes from the parent frame and is one of
/// the documented ones, well formed.
fn on_message(
    state: AppState,
    share: Share,
    coalesce: Coalesce,
    root: &web_sys::Element,
    ev: &web_sys::MessageEvent,
) {
    let Some(parent) = parent_frame() else { return };
    let from_parent = ev.source().is_some_and(|s| js_sys::Object::is(&s, &parent));
    if !from_parent {
        return;
    }
    let data = ev.data();
    if !data.is_object() || js_sys::Array::is_array(&data) {
        return;
    }
    match string_field(&data, "type").as_deref() {
        Some("overlap-lab:set-scenario") => match string_field(&data, "query") {
            Some(q) if q.chars().count() <= MAX_QUERY_CHARS => {
                coalesce.set_scenario(state, share, q);
            }
            _ => share.link_errors.set(vec![FieldError {
                field: "query".to_string(),
                message: format!(
                    "a set-scenario message needs \"query\": a share-link query string of at most \
                     {MAX_QUERY_CHARS} characters (for example \"v=1&tp_overlap=0\"); nothing was changed"
                ),
            }]),
        },
        Some("overlap-lab:request-height") => coalesce.request_height(root),
        _ => {}
    }
}

/// One control of the compact layout, by its `controls=` name (also the widget's).
pub(crate) fn control(state: AppState, name: &'static str) -> AnyView {
    match name {
        // An axis's overlap switch, the full page's own control.
        "tp" | "pp" | "dp" | "ep" | "cp" => {
            match Axis::ALL.into_iter().find(|a| a.name() == name) {
                Some(axis) => controls::control(controls::overlap_switch(axis)),
                None => ().into_any(),
            }
        }
        "tp_chunks" => view! { <NumberPair field=&fields::TP_CHUNKS /> }.into_any(),
        "bucket_mb" => view! { <NumberPair field=&fields::BUCKET_MB /> }.into_any(),
        "sm_tax" => view! { <NumberPair field=&fields::SM_TAX /> }.into_any(),
        "preset" => {
            let options = crate::state::preset_options();
            let on_change = Callback::new(move |id: String| state.load_preset_id(&id));
            view! { <SelectField label="Scenario preset" field="preset" options current=state.preset_id on_change /> }
                .into_any()
        }
        _ => ().into_any(),
    }
}

/// The embedded page.
#[component]
pub fn EmbedApp() -> impl IntoView {
    let state = expect_context::<AppState>();
    let share = expect_context::<Share>();
    let mode = share.mode.get_value();
    let root = NodeRef::<html::Div>::new();
    let coalesce = Coalesce::new();
    root.on_load(move |el| {
        let el: web_sys::Element = el.into();
        if parent_frame().is_none() {
            return;
        }
        observe_height(el.clone());
        let _ = window_event_listener(leptos::ev::message, move |ev| {
            on_message(state, share, coalesce, &el, &ev)
        });
    });
    // After each simulation too: the figures and the canvas change size.
    Effect::new(move |_| {
        if state.run_seq.get() > 0 && !READY.with(Cell::get) {
            READY.with(|r| r.set(true));
        }
        if let Some(el) = root.get_untracked() {
            post_height_soon(&el.into());
        }
        if coalesce.rewrite.get_value() {
            coalesce.rewrite.set_value(false);
            // The frame's own address follows the message, so that reloading
            // it keeps the scenario; after this run's other effects (the
            // link's view is applied first).
            Timeout::new(0, move || share::write_address(state, share)).forget();
        }
    });
    let open_href = move || format!("{}?{}", share::base_url(), share.query.get());
    view! {
        <div class="embed" node_ref=root>
            {compact_body(state, mode.controls, mode.figures_axes, open_href)}
        </div>
    }
}

/// What the iframe embed and the widget show: the chosen controls (the
/// `controls=` list; `playback` adds the playback bar), the headline figures,
/// the run's state and the timeline, with a link to the full app; with
/// `figures=axes` (`axis_cards`), the per-axis cards under the timeline.
pub(crate) fn compact_body(
    state: AppState,
    chosen: Vec<&'static str>,
    axis_cards: bool,
    open_href: impl Fn() -> String + Send + Sync + 'static,
) -> impl IntoView {
    let with_playback = chosen.contains(&"playback");
    let controls: Vec<&'static str> = chosen.into_iter().filter(|c| *c != "playback").collect();
    view! {
        <share_panel::LinkErrors />
        <div class="embed-bar">
            <div class="embed-controls" role="group" aria-label="Controls">
                {controls.into_iter().map(|c| control(state, c)).collect_view()}
            </div>
            <a class="open-full" href=open_href target="_blank" rel="noopener">"Open in Overlap Lab"</a>
        </div>
        <figures::Headline />
        <crate::ui::run_status::StaleNote />
        <crate::ui::run_status::RunAlertView />
        <crate::ui::run_status::SimStatus />
        <panel::TimelineCanvas />
        {with_playback.then(|| view! { <playback::Playback /> })}
        {axis_cards.then(|| view! { <figures::AxisReadings /><figures::AxisFigures /> })}
        // A link that opens a sweep or the bus plot (`view=sweep`) shows it.
        {(state.pane.get_untracked() != overlap_view::panes::Pane::Timeline)
            .then(|| view! { <crate::ui::panes::Panes /> })}
    }
}
