//! The simulation worker: the same WebAssembly module as the page, started
//! in a dedicated Web Worker by `www/sim-worker.js`, so that a long
//! simulation never holds the page's main thread.
//!
//! What crosses the boundary is typed: the page posts an
//! `overlap_session::WorkerRequest` and the worker answers with
//! `WorkerReply`s (their variants say which message answers which, and
//! which typed arrays travel beside them; `wire` is the envelope):
//! - `Simulate`: `Result`, the report and the timeline as two typed arrays
//!   (`codec`), transferred rather than copied; or `Refused`. A large run
//!   (`figures_first`) is answered twice: first `Figures` from the core's
//!   report-only path (or kept from a recent run of the same scenario,
//!   `cached`), then the `Result`, computed in a task of its own so that a
//!   newer request that arrived meanwhile is seen first and wins (the
//!   timeline of an overtaken request is never computed). A step whose
//!   timeline is over the core's limit for one
//!   (`overlap_core::timeline_refusal`) is answered with its figures, then
//!   `NoTimeline` (`no_timeline`). Figures refused at run time (a steady
//!   state that failed over that limit) come as `Refused` naming the field.
//!   Every answer to `Simulate` also carries the worker's `RunCounts`, so
//!   that the page can show that no stale run queues. A large step's
//!   figures may be made over two workers (`helper`): the page sees the
//!   same messages.
//! - `Trace`: `Trace` with the Chrome trace's UTF-8 bytes, exactly what
//!   `overlap-lab trace` writes; `Kineto`: `Kineto` with the zip of the
//!   Kineto traces, the files `overlap-lab trace --kineto` writes.
//! - `Import`: the reader's trace files, read here a slice at a time
//!   (`trace_reader`), answered with `ImportProgress` replies, then
//!   `Imported` (the figures, and the bars as two typed arrays) or
//!   `ImportRefused`; the page starts a worker of its own for each import
//!   (`importer`).
//! - `Panic`: panics on purpose, only when the page started the worker
//!   with its test hooks on, so that the browser tests can check how a
//!   panic is reported.
//!
//! A panic posts `Panic` before the module traps; the worker script then
//! posts `Crashed`. The page treats a worker that panicked or crashed as
//! gone and starts a new one.

mod decoding;
pub mod figures_cache;
pub mod figures_first;
pub mod helper;
pub mod importer;
mod kineto_zip;
pub mod no_timeline;
pub mod runner;
mod show;
pub mod spawn;
mod trace_reader;
pub mod wire;

use std::cell::{Cell, RefCell};

use gloo_timers::callback::Timeout;
use overlap_core::{FieldError, Report, Scenario, ScenarioInput, Simulator};
use overlap_session::{codec, RunCounts, WorkerReply, WorkerRequest};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::DedicatedWorkerGlobalScope;

thread_local! {
    /// One per worker, and a worker serves one app instance: it remembers
    /// that instance's last all-off baseline.
    static SIMULATOR: RefCell<Simulator> = RefCell::new(Simulator::default());
    /// The newest `Simulate` request's number (0: none yet): a deferred
    /// timeline of an older one is dropped.
    static LATEST_GEN: Cell<u64> = const { Cell::new(0) };
    /// The timeline of a run whose figures went first, waiting for its own
    /// task; replacing or dropping it cancels it.
    static DEFERRED: RefCell<Option<Timeout>> = const { RefCell::new(None) };
    static RUNS: Cell<RunCounts> = const { Cell::new(RunCounts::ZERO) };
    /// The figures of the last few large scenarios, shown again at once.
    static FIGURES: RefCell<figures_cache::FiguresCache<Report>> = RefCell::new(Default::default());
}

fn bump(f: impl FnOnce(&mut RunCounts)) {
    RUNS.with(|r| {
        let mut c = r.get();
        f(&mut c);
        r.set(c);
    });
}

fn runs() -> RunCounts {
    RUNS.with(Cell::get)
}

/// True inside a dedicated worker (where there is no page to mount).
pub fn in_worker_scope() -> bool {
    js_sys::global()
        .dyn_into::<DedicatedWorkerGlobalScope>()
        .is_ok()
}

fn scope() -> Option<DedicatedWorkerGlobalScope> {
    js_sys::global().dyn_into().ok()
}

/// Posts a reply to whoever started this worker, with the typed arrays
/// after it; their buffers are transferred.
fn post(reply: &WorkerReply, arrays: &[&JsValue], buffers: &[js_sys::ArrayBuffer]) {
    let Some(scope) = scope() else { return };
    let _ = scope.post_message_with_transfer(
        &wire::envelope(reply, arrays),
        &wire::transfer_list(buffers),
    );
}

