//! The sweep view's curves: one point of a sweep (`SweepPoint`) and one
//! collective's bus-bandwidth curve (`BusCurve`) per request, so that the
//! page draws them as they come and a newer sweep costs this worker at
//! most the points already asked for.

use std::cell::RefCell;

use overlap_core::scenario::{CollectiveOp, HardwareInput};
use overlap_core::ScenarioInput;
use overlap_session::WorkerReply;

use super::scope::{now_ms, post};

thread_local! {
    /// The sweep this worker serves, by generation: its simulator keeps the
    /// all-off baseline from point to point.
    static SWEEP: RefCell<Option<(u64, overlap_core::sweep::Sweep)>> = const { RefCell::new(None) };
}

/// One point of a sweep, answered with its row (a refusal is a row too).
pub fn sweep_point(
    gen: u64,
    input: ScenarioInput,
    field: &str,
    value: serde_json::Value,
    index: u32,
) {
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

/// A collective's bus-bandwidth curve over every GPU of `hardware`.
pub fn bus_curve(gen: u64, hardware: &HardwareInput, collective: CollectiveOp) {
    post(
        &WorkerReply::BusCurve {
            gen,
            collective,
            points: overlap_core::sweep::bus_curve(hardware, collective),
        },
        &[],
        &[],
    );
}
