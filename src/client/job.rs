//! A session's machine (`overlap_session::Machine`) driven over a worker
//! of its own: the page's half of every job, written once.
//!
//! A job's host (the runner, the importer, the sweep view's curves) holds
//! its machine and a [`WorkerClient`] and performs the machine's actions
//! ([`Host`]). [`feed`] hands the machine an event and the host each
//! action returned; [`client_for`] makes the client whose replies reach
//! the machine through `Machine::heard`; [`start`] and [`post`] reach the
//! worker, and a failure to is heard by the machine as one more event.

use std::cell::RefCell;
use std::rc::Weak;

use gloo_timers::callback::Timeout;

use overlap_session::{Heard, Machine, WorkerRequest};

use super::worker_client::{NotSent, Received, WorkerClient};
use crate::dom;

/// The page's side of one job: its machine, its worker and what its
/// actions do.
pub trait Host: 'static {
    /// The job's state machine.
    type Machine: Machine;

    /// The machine.
    fn machine(&self) -> &RefCell<Self::Machine>;

    /// The job's worker.
    fn client(&self) -> &WorkerClient;

    /// What the page knows as a reply comes (`Machine::Context`).
    fn context(&self) -> <Self::Machine as Machine>::Context;

    /// Performs one action; `received` is the reply in hand when the
    /// event came from one (its report, its arrays).
    fn perform(&self, action: <Self::Machine as Machine>::Action, received: Option<&Received>);

    /// After each event's actions are performed.
    fn fed(&self) {}
}

/// Feeds the machine `event` and performs what it returns, in order.
pub fn feed<H: Host>(host: &H, event: <H::Machine as Machine>::Event, received: Option<&Received>) {
    // The borrow ends before any action runs: an action may feed again.
    let actions = host.machine().borrow_mut().handle(dom::now_ms(), event);
    for action in actions {
        host.perform(action, received);
    }
    host.fed();
}

/// Feeds the machine what `heard` is to it.
pub fn hear<H: Host>(host: &H, heard: Heard<'_>, received: Option<&Received>) {
    for event in H::Machine::heard(heard, host.context()) {
        feed(host, event, received);
    }
}

/// The client of `host`'s worker: every reply is heard by its machine.
pub fn client_for<H: Host>(host: Weak<H>) -> WorkerClient {
    WorkerClient::new(move |received| {
        if let Some(host) = host.upgrade() {
            hear(&*host, Heard::Reply(&received.reply), Some(&received));
        }
    })
}

/// A timer that feeds `host`'s machine `event` after `ms` (a machine's
/// budget): dropped, it never fires, so replacing it cancels it.
pub fn feed_after<H: Host>(host: Weak<H>, ms: u32, event: <H::Machine as Machine>::Event) -> Timeout
where
    <H::Machine as Machine>::Event: 'static,
{
    Timeout::new(ms, move || {
        if let Some(host) = host.upgrade() {
            feed(&*host, event, None);
        }
    })
}

/// Starts a new worker for `host` (a machine's "spawn").
pub fn start<H: Host>(host: &H) {
    if let Err(why) = host.client().start() {
        hear(host, Heard::SpawnFailed(&why), None);
    }
}

/// Posts `request` to `host`'s worker (started if there is none); false
/// when it did not go, which the machine has heard.
pub fn post<H: Host>(host: &H, request: &WorkerRequest) -> bool {
    sent(host, host.client().post(request))
}

/// Posts `request` with `items` after it (`WorkerClient::post_with`).
pub fn post_with<H: Host>(host: &H, request: &WorkerRequest, items: &js_sys::Array) -> bool {
    sent(host, host.client().post_with(request, items))
}

fn sent<H: Host>(host: &H, result: Result<(), NotSent>) -> bool {
    match result {
        Ok(()) => true,
        Err(NotSent::Spawn(why)) => {
            hear(host, Heard::SpawnFailed(&why), None);
            false
        }
        Err(NotSent::Post) => {
            hear(host, Heard::PostFailed, None);
            false
        }
    }
}
