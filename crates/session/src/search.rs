//! The layout search in the page (`view=search`), as a state machine: the
//! scenario's model laid out on N GPUs by the core's search
//! (`overlap_core::search`), run in a worker of its own (the simulation
//! worker stays free for the controls, and the search's memory goes with
//! its worker), with a progress bar and a cancel, and the result shown as
//! `overlap_core::search::Found` or the refusal alerted.
//!
//! The errand's rules hold (`crate::errand`): the newest search wins, a
//! cancel terminates the worker, a search over [`SEARCH_BUDGET_MS`] is
//! stopped and said so.
//!
//! As [`crate::machine`], this holds no timer and no worker:
//! [`SearchSession::handle`] takes a [`SearchEvent`] and returns the
//! [`SearchAction`]s the adapter performs.

use overlap_core::search::{Objective, Progress};
use overlap_core::ScenarioInput;

use crate::errand::{Errand, ErrandAction};
use crate::job::{Heard, Machine};
use crate::messages::{WorkerReply, WorkerRequest};

/// A search that takes longer than this is stopped and said so. The
/// page's search worker simulates over a pool of helpers, one per core
/// the browser reports (`src/serve/search.rs`), as the command line uses
/// every core: GPT-3 175B on 1,024 GPUs is the largest case;
/// ten minutes leaves room for a slower laptop, and the reader can cancel
/// sooner. A project choice, not a measurement.
pub const SEARCH_BUDGET_MS: u32 = 600_000;

/// The progress bar moves in steps of at least this much of the whole.
pub const PROGRESS_STEP: f64 = 0.01;

/// A search the reader asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchAsk {
    /// The scenario whose model is laid out.
    pub input: ScenarioInput,
    /// The GPUs (`None`: the scenario's).
    pub gpus: Option<u64>,
    /// What the best list is ranked by.
    pub objective: Objective,
}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum SearchEvent {
    /// The reader asked for a search.
    Start(Box<SearchAsk>),
    /// The search worker's message handler is installed.
    Ready,
    /// The search worker could not be started.
    SpawnFailed(String),
    /// The search worker did not accept the request.
    PostFailed,
    /// Search `gen` stands here.
    Progress { gen: u64, progress: Progress },
    /// Search `gen` is done: its result is in the reply at hand.
    Searched { gen: u64 },
    /// Search `gen` was refused: the line naming what to change.
    Refused { gen: u64, message: String },
    /// The search worker panicked (a trap and `Crashed` follow).
    Panicked(String),
    /// The search worker stopped.
    Crashed(String),
    /// Search `gen`'s budget is spent.
    BudgetSpent(u64),
    /// The reader cancelled, or left the view.
    Cancel,
}

/// What the adapter does, in order: an errand's actions.
pub type SearchAction = ErrandAction;

/// The page's layout searches.
#[derive(Clone, Debug, Default)]
pub struct SearchSession {
    errand: Errand,
    /// The search last asked for: a request for the same is not run again.
    asked: Option<SearchAsk>,
}

impl SearchSession {
    /// Whether a search is under way.
    pub fn busy(&self) -> bool {
        self.errand.busy()
    }

    /// Whether `ask` is the search last asked for (running, shown or refused).
    pub fn asked(&self, ask: &SearchAsk) -> bool {
        self.asked.as_ref() == Some(ask)
    }

    /// The GPUs and objective of the search last asked for.
    pub fn last_options(&self) -> Option<(Option<u64>, Objective)> {
        self.asked.as_ref().map(|a| (a.gpus, a.objective))
    }

    /// Forgets the search last asked for: the same request runs again.
    pub fn forget_asked(&mut self) {
        self.asked = None;
    }

