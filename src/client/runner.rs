//! The page's side of the simulation worker: a thin adapter between the
//! browser and the run session (`overlap_session::Session`), which decides
//! which request runs, which result shows and when a run is stopped.
//!
//! The page resolves the input itself (that is quick, and explains any
//! invalid field at once); the simulation runs in a Web Worker
//! (`crate::serve`), so that the page stays responsive however long it
//! takes. Every input change, worker reply, timer and Stop press becomes a
//! `machine::Event` (a reply through `Machine::heard`, `job`); the runner
//! performs the `machine::Action`s returned: it starts and terminates the
//! worker (its `WorkerClient`), posts requests, arms the budget and settle
//! timers, decodes the timeline a slice at a time (`decoding`) and shows
//! what came (`show`).
//!
//! All of it is per app instance: `install` provides the instance's runner
//! as a context ([`RunnerHandle`]), with its own worker.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use overlap_core::{Report, ScenarioInput};
use overlap_session::machine::{Action, Event, PageNow};
use overlap_session::{Session, WorkerReply, WorkerRequest};

use super::decoding::{Decoding, JsWords};
use super::job::{self, Host};
use super::show::{self, FiguresPath, Shown};
use super::worker_client::{Received, WorkerClient};
use crate::dom;
use crate::dom::epoch_ms;
use crate::state::AppState;
use crate::web::address::{self as share, Share};

/// The browser's side of one session: its timers, the timeline being
/// decoded and the input waiting for its task.
#[derive(Default)]
struct PageSide {
    /// The one budget timer; a stale one finds its run gone and does nothing.
    budget: Option<Timeout>,
    settle: Option<Timeout>,
    decoding: Option<Decoding>,
    /// The next slice of `decoding`.
    next_slice: Option<crate::dom::NextTask>,
    /// The last input that resolved, to tell which control made the scenario invalid.
    last_valid: Option<ScenarioInput>,
    /// The newest input, requested in a task of its own (see [`Runner::request_soon`]).
    soon: Option<(ScenarioInput, Timeout)>,
}

/// One app instance's simulation runner.
pub struct Runner {
    session: RefCell<Session>,
    client: WorkerClient,
    page: RefCell<PageSide>,
    me: Weak<Runner>,
    state: AppState,
    share: Option<Share>,
}

/// The instance's runner, as components reach it (a context).
#[derive(Clone, Copy)]
pub struct RunnerHandle(StoredValue<Rc<Runner>, LocalStorage>);

impl RunnerHandle {
    /// The user pressed Stop.
    pub fn stop(&self) {
        self.0.get_value().feed(Event::Stop, None);
    }
}

impl Host for Runner {
    type Machine = Session;

    fn machine(&self) -> &RefCell<Session> {
        &self.session
    }

    fn client(&self) -> &WorkerClient {
        &self.client
    }

    fn context(&self) -> PageNow {
        // Decided as figures come, before the shown run's preset is replaced.
        PageNow {
            keep_before: self.state.same_preset_as_shown(),
        }
    }

