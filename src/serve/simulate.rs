//! `Simulate`: the figures and timeline of the page's scenario.
//!
//! A large run (`figures_first`) is answered twice: first `Figures` from
//! the core's report-only path (or kept from a recent run of the same
//! scenario, `figures_cache`), made over this worker and its helper when
//! the step has parts to share (`helper`), then the `Result`, computed in
//! a task of its own so that a newer request that arrived meanwhile is
//! seen first and wins (the timeline of an overtaken request is never
//! computed). A step whose timeline is over the core's limit for one
//! (`overlap_core::timeline_refusal`) is answered with its figures, then
//! `NoTimeline`.

use std::cell::{Cell, RefCell};

use gloo_timers::callback::Timeout;
use overlap_core::{FieldError, Report, Scenario, ScenarioInput};
use overlap_session::{codec, WorkerReply};
use wasm_bindgen::JsCast;

use super::scope::{bump, epoch_ms, now_ms, post, refused, resolve, runs, with_simulator};
use super::{figures_cache, figures_first, helper};

thread_local! {
    /// The newest `Simulate` request's number (0: none yet): a deferred
    /// timeline of an older one is dropped.
    static LATEST_GEN: Cell<u64> = const { Cell::new(0) };
    /// The timeline of a run whose figures went first, waiting for its own
    /// task; replacing or dropping it cancels it.
    static DEFERRED: RefCell<Option<Timeout>> = const { RefCell::new(None) };
    /// The figures of the last few large scenarios, shown again at once.
    static FIGURES: RefCell<figures_cache::FiguresCache<Report>> = RefCell::new(Default::default());
}

/// Answers `Simulate`.
pub fn simulate(gen: u64, input: &ScenarioInput) {
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
    let mut sim = with_simulator(|sim| sim.simulate_repeating(scenario));
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
