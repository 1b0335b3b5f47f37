//! The worker's own scope, shared by every kind of request it serves: how
//! a reply is posted, its clocks, its simulator and what it counts of the
//! page's runs.

use std::cell::{Cell, RefCell};

use overlap_core::{Scenario, ScenarioInput, Simulator};
use overlap_session::{RunCounts, WorkerReply};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::DedicatedWorkerGlobalScope;

use crate::client::wire;

thread_local! {
    /// One per worker, and a worker serves one app instance: it remembers
    /// that instance's last all-off baseline.
    static SIMULATOR: RefCell<Simulator> = RefCell::new(Simulator::default());
    static RUNS: Cell<RunCounts> = const { Cell::new(RunCounts::ZERO) };
}

/// Counts something this worker did with the page's runs.
pub fn bump(f: impl FnOnce(&mut RunCounts)) {
    RUNS.with(|r| {
        let mut c = r.get();
        f(&mut c);
        r.set(c);
    });
}

/// What this worker did with the page's runs so far.
pub fn runs() -> RunCounts {
    RUNS.with(Cell::get)
}

/// Runs `f` on this worker's simulator.
pub fn with_simulator<R>(f: impl FnOnce(&mut Simulator) -> R) -> R {
    SIMULATOR.with(|s| f(&mut s.borrow_mut()))
}

/// The worker's global scope; none outside a dedicated worker.
pub fn scope() -> Option<DedicatedWorkerGlobalScope> {
    js_sys::global().dyn_into().ok()
}

/// Posts a reply to whoever started this worker, with the typed arrays
/// after it; their buffers are transferred.
pub fn post(reply: &WorkerReply, arrays: &[&JsValue], buffers: &[js_sys::ArrayBuffer]) {
    let Some(scope) = scope() else { return };
    let _ = scope.post_message_with_transfer(
        &wire::envelope(reply, arrays),
        &wire::transfer_list(buffers),
    );
}

/// Milliseconds on the worker's monotonic clock.
pub fn now_ms() -> f64 {
    scope()
        .and_then(|s| s.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Wall-clock time, ms since the epoch (`timeOrigin + now`): comparable
/// with the page's, to tell how long a request waited before the worker
/// took it up.
pub fn epoch_ms() -> f64 {
    scope()
        .and_then(|s| s.performance())
        .map(|p| p.time_origin() + p.now())
        .unwrap_or(0.0)
}

/// A refusal; with `field`, the scenario field it names, for the page to
/// show beside that control.
pub fn refused(gen: u64, message: String, field: Option<String>) {
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

/// The scenario of `input`, or its refusal posted. The page checks every
/// field as it is typed but leaves the step's cost to this resolve
/// (`ScenarioInput::resolve_unbudgeted`), so a refusal of one field (the
/// budget names the control that most directly caused the overshoot) is
/// posted with it: the page shows it beside that control, or opens the
/// default scenario with it if the page opened with this scenario.
pub fn resolve(gen: u64, input: &ScenarioInput) -> Option<Scenario> {
    match input.resolve() {
        Ok(s) => Some(s),
        Err(e) => {
            match e.errors.as_slice() {
                [one] => refused(gen, one.message.clone(), Some(one.field.clone())),
                all => refused(
                    gen,
                    all.iter()
                        .map(|f| format!("{}: {}", f.field, f.message))
                        .collect::<Vec<_>>()
                        .join("; "),
                    None,
                ),
            }
            None
        }
    }
}
