//! The search pane (`view=search[&search_gpus=N][&objective=O]`): the
//! best layouts of the scenario's model on N GPUs and the step-time/memory
//! Pareto front, from the core's search run in a worker of its own
//! (`searcher`), with progress and a cancel. The best are listed as buttons
//! (`data-search-rank`, `data-step-ms`) that load their scenario; the
//! picture is `overlap_view::search_plot`.
//!
//! The search runs when the pane opens (a link keeps it) and when the
//! reader presses Search; a candidate loaded, or any other edit, leaves
//! the result shown until the reader searches again.

use leptos::prelude::*;
use overlap_core::search::{FoundRow, Objective};
use overlap_core::{Scenario, ScenarioInput};
use overlap_session::search::SearchAsk;
use overlap_view::format;
use overlap_view::panes::Pane;
use overlap_view::plot::Plot;

use super::pane::{Frame, PlotPane, PLOT_HEIGHT_PX};
use crate::state::AppState;

/// The search pane.
pub struct SearchPane;

/// What the pane as the link opened it asks for, on the page's `input`.
fn ask_of(pane: &Pane, input: &ScenarioInput) -> Option<SearchAsk> {
    let Pane::Search { gpus, objective } = pane else {
        return None;
    };
    Some(SearchAsk {
        input: input.clone(),
        gpus: *gpus,
        objective: *objective,
    })
}

/// Loads a listed candidate's scenario.
fn load(state: AppState, row: &FoundRow) {
    let input = row.input.clone();
    state.edit(move |i| *i = input);
}

/// The pane with `f` applied to its search's options.
fn set_pane(state: AppState, f: impl FnOnce(&mut Option<u64>, &mut Objective)) {
    if let Pane::Search {
        mut gpus,
        mut objective,
    } = state.pane.get_untracked()
    {
        f(&mut gpus, &mut objective);
        state.pane.set(Pane::Search { gpus, objective });
    }
}

impl PlotPane for SearchPane {
    fn update(&self, frame: Frame, pane: &Pane, input: &ScenarioInput) {
        let searcher = frame.searcher();
        // Opened, or its options changed: search. An edit of the scenario
        // alone (a candidate loaded) keeps what is shown.
        let shown = searcher.found.with_untracked(Option::is_some) || searcher.busy();
        let Some(ask) = ask_of(pane, input) else {
            return;
        };
        let same_options = searcher.last_options() == Some((ask.gpus, ask.objective));
        if !shown || !same_options {
            searcher.ask(ask);
        }
    }

    fn close(&self, frame: Frame) {
        frame.searcher().cancel_quietly();
    }

    fn track(&self, frame: Frame) {
        let searcher = frame.searcher();
        searcher.found.track();
    }

    fn problem(&self, frame: Frame) -> Option<String> {
        frame.searcher().problem.get()
    }

    fn above(&self, frame: Frame) -> AnyView {
        let state = frame.state;
        let searcher = frame.searcher();
        let gpus_text = move || match state.pane.get() {
            Pane::Search { gpus: Some(n), .. } => n.to_string(),
            _ => String::new(),
        };
        let scenario_gpus = move || {
            state
                .resolved
                .get()
                .map_or_else(String::new, |s| s.hardware.gpus().to_string())
        };
        let on_gpus = move |ev: leptos::ev::Event| {
            let text = event_target_value(&ev);
            let n = text.trim().parse::<u64>().ok();
            set_pane(state, |g, _| *g = n);
        };
        let on_objective = move |ev: leptos::ev::Event| {
            if let Some(o) = Objective::from_name(&event_target_value(&ev)) {
                set_pane(state, |_, objective| *objective = o);
            }
        };
        let objective_now = move || match state.pane.get() {
            Pane::Search { objective, .. } => objective,
            _ => Objective::default(),
        };
        let search_now = move |_| {
            if let Some(ask) = ask_of(&state.pane.get_untracked(), &state.input.get_untracked()) {
                frame.searcher().ask_again(ask);
            }
        };
        let cancel = move |_| frame.searcher().cancel();
        let progress = searcher.progress;
        view! {
            <div class="search-controls">
                <label>"GPUs "
                    <input type="number" class="search-gpus" min="1" step="1"
                        placeholder=scenario_gpus prop:value=gpus_text on:change=on_gpus />
                </label>
                <label>" Rank by "
                    <select class="search-objective" on:change=on_objective
                        prop:value=move || objective_now().name()>
                        {Objective::ALL.into_iter().map(|o| view! {
                            <option value=o.name() selected=move || objective_now() == o>
                                {objective_label(o)}
                            </option>
                        }).collect::<Vec<_>>()}
                    </select>
                </label>
                " "
                <button type="button" class="search-run" on:click=search_now>"Search"</button>
                <Show when=move || progress.get().is_some()>
                    <button type="button" class="search-cancel" on:click=cancel>"Cancel"</button>
                </Show>
            </div>
            {move || progress.get().map(|(fraction, label)| view! {
                <div class="search-progress" role="status">
                    <progress max="1" value=fraction.to_string()></progress>
                    " " {label}
                </div>
            })}
            {move || status(frame)}
        }
        .into_any()
    }

