//! Runs the core on the current scenario input. The page resolves the input
//! itself (that is quick, and explains any invalid field at once); the
//! simulation runs in a Web Worker (`crate::worker`), so that the page stays
//! responsive however long it takes. The figures and the timeline then come
//! back to the signals and the scene. The page computes nothing itself.
//!
//! - The newest request wins: a request made while another runs replaces any
//!   request still waiting, and a slow run that has been overtaken is
//!   stopped (its worker is terminated and a new one started) rather than
//!   finished. A result that is no longer the newest is dropped.
//! - While a run is in flight the previous timeline stays, dimmed, under a
//!   "Simulating" status with a Stop button.
//! - Every run has a time budget; a run over it, a stopped run, a panic in
//!   the simulator or a crashed worker becomes an alert that names the cause
//!   (with the link to report, for a panic), and the previous timeline stays.
//! - A large run's figures come first (`crate::worker::figures_first`): they
//!   are shown at once, and the previous timeline stays dimmed under
//!   "Simulating" until this run's timeline arrives. A newer request made
//!   while those figures are computed is posted at once (the worker drops
//!   the overtaken timeline before computing it); one made while the
//!   timeline is computed stops that worker.
//! - A step whose timeline is over the core's limit for one gets its
//!   figures, then a `no-timeline` answer: the page says in the timeline's
//!   place why, naming the control and the value that would draw it
//!   (`crate::worker::no_timeline`).
//! - The timeline arrives as two typed arrays and is decoded, then measured
//!   for drawing (`Preparing`), a slice at a time, so that no single task
//!   holds the main thread for long.
//!
//! All of it is per app instance: the runner hangs on the instance's
//! `AppState`, with its own worker.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use overlap_core::{Report, Scenario, ScenarioInput};
use overlap_view::prepared::{Prepared, Preparing};
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;

use crate::state::AppState;
use crate::timeline::frame;
use crate::web::address::{self as share, Share};
use crate::web::dom;
use crate::worker::codec::{Decoder, Words};
use crate::worker::spawn::{self, WorkerHandle};
use crate::worker::RunCounts;

/// A run that takes longer than this is stopped and reported: the page's
/// time budget for one simulation, or for a large run's figures. The command
/// line has none.
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
const WORKER_MEMORY_LIMIT_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;
/// A run this short is let finish when a newer request arrives; a longer one
/// is stopped in favour of the newer request.
const FAST_RUN_MS: f64 = 80.0;
/// After a slow run, input that keeps changing (a slider being dragged) is
/// sent once it rests this long.
const SETTLE_MS: u32 = 150;
/// The decoder aims at slices of about this long on the main thread.
const SLICE_TARGET_MS: f64 = 8.0;
/// When the last large run's figures took at most this long, a newer request
/// is posted to the worker while figures are being computed rather than
/// stopping it: the worker takes it before starting the overtaken timeline.
const FAST_FIGURES_MS: f64 = 500.0;

/// Why the last run did not show, in the page's alert.
#[derive(Clone, Debug, PartialEq)]
pub struct RunAlert {
    /// One sentence naming the cause and what the page shows instead.
    pub cause: String,
    /// The share link to report, for an internal error.
    pub report_link: Option<String>,
}

struct Request {
    gen: u64,
    /// When the input changed (`epoch_ms`).
    made_at: f64,
    input_json: String,
    scenario: Scenario,
}

/// A run whose figures are shown while its timeline is still coming.
#[derive(Clone, Copy)]
struct FiguresShown {
    /// Whether the timeline shown keeps the one before it for comparison,
    /// decided when the figures replaced the previous ones.
    keep_before: bool,
}

struct InFlight {
    gen: u64,
    /// When its input changed (`epoch_ms`).
    made_at: f64,
    scenario: Scenario,
    started_ms: f64,
    /// Set when this run's figures came first and are shown.
    figures: Option<FiguresShown>,
    /// Dropping it cancels the budget.
    _budget: Timeout,
}

/// The typed arrays of one result.
struct JsWords {
    f64s: js_sys::Float64Array,
    u32s: js_sys::Uint32Array,
}

impl Words for JsWords {
    fn len_f64(&self) -> usize {
        self.f64s.length() as usize
    }
    fn len_u32(&self) -> usize {
        self.u32s.length() as usize
    }
    fn read_f64(&self, at: usize, out: &mut [f64]) {
        self.f64s
            .subarray(at as u32, (at + out.len()) as u32)
            .copy_to(out);
    }
    fn read_u32(&self, at: usize, out: &mut [u32]) {
        self.u32s
            .subarray(at as u32, (at + out.len()) as u32)
            .copy_to(out);
    }
}

