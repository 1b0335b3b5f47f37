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

use overlap_core::{Scenario, ScenarioInput};

use crate::job::{Heard, Machine};
use crate::messages::{RunCounts, WorkerReply, WorkerRequest};

/// A run that takes longer than this is stopped and reported: the page's
/// time budget for one simulation, or for a large run's figures. The command
/// line has none. (A product choice: long enough for the largest preset's
/// figures on a laptop, short enough that a stuck page says so.)
pub const RUN_BUDGET_MS: u32 = 15_000;
/// A large run's timeline, once its figures are shown, is stopped after this
/// long. Twice the run's budget: the run with a timeline does the report-only
/// run's work and also records every bar and link sample (the core's
/// benchmark puts it at about 1.3 to 1.5 times the report-only time on 1T).
pub const TIMELINE_BUDGET_MS: u32 = 2 * RUN_BUDGET_MS;
/// A worker whose memory grew past this is retired (WebAssembly memory never
/// shrinks; a new worker starts small) before the first run whose all-off
/// baseline differs from its last: until then it keeps that baseline, so an
/// overlap switch flipped on a large scenario does not simulate it again.
pub const WORKER_MEMORY_LIMIT_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;
/// A run this short is let finish when a newer request arrives; a longer one
/// is stopped in favour of the newer request (starting a worker costs about
/// this much: the module comes compiled, its instance and memory do not).
pub const FAST_RUN_MS: f64 = 80.0;
/// After a slow run, input that keeps changing (a slider being dragged) is
/// sent once it rests this long (about a drag's pause between two moves).
pub const SETTLE_MS: u32 = 150;
/// When the last large run's figures took at most this long, a newer request
/// is posted to the worker while figures are being computed rather than
/// stopping it: the worker takes it before starting the overtaken timeline.
pub const FAST_FIGURES_MS: f64 = 500.0;

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

/// A request waiting for the worker.
#[derive(Clone, Debug)]
struct Waiting {
    gen: u64,
    /// When the input changed (ms since the epoch).
    made_at: f64,
    input: ScenarioInput,
    scenario: Scenario,
}

/// The request the worker is computing.
#[derive(Clone, Debug)]
struct InFlight {
    gen: u64,
    made_at: f64,
    scenario: Scenario,
    /// When it was posted (the adapter's clock, ms).
    started_ms: f64,
    /// Set when this run's figures came first and are shown.
    figures: Option<FiguresShown>,
}

/// The worker's lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worker {
    /// None: one starts with the next request.
    Absent,
    /// Started; its message handler is not installed yet.
    Starting,
    /// Reads requests.
    Ready,
}

/// Where the newest posted request is.
#[derive(Clone, Debug)]
enum Run {
    Idle,
    /// Posted to the worker, not answered yet (its figures may be shown).
    Running(Box<InFlight>),
    /// Answered: the page decodes its timeline, a slice at a time.
    Decoding {
        gen: u64,
        figures: Option<FiguresShown>,
    },
}

impl Run {
    fn figures(&self) -> Option<FiguresShown> {
        match self {
            Run::Idle => None,
            Run::Running(f) => f.figures,
            Run::Decoding { figures, .. } => *figures,
        }
    }

    /// The run in flight with number `gen`, if it is the one.
    fn running(&mut self, gen: u64) -> Option<&mut InFlight> {
        match self {
            Run::Running(f) if f.gen == gen => Some(f),
            _ => None,
        }
    }

    /// Takes the run in flight with number `gen`, leaving `Idle`.
    fn take_running(&mut self, gen: u64) -> Option<InFlight> {
        self.running(gen)?;
        match std::mem::replace(self, Run::Idle) {
            Run::Running(f) => Some(*f),
            _ => None,
        }
    }
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
    /// The input has rested for [`SETTLE_MS`] (`Action::ArmSettle`).
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
    /// The workers' counts changed (JSON for `data-worker-runs`).
    Runs(String),
}

/// One app instance's run session.
#[derive(Clone, Debug)]
pub struct Session {
    worker: Worker,
    /// The newest request's number; results of older ones are dropped.
    latest_gen: u64,
    waiting: Option<Waiting>,
    /// Input keeps coming after a slow run: the waiting request is held
    /// until `SettleElapsed`.
    settling: bool,
    run: Run,
    last_sim_ms: f64,
    /// When the last result (or statement without a timeline) came, ms.
    last_result_ms: f64,
    /// How long the last figures sent ahead of their timeline took, ms
    /// (`None` when the last run came in one message).
    last_figures_ms: Option<f64>,
    /// What the workers did with the page's requests: retired workers
    /// summed, plus the current one's last report; and runs the page
    /// stopped by terminating a worker.
    runs_retired: RunCounts,
    runs_current: RunCounts,
    runs_stopped: u32,
    /// The all-off baseline scenario of a worker grown past
    /// `WORKER_MEMORY_LIMIT_BYTES`: retired before a run with another.
    bloated: Option<Scenario>,
    /// The worker reported a panic: the trap that follows is not reported twice.
    panicked: bool,
}

