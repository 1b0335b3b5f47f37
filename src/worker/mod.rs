//! The simulation worker: the same WebAssembly module as the page, started
//! in a dedicated Web Worker by `www/sim-worker.js`, so that a long
//! simulation never holds the page's main thread.
//!
//! Messages from the page (plain objects):
//! - `{type: "simulate", gen, input}`: `input` is the scenario JSON; the
//!   answer is `{type: "result", gen, report, sim_ms, memory_bytes, f64, u32}`
//!   with the report as JSON text and the timeline as two typed arrays
//!   (`codec`), transferred rather than copied; or `{type: "refused", gen, message}`.
//!   A large run (`figures_first`) is answered twice: first
//!   `{type: "figures", gen, report, sim_ms}` from the core's report-only
//!   path (or kept from a recent run of the same scenario, `cached: true`),
//!   then the `result` with its timeline, computed in a task of its
//!   own so that a newer request that arrived meanwhile is seen first and
//!   wins (the timeline of an overtaken request is never computed).
//!   A step whose timeline is over the core's limit for one
//!   (`overlap_core::timeline_refusal`) is answered with its figures, then
//!   `{type: "no-timeline", gen, field, message}` in place of the
//!   `result` (`no_timeline`). Figures refused at run time (a steady
//!   state that failed over that limit) come as `refused` with the
//!   `field` named.
//!   Every answer to `simulate` also carries the worker's run counts
//!   (`runs`: requests started, figures posted, timelines posted, timelines
//!   skipped as overtaken, figures shared with the helper worker, figures
//!   made of one run with nothing to share), so that
//!   the page can show that no stale run queues.
//!   A large step's figures may be made over two workers (`helper`): the
//!   page sees the same messages.
//! - `{type: "trace", gen, input}`: `{type: "trace", gen, bytes}`, the Chrome
//!   trace as UTF-8 bytes, exactly what `overlap-lab trace` writes.
//! - `{type: "kineto", gen, input}`: `{type: "kineto", gen, bytes}`, the
//!   zip of the Kineto traces, the files `overlap-lab trace --kineto` writes.
//! - `{type: "panic"}`: panics on purpose, only when the page started the
//!   worker with its test hooks on (`testHooks` in the init message), so
//!   that the browser tests can check how a panic is reported.
//!
//! A panic posts `{type: "panic", message}` before the module traps; the
//! worker script then posts `{type: "crashed", message}`. The page treats a
//! worker that panicked or crashed as gone and starts a new one.

pub mod codec;
pub mod figures_cache;
pub mod figures_first;
pub mod helper;
mod kineto_zip;
pub mod no_timeline;
pub mod runner;
pub mod spawn;

use std::cell::{Cell, RefCell};

use gloo_timers::callback::Timeout;
use overlap_core::{FieldError, Scenario, ScenarioInput, Simulator};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::DedicatedWorkerGlobalScope;

thread_local! {
    /// One per worker, and a worker serves one app instance: it remembers
    /// that instance's last all-off baseline.
    static SIMULATOR: RefCell<Simulator> = RefCell::new(Simulator::default());
    /// The newest `simulate` request's number: a deferred timeline of an
    /// older one is dropped.
    static LATEST_GEN: Cell<f64> = const { Cell::new(-1.0) };
    /// The timeline of a run whose figures went first, waiting for its own
    /// task; replacing or dropping it cancels it.
    static DEFERRED: RefCell<Option<Timeout>> = const { RefCell::new(None) };
    static RUNS: Cell<RunCounts> = const { Cell::new(RunCounts::ZERO) };
    /// The figures of the last few large scenarios, shown again at once.
    static FIGURES: RefCell<figures_cache::FiguresCache> = RefCell::new(Default::default());
}

/// What this worker did with the `simulate` requests it received. Carried
/// to the page as its JSON object (a count missing reads as zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RunCounts {
    /// Requests it started on (read and resolved, or refused).
    pub started: u32,
    /// Figures posted ahead of a timeline.
    pub figures: u32,
    /// Timelines posted (`result` messages).
    pub timelines: u32,
    /// Deferred timelines dropped because a newer request came first.
    pub skipped: u32,
    /// Figures made with the helper worker's parts (`helper`).
    pub shared: u32,
    /// Figures made of one run, with nothing to share: the baseline
    /// remembered (or the scenario its own), and one short run standing
    /// for three (`overlap_core::steady_state::marked_counts`).
    pub one_run: u32,
}

impl RunCounts {
    const ZERO: RunCounts = RunCounts {
        started: 0,
        figures: 0,
        timelines: 0,
        skipped: 0,
        shared: 0,
        one_run: 0,
    };

    fn bump(f: impl FnOnce(&mut RunCounts)) {
        RUNS.with(|r| {
            let mut c = r.get();
            f(&mut c);
            r.set(c);
        });
    }

    fn to_js(self) -> JsValue {
        let json = serde_json::to_string(&self).unwrap_or_default();
        js_sys::JSON::parse(&json).unwrap_or(JsValue::UNDEFINED)
    }