/// A run's figures and what came with them, on their way to the screen.
struct Shown {
    gen: u64,
    scenario: Scenario,
    report: Report,
    sim_ms: f64,
    received_ms: f64,
    figures: Option<FiguresShown>,
}

/// Where a result is on its way to the screen: its timeline being decoded,
/// then measured for drawing, each a slice at a time.
enum Stage {
    Decode(Decoder),
    Prepare(Preparing),
    /// Decoded and measured: shown in a task of its own, so that showing
    /// the run (and the figures' updates it sets off) never adds up with
    /// the last slice into one long task.
    Ready(Box<Prepared>),
}

struct Decoding {
    gen: u64,
    stage: Stage,
    words: JsWords,
    report: Report,
    scenario: Scenario,
    sim_ms: f64,
    received_ms: f64,
    figures: Option<FiguresShown>,
    records_per_slice: usize,
    _next: Option<Timeout>,
}

#[derive(Default)]
struct Inner {
    worker: Option<WorkerHandle>,
    ready: bool,
    /// The newest request's number; results of older ones are dropped.
    latest_gen: u64,
    in_flight: Option<InFlight>,
    pending: Option<Request>,
    decoding: Option<Decoding>,
    settle: Option<Timeout>,
    last_sim_ms: f64,
    last_result_ms: f64,
    /// How long the last figures sent ahead of their timeline took, ms
    /// (`None` when the last run came in one message).
    last_figures_ms: Option<f64>,
    /// What the workers did with the page's requests: retired workers summed,
    /// plus the current one's last report; and runs the page stopped by
    /// terminating a worker.
    runs_retired: RunCounts,
    runs_current: RunCounts,
    runs_stopped: u32,
    /// The all-off baseline scenario of a worker grown past
    /// `WORKER_MEMORY_LIMIT_BYTES`: retired before a run with another.
    bloated: Option<Scenario>,
    /// Set when the worker reported a panic, so that the trap that follows is not reported twice.
    panicked: bool,
    /// The last input that resolved, to tell which control made the scenario invalid.
    last_valid: Option<ScenarioInput>,
    /// The newest input, requested in a task of its own (see [`Runner::request_soon`]).
    soon: Option<(ScenarioInput, Timeout)>,
}

impl Inner {
    /// Drops the worker (terminating it): a run it was computing is stopped.
    fn retire_worker(&mut self) {
        self.bloated = None;
        if self.worker.take().is_some() {
            self.runs_retired = self.runs_retired + std::mem::take(&mut self.runs_current);
        }
        if self.in_flight.take().is_some() {
            self.runs_stopped += 1;
        }
        self.ready = false;
    }

    /// Every worker's counts so far, as JSON for `data-worker-runs`.
    fn runs_json(&self) -> String {
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
}

/// One app instance's simulation runner.
#[derive(Default)]
pub struct Runner {
    inner: RefCell<Inner>,
    me: RefCell<Weak<Runner>>,
    state: RefCell<Option<AppState>>,
    share: RefCell<Option<Share>>,
}

impl Runner {
    /// A runner with no worker yet: one starts with the first request.
    pub fn new() -> Rc<Self> {
        let r = Rc::new(Self::default());
        *r.me.borrow_mut() = Rc::downgrade(&r);
        r
    }

    fn weak(&self) -> Weak<Runner> {
        self.me.borrow().clone()
    }

    fn state(&self) -> Option<AppState> {
        *self.state.borrow()
    }

    /// Busy while anything is requested, running or being decoded.
    fn sync_busy(&self) {
        let (busy, ahead) = {
            let i = self.inner.borrow();
            let busy = i.pending.is_some() || i.in_flight.is_some() || i.decoding.is_some();
            // The figures shown are the newest run's; its timeline is coming.
            let ahead = i.pending.is_none()
                && (i.in_flight.as_ref().is_some_and(|f| f.figures.is_some())
                    || i.decoding.as_ref().is_some_and(|d| d.figures.is_some()));
            (busy, ahead)
        };
        if let Some(state) = self.state() {
            if state.busy.get_untracked() != busy {
                state.busy.set(busy);
            }
            if state.figures_ahead.get_untracked() != ahead {
                state.figures_ahead.set(ahead);
            }
        }
        dom::set_body_data("simulating", if busy { "1" } else { "0" });
        dom::set_body_data("figures-ahead", if ahead { "1" } else { "0" });
    }

    fn alert(&self, cause: String, with_link: bool) {
        let Some(state) = self.state() else { return };
        let report_link = with_link
            .then(|| self.share.borrow().map(|s| share::link(state, s, false)))
            .flatten();
        state.run_alert.set(Some(RunAlert { cause, report_link }));
        dom::set_body_data("run-alert", "1");
    }