    fn below(&self, frame: Frame) -> AnyView {
        view! {
            // Each row says its rank among every simulated layout, which the
            // front (objective "both") skips through: no list numbers beside it.
            <ul class="search-best" style="list-style:none;padding-left:0"
                aria-label="The best layouts: press one to load its scenario">
                {move || rows(frame)}
            </ul>
        }
        .into_any()
    }

    fn picture(&self, frame: Frame, _scenario: Option<&Scenario>, width: f64) -> Option<Plot> {
        let (found, _, _) = frame.searcher().found.get_untracked()?;
        Some(overlap_view::search_plot::search_plot(
            &found,
            width,
            PLOT_HEIGHT_PX,
        ))
    }

    fn csv(&self, frame: Frame) -> String {
        frame
            .searcher()
            .found
            .get_untracked()
            .map_or_else(String::new, |(found, _, _)| found.csv())
    }

    fn clicked(&self, frame: Frame, index: usize) {
        if let Some((found, _, _)) = frame.searcher().found.get_untracked() {
            if let Some(row) = found.best.get(index) {
                load(frame.state, row);
            }
        }
    }
}

/// The objective as the picker names it.
fn objective_label(o: Objective) -> &'static str {
    match o {
        Objective::Step => "step time",
        Objective::Memory => "memory",
        Objective::Both => "the Pareto front",
    }
}

/// The search's counts and why the winner wins, once shown.
fn status(frame: Frame) -> Option<impl IntoView> {
    let (found, search_ms, workers) = frame.searcher().found.get()?;
    Some(view! {
        <div class="search-status" role="status"
            data-search-space=found.space.to_string()
            data-search-simulated=found.simulated.to_string()
            data-search-pruned=found.pruned.to_string()
            data-search-refused=found.refused().to_string()
            data-search-ms=format!("{search_ms}")
            data-search-workers=workers.to_string()>
            <p class="search-counts">{found.counts()}</p>
            <p class="search-time">{overlap_view::search_plot::time_taken(search_ms, workers)}</p>
            {found.winner.clone().map(|w| view! { <p class="search-winner">{w}</p> })}
            {found.given.clone().map(|g| view! {
                <p class="search-given">"Against the scenario's own layout: "{g}</p>
            })}
        </div>
    })
}

/// The best layouts as buttons: read by tests and screen readers, reached
/// by Tab; a press loads the layout's scenario.
fn rows(frame: Frame) -> Vec<AnyView> {
    let state = frame.state;
    let Some((found, _, _)) = frame.searcher().found.get() else {
        return Vec::new();
    };
    found
        .best
        .iter()
        .map(|row| {
            let label = format!(
                "{}. {}: step {}, memory {}, MFU {}{}",
                row.rank,
                row.description,
                format::ms(row.step_ms),
                format::gb(row.memory_gb),
                format::pct(row.mfu),
                if row.on_front { " (on the front)" } else { "" }
            );
            let chosen = row.clone();
            view! {
                <li>
                    <button type="button" class="search-row"
                        data-search-rank=row.rank.to_string()
                        data-step-ms=format::raw(row.step_ms)
                        data-memory-gb=format::raw(row.memory_gb)
                        data-on-front=row.on_front.to_string()
                        title="Load this layout's scenario"
                        on:click=move |_| load(state, &chosen)>
                        {label}
                    </button>
                </li>
            }
            .into_any()
        })
        .collect()
}
