//! Overlap Lab in the browser: a Leptos (client-side) shell over
//! `overlap_core`. The core computes every number and the timeline; this
//! crate lays out controls, figures and a canvas timeline.

mod controls;
mod dom;
mod embed;
mod export;
mod fields;
mod figures;
mod format;
mod frame;
mod host;
mod kineto_zip;
mod lod;
mod palette;
mod playback;
mod runner;
mod scenario_json;
mod scene;
mod share;
mod state;
mod table_view;
mod timeline_canvas;
mod timeline_draw;
mod tour;
pub mod widget;
mod widgets;
mod worker;

use leptos::prelude::*;

use crate::state::AppState;

/// Starts the module: mounts the full page, unless the widget script
/// (`overlap-lab.js`) started it, which mounts widgets where it is told to.
pub fn start() {
    if !widget::loaded_as_widget() {
        mount();
    }
}

/// In the simulation worker (`www/sim-worker.js` runs this same module):
/// serves simulations and returns true. On a page, returns false.
pub fn serve_if_worker() -> bool {
    let in_worker = worker::in_worker_scope();
    if in_worker {
        worker::start();
    }
    in_worker
}

/// Mounts the app on `<body>`.
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

/// The page: controls on the side; tour, figures, timeline and tables in the main column.
#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new();
    provide_context(state);
    // Before the runner: the first simulation is already the link's scenario.
    let share = share::install(state, None);
    runner::install(state);
    if share.mode.get_value().embed {
        if let Some(body) = dom::document().and_then(|d| d.body()) {
            let _ = body.class_list().add_1("embed-mode");
        }
        return view! { <embed::EmbedApp /> }.into_any();
    }
    view! {
        <header class="top">
            <h1>"Overlap Lab"</h1>
            <p class="tagline">
                "When does overlapping communication with compute come for free? Switch overlap on and off per axis "
                "and watch windows and contention change."
            </p>
        </header>
        <main class="layout">
            <aside class="side">
                <controls::Controls />
            </aside>
            <div class="content">
                <share::LinkErrors />
                <tour::Tour />
                <figures::Headline />
                <runner::RunAlertView />
                <runner::SimStatus />
                <timeline_canvas::TimelineCanvas />
                <playback::Playback />
                <share::SharePanel />
                <figures::AxisFigures />
                <table_view::TableView />
                <scenario_json::ScenarioJson />
            </div>
        </main>
        <footer class="foot">
            <p>"Every figure and bar comes from the same simulator as the " <code>"overlap-lab"</code> " command line."</p>
        </footer>
    }
    .into_any()
}