    fn perform(&self, action: Action, held: Option<&Received>) {
        let state = self.state;
        match action {
            Action::Spawn => job::start(self),
            Action::Terminate => self.client.terminate(),
            Action::Post(request) => {
                job::post(self, &request);
            }
            Action::ArmBudget { gen, ms } => {
                let timer = job::feed_after(self.me.clone(), ms, Event::BudgetSpent(gen));
                self.page.borrow_mut().budget = Some(timer);
            }
            Action::ArmSettle { ms } => {
                let weak = self.me.clone();
                // Replacing the timer cancels the previous one.
                self.page.borrow_mut().settle = Some(Timeout::new(ms, move || {
                    if let Some(r) = weak.upgrade() {
                        r.page.borrow_mut().settle = None;
                        r.feed(Event::SettleElapsed, None);
                    }
                }));
            }
            Action::CancelSettle => self.page.borrow_mut().settle = None,
            Action::Alert(a) => {
                let link = a
                    .report_link
                    .then(|| self.share.map(|s| share::link(state, s, false)))
                    .flatten();
                show::alert(state, a.cause, link);
            }
            Action::NoteWait { made_at } => {
                if let Some(Received {
                    reply:
                        WorkerReply::Figures { taken_up_at, .. }
                        | WorkerReply::Result { taken_up_at, .. },
                    ..
                }) = held
                {
                    show::wait(made_at, *taken_up_at);
                }
            }
            Action::ShowFigures {
                scenario, made_at, ..
            } => {
                if let Some(Received {
                    reply:
                        WorkerReply::Figures {
                            report,
                            sim_ms,
                            taken_up_at,
                            resolve_ms,
                            posted_at,
                            ..
                        },
                    received_at,
                    ..
                }) = held
                {
                    let path = FiguresPath {
                        made_at,
                        taken_up_at: *taken_up_at,
                        resolve_ms: *resolve_ms,
                        core_ms: *sim_ms,
                        posted_at: *posted_at,
                        received_at: *received_at,
                    };
                    show::figures_ahead(state, report.clone(), scenario, path);
                }
            }
            Action::Decode {
                gen,
                scenario,
                figures,
            } => {
                if let Some(held) = held {
                    self.decode(gen, held, scenario, figures);
                }
            }
            Action::DropDecoding => {
                let mut page = self.page.borrow_mut();
                page.decoding = None;
                page.next_slice = None;
            }
            Action::Show { .. } => {
                let ready = self.page.borrow_mut().decoding.take();
                if let Some((run, timeline)) = ready.and_then(Decoding::into_ready) {
                    show::run(state, run, timeline);
                }
            }
            Action::TimelineRefused { field, message } => {
                show::timeline_refused(state, &field, &message)
            }
            Action::FieldRefused { field, message } => show::field_refused(state, field, &message),
            Action::FirstRunRefused { field, message } => match self.share {
                Some(s) => share::open_default_after_refusal(state, s, &field, &message),
                None => show::field_refused(state, field, &message),
            },
            Action::Runs(json) => dom::set_body_data("worker-runs", &json),
        }
    }

    fn fed(&self) {
        let (busy, ahead) = {
            let s = self.session.borrow();
            (s.busy(), s.figures_ahead())
        };
        show::busy(self.state, busy, ahead);
    }
}

impl Runner {
    fn feed(&self, event: Event, received: Option<&Received>) {
        job::feed(self, event, received);
    }

    /// Requests a run of `input` in a task of its own, after the one that
    /// changed it, so that resolving it does not add up with the controls'
    /// updates into one long task. A newer input before then replaces it.
    fn request_soon(&self, input: ScenarioInput) {
        let weak = self.me.clone();
        let timer = Timeout::new(0, move || {
            let Some(r) = weak.upgrade() else { return };
            let next = r.page.borrow_mut().soon.take();
            if let Some((input, _)) = next {
                r.request(input);
            }
        });
        self.page.borrow_mut().soon = Some((input, timer));
    }

    /// A new scenario input: explain it if invalid, else ask for a run.
    fn request(&self, input: ScenarioInput) {
        let state = self.state;
        let resolved = crate::state::resolve(&input);
        // The preset's own scenario too (remembered, so normally at no
        // cost): the "modified" mark compares the two once both are known.
        if let Some(preset) = overlap_core::presets::find(&state.preset_id.get_untracked()) {
            let _ = crate::state::resolve(&preset.input());
        }
        state.resolve_seq.update(|n| *n += 1);
        let scenario = match resolved {
            Ok(s) => s,
            Err(e) => {
                // Keep the last valid timeline on screen; the controls explain.
                let changed = self
                    .page
                    .borrow()
                    .last_valid
                    .as_ref()
                    .map(|prev| changed_fields(prev, &input))
                    .unwrap_or_default();
                // While still refused, the field whose change made the
                // scenario invalid stays the culprit: a field changed since
                // (the NIC after a TP of 3) is not what to go back to.
                let kept: Vec<String> = state.culprits.with_untracked(|c| {
                    c.iter().filter(|f| changed.contains(f)).cloned().collect()
                });
                state
                    .culprits
                    .set(if kept.is_empty() { changed } else { kept });
                state.errors.set(e.errors);
                dom::set_body_data("errors", "1");
                self.feed(Event::Invalid, None);
                return;
            }
        };
        if !state.errors.with_untracked(Vec::is_empty) {
            state.errors.set(Vec::new());
        }
        if !state.culprits.with_untracked(Vec::is_empty) {
            state.culprits.set(Vec::new());
        }
        dom::set_body_data("errors", "0");
        self.page.borrow_mut().last_valid = Some(input.clone());
        let made_at = epoch_ms();
        self.feed(
            Event::Request {
                input: Box::new(input),
                scenario: Box::new(scenario),
                made_at,
            },
            None,
        );
    }