impl Default for Session {
    fn default() -> Self {
        Self {
            worker: Worker::Absent,
            latest_gen: 0,
            waiting: None,
            settling: false,
            run: Run::Idle,
            last_sim_ms: 0.0,
            last_result_ms: 0.0,
            last_figures_ms: None,
            runs_retired: RunCounts::ZERO,
            runs_current: RunCounts::ZERO,
            runs_stopped: 0,
            bloated: None,
            panicked: false,
        }
    }
}

impl Session {
    /// Busy while anything is requested, running or being decoded.
    pub fn busy(&self) -> bool {
        self.waiting.is_some() || !matches!(self.run, Run::Idle)
    }

    /// The figures shown are the newest run's, and its timeline is coming.
    pub fn figures_ahead(&self) -> bool {
        self.waiting.is_none() && self.run.figures().is_some()
    }

    /// Whether `gen` is the newest request.
    pub fn is_latest(&self, gen: u64) -> bool {
        self.latest_gen == gen
    }

    /// The worker's lifecycle.
    pub fn worker(&self) -> Worker {
        self.worker
    }

    /// Every worker's counts so far, as JSON for `data-worker-runs`.
    pub fn runs_json(&self) -> String {
        #[derive(serde::Serialize)]
        struct Shown {
            #[serde(flatten)]
            counts: RunCounts,
            stopped: u32,
        }
        serde_json::to_string(&Shown {
            counts: self.runs_retired + self.runs_current,
            stopped: self.runs_stopped,
        })
        .unwrap_or_default()
    }

    /// Takes `event`, which happened at `now_ms` (the adapter's monotonic
    /// clock), and returns what to do.
    pub fn handle(&mut self, now_ms: f64, event: Event) -> Vec<Action> {
        let mut out = Vec::new();
        match event {
            Event::Request {
                input,
                scenario,
                made_at,
            } => self.request(now_ms, *input, *scenario, made_at, &mut out),
            Event::Invalid => self.invalid(now_ms, &mut out),
            Event::SettleElapsed => {
                self.settling = false;
                self.pump(now_ms, &mut out);
            }
            Event::SpawnFailed(why) => {
                self.worker = Worker::Absent;
                self.waiting = None;
                out.push(alert(
                    format!("The simulation could not start: {why}. The timeline shows the last scenario that finished."),
                    false,
                ));
            }
            Event::PostFailed => {
                self.retire(&mut out);
                out.push(alert(
                    "The simulation worker did not accept the scenario; the timeline shows the last scenario that finished.",
                    true,
                ));
            }
            Event::BudgetSpent(gen) => self.budget_spent(now_ms, gen, &mut out),
            Event::Stop => self.stop(&mut out),
            Event::Crashed(why) => {
                let already = self.panicked;
                self.retire(&mut out);
                self.panicked = false;
                if !already {
                    out.push(alert(
                        format!(
                            "The simulation stopped: {why}. This usually means it ran out of memory. \
                             The timeline shows the last scenario that finished. Please report this link:"
                        ),
                        true,
                    ));
                }
                self.pump(now_ms, &mut out);
            }
            Event::Panicked(why) => {
                self.retire(&mut out);
                self.panicked = true;
                out.push(alert(
                    format!(
                        "The simulator stopped with an internal error ({why}). The timeline shows the last \
                         scenario that finished. This is a bug: please report this link:"
                    ),
                    true,
                ));
                self.pump(now_ms, &mut out);
            }
            Event::Ready => {
                if self.worker == Worker::Starting {
                    self.worker = Worker::Ready;
                }
                self.pump(now_ms, &mut out);
            }
            Event::Runs(counts) => {
                self.runs_current = counts;
                out.push(Action::Runs(self.runs_json()));
            }
            Event::Figures {
                gen,
                figures_ms,
                cached,
                keep_before,
            } => self.figures(gen, figures_ms, cached, keep_before, &mut out),
            Event::Result {
                gen,
                sim_ms,
                memory_bytes,
            } => self.result(now_ms, gen, sim_ms, memory_bytes, &mut out),
            Event::NoTimeline {
                gen,
                field,
                message,
            } => {
                let flight = self.run.take_running(gen);
                self.last_result_ms = now_ms;
                if flight.is_some() && self.is_latest(gen) {
                    out.push(Action::TimelineRefused { field, message });
                }
                self.pump(now_ms, &mut out);
            }
            Event::Refused {
                gen,
                field,
                message,
            } => {
                self.run.take_running(gen);
                if self.is_latest(gen) {
                    match field {
                        // Decided at run time: beside that control, as the
                        // page's own refusals are.
                        Some(field) => out.push(Action::FieldRefused { field, message }),
                        None => out.push(alert(
                            format!("The simulator refused this scenario: {message}. Please report this link:"),
                            true,
                        )),
                    }
                }
                self.pump(now_ms, &mut out);
            }
            Event::Decoded(gen) => {
                if matches!(self.run, Run::Decoding { gen: g, .. } if g == gen) {
                    self.run = Run::Idle;
                    if self.is_latest(gen) {
                        out.push(Action::Show { gen });
                    }
                }
            }
            Event::DecodeFailed { gen, why } => {
                if matches!(self.run, Run::Decoding { gen: g, .. } if g == gen) {
                    self.run = Run::Idle;
                }
                out.push(alert(why, true));
            }
        }
        out
    }

