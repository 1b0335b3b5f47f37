//! One shape for every job the page runs in a worker of its own: a state
//! machine that takes events and returns actions, and says which event a
//! worker's reply is to it.
//!
//! The simulate session ([`crate::Session`]), the trace import
//! ([`crate::ImportSession`]) and the sweep view's curves
//! ([`crate::SweepSession`]) each implement [`Machine`]. The app drives
//! any of them the same way: its one `WorkerClient` starts the worker,
//! waits for it to be ready, queues what is posted before then and notices
//! when it panics or stops; every reply it hears goes through
//! [`Machine::heard`] to the machine, whose actions the page performs.
//! What differs between the jobs (which request runs, which result shows,
//! what an alert says) stays in each machine, where it is tested natively.

use crate::messages::WorkerReply;

/// What the page's side of a worker heard from it, or met trying to reach it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Heard<'a> {
    /// A reply of the worker: `Ready` once its handler is installed,
    /// `Panic` and `Crashed` when it goes (a failure of its script, or a
    /// message the page cannot read, reaches the page as `Crashed` too).
    Reply(&'a WorkerReply),
    /// The worker could not be started: why.
    SpawnFailed(&'a str),
    /// The worker did not accept a request.
    PostFailed,
}

/// A job of the page with a worker of its own, as a state machine.
///
/// The machine holds no timer and no worker: [`Machine::handle`] takes an
/// event with the time it happened and returns the actions the page
/// performs, in order. The same events give the same actions, natively
/// and in the browser.
pub trait Machine {
    /// What happened: the page, the worker or a timer.
    type Event;
    /// What the page does.
    type Action;
    /// What the page knows as a reply comes that the reply's event
    /// carries (decided then, before the reply changes what is shown);
    /// `()` for a machine that needs nothing.
    type Context;

    /// Takes `event`, which happened at `now_ms` (the page's monotonic
    /// clock), and returns what to do, in order.
    fn handle(&mut self, now_ms: f64, event: Self::Event) -> Vec<Self::Action>;

    /// The events a worker's reply (or a failure to reach the worker) is
    /// to this machine, in order: none for a reply of another job.
    fn heard(heard: Heard<'_>, context: Self::Context) -> Vec<Self::Event>;

    /// Whether the job is under way.
    fn busy(&self) -> bool;
}
