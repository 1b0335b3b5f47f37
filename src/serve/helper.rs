//! A second worker for the figures of a large step.
//!
//! The core makes a large step's figures of independent parts (the steady
//! state's short runs and its baseline's, `Simulator::report_parts`). The
//! simulation worker starts one helper worker, the same module again, when
//! it first has such a step on a machine with two cores or more, and waits
//! for it to load (at most [`HELPER_WAIT_MS`]). It posts the helper every
//! other part, runs the rest itself, and makes the figures once the
//! helper's results are back (`Simulator::report_from_parts`): the same
//! figures, in the time of the longer share (on 1T with every overlap on,
//! the scenario's one run here while the helper runs the baseline's).
//!
//! Messages between the two (typed, `overlap_session`):
//! - to the helper, `WorkerRequest::Parts`: the scenario input and the parts;
//! - back, `WorkerReply::PartsRan`: the results (exact: the core's JSON
//!   carries every `f64` bit for bit), or none when the helper could not
//!   run them.
//!
//! Whatever goes wrong with the helper (it does not start, it answers with
//! an error, it panics or stops), the simulation worker runs the missing
//! parts itself: the figures come, later.
//!
//! The helper's life (started, ready, gone) is the page's own
//! `WorkerClient`'s; this worker keeps the helper's parts itself until the
//! helper is ready rather than in the client's queue, because it runs its
//! own parts only once the helper has its: run earlier, they would hold
//! this worker's thread while the helper's `Ready` waited behind them.

use std::cell::RefCell;

use gloo_timers::callback::Timeout;
use overlap_core::{Part, PartRan, Scenario, ScenarioInput, Simulator};
use overlap_session::{WorkerReply, WorkerRequest};

use super::scope::{bump, post, with_simulator};
use crate::client::worker_client::{Received, WorkerClient};

/// The parts the helper gets: every other one, from the second, so that
/// this worker, which cannot wait idle, keeps the first and longest.
pub fn helper_share(parts: &[Part]) -> Vec<usize> {
    (1..parts.len()).step_by(2).collect()
}

/// What to do with a step's figures (or its refusal).
pub type Then = Box<dyn FnOnce(Result<overlap_core::Figures, overlap_core::FieldError>)>;

/// How long a step waits for a helper that is loading before it runs
/// alone: loading takes tens of milliseconds (the module comes compiled).
pub const HELPER_WAIT_MS: u32 = 1_000;

/// A step whose figures wait for the helper's parts.
struct Pending {
    gen: u64,
    scenario: Scenario,
    parts: Vec<Part>,
    /// The indices of the parts the helper runs (`helper_share`).
    theirs: Vec<usize>,
    /// Per part: its result, once run here or received.
    ran: Vec<Option<PartRan>>,
    /// The helper's parts, not posted yet: it is still loading. This
    /// worker's own parts run once they are posted.
    unsent: Option<WorkerRequest>,
    /// What to do with the figures.
    then: Then,
}

/// Where the helper stands.
enum HelperState {
    /// Its handler is installed: a message is read.
    Ready,
    /// Started, not ready yet.
    Loading,
    /// None, and none can be started (one core, or the browser refused).
    Absent,
}

thread_local! {
    /// The helper worker, started when first needed.
    static HELPER: WorkerClient = WorkerClient::new(on_helper_message);
    static PENDING: RefCell<Option<Pending>> = const { RefCell::new(None) };
    /// Runs the waiting step alone should the helper not load in time.
    static WAIT: RefCell<Option<Timeout>> = const { RefCell::new(None) };
}

/// Posts `msg` to the helper, which is ready; false when it could not.
fn post_to_helper(msg: &WorkerRequest) -> bool {
    HELPER.with(|h| h.is_ready() && h.post(msg).is_ok())
}

/// Drops the step waiting for the helper, if any: a newer request wins.
pub fn drop_pending() {
    WAIT.with(|w| w.borrow_mut().take());
    PENDING.with(|p| p.borrow_mut().take());
}

/// Makes the figures of `scenario` (read from `input`) with the helper's
/// help, and hands them to `then`: later, once the helper has answered (a
/// helper still loading is waited for first). Gives `then` back, with
/// nothing started, when the step has fewer than two parts or no helper
/// could be started: the caller runs it alone.
pub fn figures(
    gen: u64,
    input: &ScenarioInput,
    scenario: &Scenario,
    sim: &Simulator,
    then: Then,
) -> Option<Then> {
    let parts = sim.report_parts(scenario);
    let theirs = helper_share(&parts);
    if theirs.is_empty() {
        return Some(then);
    }
    let state = helper_state();
    if matches!(state, HelperState::Absent) {
        return Some(then);
    }
    let msg = WorkerRequest::Parts {
        gen,
        input: input.clone(),
        parts: theirs.iter().map(|&i| parts[i]).collect(),
    };
    let mut pending = Pending {
        gen,
        ran: vec![None; parts.len()],
        scenario: scenario.clone(),
        parts,
        theirs,
        unsent: Some(msg),
        then,
    };
    match state {
        HelperState::Ready => {
            if !send(&mut pending, sim) {
                return Some(pending.then);
            }
        }
        // A helper still loading has no handler for the message yet: it
        // goes on "ready", or the step runs alone after a while.
        _ => WAIT.with(|w| {
            *w.borrow_mut() = Some(Timeout::new(HELPER_WAIT_MS, move || {
                WAIT.with(|w| w.borrow_mut().take());
                let waiting = PENDING.with(|p| p.borrow_mut().take_if(|p| p.gen == gen));
                if let Some(pending) = waiting {
                    finish(pending);
                }
            }))
        }),
    }
    PENDING.with(|p| *p.borrow_mut() = Some(pending));
    None
}