    /// Requests a run of `input` in a task of its own, after the one that
    /// changed it: resolving validates the step's cost by building a slice
    /// of it, a long piece of work on the large presets that would
    /// otherwise add up with the controls' updates into one long task. A
    /// newer input before then replaces it.
    ///
    /// That check builds slices of the step and of its all-off baseline
    /// alike. When neither is known yet, the baseline's is checked first,
    /// in a task of its own (`ScenarioInput::all_overlap_off`): the input's
    /// own check, in the next task, finds the baseline's count kept, and
    /// each task does about half the work (on the 175B interleaved presets,
    /// two builds of 8 and 16 micro-batches in each).
    fn request_soon(&self, input: ScenarioInput) {
        let weak = self.weak();
        let timer = Timeout::new(0, move || {
            let Some(r) = weak.upgrade() else { return };
            let next = r.inner.borrow_mut().soon.take();
            let Some((input, _)) = next else { return };
            let twin = input.all_overlap_off();
            if !crate::state::is_resolved(&input) && !crate::state::is_resolved(&twin) {
                let _ = crate::state::resolve(&twin);
                r.request_soon(input);
            } else {
                r.request(input);
            }
        });
        self.inner.borrow_mut().soon = Some((input, timer));
    }

    /// A new scenario input: explain it if invalid, else ask for a run.
    fn request(&self, input: ScenarioInput) {
        let Some(state) = self.state() else { return };
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
                let culprits = self
                    .inner
                    .borrow()
                    .last_valid
                    .as_ref()
                    .map(|prev| changed_fields(prev, &input))
                    .unwrap_or_default();
                state.culprits.set(culprits);
                state.errors.set(e.errors);
                dom::set_body_data("errors", "1");
                self.supersede();
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
        let input_json = serde_json::to_string(&input).unwrap_or_default();
        let settle = {
            let mut i = self.inner.borrow_mut();
            i.last_valid = Some(input);
            i.latest_gen += 1;
            i.pending = Some(Request {
                gen: i.latest_gen,
                made_at: epoch_ms(),
                input_json,
                scenario,
            });
            // Only the newest timeline is worth decoding.
            i.decoding = None;
            let slow = i.last_sim_ms > FAST_RUN_MS;
            let recent = dom::now_ms() - i.last_result_ms < f64::from(SETTLE_MS) * 2.0;
            slow && (recent || i.in_flight.is_some() || i.settle.is_some())
        };
        self.sync_busy();
        if settle {
            let weak = self.weak();
            let timer = Timeout::new(SETTLE_MS, move || {
                if let Some(r) = weak.upgrade() {
                    r.inner.borrow_mut().settle = None;
                    r.pump();
                }
            });
            // Replacing the timer cancels the previous one: input that keeps
            // coming keeps postponing the run.
            self.inner.borrow_mut().settle = Some(timer);
        } else {
            self.inner.borrow_mut().settle = None;
            self.pump();
        }
    }

    /// The input became invalid: nothing waiting is worth running, and a
    /// slow run in flight is stopped.
    fn supersede(&self) {
        {
            let mut i = self.inner.borrow_mut();
            i.latest_gen += 1;
            i.pending = None;
            i.settle = None;
            i.decoding = None;
            let slow = i.in_flight.as_ref().is_some_and(|f| {
                i.last_sim_ms > FAST_RUN_MS || dom::now_ms() - f.started_ms > FAST_RUN_MS
            });
            if slow {
                i.retire_worker();
            }
        }
        self.sync_busy();
    }

    fn spawn_worker(&self) {
        let on_message = {
            let weak = self.weak();
            move |data: JsValue| {
                if let Some(r) = weak.upgrade() {
                    r.on_message(&data);
                }
            }
        };
        let on_error = {
            let weak = self.weak();
            move |text: String| {
                if let Some(r) = weak.upgrade() {
                    r.on_crash(text);
                }
            }
        };
        match spawn::spawn(on_message, on_error) {
            Ok(handle) => {
                let mut i = self.inner.borrow_mut();
                i.worker = Some(handle);
                i.ready = false;
                i.panicked = false;
            }
            Err(e) => {
                {
                    let mut i = self.inner.borrow_mut();
                    i.pending = None;
                }
                self.alert(
                    format!("The simulation could not start: {e}. The timeline shows the last scenario that finished."),
                    false,
                );
                self.sync_busy();
            }
        }
    }

