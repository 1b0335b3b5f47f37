//! The app as a widget inside someone else's page (`dist/overlap-lab.js`:
//! an anywidget module and the `<overlap-lab>` element). Each mount is an
//! instance of its own: its own state, simulation, timeline and share-link
//! state, the latter kept in the host (`host::WidgetHost`) rather than in
//! the page's address. The layout is the embed's: the figures, the timeline
//! and the controls the host names.

use std::cell::RefCell;
use std::rc::Rc;

use leptos::html;
use leptos::prelude::*;
use overlap_core::ScenarioInput;
use wasm_bindgen::prelude::*;

use crate::state::AppState;
use crate::timeline::frame;
use crate::web::address::{self as share, Share};
use crate::web::host::WidgetHost;

/// Set by `overlap-lab.js` before it starts the module, so that starting
/// it does not mount the full page into the host page's body.
const WIDGET_MARK: &str = "overlap-lab.widget";

/// Whether the module was started by the widget script rather than by the
/// app's own page.
pub fn loaded_as_widget() -> bool {
    let mark = js_sys::Symbol::for_(WIDGET_MARK);
    js_sys::Reflect::get(&js_sys::global(), &mark)
        .map(|v| v.is_truthy())
        .unwrap_or(false)
}

/// One mounted widget, handed to `overlap-lab.js`.
#[wasm_bindgen]
pub struct Widget {
    /// Dropping it unmounts the view and disposes the instance's state.
    mounted: Option<Box<dyn std::any::Any>>,
    instance: Option<(AppState, Share)>,
}

/// Mounts a widget into `root`. `scenario` is a share-link query string,
/// `controls` the embed's control list (empty for the default), `app_url`
/// the full app's address; `on_scenario` receives the new query string
/// whenever the user edits the scenario inside the widget.
#[wasm_bindgen]
pub fn mount_widget(
    root: web_sys::HtmlElement,
    scenario: String,
    controls: String,
    app_url: String,
    on_scenario: js_sys::Function,
) -> Widget {
    console_error_panic_hook::set_once();
    let host = WidgetHost {
        root: root.clone(),
        query: scenario,
        controls: (!controls.trim().is_empty()).then_some(controls),
        app_url,
        on_scenario,
    };
    let made: Rc<RefCell<Option<(AppState, Share)>>> = Rc::default();
    let out = made.clone();
    let handle = leptos::mount::mount_to(root, move || {
        let state = AppState::new();
        provide_context(state);
        let share = share::install(state, Some(host));
        crate::client::runner::install(state);
        *out.borrow_mut() = Some((state, share));
        view! { <WidgetApp /> }
    });
    let instance = made.borrow_mut().take();
    Widget {
        mounted: Some(Box::new(handle)),
        instance,
    }
}

#[wasm_bindgen]
impl Widget {
    /// Shows the scenario of a share-link query string given by the host.
    /// The widget's own edits, handed back, change nothing.
    pub fn set_scenario(&self, scenario: &str) {
        if let Some((state, share)) = self.live() {
            share::apply_host_query(state, share, scenario);
        }
    }

    /// The scenario as `overlap-lab simulate` reads it.
    pub fn scenario_json(&self) -> String {
        self.live()
            .map(|(state, _)| state.input.with_untracked(ScenarioInput::to_json_pretty))
            .unwrap_or_default()
    }

    /// Repaints the timeline (after a change of size or theme).
    pub fn repaint(&self) {
        crate::timeline::theme::restyled();
        frame::request();
    }

    /// Removes the widget and everything it holds.
    pub fn unmount(&mut self) {
        self.instance = None;
        self.mounted = None;
    }
}

impl Widget {
    fn live(&self) -> Option<(AppState, Share)> {
        self.instance
            .filter(|(state, _)| state.run_seq.try_get_untracked().is_some())
    }
}

/// The widget: the embed's compact layout, without its frame messaging.
#[component]
fn WidgetApp() -> impl IntoView {
    let state = expect_context::<AppState>();
    let share = expect_context::<Share>();
    let mode = share.mode.get_value();
    let root = NodeRef::<html::Div>::new();
    // For tests and scripts, as the page's `data-run-seq` and scenario JSON:
    // on the widget, so that several on one page are told apart.
    Effect::new(move |_| {
        let seq = state.run_seq.get();
        if let Some(host) = share.widget_root() {
            let _ = host.set_attribute("data-run-seq", &seq.to_string());
            let errors = if state.errors.with(Vec::is_empty) {
                "0"
            } else {
                "1"
            };
            let _ = host.set_attribute("data-errors", errors);
        }
    });
    let json = Memo::new(move |_| state.input.with(ScenarioInput::to_json_pretty));
    let app_url = share.app_url();
    let open_href = move || format!("{app_url}?{}", share.query.get());
    view! {
        <div class="embed widget" node_ref=root data-scenario-json=move || json.get()>
            {crate::ui::embed::compact_body(state, mode.controls, mode.figures_axes, open_href)}
        </div>
    }
}