    fn request(
        &mut self,
        now_ms: f64,
        input: ScenarioInput,
        scenario: Scenario,
        made_at: f64,
        out: &mut Vec<Action>,
    ) {
        self.latest_gen += 1;
        self.waiting = Some(Waiting {
            gen: self.latest_gen,
            made_at,
            input,
            scenario,
        });
        // Only the newest timeline is worth decoding.
        self.drop_decoding(out);
        let slow = self.last_sim_ms > FAST_RUN_MS;
        let recent = now_ms - self.last_result_ms < f64::from(SETTLE_MS) * 2.0;
        let running = matches!(self.run, Run::Running(_));
        if slow && (recent || running || self.settling) {
            // Rearming postpones the run: input that keeps coming keeps
            // postponing it.
            self.settling = true;
            out.push(Action::ArmSettle { ms: SETTLE_MS });
        } else {
            self.cancel_settle(out);
            self.pump(now_ms, out);
        }
    }

    /// The input became invalid: nothing waiting is worth running, and a
    /// slow run in flight is stopped.
    fn invalid(&mut self, now_ms: f64, out: &mut Vec<Action>) {
        self.latest_gen += 1;
        self.waiting = None;
        self.cancel_settle(out);
        self.drop_decoding(out);
        let slow = match &self.run {
            Run::Running(f) => {
                self.last_sim_ms > FAST_RUN_MS || now_ms - f.started_ms > FAST_RUN_MS
            }
            _ => false,
        };
        if slow {
            self.retire(out);
        }
    }

    fn budget_spent(&mut self, now_ms: f64, gen: u64, out: &mut Vec<Action>) {
        let Some(f) = self.run.running(gen) else {
            return;
        };
        let figures_shown = f.figures.is_some();
        self.retire(out);
        let cause = if figures_shown {
            format!(
                "Stopped: this scenario's timeline took longer than {} s, the page's time budget. \
                 The figures are this scenario's; the timeline shows the last scenario that finished. \
                 The command line has no such limit (overlap-lab trace scenario.json).",
                TIMELINE_BUDGET_MS / 1000
            )
        } else {
            format!(
                "Stopped: simulating this scenario took longer than {} s, the page's time budget. \
                 The timeline shows the last scenario that finished. The command line has no such limit \
                 (overlap-lab simulate scenario.json).",
                RUN_BUDGET_MS / 1000
            )
        };
        out.push(alert(cause, false));
        self.pump(now_ms, out);
    }

    fn stop(&mut self, out: &mut Vec<Action>) {
        let any = self.busy();
        // Figures that came ahead of the stopped timeline stay on screen.
        let figures_shown = self.figures_ahead();
        self.latest_gen += 1;
        self.waiting = None;
        self.cancel_settle(out);
        self.drop_decoding(out);
        if matches!(self.run, Run::Running(_)) {
            self.retire(out);
        }
        if any {
            out.push(alert(
                if figures_shown {
                    "Cancelled: you stopped the simulation. The figures are this scenario's; the timeline shows the last scenario that finished."
                } else {
                    "Cancelled: you stopped the simulation. The timeline and figures show the last scenario that finished."
                },
                false,
            ));
        }
    }

    fn figures(
        &mut self,
        gen: u64,
        figures_ms: f64,
        cached: bool,
        keep_before: bool,
        out: &mut Vec<Action>,
    ) {
        if !cached {
            self.last_figures_ms = Some(figures_ms);
        }
        if !self.is_latest(gen) {
            // Overtaken: its timeline is dropped by the worker too.
            return;
        }
        let Some(f) = self.run.running(gen) else {
            return;
        };
        f.figures = Some(FiguresShown { keep_before });
        out.push(Action::NoteWait { made_at: f.made_at });
        // The timeline has a budget of its own: the run is not stuck.
        out.push(Action::ArmBudget {
            gen,
            ms: TIMELINE_BUDGET_MS,
        });
        out.push(Action::ShowFigures {
            gen,
            scenario: f.scenario.clone(),
            made_at: f.made_at,
        });
    }