    /// Sends the newest request when the worker can take it.
    fn pump(&self) {
        enum Next {
            Nothing,
            Spawn,
            Send,
        }
        let next = {
            let mut i = self.inner.borrow_mut();
            if i.pending.is_none() || i.settle.is_some() {
                Next::Nothing
            } else if i.worker.is_none() {
                Next::Spawn
            } else if !i.ready {
                Next::Nothing
            } else if let Some(f) = &i.in_flight {
                let fast = i.last_sim_ms <= FAST_RUN_MS
                    && dom::now_ms() - f.started_ms <= FAST_RUN_MS * 4.0;
                // A large run still on its figures, when they come quickly:
                // the worker will take the newer request before starting the
                // overtaken run's timeline, and keeps its baseline.
                let figures_soon = f.figures.is_none()
                    && i.last_figures_ms.is_some_and(|ms| ms <= FAST_FIGURES_MS)
                    && dom::now_ms() - f.started_ms <= FAST_FIGURES_MS * 2.0;
                if figures_soon {
                    Next::Send
                } else if fast {
                    // Let it finish: a new worker would cost more than the wait.
                    Next::Nothing
                } else {
                    // Overtaken and slow: stop it rather than finish it.
                    i.retire_worker();
                    Next::Spawn
                }
            } else if i.bloated.as_ref().is_some_and(|off| {
                i.pending
                    .as_ref()
                    .is_some_and(|p| p.scenario.all_overlap_off() != *off)
            }) {
                // Its baseline is of no use to this run: start small again.
                i.retire_worker();
                Next::Spawn
            } else {
                Next::Send
            }
        };
        match next {
            Next::Nothing => {}
            Next::Spawn => self.spawn_worker(),
            Next::Send => self.send(),
        }
        self.sync_busy();
    }

    fn send(&self) {
        let mut i = self.inner.borrow_mut();
        let Some(req) = i.pending.take() else { return };
        let msg = js_sys::Object::new();
        let put = |k: &str, v: JsValue| {
            let _ = js_sys::Reflect::set(&msg, &k.into(), &v);
        };
        put("type", "simulate".into());
        put("gen", (req.gen as f64).into());
        put("input", req.input_json.into());
        let sent = i.worker.as_ref().map(|w| w.post(&msg).is_ok());
        if sent != Some(true) {
            i.retire_worker();
            drop(i);
            self.alert(
                "The simulation worker did not accept the scenario; the timeline shows the last scenario that finished."
                    .to_string(),
                true,
            );
            return;
        }
        let gen = req.gen;
        let budget = self.budget(gen, RUN_BUDGET_MS);
        // Replaces a run overtaken while on its figures (see `pump`): its
        // messages no longer match and are dropped.
        i.in_flight = Some(InFlight {
            gen,
            made_at: req.made_at,
            scenario: req.scenario,
            started_ms: dom::now_ms(),
            figures: None,
            _budget: budget,
        });
    }

    /// The time budget of run `gen`, `ms` from now.
    fn budget(&self, gen: u64, ms: u32) -> Timeout {
        let weak = self.weak();
        Timeout::new(ms, move || {
            if let Some(r) = weak.upgrade() {
                r.on_budget(gen);
            }
        })
    }

    fn on_budget(&self, gen: u64) {
        let figures_shown = {
            let mut i = self.inner.borrow_mut();
            let Some(f) = i.in_flight.as_ref().filter(|f| f.gen == gen) else {
                return;
            };
            let shown = f.figures.is_some();
            i.retire_worker();
            shown
        };
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
        self.alert(cause, false);
        self.pump();
    }

    /// The user pressed Stop.
    pub fn stop(&self) {
        let (stopped, figures_shown) = {
            let mut i = self.inner.borrow_mut();
            let any = i.in_flight.is_some() || i.pending.is_some() || i.decoding.is_some();
            // Figures that came ahead of the stopped timeline stay on screen.
            let figures_shown = i.pending.is_none()
                && (i.in_flight.as_ref().is_some_and(|f| f.figures.is_some())
                    || i.decoding.as_ref().is_some_and(|d| d.figures.is_some()));
            i.latest_gen += 1;
            i.pending = None;
            i.settle = None;
            i.decoding = None;
            if i.in_flight.is_some() {
                i.retire_worker();
            }
            (any, figures_shown)
        };
        if stopped {
            let cause = if figures_shown {
                "Cancelled: you stopped the simulation. The figures are this scenario's; the timeline shows the last scenario that finished."
            } else {
                "Cancelled: you stopped the simulation. The timeline and figures show the last scenario that finished."
            };
            self.alert(cause.to_string(), false);
        }
        self.sync_busy();
    }