fn now_ms() -> f64 {
    scope()
        .and_then(|s| s.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Wall-clock time, ms since the epoch (`timeOrigin + now`): comparable
/// with the page's, to tell how long a request waited before the worker
/// took it up.
fn epoch_ms() -> f64 {
    scope()
        .and_then(|s| s.performance())
        .map(|p| p.time_origin() + p.now())
        .unwrap_or(0.0)
}

/// Installs the message handler and the panic reporter, then says "ready".
pub fn start() {
    let Some(scope) = scope() else { return };
    let test_hooks = crate::dom::test_hooks_on();
    std::panic::set_hook(Box::new(|info| {
        post(
            &WorkerReply::Panic {
                message: info.to_string(),
            },
            &[],
            &[],
        );
    }));
    let handler =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            handle(&ev.data(), test_hooks)
        });
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    handler.forget();
    post(&WorkerReply::Ready, &[], &[]);
}

fn handle(data: &JsValue, test_hooks: bool) {
    let (request, arrays) = match wire::open::<WorkerRequest>(data) {
        Ok(opened) => opened,
        Err(e) => {
            // The page and the worker are one module: this is a bug.
            refused(0, e, None);
            return;
        }
    };
    match request {
        WorkerRequest::Simulate { gen, input } => simulate(gen, &input),
        WorkerRequest::Trace { gen, input } => trace(gen, &input),
        WorkerRequest::Kineto { gen, input, folder } => kineto(gen, &input, &folder),
        WorkerRequest::Parts { gen, input, parts } => helper::run_parts(gen, &input, &parts),
        WorkerRequest::Import { gen, files } => trace_reader::import(gen, &files, &arrays),
        WorkerRequest::Panic if test_hooks => {
            panic!("a test asked the simulation worker to panic")
        }
        WorkerRequest::Panic | WorkerRequest::Init { .. } => {}
        WorkerRequest::SweepPoint {
            gen,
            input,
            field,
            value,
            index,
        } => sweep_point(gen, input, &field, value, index),
        WorkerRequest::BusCurve {
            gen,
            hardware,
            collective,
        } => post(
            &WorkerReply::BusCurve {
                gen,
                collective,
                points: overlap_core::sweep::bus_curve(&hardware, collective),
            },
            &[],
            &[],
        ),
    }
}

thread_local! {
    /// The sweep this worker serves, by generation: its simulator keeps the
    /// all-off baseline from point to point.
    static SWEEP: RefCell<Option<(u64, overlap_core::sweep::Sweep)>> = const { RefCell::new(None) };
}

/// One point of a sweep, answered with its row (a refusal is a row too).
fn sweep_point(gen: u64, input: ScenarioInput, field: &str, value: serde_json::Value, index: u32) {
    use overlap_core::sweep::{Candidate, Row, Sweep};
    let t0 = now_ms();
    let row = match overlap_core::sweep::field(field) {
        Ok(f) => SWEEP.with(|cell| {
            let mut cell = cell.borrow_mut();
            if cell
                .as_ref()
                .is_none_or(|(g, s)| *g != gen || s.input != input)
            {
                *cell = Some((gen, Sweep::new(input, f).single_threaded()));
            }
            let (_, sweep) = cell.as_mut().expect("set above");
            sweep.point(&Candidate::Value(value))
        }),
        Err(error) => Row::Refused { value, error },
    };
    post(
        &WorkerReply::SweepPoint {
            gen,
            index,
            row,
            sim_ms: now_ms() - t0,
        },
        &[],
        &[],
    );
}

/// A refusal; with `field`, the scenario field it names, for the page to
/// show beside that control.
fn refused(gen: u64, message: String, field: Option<String>) {
    post(
        &WorkerReply::Refused {
            gen,
            field,
            message,
            runs: runs(),
        },
        &[],
        &[],
    );
}

fn resolve(gen: u64, input: &ScenarioInput) -> Option<Scenario> {
    match input.resolve() {
        Ok(s) => Some(s),
        Err(e) => {
            let text = e
                .errors
                .iter()
                .map(|f| format!("{}: {}", f.field, f.message))
                .collect::<Vec<_>>()
                .join("; ");
            refused(gen, text, None);
            None
        }
    }
}