    /// The counts a message carried (`to_js`), if it carried any.
    pub fn from_js(runs: &JsValue) -> Option<RunCounts> {
        let json = js_sys::JSON::stringify(runs).ok()?.as_string()?;
        serde_json::from_str(&json).ok()
    }
}

impl std::ops::Add for RunCounts {
    type Output = RunCounts;

    fn add(self, o: RunCounts) -> RunCounts {
        RunCounts {
            started: self.started + o.started,
            figures: self.figures + o.figures,
            timelines: self.timelines + o.timelines,
            skipped: self.skipped + o.skipped,
            shared: self.shared + o.shared,
            one_run: self.one_run + o.one_run,
        }
    }
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

fn set(obj: &js_sys::Object, key: &str, value: &JsValue) {
    let _ = js_sys::Reflect::set(obj, &key.into(), value);
}

fn post(msg: &js_sys::Object, transfer: &[JsValue]) {
    let Some(scope) = scope() else { return };
    let list = transfer.iter().collect::<js_sys::Array>();
    let _ = scope.post_message_with_transfer(msg, &list);
}

fn message(kind: &str, gen: f64) -> js_sys::Object {
    let msg = js_sys::Object::new();
    set(&msg, "type", &kind.into());
    set(&msg, "gen", &gen.into());
    msg
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
    let test_hooks = js_sys::Reflect::get(&scope, &"overlapLabTestHooks".into())
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    std::panic::set_hook(Box::new(|info| {
        let msg = js_sys::Object::new();
        set(&msg, "type", &"panic".into());
        set(&msg, "message", &info.to_string().into());
        post(&msg, &[]);
    }));
    let handler =
        Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            handle(&ev.data(), test_hooks)
        });
    scope.set_onmessage(Some(handler.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    handler.forget();
    post(&message("ready", 0.0), &[]);
}

fn field(data: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(data, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

fn handle(data: &JsValue, test_hooks: bool) {
    let kind = field(data, "type").as_string().unwrap_or_default();
    let gen = field(data, "gen").as_f64().unwrap_or(0.0);
    let input = field(data, "input").as_string().unwrap_or_default();
    match kind.as_str() {
        "simulate" => simulate(gen, &input),
        "trace" => trace(gen, &input),
        "kineto" => {
            // The folder the archive unpacks to, named by the page like the file.
            let folder = field(data, "folder")
                .as_string()
                .unwrap_or_else(|| "overlap-lab-kineto".to_string());
            kineto(gen, &input, &folder)
        }
        "parts" => helper::run_parts(data),
        "panic" if test_hooks => panic!("a test asked the simulation worker to panic"),
        _ => {}
    }
}

fn refused(gen: f64, text: String) {
    refused_field(gen, text, None);
}

/// A refusal; with `field`, the scenario field it names, for the page to
/// show beside that control.
fn refused_field(gen: f64, text: String, field: Option<&str>) {
    let msg = message("refused", gen);
    if let Some(field) = field {
        set(&msg, "field", &field.into());
    }
    set(&msg, "runs", &RUNS.with(Cell::get).to_js());
    set(&msg, "message", &text.into());
    post(&msg, &[]);
}

fn resolve(gen: f64, input: &str) -> Option<overlap_core::Scenario> {
    let parsed: ScenarioInput = match serde_json::from_str(input) {
        Ok(i) => i,
        Err(e) => {
            refused(gen, format!("the worker could not read the scenario: {e}"));
            return None;
        }
    };
    match parsed.resolve() {
        Ok(s) => Some(s),
        Err(e) => {
            let text = e
                .errors
                .iter()
                .map(|f| format!("{}: {}", f.field, f.message))
                .collect::<Vec<_>>()
                .join("; ");
            refused(gen, text);
            None
        }
    }
}

fn simulate(gen: f64, input: &str) {
    // The newest request wins: a timeline still waiting for its task is dropped.
    LATEST_GEN.with(|g| g.set(gen));
    if DEFERRED.with(|d| d.borrow_mut().take()).is_some() {
        RunCounts::bump(|c| c.skipped += 1);
    }
    // Figures waiting for the helper's parts are dropped too.
    helper::drop_pending();
    RunCounts::bump(|c| c.started += 1);
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
    if let Some(json) = FIGURES.with(|c| c.borrow_mut().get(&scenario)) {
        figures_done.post(scenario, Ok(json), true);
        return;
    }
    let kept = scenario.clone();
    let then: helper::Then = Box::new(move |figures| {
        let report = figures.map(|figures| {
            let json = serde_json::to_string(&figures.report).unwrap_or_default();
            FIGURES.with(|c| c.borrow_mut().put(&kept, json.clone()));
            json
        });
        figures_done.post(kept, report, false);
    });
    // Over two workers when it has parts to share (answered later, once
    // the helper's are back); else here and now.
    let alone = with_simulator(|sim| helper::figures(gen, input, &scenario, sim, then));
    if let Some(then) = alone {
        if with_simulator(|sim| sim.report_parts(&scenario).len()) == 1 {
            RunCounts::bump(|c| c.one_run += 1);
        }
        then(with_simulator(|sim| sim.simulate_report(&scenario)));
    }
}

/// Runs `f` on this worker's simulator.
fn with_simulator<R>(f: impl FnOnce(&mut Simulator) -> R) -> R {
    SIMULATOR.with(|s| f(&mut s.borrow_mut()))
}

/// A `simulate` request whose figures are being made, and what the page is
/// told with them.
struct Figured {
    gen: f64,
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
    /// Posts the figures (the report's JSON, or the refusal), then either
    /// why there is no timeline, or the timeline in a task of its own.
    fn post(self, scenario: Scenario, report: Result<String, FieldError>, cached: bool) {
        let Figured {
            gen,
            taken_up,
            resolve_ms,
            t0,
            no_timeline,
        } = self;
        let report = match report {
            Ok(json) => json,
            Err(e) => {
                refused_field(gen, e.message.clone(), Some(&e.field));
                return;
            }
        };
        let figures_ms = now_ms() - t0;
        RunCounts::bump(|c| c.figures += 1);
        let msg = message("figures", gen);
        set(&msg, "report", &report.into());
        set(&msg, "sim_ms", &figures_ms.into());
        // Figures kept from an earlier run took no simulation: the page does
        // not take their time as a measure of this scenario's cost.
        set(&msg, "cached", &cached.into());
        set(&msg, "taken_up_at", &taken_up.into());
        set(&msg, "resolve_ms", &resolve_ms.into());
        set(&msg, "runs", &RUNS.with(Cell::get).to_js());
        set(&msg, "posted_at", &epoch_ms().into());
        post(&msg, &[]);
        if let Some(e) = no_timeline {
            let msg = message("no-timeline", gen);
            set(&msg, "field", &e.field.into());
            set(&msg, "message", &e.message.into());
            set(&msg, "runs", &RUNS.with(Cell::get).to_js());
            post(&msg, &[]);
            return;
        }
        // In a task of its own: a request the page posted while the figures
        // were being computed runs first and drops this one.
        let deferred = Timeout::new(0, move || {
            DEFERRED.with(|d| d.borrow_mut().take());
            if LATEST_GEN.with(Cell::get) == gen {
                timeline(gen, &scenario, figures_ms, taken_up);
            } else {
                RunCounts::bump(|c| c.skipped += 1);
            }
        });
        DEFERRED.with(|d| *d.borrow_mut() = Some(deferred));
    }
}

/// Simulates the scenario with its timeline and posts the `result`. The
/// same simulator answered its figures, if they went first, so its
/// baseline is reused rather than simulated again; `figures_ms` is the time
/// those figures took, added to the core time the page is told;
/// `taken_up` when the worker began on the request (`epoch_ms`).
fn timeline(gen: f64, scenario: &Scenario, figures_ms: f64, taken_up: f64) {
    let t0 = now_ms();
    let mut sim = SIMULATOR.with(|s| s.borrow_mut().simulate(scenario));
    let sim_ms = now_ms() - t0;
    codec::sort_lanes(&mut sim.timeline);
    let encoded = codec::encode(&sim.timeline);
    drop(sim.timeline);
    let report = serde_json::to_string(&sim.report).unwrap_or_default();
    let f64s = js_sys::Float64Array::from(&encoded.f64s[..]);
    let u32s = js_sys::Uint32Array::from(&encoded.u32s[..]);
    drop(encoded);
    RunCounts::bump(|c| c.timelines += 1);
    let msg = message("result", gen);
    set(&msg, "report", &report.into());
    set(&msg, "sim_ms", &(figures_ms + sim_ms).into());
    set(&msg, "timeline_ms", &sim_ms.into());
    set(&msg, "taken_up_at", &taken_up.into());
    set(&msg, "runs", &RUNS.with(Cell::get).to_js());
    let memory_bytes = wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .ok()
        .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
        .map(|b| b.byte_length())
        .unwrap_or(0);
    set(&msg, "memory_bytes", &f64::from(memory_bytes).into());
    set(&msg, "f64", &f64s);
    set(&msg, "u32", &u32s);
    post(&msg, &[f64s.buffer().into(), u32s.buffer().into()]);
}

fn trace(gen: f64, input: &str) {
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
    let bytes = js_sys::Uint8Array::from(text.as_bytes());
    drop(text);
    let msg = message("trace", gen);
    set(&msg, "bytes", &bytes);
    post(&msg, &[bytes.buffer().into()]);
}

fn kineto(gen: f64, input: &str, folder: &str) {
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
            let bytes = js_sys::Uint8Array::from(&zip[..]);
            drop(zip);
            let msg = message("kineto", gen);
            set(&msg, "bytes", &bytes);
            post(&msg, &[bytes.buffer().into()]);
        }
        Err(e) => refused(gen, format!("the zip could not be written: {e}")),
    }
}

/// The step with its timeline for an export, or a refusal naming the field
/// when its timeline is over the core's limit.
fn whole_step(gen: f64, scenario: &Scenario) -> Option<overlap_core::Simulation> {
    match Simulator::default().try_simulate(scenario) {
        Ok(sim) => Some(sim),
        Err(e) => {
            refused_field(gen, e.message.clone(), Some(&e.field));
            None
        }
    }
}