    fn result(
        &mut self,
        now_ms: f64,
        gen: u64,
        sim_ms: f64,
        memory_bytes: f64,
        out: &mut Vec<Action>,
    ) {
        let flight = self.run.take_running(gen);
        if let Some(f) = flight.as_ref().filter(|f| f.figures.is_none()) {
            self.last_figures_ms = None;
            out.push(Action::NoteWait { made_at: f.made_at });
        }
        self.last_sim_ms = sim_ms;
        self.last_result_ms = now_ms;
        if memory_bytes > WORKER_MEMORY_LIMIT_BYTES {
            self.bloated = flight.as_ref().map(|f| f.scenario.all_overlap_off());
        }
        if let Some(f) = flight.filter(|_| self.is_latest(gen)) {
            self.run = Run::Decoding {
                gen,
                figures: f.figures,
            };
            out.push(Action::Decode {
                gen,
                scenario: f.scenario,
                figures: f.figures,
            });
        }
        // Else overtaken by a newer request: dropped.
        self.pump(now_ms, out);
    }

    /// Sends the newest request when the worker can take it.
    fn pump(&mut self, now_ms: f64, out: &mut Vec<Action>) {
        let Some(waiting) = self.waiting.as_ref().filter(|_| !self.settling) else {
            return;
        };
        match self.worker {
            Worker::Absent => self.spawn(out),
            Worker::Starting => {}
            Worker::Ready => {
                if let Run::Running(f) = &self.run {
                    let age_ms = now_ms - f.started_ms;
                    let fast = self.last_sim_ms <= FAST_RUN_MS && age_ms <= FAST_RUN_MS * 4.0;
                    // A large run still on its figures, when they come
                    // quickly: the worker will take the newer request
                    // before starting the overtaken run's timeline, and
                    // keeps its baseline.
                    let figures_soon = f.figures.is_none()
                        && self.last_figures_ms.is_some_and(|ms| ms <= FAST_FIGURES_MS)
                        && age_ms <= FAST_FIGURES_MS * 2.0;
                    if figures_soon {
                        self.send(now_ms, out);
                    } else if fast {
                        // Let it finish: a new worker would cost more than the wait.
                    } else {
                        // Overtaken and slow: stop it rather than finish it.
                        self.retire(out);
                        self.spawn(out);
                    }
                } else if self
                    .bloated
                    .as_ref()
                    .is_some_and(|off| waiting.scenario.all_overlap_off() != *off)
                {
                    // Its baseline is of no use to this run: start small again.
                    self.retire(out);
                    self.spawn(out);
                } else {
                    self.send(now_ms, out);
                }
            }
        }
    }

    fn spawn(&mut self, out: &mut Vec<Action>) {
        self.worker = Worker::Starting;
        self.panicked = false;
        out.push(Action::Spawn);
    }

    /// Posts the waiting request; it replaces a run overtaken while on its
    /// figures, whose messages no longer match and are dropped.
    fn send(&mut self, now_ms: f64, out: &mut Vec<Action>) {
        let Some(w) = self.waiting.take() else { return };
        out.push(Action::Post(Box::new(WorkerRequest::Simulate {
            gen: w.gen,
            input: w.input,
        })));
        out.push(Action::ArmBudget {
            gen: w.gen,
            ms: RUN_BUDGET_MS,
        });
        self.run = Run::Running(Box::new(InFlight {
            gen: w.gen,
            made_at: w.made_at,
            scenario: w.scenario,
            started_ms: now_ms,
            figures: None,
        }));
    }

    /// Terminates the worker: a run it was computing is stopped.
    fn retire(&mut self, out: &mut Vec<Action>) {
        self.bloated = None;
        if self.worker != Worker::Absent {
            self.runs_retired = self.runs_retired + std::mem::take(&mut self.runs_current);
            self.worker = Worker::Absent;
            out.push(Action::Terminate);
        }
        if matches!(self.run, Run::Running(_)) {
            self.run = Run::Idle;
            self.runs_stopped += 1;
        }
    }

    fn drop_decoding(&mut self, out: &mut Vec<Action>) {
        if matches!(self.run, Run::Decoding { .. }) {
            self.run = Run::Idle;
            out.push(Action::DropDecoding);
        }
    }

    fn cancel_settle(&mut self, out: &mut Vec<Action>) {
        if self.settling {
            self.settling = false;
            out.push(Action::CancelSettle);
        }
    }
}

fn alert(cause: impl Into<String>, report_link: bool) -> Action {
    Action::Alert(Alert {
        cause: cause.into(),
        report_link,
    })
}

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