fn simulate(gen: u64, input: &ScenarioInput) {
    // The newest request wins: a timeline still waiting for its task is dropped.
    LATEST_GEN.with(|g| g.set(gen));
    if DEFERRED.with(|d| d.borrow_mut().take()).is_some() {
        bump(|c| c.skipped += 1);
    }
    // Figures waiting for the helper's parts are dropped too.
    helper::drop_pending();
    bump(|c| c.started += 1);
    let taken_up = epoch_ms();
    let Some(scenario) = resolve(gen, input) else {
        return;
    };
    // For the page benchmark: the worker's own work before the core runs.
    let resolve_ms = epoch_ms() - taken_up;
    if !figures_first::figures_first(&scenario) {
        timeline(gen, &scenario, 0.0, taken_up);
        return;
    }
    // Over the timeline's limit: the figures alone, then why no timeline.
    // Asked only here: every op plans at least one event, so a step over
    // the limit's 3.5 M operations always comes figures first.
    const _: () =
        assert!(figures_first::FIGURES_FIRST_MIN_PLANNED_EVENTS <= overlap_core::MAX_TIMELINE_OPS);
    let no_timeline = overlap_core::timeline_refusal(&scenario);
    let t0 = now_ms();
    let figures_done = Figured {
        gen,
        taken_up,
        resolve_ms,
        t0,
        no_timeline,
    };
    if let Some(report) = FIGURES.with(|c| c.borrow_mut().get(&scenario)) {
        figures_done.post(scenario, Ok(report), true);
        return;
    }
    let kept = scenario.clone();
    let then: helper::Then = Box::new(move |figures| {
        let report = figures.map(|figures| {
            FIGURES.with(|c| c.borrow_mut().put(&kept, figures.report.clone()));
            figures.report
        });
        figures_done.post(kept, report, false);
    });
    // Over two workers when it has parts to share (answered later, once
    // the helper's are back); else here and now.
    let alone = with_simulator(|sim| helper::figures(gen, input, &scenario, sim, then));
    if let Some(then) = alone {
        if with_simulator(|sim| sim.report_parts(&scenario).len()) == 1 {
            bump(|c| c.one_run += 1);
        }
        then(with_simulator(|sim| sim.simulate_report(&scenario)));
    }
}

/// Runs `f` on this worker's simulator.
fn with_simulator<R>(f: impl FnOnce(&mut Simulator) -> R) -> R {
    SIMULATOR.with(|s| f(&mut s.borrow_mut()))
}

/// A `Simulate` request whose figures are being made, and what the page is
/// told with them.
struct Figured {
    gen: u64,
    /// When the worker began on it (`epoch_ms`).
    taken_up: f64,
    /// The worker's own work before the core ran.
    resolve_ms: f64,
    /// When the figures were begun (`now_ms`).
    t0: f64,
    /// Why the step has no timeline, if it has none.
    no_timeline: Option<FieldError>,
}

impl Figured {
    /// Posts the figures (or the refusal), then either why there is no
    /// timeline, or the timeline in a task of its own.
    fn post(self, scenario: Scenario, report: Result<Report, FieldError>, cached: bool) {
        let Figured {
            gen,
            taken_up,
            resolve_ms,
            t0,
            no_timeline,
        } = self;
        let report = match report {
            Ok(report) => report,
            Err(e) => {
                refused(gen, e.message, Some(e.field));
                return;
            }
        };
        let figures_ms = now_ms() - t0;
        bump(|c| c.figures += 1);
        post(
            &WorkerReply::Figures {
                gen,
                report,
                sim_ms: figures_ms,
                // Figures kept from an earlier run took no simulation: the
                // page does not take their time as a measure of this
                // scenario's cost.
                cached,
                taken_up_at: taken_up,
                resolve_ms,
                runs: runs(),
                posted_at: epoch_ms(),
            },
            &[],
            &[],
        );
        if let Some(e) = no_timeline {
            post(
                &WorkerReply::NoTimeline {
                    gen,
                    field: e.field,
                    message: e.message,
                    runs: runs(),
                },
                &[],
                &[],
            );
            return;
        }
        // In a task of its own: a request the page posted while the figures
        // were being computed runs first and drops this one.
        let deferred = Timeout::new(0, move || {
            DEFERRED.with(|d| d.borrow_mut().take());
            if LATEST_GEN.with(Cell::get) == gen {
                timeline(gen, &scenario, figures_ms, taken_up);
            } else {
                bump(|c| c.skipped += 1);
            }
        });
        DEFERRED.with(|d| *d.borrow_mut() = Some(deferred));
    }
}