    /// Starts decoding the result in hand, in a task of its own: receiving
    /// a large result costs the main thread a few milliseconds already.
    fn decode(
        &self,
        gen: u64,
        held: &Received,
        scenario: overlap_core::Scenario,
        figures: Option<overlap_session::machine::FiguresShown>,
    ) {
        let WorkerReply::Result {
            report,
            sim_ms,
            timeline_ms,
            encode_ms,
            posted_at,
            ..
        } = &held.reply
        else {
            return;
        };
        let run = Shown {
            scenario,
            report: Report::clone(report),
            sim_ms: *sim_ms,
            received_ms: held.received_ms,
            figures,
            path: show::TimelinePath {
                core_ms: *timeline_ms,
                encode_ms: *encode_ms,
                to_page_ms: held.received_at - posted_at,
                ..Default::default()
            },
        };
        let started = JsWords::from_arrays(&held.arrays)
            .ok_or_else(|| "The simulation worker sent no timeline.".to_string())
            .and_then(|words| Decoding::new(gen, run, words));
        match started {
            Ok(decoding) => {
                self.page.borrow_mut().decoding = Some(decoding);
                self.next_slice();
            }
            Err(why) => self.feed(Event::DecodeFailed { gen, why }, None),
        }
    }

    /// Decodes one slice of the newest result; schedules the next slice,
    /// or tells the session once the timeline is ready to show.
    fn decode_slice(&self) {
        let stepped = {
            let mut page = self.page.borrow_mut();
            let Some(d) = page.decoding.as_mut() else {
                return;
            };
            (d.gen, d.slice())
        };
        match stepped {
            (gen, Ok(true)) => self.feed(Event::Decoded(gen), None),
            (_, Ok(false)) => self.next_slice(),
            (gen, Err(why)) => {
                self.page.borrow_mut().decoding = None;
                self.feed(Event::DecodeFailed { gen, why }, None);
            }
        }
    }

    /// Schedules the next slice of the newest result, in a task of its own
    /// (`dom::next_task`: not a timer, which nesting would clamp).
    fn next_slice(&self) {
        let weak = self.me.clone();
        self.page.borrow_mut().next_slice = Some(crate::dom::next_task(move || {
            if let Some(r) = weak.upgrade() {
                r.decode_slice();
            }
        }));
    }
}

/// Dotted names of the scenario fields that differ between two inputs
/// (`overlap.tp`), to mark the control whose change made a scenario invalid.
pub fn changed_fields(before: &ScenarioInput, after: &ScenarioInput) -> Vec<String> {
    let pairs = |i: &ScenarioInput| -> Vec<(String, serde_json::Value)> {
        serde_json::to_value(i)
            .map(|v| {
                overlap_view::report_csv::json_leaves(&v)
                    .into_iter()
                    .map(|(n, leaf)| (n, leaf.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (a, b) = (pairs(before), pairs(after));
    let value_in = |list: &[(String, serde_json::Value)], name: &str| {
        list.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or(serde_json::Value::Null)
    };
    let mut names: Vec<String> = a.iter().chain(b.iter()).map(|(n, _)| n.clone()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| value_in(&a, n) != value_in(&b, n))
        .collect()
}

/// Starts this instance's runner: re-simulates whenever the scenario input
/// changes, and provides the runner to components ([`RunnerHandle`]).
pub fn install(state: AppState) {
    let share = use_context::<Share>();
    let runner = Rc::new_cyclic(|me| Runner {
        session: RefCell::default(),
        client: job::client_for(me.clone()),
        page: RefCell::default(),
        me: me.clone(),
        state,
        share,
    });
    let handle = RunnerHandle(StoredValue::new_local(runner));
    provide_context(handle);
    Effect::new(move |_| {
        let input = state.input.get();
        handle.0.get_value().request_soon(input);
    });
    if crate::dom::test_hooks_on() {
        // Test-only: `overlap-lab-test:panic` on the window makes the worker
        // panic, so that a browser test can check how the page reports it.
        let _ = window_event_listener(
            leptos::ev::Custom::<web_sys::Event>::new("overlap-lab-test:panic"),
            move |_| {
                let runner = handle.0.get_value();
                if runner.client.is_running() {
                    let _ = runner.client.post(&WorkerRequest::Panic);
                }
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_fields_names_the_switch_that_changed() {
        let before = overlap_core::presets::default_preset().input();
        let mut after = before.clone();
        after.overlap.tp = Some(!before.overlap.tp.unwrap_or(false));
        assert_eq!(
            changed_fields(&before, &after),
            vec!["overlap.tp".to_string()]
        );
        assert!(changed_fields(&before, &before).is_empty());
    }
}