/// Posts the helper its parts, then runs this worker's own. False, with
/// nothing run, when the helper could not take the message.
fn send(pending: &mut Pending, sim: &Simulator) -> bool {
    let Some(msg) = pending.unsent.take() else {
        return true;
    };
    if !post_to_helper(&msg) {
        return false;
    }
    for (i, &part) in pending.parts.iter().enumerate() {
        if !pending.theirs.contains(&i) {
            pending.ran[i] = Some(sim.run_part(&pending.scenario, part));
        }
    }
    true
}

/// The helper said "ready": a step waiting for it is shared now.
fn helper_ready() {
    WAIT.with(|w| w.borrow_mut().take());
    let Some(mut pending) = PENDING.with(|p| p.borrow_mut().take()) else {
        return;
    };
    if with_simulator(|sim| send(&mut pending, sim)) {
        PENDING.with(|p| *p.borrow_mut() = Some(pending));
    } else {
        finish(pending);
    }
}

/// Where the helper stands; starts it if there is none (or it is gone).
fn helper_state() -> HelperState {
    HELPER.with(|h| {
        if h.is_running() {
            return match h.is_ready() {
                true => HelperState::Ready,
                false => HelperState::Loading,
            };
        }
        if cores() < 2.0 {
            return HelperState::Absent;
        }
        match h.start() {
            Ok(()) => HelperState::Loading,
            Err(_) => HelperState::Absent,
        }
    })
}

/// The cores the browser says this machine has (one when it does not say).
fn cores() -> f64 {
    use wasm_bindgen::JsCast;
    js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .map(|scope| scope.navigator().hardware_concurrency())
        .unwrap_or(1.0)
}

fn on_helper_message(heard: Received) {
    match heard.reply {
        WorkerReply::PartsRan { gen, ran } => received(gen, ran),
        WorkerReply::Ready => helper_ready(),
        WorkerReply::Panic { .. } | WorkerReply::Crashed { .. } => helper_gone(),
        _ => {}
    }
}

/// The helper cannot answer any more (its client has let it go; the next
/// step starts another): the waiting step's missing parts run here.
fn helper_gone() {
    WAIT.with(|w| w.borrow_mut().take());
    if let Some(pending) = PENDING.with(|p| p.borrow_mut().take()) {
        finish(pending);
    }
}

/// The helper's results for request `gen` (`None`: it could not run them).
fn received(gen: u64, ran: Option<Vec<PartRan>>) {
    let Some(mut pending) = PENDING.with(|p| p.borrow_mut().take()) else {
        return;
    };
    if pending.gen != gen {
        // An older request's parts: the waiting step is a newer one.
        PENDING.with(|p| *p.borrow_mut() = Some(pending));
        return;
    }
    if let Some(ran) = ran.filter(|r| r.len() == pending.theirs.len()) {
        for (&i, r) in pending.theirs.iter().zip(ran) {
            pending.ran[i] = Some(r);
        }
        bump(|c| c.shared += 1);
    }
    finish(pending);
}

/// The figures from the parts run, the missing ones run here first.
fn finish(pending: Pending) {
    let Pending {
        scenario,
        parts,
        ran,
        then,
        ..
    } = pending;
    let figures = with_simulator(|sim| {
        let ran = parts
            .iter()
            .zip(ran)
            .map(|(&part, r)| r.unwrap_or_else(|| sim.run_part(&scenario, part)))
            .collect();
        sim.report_from_parts(&scenario, ran)
    });
    then(figures);
}

/// In the helper: runs the parts of a `Parts` request and answers.
pub fn run_parts(gen: u64, input: &ScenarioInput, parts: &[Part]) {
    let ran = input.resolve().ok().map(|scenario| {
        with_simulator(|sim| {
            parts
                .iter()
                .map(|&part| sim.run_part(&scenario, part))
                .collect()
        })
    });
    post(&WorkerReply::PartsRan { gen, ran }, &[], &[]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(n: usize) -> Vec<Part> {
        (0..n)
            .map(|i| Part {
                baseline: i >= 3,
                micro_batches: Some(10 + i as u32),
            })
            .collect()
    }

    #[test]
    fn the_helper_takes_every_other_part_and_this_worker_the_first() {
        assert!(helper_share(&parts(1)).is_empty());
        assert_eq!(helper_share(&parts(2)), vec![1]);
        assert_eq!(helper_share(&parts(3)), vec![1]);
        assert_eq!(helper_share(&parts(6)), vec![1, 3, 5]);
    }
}