/// Simulates the scenario with its timeline and posts the `Result`: where
/// the step allows, one short run's timeline and how its steady period
/// repeats (`Simulator::simulate_repeating`: 1T's 512 micro-batches from a
/// run of 68), which the page draws whole as it decodes; else the whole
/// step's. The same simulator answered its figures, if they went first, so
/// its baseline is reused rather than simulated again; `figures_ms` is the
/// time those figures took, added to the core time the page is told;
/// `taken_up` when the worker began on the request (`epoch_ms`).
fn timeline(gen: u64, scenario: &Scenario, figures_ms: f64, taken_up: f64) {
    let t0 = now_ms();
    let mut sim = SIMULATOR.with(|s| s.borrow_mut().simulate_repeating(scenario));
    let sim_ms = now_ms() - t0;
    let t1 = now_ms();
    codec::sort_lanes(&mut sim.timeline);
    // Written straight into the arrays that travel, a chunk at a time: an
    // encoded copy in the module's memory first would grow it by the whole
    // timeline's words (hundreds of MB on 1T) and then be copied out again.
    let (f64s, u32s) = codec::encoded_len(&sim.timeline);
    let mut arrays = TypedArrays {
        f64s: js_sys::Float64Array::new_with_length(f64s as u32),
        u32s: js_sys::Uint32Array::new_with_length(u32s as u32),
    };
    codec::encode_into(&sim.timeline, sim.repeat, &mut arrays);
    drop(sim.timeline);
    let TypedArrays { f64s, u32s } = arrays;
    let encode_ms = now_ms() - t1;
    bump(|c| c.timelines += 1);
    let memory_bytes = wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .ok()
        .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
        .map(|b| b.byte_length())
        .unwrap_or(0);
    let reply = WorkerReply::Result {
        gen,
        report: sim.report,
        sim_ms: figures_ms + sim_ms,
        timeline_ms: sim_ms,
        encode_ms,
        taken_up_at: taken_up,
        posted_at: epoch_ms(),
        memory_bytes: f64::from(memory_bytes),
        runs: runs(),
    };
    post(&reply, &[&f64s, &u32s], &[f64s.buffer(), u32s.buffer()]);
}

/// The two typed arrays a timeline is encoded into, in the worker.
struct TypedArrays {
    f64s: js_sys::Float64Array,
    u32s: js_sys::Uint32Array,
}

impl codec::WordSink for TypedArrays {
    fn put_f64(&mut self, at: usize, words: &[f64]) {
        self.f64s
            .subarray(at as u32, (at + words.len()) as u32)
            .copy_from(words);
    }
    fn put_u32(&mut self, at: usize, words: &[u32]) {
        self.u32s
            .subarray(at as u32, (at + words.len()) as u32)
            .copy_from(words);
    }
}

/// Posts bytes of an export as `reply`'s array, transferred.
fn post_bytes(reply: &WorkerReply, bytes: &[u8]) {
    let bytes = js_sys::Uint8Array::from(bytes);
    post(reply, &[&bytes], &[bytes.buffer()]);
}

fn trace(gen: u64, input: &ScenarioInput) {
    let Some(scenario) = resolve(gen, input) else {
        return;
    };
    // Simulated afresh, as the CLI does, so that the file is byte for byte
    // what `overlap-lab trace` writes; refused as the CLI refuses it.
    let Some(sim) = whole_step(gen, &scenario) else {
        return;
    };
    let mut text = overlap_core::trace::chrome_trace(&sim.timeline);
    drop(sim);
    text.push('\n');
    post_bytes(&WorkerReply::Trace { gen }, text.as_bytes());
}

fn kineto(gen: u64, input: &ScenarioInput, folder: &str) {
    let Some(scenario) = resolve(gen, input) else {
        return;
    };
    let Some(sim) = whole_step(gen, &scenario) else {
        return;
    };
    let traces = overlap_core::kineto::rank_traces(&scenario, &sim.timeline);
    drop(sim);
    match kineto_zip::zip_traces(folder, &traces) {
        Ok(zip) => {
            drop(traces);
            post_bytes(&WorkerReply::Kineto { gen }, &zip);
        }
        Err(e) => refused(gen, format!("the zip could not be written: {e}"), None),
    }
}

/// The step with its timeline for an export, or a refusal naming the field
/// when its timeline is over the core's limit.
fn whole_step(gen: u64, scenario: &Scenario) -> Option<overlap_core::Simulation> {
    match Simulator::default().try_simulate(scenario) {
        Ok(sim) => Some(sim),
        Err(e) => {
            refused(gen, e.message, Some(e.field));
            None
        }
    }
}
