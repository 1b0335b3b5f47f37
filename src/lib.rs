//! Overlap Lab in the browser: a Leptos (client-side) shell over
//! `overlap_core` and `overlap_view`. The core computes every number and the
//! timeline; the view crate turns it into a display list; this crate lays
//! out controls and figures, paints the list on a canvas and talks to the
//! browser.
//!
//! Its folders are layers, each importing only from those before it here
//! (`tests/layers.rs`):
//! - `dom.rs`: the browser's primitives (document, clock, data marks);
//! - `state/`: the signals the page shows;
//! - `timeline/`: the canvas backend, the animation loop, pointer and keys,
//!   the theme;
//! - `web/`: downloads, the address bar, the widget's host;
//! - `client/`: the page's side of its workers: one `WorkerClient` per
//!   job owns spawning, readiness, the queue before it and a crash; the
//!   runner and the importer drive `overlap_session`'s machines over it
//!   (newest wins, within a time budget);
//! - `serve/`: the worker program (the same module in a Web Worker);
//! - `ui/`: components: controls (from the core's field table), figures
//!   (from its `Metric`), the tour, the embedded page, export and share,
//!   playback, the run's status, tables, and the panes beside the
//!   timeline (`ui/panes/`, mounted from `overlap_view::panes`);
//! - this file, `main.rs` and `widget.rs` (the widget): the entry points.

mod client;
mod dom;
mod serve;
mod state;
mod timeline;
mod ui;
mod web;
pub mod widget;

use leptos::prelude::*;

use crate::state::AppState;
use crate::ui::staged::{Part, When};

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
    let in_worker = serve::in_worker_scope();
    if in_worker {
        serve::start();
    }
    in_worker
}

/// Mounts the app on `<body>`.
pub fn mount() {
    web::panic_notice::install();
    web::panic_notice::install_test_trigger();
    leptos::mount::mount_to_body(App);
}

/// The page: controls on the side; tour, figures, timeline and tables in the main column.
#[component]
pub fn App() -> impl IntoView {
    let state = AppState::new();
    provide_context(state);
    let mounted = ui::staged::Mounted::start();
    provide_context(mounted);
    // Before the runner: the first simulation is already the link's scenario.
    let share = web::address::install(state, None);
    client::runner::install(state);
    if share.mode.get_value().embed {
        if let Some(body) = dom::document().and_then(|d| d.body()) {
            let _ = body.class_list().add_1("embed-mode");
        }
        return view! { <ui::embed::EmbedApp /> }.into_any();
    }
    view! {
        <ui::skip_links::SkipLinks />
        <header class="top">
            <h1>"Overlap Lab"</h1>
            <p class="tagline">
                "When does overlapping communication with compute come for free? Switch overlap on and off per axis "
                "and watch windows and contention change."
            </p>
        </header>
        // The content comes before the controls in the document, so that the
        // Tab key reaches the tour, the figures and the timeline first; the
        // style sheet still shows the controls on the left. Share and export
        // follow the scenario controls (issue 58: the preset picker was the
        // 38th Tab stop, after every share and export button).
        <main class="layout">
            <div class="content">
                <ui::share_panel::LinkErrors />
                <ui::memory_bar::MemoryNotice />
                <ui::tour::Tour />
                <ui::figures::Headline />
                <ui::run_status::StaleNote />
                <ui::run_status::RunAlertView />
                <ui::run_status::SimStatus />
                <timeline::panel::TimelineCanvas />
                <ui::playback::Playback />
                <When part=Part::Below>
                    <ui::panes::Panes />
                    <ui::figures::AxisReadings />
                    <ui::figures::AxisFigures />
                    <ui::measured::MeasuredPanel />
                    <ui::memory_bar::MemoryBar />
                </When>
                <When part=Part::Rest>
                    <ui::table_view::TableView />
                    <ui::scenario_json::ScenarioJson />
                    <ui::sticky_figures::StickyFigures />
                </When>
            </div>
            // Its column is there from the start, so the timeline's width
            // does not move when the controls arrive.
            <aside class="side">
                <When part=Part::Controls>
                    <ui::controls::Controls />
                </When>
                <When part=Part::Rest>
                    <ui::share_panel::SharePanel />
                </When>
            </aside>
        </main>
        <footer class="foot">
            <p>"Every figure and bar comes from the same simulator as the " <code>"overlap-lab"</code> " command line."</p>
        </footer>
    }
    .into_any()
}
