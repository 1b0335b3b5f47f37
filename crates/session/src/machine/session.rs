//! The session itself: its state, and each event's transition.

use overlap_core::{Scenario, ScenarioInput};

use crate::messages::{RunCounts, WorkerRequest};

use super::budgets::{
    FAST_FIGURES_MS, FAST_RUN_MS, RUN_BUDGET_MS, SETTLE_MS, TIMELINE_BUDGET_MS,
    WORKER_MEMORY_LIMIT_BYTES,
};
use super::events::{Action, Alert, Event, FiguresShown};
use super::states::{InFlight, Run, Waiting, Worker};

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
    /// The first request's number: the scenario the page opened with.
    first_request: Option<u64>,
    /// Whether any run's figures were shown.
    shown_any: bool,
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
            first_request: None,
            shown_any: false,
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
                        // The scenario the page opened with (a link's),
                        // refused before anything was shown: the page
                        // opens the default scenario with the message
                        // (interface.md, share links), not an empty page
                        // pointing at a "last valid scenario" never shown.
                        Some(field) if self.opened_with(gen) => {
                            out.push(Action::FirstRunRefused { field, message })
                        }
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
        self.shown_any |= out
            .iter()
            .any(|a| matches!(a, Action::ShowFigures { .. } | Action::Show { .. }));
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
        self.first_request.get_or_insert(self.latest_gen);
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

    /// Whether run `gen` is of the scenario the page opened with, and
    /// nothing has been shown before it.
    fn opened_with(&self, gen: u64) -> bool {
        self.first_request == Some(gen) && !self.shown_any
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