    fn on_crash(&self, text: String) {
        let already = {
            let mut i = self.inner.borrow_mut();
            let already = i.panicked;
            i.retire_worker();
            i.panicked = false;
            already
        };
        if !already {
            self.alert(
                format!(
                    "The simulation stopped: {text}. This usually means it ran out of memory. \
                     The timeline shows the last scenario that finished. Please report this link:"
                ),
                true,
            );
        }
        self.pump();
    }

    fn on_message(&self, data: &JsValue) {
        let get = |k: &str| js_sys::Reflect::get(data, &k.into()).unwrap_or(JsValue::UNDEFINED);
        let kind = get("type").as_string().unwrap_or_default();
        let gen = get("gen").as_f64().unwrap_or(-1.0) as u64;
        self.note_runs(&get("runs"));
        match kind.as_str() {
            "figures" => self.on_figures(gen, data),
            "ready" => {
                self.inner.borrow_mut().ready = true;
                self.pump();
            }
            "result" => self.on_result(gen, data),
            "no-timeline" => self.on_no_timeline(gen, data),
            "refused" => {
                let latest = {
                    let mut i = self.inner.borrow_mut();
                    if i.in_flight.as_ref().map(|f| f.gen) == Some(gen) {
                        i.in_flight = None;
                    }
                    i.latest_gen == gen
                };
                let field = get("field").as_string();
                if let (true, Some(field), Some(state)) = (latest, field, self.state()) {
                    // A refusal naming a field (decided at run time): beside
                    // that control, as the page's own refusals are.
                    let text = get("message").as_string().unwrap_or_default();
                    state.culprits.set(vec![field.clone()]);
                    state
                        .errors
                        .set(vec![overlap_core::FieldError::new(&field, &text)]);
                    dom::set_body_data("errors", "1");
                } else if latest {
                    let text = get("message").as_string().unwrap_or_default();
                    self.alert(
                        format!(
                            "The simulator refused this scenario: {text}. Please report this link:"
                        ),
                        true,
                    );
                }
                self.pump();
            }
            "panic" => {
                let text = get("message").as_string().unwrap_or_default();
                {
                    let mut i = self.inner.borrow_mut();
                    i.retire_worker();
                    i.panicked = true;
                }
                self.alert(
                    format!(
                        "The simulator stopped with an internal error ({text}). The timeline shows the last \
                         scenario that finished. This is a bug: please report this link:"
                    ),
                    true,
                );
                self.pump();
            }
            "crashed" => {
                let text = get("message").as_string().unwrap_or_default();
                self.on_crash(text);
            }
            _ => {}
        }
    }

    fn on_result(&self, gen: u64, data: &JsValue) {
        let get = |k: &str| js_sys::Reflect::get(data, &k.into()).unwrap_or(JsValue::UNDEFINED);
        let sim_ms = get("sim_ms").as_f64().unwrap_or(0.0);
        let memory_bytes = get("memory_bytes").as_f64().unwrap_or(0.0);
        let (flight, latest) = {
            let mut i = self.inner.borrow_mut();
            let flight = i.in_flight.take_if(|f| f.gen == gen);
            if let Some(f) = flight.as_ref().filter(|f| f.figures.is_none()) {
                i.last_figures_ms = None;
                note_wait(f.made_at, data);
            }
            i.last_sim_ms = sim_ms;
            i.last_result_ms = dom::now_ms();
            if memory_bytes > WORKER_MEMORY_LIMIT_BYTES {
                i.bloated = flight.as_ref().map(|f| f.scenario.all_overlap_off());
            }
            (flight, i.latest_gen == gen)
        };
        let (
            Some(InFlight {
                scenario, figures, ..
            }),
            true,
        ) = (flight, latest)
        else {
            // Overtaken by a newer request: dropped.
            self.pump();
            return;
        };
        let words = match (
            get("f64").dyn_into::<js_sys::Float64Array>(),
            get("u32").dyn_into::<js_sys::Uint32Array>(),
        ) {
            (Ok(f64s), Ok(u32s)) => JsWords { f64s, u32s },
            _ => {
                self.alert("The simulation worker sent no timeline.".to_string(), true);
                self.pump();
                return;
            }
        };
        let report: Result<Report, _> =
            serde_json::from_str(&get("report").as_string().unwrap_or_default());
        let decoder = Decoder::new(&words);
        match (report, decoder) {
            (Ok(report), Ok(decoder)) => {
                self.inner.borrow_mut().decoding = Some(Decoding {
                    gen,
                    stage: Stage::Decode(decoder),
                    words,
                    report,
                    scenario,
                    sim_ms,
                    received_ms: dom::now_ms(),
                    figures,
                    records_per_slice: 20_000,
                    _next: None,
                });
                // In a task of its own: receiving a large result costs the
                // main thread a few milliseconds already.
                self.next_slice();
            }
            (Err(e), _) => self.alert(
                format!("The simulation's report could not be read: {e}."),
                true,
            ),
            (_, Err(e)) => self.alert(
                format!("The simulation's timeline could not be read: {}.", e.0),
                true,
            ),
        }
        self.pump();
    }

