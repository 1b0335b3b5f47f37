//! The part every one-off job in a worker of its own shares: the trace
//! import (`import`) and the layout search (`search`) each start a worker,
//! post one request once it is ready, move a progress bar, arm a budget,
//! and end in a result shown, an alert, or a cancel that terminates the
//! worker. What differs (the request, the labels, the sentences) stays in
//! each job; the order of the actions is this module's.
//!
//! - The newest job wins: one started while another runs stops it (its
//!   worker is terminated) and starts afresh.
//! - A job over its budget is stopped and said so by its owner.

use crate::messages::WorkerRequest;

/// What the adapter does for a job, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum ErrandAction {
    /// Start the job's worker.
    Spawn,
    /// Terminate the job's worker.
    Terminate,
    /// Post this request (the import's files follow it in their order).
    Post(Box<WorkerRequest>),
    /// (Re)arm the budget timer: the job's `BudgetSpent(gen)` after `ms`.
    ArmBudget { gen: u64, ms: u32 },
    /// Drop the budget timer.
    CancelBudget,
    /// Show the progress bar at this fraction (0..1) with this label.
    Progress { fraction: f64, label: String },
    /// Hide the progress bar.
    DoneProgress,
    /// Show job `gen`'s result (from the reply at hand).
    Show { gen: u64 },
    /// Show this alert: one sentence naming the problem.
    Alert(String),
}

/// Where the newest job is.
#[derive(Clone, Debug, PartialEq)]
enum Stage {
    Idle,
    /// Its worker is starting; the request waits for `Ready`.
    Starting(Box<WorkerRequest>),
    /// Posted; progress comes. `shown`: the fraction the bar shows.
    Running {
        gen: u64,
        shown: f64,
    },
}

/// One job kind's worker, request and progress: the newest job only.
#[derive(Clone, Debug)]
pub struct Errand {
    gen: u64,
    stage: Stage,
    worker: bool,
}

impl Default for Errand {
    fn default() -> Self {
        Self {
            gen: 0,
            stage: Stage::Idle,
            worker: false,
        }
    }
}

impl Errand {
    /// Whether a job is under way.
    pub fn busy(&self) -> bool {
        self.stage != Stage::Idle
    }

    /// The newest job's generation.
    pub fn gen(&self) -> u64 {
        self.gen
    }

    /// A new job: the one under way (if any) stops, whatever comes of it.
    /// Returns the new job's generation; [`Errand::start`] starts it, or
    /// its owner alerts why it cannot.
    pub fn supersede(&mut self, out: &mut Vec<ErrandAction>) -> u64 {
        self.gen += 1;
        if self.busy() {
            self.finish(out);
        }
        self.gen
    }

    /// Starts the job `supersede` numbered: its worker, its budget of
    /// `budget_ms`, its bar at 0 with `label`; `request` is posted once
    /// the worker is ready.
    pub fn start(
        &mut self,
        request: WorkerRequest,
        budget_ms: u32,
        label: String,
        out: &mut Vec<ErrandAction>,
    ) {
        out.push(ErrandAction::Spawn);
        self.worker = true;
        out.push(ErrandAction::ArmBudget {
            gen: self.gen,
            ms: budget_ms,
        });
        out.push(ErrandAction::Progress {
            fraction: 0.0,
            label,
        });
        self.stage = Stage::Starting(Box::new(request));
    }

    /// The worker is ready: the waiting request is posted.
    pub fn ready(&mut self, out: &mut Vec<ErrandAction>) {
        if let Stage::Starting(request) = &self.stage {
            out.push(ErrandAction::Post(request.clone()));
            self.stage = Stage::Running {
                gen: self.gen,
                shown: 0.0,
            };
        }
    }

    /// Job `gen` has come `fraction` of the way: the bar moves when it
    /// moved by at least `step` since it was last moved.
    pub fn progress(
        &mut self,
        gen: u64,
        fraction: f64,
        step: f64,
        label: impl FnOnce() -> String,
        out: &mut Vec<ErrandAction>,
    ) {
        if let Stage::Running { gen: g, shown } = &mut self.stage {
            let fraction = fraction.clamp(0.0, 1.0);
            if *g == gen && fraction - *shown >= step {
                *shown = fraction;
                out.push(ErrandAction::Progress {
                    fraction,
                    label: label(),
                });
            }
        }
    }

    /// Whether job `gen` is the one running.
    pub fn running(&self, gen: u64) -> bool {
        matches!(self.stage, Stage::Running { gen: g, .. } if g == gen)
    }

    /// Job `gen` is done: shown, if it is the one running.
    pub fn done(&mut self, gen: u64, out: &mut Vec<ErrandAction>) {
        if self.running(gen) {
            self.finish(out);
            out.push(ErrandAction::Show { gen });
        }
    }

    /// Job `gen` was refused: `alert`, if it is the one running.
    pub fn refused(&mut self, gen: u64, alert: String, out: &mut Vec<ErrandAction>) {
        if self.running(gen) {
            self.fail(alert, out);
        }
    }

    /// The worker went (panicked, crashed): `alert` if a job was under
    /// way, else the worker is only retired.
    pub fn worker_gone(&mut self, alert: impl FnOnce() -> String, out: &mut Vec<ErrandAction>) {
        if self.busy() {
            self.fail(alert(), out);
        } else {
            self.retire(out);
        }
    }

    /// The worker could not be started: `alert`.
    pub fn spawn_failed(&mut self, alert: String, out: &mut Vec<ErrandAction>) {
        self.worker = false;
        self.fail(alert, out);
    }

    /// Job `gen`'s budget is spent: `alert`, if it is still under way.
    pub fn budget_spent(
        &mut self,
        gen: u64,
        alert: impl FnOnce() -> String,
        out: &mut Vec<ErrandAction>,
    ) {
        if self.gen == gen && self.busy() {
            self.fail(alert(), out);
        }
    }

    /// The reader cancelled: the job under way stops, no alert.
    pub fn cancel(&mut self, out: &mut Vec<ErrandAction>) {
        if self.busy() {
            self.gen += 1;
            self.finish(out);
        }
    }

    /// Ends the job under way: its worker, timer and progress bar go.
    fn finish(&mut self, out: &mut Vec<ErrandAction>) {
        self.stage = Stage::Idle;
        self.retire(out);
        out.push(ErrandAction::CancelBudget);
        out.push(ErrandAction::DoneProgress);
    }

    /// Ends the job under way with `alert`.
    pub fn fail(&mut self, alert: String, out: &mut Vec<ErrandAction>) {
        self.finish(out);
        out.push(ErrandAction::Alert(alert));
    }

    fn retire(&mut self, out: &mut Vec<ErrandAction>) {
        if self.worker {
            self.worker = false;
            out.push(ErrandAction::Terminate);
        }
    }
}
