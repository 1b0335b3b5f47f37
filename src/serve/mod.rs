//! The worker program: the same WebAssembly module as the page, started
//! in a dedicated Web Worker by `www/sim-worker.js`, so that a long
//! simulation never holds the page's main thread. The page's side of it
//! is `crate::client`.
//!
//! What crosses the boundary is typed: the page posts an
//! `overlap_session::WorkerRequest` and the worker answers with
//! `WorkerReply`s (their variants say which message answers which, and
//! which typed arrays travel beside them; `wire` is the envelope):
//! - `Simulate` (`simulate`): `Result`, the report and the timeline as two
//!   typed arrays (`codec`), transferred rather than copied; or `Refused`.
//!   A large run is answered twice: `Figures` first, then the `Result` in
//!   a task of its own, or `NoTimeline` for a step whose timeline is over
//!   the core's limit for one. Figures refused at run time (a steady
//!   state that failed over that limit) come as `Refused` naming the field.
//!   Every answer to `Simulate` also carries the worker's `RunCounts`, so
//!   that the page can show that no stale run queues. A large step's
//!   figures may be made over two workers (`helper`, which starts its
//!   helper with the page's own `WorkerClient`): the page sees the same
//!   messages.
//! - `Trace`, `Kineto` (`exports`): the Chrome trace's UTF-8 bytes, exactly
//!   what `overlap-lab trace` writes; the zip of the Kineto traces, the
//!   files `overlap-lab trace --kineto` writes.
//! - `SweepPoint`, `BusCurve` (`curves`): one point of a sweep, one
//!   collective's bus-bandwidth curve.
//! - `Import`: the reader's trace files, read here a slice at a time
//!   (`trace_reader`), answered with `ImportProgress` replies, then
//!   `Imported` (the figures, and the bars as two typed arrays) or
//!   `ImportRefused`; the page starts a worker of its own for each import
//!   (`importer`).
//! - `Search` (`search`): the layout search of the scenario's model,
//!   answered with `SearchProgress` replies, then `Searched` or
//!   `SearchRefused`; the page starts a worker of its own for each search
//!   (`searcher`) and cancels by terminating it. That worker simulates each
//!   wave's candidates over a pool of helpers it starts, the same module
//!   again: `SearchCandidates`, answered with `SearchCandidatesRan`.
//! - `Panic`: panics on purpose, only when the page started the worker
//!   with its test hooks on, so that the browser tests can check how a
//!   panic is reported.
//!
//! A panic posts `Panic` before the module traps; the worker script then
//! posts `Crashed`. The page treats a worker that panicked or crashed as
//! gone and starts a new one. What every kind of request shares (posting
//! a reply, the clocks, the simulator) is `scope`.

mod curves;
mod exports;
pub mod figures_cache;
pub mod figures_first;
mod helper;
mod kineto_zip;
mod scope;
mod search;
mod simulate;
mod trace_reader;

use overlap_session::{WorkerReply, WorkerRequest};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::DedicatedWorkerGlobalScope;

use crate::client::wire;

/// True inside a dedicated worker (where there is no page to mount).
pub fn in_worker_scope() -> bool {
    js_sys::global()
        .dyn_into::<DedicatedWorkerGlobalScope>()
        .is_ok()
}

/// Installs the message handler and the panic reporter, then says "ready".
pub fn start() {
    let Some(scope) = scope::scope() else { return };
    let test_hooks = crate::dom::test_hooks_on();
    std::panic::set_hook(Box::new(|info| {
        scope::post(
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
    scope::post(&WorkerReply::Ready, &[], &[]);
}

fn handle(data: &JsValue, test_hooks: bool) {
    let (request, arrays) = match wire::open::<WorkerRequest>(data) {
        Ok(opened) => opened,
        Err(e) => {
            // The page and the worker are one module: this is a bug.
            scope::refused(0, e, None);
            return;
        }
    };
    match request {
        WorkerRequest::Simulate { gen, input } => simulate::simulate(gen, &input),
        WorkerRequest::Trace { gen, input } => exports::trace(gen, &input),
        WorkerRequest::Kineto { gen, input, folder } => exports::kineto(gen, &input, &folder),
        WorkerRequest::Parts { gen, input, parts } => helper::run_parts(gen, &input, &parts),
        WorkerRequest::Import { gen, files, rules } => {
            trace_reader::import(gen, &files, &rules, &arrays)
        }
        WorkerRequest::Search {
            gen,
            input,
            gpus,
            objective,
        } => search::search(gen, &input, gpus, objective),
        WorkerRequest::SearchCandidates { gen, candidates } => {
            search::run_candidates(gen, &candidates)
        }
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
        } => curves::sweep_point(gen, input, &field, value, index),
        WorkerRequest::BusCurve {
            gen,
            hardware,
            collective,
        } => curves::bus_curve(gen, &hardware, collective),
    }
}