    /// The figures shown are this run's, and its timeline is over the
    /// core's limit: the statement takes the timeline's place.
    fn on_no_timeline(&self, gen: u64, data: &JsValue) {
        let get = |k: &str| js_sys::Reflect::get(data, &k.into()).unwrap_or(JsValue::UNDEFINED);
        let latest = {
            let mut i = self.inner.borrow_mut();
            let flight = i.in_flight.take_if(|f| f.gen == gen);
            i.last_result_ms = dom::now_ms();
            flight.is_some() && i.latest_gen == gen
        };
        if let (true, Some(state)) = (latest, self.state()) {
            let refusal = overlap_core::FieldError::new(
                &get("field").as_string().unwrap_or_default(),
                &get("message").as_string().unwrap_or_default(),
            );
            state
                .timeline_refused
                .set(Some(crate::worker::no_timeline::statement(&refusal)));
            // Nothing to play any more, and Play is disabled: a sweep in
            // progress stops rather than run on unseen.
            if state.playing.get_untracked() {
                crate::ui::playback::pause(state);
            }
            dom::set_body_data("timeline-refused", "1");
        }
        self.sync_busy();
        self.pump();
    }

    /// Decodes one slice of the newest result; schedules the next slice or
    /// shows the result when it is complete.
    fn decode_slice(&self) {
        let t0 = dom::now_ms();
        let done = {
            let mut i = self.inner.borrow_mut();
            let Some(d) = i.decoding.as_mut() else { return };
            let stepped = match &mut d.stage {
                Stage::Decode(decoder) => decoder.step(&d.words, d.records_per_slice),
                Stage::Prepare(preparing) => Ok(preparing.step(d.records_per_slice)),
                Stage::Ready(_) => Ok(true),
            };
            match stepped {
                Ok(done) => {
                    let took = dom::now_ms() - t0;
                    // Aim the next slice at SLICE_TARGET_MS from this one's
                    // rate, growing at most twofold: one slice that ran
                    // quickly never licenses one many times longer.
                    let per_ms = d.records_per_slice as f64 / took.max(0.05);
                    let aim = (per_ms * SLICE_TARGET_MS) as usize;
                    d.records_per_slice = aim.clamp(1000, (d.records_per_slice * 2).min(1 << 20));
                    Ok(done)
                }
                Err(e) => Err(e),
            }
        };
        match done {
            Ok(true) => {
                let d = self.inner.borrow_mut().decoding.take();
                if let Some(mut d) = d {
                    match d.stage {
                        Stage::Decode(decoder) => {
                            // Decoded: measure it for drawing in slices of its own,
                            // sized afresh (a bar costs more to measure than to decode).
                            d.stage = Stage::Prepare(Preparing::new(decoder.finish()));
                            d.records_per_slice = 20_000;
                            self.inner.borrow_mut().decoding = Some(d);
                            self.next_slice();
                        }
                        Stage::Prepare(preparing) => {
                            d.stage = Stage::Ready(Box::new(preparing.finish()));
                            self.inner.borrow_mut().decoding = Some(d);
                            self.next_slice();
                        }
                        Stage::Ready(prepared) => self.apply(
                            Shown {
                                gen: d.gen,
                                scenario: d.scenario,
                                report: d.report,
                                sim_ms: d.sim_ms,
                                received_ms: d.received_ms,
                                figures: d.figures,
                            },
                            *prepared,
                        ),
                    }
                }
            }
            Ok(false) => self.next_slice(),
            Err(e) => {
                self.inner.borrow_mut().decoding = None;
                self.alert(
                    format!("The simulation's timeline could not be read: {}.", e.0),
                    true,
                );
            }
        }
        self.sync_busy();
    }

    /// Schedules the next slice of the newest result, in a task of its own.
    fn next_slice(&self) {
        let weak = self.weak();
        let next = Timeout::new(0, move || {
            if let Some(r) = weak.upgrade() {
                r.decode_slice();
            }
        });
        if let Some(d) = self.inner.borrow_mut().decoding.as_mut() {
            d._next = Some(next);
        }
    }

    /// Records the worker's run counts a message carried.
    fn note_runs(&self, runs: &JsValue) {
        if runs.is_undefined() {
            return;
        }
        let json = {
            let mut i = self.inner.borrow_mut();
            i.runs_current = RunCounts::from_js(runs).unwrap_or_default();
            i.runs_json()
        };
        dom::set_body_data("worker-runs", &json);
    }

