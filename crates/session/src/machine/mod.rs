//! The page's run session as a state machine: which request runs, which
//! result is shown, and when a run is stopped.
//!
//! - The newest request wins: a request made while another runs replaces any
//!   request still waiting, and a slow run that has been overtaken is
//!   stopped (its worker is terminated and a new one started) rather than
//!   finished. A result that is no longer the newest is dropped.
//! - After a slow run, input that keeps changing (a slider being dragged)
//!   is coalesced: sent once it rests for [`SETTLE_MS`].
//! - Every run has a time budget; a run over it, a stopped run, a panic in
//!   the simulator or a crashed worker becomes an alert that names the
//!   cause, and the previous timeline stays.
//! - A large run's figures come first: they are shown at once and the
//!   timeline gets a budget of its own. A newer request made while those
//!   figures are computed, when they come quickly, is posted at once (the
//!   worker drops the overtaken timeline before computing it).
//! - A worker whose memory grew past [`WORKER_MEMORY_LIMIT_BYTES`] is
//!   retired before the first run whose all-off baseline differs from its
//!   last.
//!
//! The machine holds no timer and no worker: [`Session::handle`] takes an
//! [`Event`] with the time it happened and returns the [`Action`]s the
//! adapter performs (start a worker, post a request, arm a timer, show an
//! alert...). The same events give the same actions, natively and in the
//! browser.
//!
//! Its parts: the page's time and memory `budgets`, the `events` it takes
//! and the actions it returns, its `states`, the `session` that moves
//! between them, and how a worker's `replies` become its events.

mod budgets;
mod events;
mod replies;
mod session;
mod states;

pub use budgets::{
    FAST_FIGURES_MS, FAST_RUN_MS, RUN_BUDGET_MS, SETTLE_MS, TIMELINE_BUDGET_MS,
    WORKER_MEMORY_LIMIT_BYTES,
};
pub use events::{Action, Alert, Event, FiguresShown};
pub use replies::PageNow;
pub use session::Session;
pub use states::Worker;
