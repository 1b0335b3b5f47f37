//! The session as a [`Machine`]: how a worker's replies, or a failure to
//! reach it, become the session's events.

use crate::job::{Heard, Machine};
use crate::messages::WorkerReply;

use super::events::{Action, Event};
use super::session::Session;

/// What the page knows as a reply comes: whether it would keep the
/// timeline shown for comparison (the new run has the same preset as the
/// run shown), asked before figures replace the shown run's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageNow {
    /// The run shown is of the same preset as the page's input.
    pub keep_before: bool,
}

impl Machine for Session {
    type Event = Event;
    type Action = Action;
    type Context = PageNow;

    fn handle(&mut self, now_ms: f64, event: Event) -> Vec<Action> {
        Session::handle(self, now_ms, event)
    }

    fn heard(heard: Heard<'_>, page: PageNow) -> Vec<Event> {
        let reply = match heard {
            Heard::Reply(reply) => reply,
            Heard::SpawnFailed(why) => return vec![Event::SpawnFailed(why.to_string())],
            Heard::PostFailed => return vec![Event::PostFailed],
        };
        // The counts first: a reply that ends a run also says what the
        // worker did, shown whether or not the run is still the newest.
        let mut out: Vec<Event> = reply.runs().map(Event::Runs).into_iter().collect();
        out.extend(match reply {
            WorkerReply::Ready => Some(Event::Ready),
            WorkerReply::Figures {
                gen,
                sim_ms,
                cached,
                ..
            } => Some(Event::Figures {
                gen: *gen,
                figures_ms: *sim_ms,
                cached: *cached,
                keep_before: page.keep_before,
            }),
            WorkerReply::Result {
                gen,
                sim_ms,
                memory_bytes,
                ..
            } => Some(Event::Result {
                gen: *gen,
                sim_ms: *sim_ms,
                memory_bytes: *memory_bytes,
            }),
            WorkerReply::NoTimeline {
                gen,
                field,
                message,
                ..
            } => Some(Event::NoTimeline {
                gen: *gen,
                field: field.clone(),
                message: message.clone(),
            }),
            WorkerReply::Refused {
                gen,
                field,
                message,
                ..
            } => Some(Event::Refused {
                gen: *gen,
                field: field.clone(),
                message: message.clone(),
            }),
            WorkerReply::Panic { message } => Some(Event::Panicked(message.clone())),
            WorkerReply::Crashed { message } => Some(Event::Crashed(message.clone())),
            // Answers to other jobs' requests.
            WorkerReply::Trace { .. }
            | WorkerReply::Kineto { .. }
            | WorkerReply::PartsRan { .. }
            | WorkerReply::SearchCandidatesRan { .. }
            | WorkerReply::ImportProgress { .. }
            | WorkerReply::Imported { .. }
            | WorkerReply::ImportRefused { .. }
            | WorkerReply::SearchProgress { .. }
            | WorkerReply::Searched { .. }
            | WorkerReply::SearchRefused { .. }
            | WorkerReply::SweepPoint { .. }
            | WorkerReply::BusCurve { .. } => None,
        });
        out
    }

    fn busy(&self) -> bool {
        Session::busy(self)
    }
}