    /// A large run's figures, ahead of its timeline: shown at once if the
    /// run is still the newest; the previous timeline stays, dimmed.
    fn on_figures(&self, gen: u64, data: &JsValue) {
        let Some(state) = self.state() else { return };
        let received_at = epoch_ms();
        let get = |k: &str| js_sys::Reflect::get(data, &k.into()).unwrap_or(JsValue::UNDEFINED);
        let figures_ms = get("sim_ms").as_f64().unwrap_or(0.0);
        let report: Report =
            match serde_json::from_str(&get("report").as_string().unwrap_or_default()) {
                Ok(r) => r,
                Err(e) => {
                    self.alert(
                        format!("The simulation's report could not be read: {e}."),
                        true,
                    );
                    return;
                }
            };
        let cached = get("cached").as_bool().unwrap_or(false);
        let scenario = {
            let mut i = self.inner.borrow_mut();
            if !cached {
                i.last_figures_ms = Some(figures_ms);
            }
            if i.latest_gen != gen {
                // Overtaken: its timeline is dropped by the worker too.
                return;
            }
            let Some(f) = i.in_flight.as_mut().filter(|f| f.gen == gen) else {
                return;
            };
            // Decided now, before the shown run's preset is replaced.
            f.figures = Some(FiguresShown {
                keep_before: state.same_preset_as_shown(),
            });
            // The timeline has a budget of its own: the run is not stuck.
            f._budget = self.budget(gen, TIMELINE_BUDGET_MS);
            note_wait(f.made_at, data);
            (f.scenario.clone(), f.made_at)
        };
        let (scenario, made_at) = scenario;
        let t0 = dom::now_ms();
        self.show_figures(state, report, scenario);
        self.sync_busy();
        dom::set_body_data("figures-ms", &format!("{figures_ms:.1}"));
        dom::set_body_data("figures-apply-ms", &format!("{:.1}", dom::now_ms() - t0));
        // For the page benchmark: the figures' way from the input's change
        // to the screen, as epoch times and durations.
        let num = |k: &str| get(k).as_f64().unwrap_or(f64::NAN);
        dom::set_body_data(
            "figures-path",
            &format!(
                r#"{{"made_at":{made_at:.1},"taken_up_at":{:.1},"resolve_ms":{:.1},"core_ms":{figures_ms:.1},"posted_at":{:.1},"received_at":{received_at:.1}}}"#,
                num("taken_up_at"),
                num("resolve_ms"),
                num("posted_at"),
            ),
        );
    }

    /// Shows a run's figures and counts it as shown (`data-run-seq`).
    fn show_figures(&self, state: AppState, report: Report, scenario: Scenario) {
        state.replace_ghost(state.report.get_untracked());
        state.report.set(Some(report));
        state.resolved.set(Some(scenario));
        if state.run_alert.with_untracked(Option::is_some) {
            state.run_alert.set(None);
            dom::set_body_data("run-alert", "0");
        }
        state.run_seq.update(|n| *n += 1);
        // Tests wait on this to know the figures belong to the latest input.
        dom::set_body_data("run-seq", &state.run_seq.get_untracked().to_string());
    }

