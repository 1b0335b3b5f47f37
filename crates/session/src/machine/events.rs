//! What the session takes (an [`Event`]: the page, the worker or a timer)
//! and what it returns for the adapter to do (an [`Action`]).

use overlap_core::{Scenario, ScenarioInput};

use crate::messages::{RunCounts, WorkerRequest};

/// Why the last run did not show, for the page's alert.
#[derive(Clone, Debug, PartialEq)]
pub struct Alert {
    /// One sentence naming the cause and what the page shows instead.
    pub cause: String,
    /// Whether the alert carries the share link to report (an internal error).
    pub report_link: bool,
}

/// A run whose figures are shown while its timeline is still coming.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FiguresShown {
    /// Whether the timeline shown keeps the one before it for comparison,
    /// decided when the figures replaced the previous ones.
    pub keep_before: bool,
}

/// What happened: the page, the worker or a timer.
#[derive(Clone, Debug)]
pub enum Event {
    /// A new input that resolved: run it; it overtakes every request before it.
    Request {
        input: Box<ScenarioInput>,
        scenario: Box<Scenario>,
        /// When the input changed (ms since the epoch).
        made_at: f64,
    },
    /// The input no longer resolves: nothing waiting is worth running.
    Invalid,
    /// The input has rested for [`SETTLE_MS`](super::budgets::SETTLE_MS) (`Action::ArmSettle`).
    SettleElapsed,
    /// The worker could not be started (`Action::Spawn`).
    SpawnFailed(String),
    /// The worker did not accept a request (`Action::Post`).
    PostFailed,
    /// Run `gen`'s budget is spent (`Action::ArmBudget`).
    BudgetSpent(u64),
    /// The user pressed Stop.
    Stop,
    /// The worker stopped: its script failed, or its module trapped.
    Crashed(String),
    /// The worker's module panicked (a trap and `Crashed` follow).
    Panicked(String),
    /// The worker's message handler is installed.
    Ready,
    /// The worker's counts, carried by one of its replies.
    Runs(RunCounts),
    /// Run `gen`'s figures, ahead of its timeline.
    Figures {
        gen: u64,
        /// How long they took, ms.
        figures_ms: f64,
        /// Kept from an earlier run: their time measures nothing.
        cached: bool,
        /// Whether the page would keep the timeline before for comparison
        /// (the same preset as the one shown), asked before they are shown.
        keep_before: bool,
    },
    /// Run `gen`'s result with its timeline.
    Result {
        gen: u64,
        sim_ms: f64,
        memory_bytes: f64,
    },
    /// Run `gen`'s timeline is over the core's limit for one: the core's
    /// refusal, naming the field.
    NoTimeline {
        gen: u64,
        field: String,
        message: String,
    },
    /// The worker refused run `gen`.
    Refused {
        gen: u64,
        field: Option<String>,
        message: String,
    },
    /// Run `gen`'s timeline is decoded and measured for drawing.
    Decoded(u64),
    /// Run `gen`'s timeline could not be read.
    DecodeFailed { gen: u64, why: String },
}

/// What the adapter does, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Start a new worker.
    Spawn,
    /// Terminate the worker (a run it was computing is stopped).
    Terminate,
    /// Post this request to the worker.
    Post(Box<WorkerRequest>),
    /// (Re)arm the single budget timer: `BudgetSpent(gen)` after `ms`.
    ArmBudget { gen: u64, ms: u32 },
    /// (Re)arm the settle timer: `SettleElapsed` after `ms`.
    ArmSettle { ms: u32 },
    /// Drop the settle timer.
    CancelSettle,
    /// Show the alert.
    Alert(Alert),
    /// Note how long the run waited since its input changed (made at
    /// `made_at`, ms since the epoch), from the reply's `taken_up_at`.
    NoteWait { made_at: f64 },
    /// Show run `gen`'s figures (from the reply in hand), ahead of its timeline.
    ShowFigures {
        gen: u64,
        scenario: Scenario,
        made_at: f64,
    },
    /// Decode run `gen`'s timeline (from the reply in hand), slice by slice;
    /// `Decoded` or `DecodeFailed` follows.
    Decode {
        gen: u64,
        scenario: Scenario,
        figures: Option<FiguresShown>,
    },
    /// Drop the timeline being decoded: a newer request overtook it.
    DropDecoding,
    /// Show run `gen`, decoded: its figures (unless shown), timeline, notes.
    Show { gen: u64 },
    /// Say in the timeline's place why the run shown has no timeline.
    TimelineRefused { field: String, message: String },
    /// A refusal naming a field: shown beside that control.
    FieldRefused { field: String, message: String },
    /// The first request's run (the scenario the page opened with) was
    /// refused naming `field`, before anything was shown: open the default
    /// scenario and say why.
    FirstRunRefused { field: String, message: String },
    /// The workers' counts changed (JSON for `data-worker-runs`).
    Runs(String),
}
