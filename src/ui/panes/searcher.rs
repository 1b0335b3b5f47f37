//! The job of the search pane: the layout search of the scenario's model,
//! run once in a worker of its own as `overlap_session::SearchSession`
//! decides (the newest search wins, a cancel terminates the worker),
//! driven as every job is (`client::job`).
//!
//! `data-search` on the body says where the newest search is, for the
//! browser tests: `running`, `shown`, `refused`.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use overlap_core::search::{Found, Objective};
use overlap_session::search::{SearchAction, SearchAsk, SearchEvent, SearchSession};
use overlap_session::WorkerReply;

use crate::client::job::{self, Host};
use crate::client::worker_client::{Received, WorkerClient};
use crate::dom;

/// The search pane's job.
pub struct Searcher {
    me: Weak<Searcher>,
    session: RefCell<SearchSession>,
    client: WorkerClient,
    budget: RefCell<Option<Timeout>>,
    /// The progress bar: (fraction, label) while a search runs.
    pub progress: RwSignal<Option<(f64, String)>>,
    /// Why the last search did not show.
    pub problem: RwSignal<Option<String>>,
    /// The search shown, with the worker's time for it, ms, and the
    /// workers that simulated it.
    pub found: RwSignal<Option<(Rc<Found>, f64, u32)>, LocalStorage>,
}

impl Searcher {
    /// The job, with no worker until a search is asked for.
    pub fn new() -> Rc<Searcher> {
        Rc::new_cyclic(|me| Searcher {
            me: me.clone(),
            session: RefCell::default(),
            client: job::client_for(me.clone()),
            budget: RefCell::new(None),
            progress: RwSignal::new(None),
            problem: RwSignal::new(None),
            found: RwSignal::new_local(None),
        })
    }

    /// Asks for `ask`, unless it is the search last asked for.
    pub fn ask(&self, ask: SearchAsk) {
        if self.session.borrow().asked(&ask) {
            return;
        }
        self.problem.set(None);
        self.found.set(None);
        job::feed(self, SearchEvent::Start(Box::new(ask)), None);
    }

    /// Asks for `ask` even if it was the last asked for (the reader
    /// pressed Search: the scenario may have changed since).
    pub fn ask_again(&self, ask: SearchAsk) {
        self.session.borrow_mut().forget_asked();
        self.ask(ask);
    }

    /// The GPUs and objective of the search last asked for.
    pub fn last_options(&self) -> Option<(Option<u64>, Objective)> {
        self.session.borrow().last_options()
    }

    /// The pane closed: the search under way stops, nothing is said.
    pub fn cancel_quietly(&self) {
        job::feed(self, SearchEvent::Cancel, None);
    }

    /// Stops the search under way; what was shown stays.
    pub fn cancel(&self) {
        job::feed(self, SearchEvent::Cancel, None);
        if self.found.with_untracked(Option::is_none) {
            self.problem.set(Some(
                "The search was cancelled: press Search to run it again.".to_string(),
            ));
            dom::set_body_data("search", "cancelled");
        }
    }

    /// Whether a search is under way (not reactive: read `progress`).
    pub fn busy(&self) -> bool {
        self.session.borrow().busy()
    }
}

impl Host for Searcher {
    type Machine = SearchSession;

    fn machine(&self) -> &RefCell<SearchSession> {
        &self.session
    }

    fn client(&self) -> &WorkerClient {
        &self.client
    }

    fn context(&self) {}

    fn perform(&self, action: SearchAction, received: Option<&Received>) {
        match action {
            SearchAction::Spawn => job::start(self),
            SearchAction::Terminate => self.client.terminate(),
            SearchAction::Post(request) => {
                if job::post(self, &request) {
                    dom::set_body_data("search", "running");
                }
            }
            SearchAction::ArmBudget { gen, ms } => {
                let timer = job::feed_after(self.me.clone(), ms, SearchEvent::BudgetSpent(gen));
                *self.budget.borrow_mut() = Some(timer);
            }
            SearchAction::CancelBudget => *self.budget.borrow_mut() = None,
            SearchAction::Progress { fraction, label } => {
                self.progress.set(Some((fraction, label)));
            }
            SearchAction::DoneProgress => self.progress.set(None),
            SearchAction::Show { .. } => {
                if let Some(Received {
                    reply:
                        WorkerReply::Searched {
                            found,
                            search_ms,
                            workers,
                            ..
                        },
                    ..
                }) = received
                {
                    self.found
                        .set(Some((Rc::new((**found).clone()), *search_ms, *workers)));
                    dom::set_body_data("search", "shown");
                }
            }
            SearchAction::Alert(text) => {
                dom::set_body_data("search", "refused");
                self.problem.set(Some(text));
            }
        }
    }
}