    /// Shows a finished run: figures (unless they came first), timeline, notes.
    fn apply(&self, run: Shown, timeline: Prepared) {
        let Some(state) = self.state() else { return };
        let Shown {
            gen,
            scenario,
            report,
            sim_ms,
            received_ms,
            figures,
        } = run;
        if self.inner.borrow().latest_gen != gen {
            return;
        }
        let t0 = dom::now_ms();
        // For the page benchmark: how much of a change is the core's, and how
        // long the page spent decoding.
        dom::set_body_data("sim-ms", &format!("{sim_ms:.1}"));
        dom::set_body_data("decode-ms", &format!("{:.1}", t0 - received_ms));
        let names: Vec<String> = timeline
            .timeline
            .gpus
            .iter()
            .map(|g| format!("GPU {} (stage {})", g.rank, g.stage))
            .collect();
        let note = overlap_view::summary::drawn_gpus(&timeline.timeline, scenario.hardware.gpus());
        let keep_before = match figures {
            Some(f) => f.keep_before,
            None => state.same_preset_as_shown(),
        };
        match figures {
            // The same report as the figures shown: replaced only should it differ.
            Some(_) => {
                if state.report.with_untracked(|r| r.as_ref() != Some(&report)) {
                    state.report.set(Some(report));
                }
            }
            None => {
                dom::set_body_data("figures-ms", "");
                self.show_figures(state, report, scenario)
            }
        }
        if state.no_timeline_untracked() {
            state.timeline_refused.set(None);
            dom::set_body_data("timeline-refused", "0");
        }
        {
            let scene = state.scene();
            let mut scene = scene.borrow_mut();
            scene.keep_before = keep_before;
            scene.set_prepared(timeline, !dom::reduced_motion(), dom::now_ms());
            // The canvas marks a paint with the run it shows: this run's
            // number, even when the timelines of runs before were dropped.
            scene.seq = state.run_seq.get_untracked();
            if dom::reduced_motion() {
                scene.playing = false;
                scene.playhead_s = f64::INFINITY;
            }
        }
        state.timeline_seq.set(state.run_seq.get_untracked());
        state.represents_note.set(note);
        state.gpu_names.set(names);
        // The pickers show what the scene kept: it lets go of a GPU or a
        // group this step does not have (`Scene::set_prepared`).
        let (link_gpu, shown_gpus) = {
            let scene = state.scene();
            let s = scene.borrow();
            (s.link_gpu, s.shown_gpus)
        };
        if state.link_gpu.get_untracked() != link_gpu {
            state.link_gpu.set(link_gpu);
        }
        if state.shown_gpus.get_untracked() != shown_gpus {
            state.shown_gpus.set(shown_gpus);
        }
        // Painted a frame later, in a task of its own: the next frame lays
        // out the figures just shown, and painting the canvas never adds
        // up with it (or with showing them) to one long task.
        frame::request_after_layout();
        dom::set_body_data("apply-ms", &format!("{:.1}", dom::now_ms() - t0));
    }
}

/// Wall-clock time, ms since the epoch (`timeOrigin + now`): comparable
/// with the worker's.
fn epoch_ms() -> f64 {
    dom::window()
        .and_then(|w| w.performance())
        .map(|p| p.time_origin() + p.now())
        .unwrap_or(0.0)
}

/// For the page benchmark: how long a run waited between its input's change
/// and the worker taking it up (coalescing, a worker starting, a run before
/// it), from the `taken_up_at` the worker sends.
fn note_wait(made_at: f64, data: &JsValue) {
    let taken_up = js_sys::Reflect::get(data, &"taken_up_at".into())
        .ok()
        .and_then(|v| v.as_f64());
    if let Some(t) = taken_up {
        dom::set_body_data("wait-ms", &format!("{:.1}", t - made_at));
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

/// Re-simulates whenever the scenario input changes.
pub fn install(state: AppState) {
    let runner = state.runner.get_value();
    *runner.state.borrow_mut() = Some(state);
    *runner.share.borrow_mut() = use_context::<Share>();
    Effect::new(move |_| {
        let input = state.input.get();
        state.runner.get_value().request_soon(input);
    });
    if spawn::test_hooks_on() {
        // Test-only: `overlap-lab-test:panic` on the window makes the worker
        // panic, so that a browser test can check how the page reports it.
        let _ = window_event_listener(
            leptos::ev::Custom::<web_sys::Event>::new("overlap-lab-test:panic"),
            move |_| {
                let runner = state.runner.get_value();
                let i = runner.inner.borrow();
                if let Some(w) = &i.worker {
                    let msg = js_sys::Object::new();
                    let _ = js_sys::Reflect::set(&msg, &"type".into(), &"panic".into());
                    let _ = w.post(&msg);
                }
            },
        );
    }
}

/// "Simulating…" with a Stop button while a run is in flight; the timeline
/// after it is dimmed meanwhile (style.css).
#[component]
pub fn SimStatus() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        <div class="sim-status" class:busy=move || state.busy.get() data-busy=move || state.busy.get().to_string()>
            <Show when=move || state.busy.get()>
                <p role="status">
                    <span class="spinner" aria-hidden="true"></span>
                    {move || if state.figures_ahead.get() {
                        "Simulating the timeline… the figures are this scenario's; the timeline below is the previous scenario's. "
                    } else {
                        "Simulating… the timeline below is the previous scenario's. "
                    }}
                    <button type="button" class="stop" on:click=move |_| state.runner.get_value().stop()>"Stop"</button>
                </p>
            </Show>
        </div>
    }
}

/// Why the last run did not show: over budget, stopped, or an internal error.
#[component]
pub fn RunAlertView() -> impl IntoView {
    let state = expect_context::<AppState>();
    view! {
        {move || {
            state
                .run_alert
                .get()
                .map(|a| {
                    view! {
                        <div class="run-alert" role="alert">
                            <p>{a.cause}</p>
                            {a.report_link.map(|l| {
                                let href = l.clone();
                                view! { <p class="report-link"><a href=href>{l}</a></p> }
                            })}
                        </div>
                    }
                })
        }}
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