    /// Takes `event` and returns what to do.
    pub fn handle(&mut self, event: SearchEvent) -> Vec<SearchAction> {
        let mut out = Vec::new();
        let e = &mut self.errand;
        match event {
            SearchEvent::Start(ask) => {
                let gen = e.supersede(&mut out);
                e.start(
                    WorkerRequest::Search {
                        gen,
                        input: ask.input.clone(),
                        gpus: ask.gpus,
                        objective: ask.objective,
                    },
                    SEARCH_BUDGET_MS,
                    "Searching: laying out the candidates".to_string(),
                    &mut out,
                );
                self.asked = Some(*ask);
            }
            SearchEvent::Ready => e.ready(&mut out),
            SearchEvent::SpawnFailed(why) => {
                e.spawn_failed(format!("The search could not start: {why}."), &mut out);
            }
            SearchEvent::PostFailed => e.fail(
                "The search could not start: its worker did not accept the request.".to_string(),
                &mut out,
            ),
            SearchEvent::Progress { gen, progress } => {
                let decided = progress.space - progress.remaining;
                let fraction = if progress.space == 0 {
                    1.0
                } else {
                    decided as f64 / progress.space as f64
                };
                e.progress(
                    gen,
                    fraction,
                    PROGRESS_STEP,
                    || progress_label(&progress),
                    &mut out,
                );
            }
            SearchEvent::Searched { gen } => e.done(gen, &mut out),
            SearchEvent::Refused { gen, message } => {
                e.refused(gen, format!("The search was refused: {message}"), &mut out);
            }
            SearchEvent::Panicked(why) => e.worker_gone(
                || format!("The search stopped with an internal error ({why}). This is a bug: please report it with the scenario's link."),
                &mut out,
            ),
            SearchEvent::Crashed(why) => e.worker_gone(
                || format!("The search stopped: {why}. This usually means the page ran out of memory; `overlap-lab search` runs the same search from the command line."),
                &mut out,
            ),
            SearchEvent::BudgetSpent(gen) => e.budget_spent(
                gen,
                || format!(
                    "Stopped: the search took longer than {} s, the page's budget for it. Fix some fields or run `overlap-lab search`, which uses every core.",
                    SEARCH_BUDGET_MS / 1000
                ),
                &mut out,
            ),
            SearchEvent::Cancel => {
                if e.busy() {
                    // A cancelled search is not the one shown: asking again runs it.
                    self.asked = None;
                }
                e.cancel(&mut out);
            }
        }
        out
    }
}

impl Machine for SearchSession {
    type Event = SearchEvent;
    type Action = SearchAction;
    type Context = ();

    /// As [`SearchSession::handle`]: a search's transitions do not depend
    /// on the time (its budget is a timer of the page's).
    fn handle(&mut self, _now_ms: f64, event: SearchEvent) -> Vec<SearchAction> {
        SearchSession::handle(self, event)
    }

    fn heard(heard: Heard<'_>, (): ()) -> Vec<SearchEvent> {
        let event = match heard {
            Heard::SpawnFailed(why) => SearchEvent::SpawnFailed(why.to_string()),
            Heard::PostFailed => SearchEvent::PostFailed,
            Heard::Reply(reply) => match reply {
                WorkerReply::Ready => SearchEvent::Ready,
                WorkerReply::SearchProgress { gen, progress } => SearchEvent::Progress {
                    gen: *gen,
                    progress: *progress,
                },
                WorkerReply::Searched { gen, .. } => SearchEvent::Searched { gen: *gen },
                WorkerReply::SearchRefused { gen, message } => SearchEvent::Refused {
                    gen: *gen,
                    message: message.clone(),
                },
                WorkerReply::Panic { message } => SearchEvent::Panicked(message.clone()),
                WorkerReply::Crashed { message } => SearchEvent::Crashed(message.clone()),
                _ => return Vec::new(),
            },
        };
        vec![event]
    }

    fn busy(&self) -> bool {
        SearchSession::busy(self)
    }
}

/// The bar's label: how many candidates are decided, and how.
pub fn progress_label(p: &Progress) -> String {
    format!(
        "Searching: {} of {} layouts decided ({} simulated, {} pruned, {} refused)",
        p.space - p.remaining,
        p.space,
        p.simulated,
        p.pruned,
        p.refused
    )
}
