//! The step's figures from its steady state: three short runs, extrapolated
//! exactly to the scenario's micro-batch count.
//!
//! Every schedule runs each micro-batch through the same ops
//! (`workload::cost`), so past the pipeline's fill one more unit of
//! micro-batches (one, or `pp` for the interleaved schedule) adds one
//! identical period to every stage's timeline. Every sum the report is made
//! of (`output::tally`) then grows by the same amount per unit: it is affine
//! in the micro-batch count. The step is simulated at three counts `m0`,
//! `m0 + u`, `m0 + 2u` a few units past the fill; where the two differences
//! agree in every sum, the sums are extrapolated to the scenario's count and
//! the figures derived from them.
//!
//! What could break it within the three runs is checked, not assumed: a
//! period of two units, a critical path that changes between the runs, a
//! slowest GPU that another overtakes, each makes the differences disagree
//! or the slowest GPU ambiguous, and the step is then simulated in full.
//! What three runs cannot see, a critical path that changes only later (as
//! in GPipe and inference, where forwards run back to back), is excluded
//! up front by `workload::schedule::steady_counts`. Work tied to the
//! first or last micro-batch (DP buckets, FSDP gathers, held weight
//! gradients) is the same at every count and cancels in the differences.

use crate::input::validate;
use crate::model::scenario::Scenario;
use crate::output::summary;
use crate::output::tally::Tally;
use crate::workload;
use crate::workload::cost::with_micro_batches;
use crate::workload::interference::Sharing;
use crate::{FieldError, Simulator};

/// How far the differences may disagree, relative to the extrapolated sum:
/// the disagreement times the units extrapolated must stay under this part
/// of the sum. A sum far below its scale (the step, for seconds) is held to
/// [`FLOOR`] of the scale instead, so that rounding of a near-zero sum does
/// not refuse a step. Both well below the 1e-9 to which the figures must
/// equal the full simulation's (`tests/steady_state.rs`).
pub const TOLERANCE: f64 = 1e-10;

/// The smallest part of its scale a sum is measured against (see [`TOLERANCE`]).
pub const FLOOR: f64 = 1e-3;

/// How many units in the last place of its scale a sum's differences may
/// show while the sum stays the same at every count: its terms are
/// differences of event times of the scale's size, each rounded, so a
/// constant sum can differ between runs by a few such units (2e-14 s on the
/// 1T step's 27 s runs, about six).
pub const ROUNDING_ULPS: f64 = 64.0;

/// A run's sums and what obtaining them cost.
pub(crate) struct Tallied {
    /// The sums at the scenario's micro-batch count.
    pub tally: Tally,
    /// Events the engine processed over the runs made.
    pub events: u64,
    /// Events the engine planned over the runs made.
    pub planned_events: u64,
    /// The three micro-batch counts extrapolated from, if they were.
    pub extrapolated_from: Option<[u32; 3]>,
}

pub use crate::workload::schedule::steady_counts;

/// Sums at the scenario's count: extrapolated when its steady state allows
/// (see the module's doc), else from one full run. A step whose three runs
/// disagree is simulated in full only within the limit of one run
/// (`input::validate::MAX_TIMELINE_OPS`): over it, the refusal names
/// `workload.global_batch` and the largest value simulated in full.
pub(crate) fn tally(sim: &Simulator, s: &Scenario) -> Result<Tallied, FieldError> {
    let (mut events, mut planned_events) = (0, 0);
    if let Some(counts) = steady_counts(s) {
        let runs = counts.map(|m| {
            let t = run_tally(sim, &with_micro_batches(s, m));
            events += t.events;
            planned_events += t.planned_events;
            t.tally
        });
        let extrapolated = extrapolate_tally(&runs, counts, s.micro_batches());
        if let Some(tally) = extrapolated.filter(|_| !sim.steady_fails) {
            return Ok(Tallied {
                tally,
                events,
                planned_events,
                extrapolated_from: Some(counts),
            });
        }
        check_whole_step(s)?;
    }
    let mut full = run_tally(sim, s);
    full.events += events;
    full.planned_events += planned_events;
    Ok(full)
}

/// A step whose steady state failed is simulated in full only when the
/// whole step is within the limit of one run (the validator let its
/// figures through on the steady state's short runs alone).
fn check_whole_step(s: &Scenario) -> Result<(), FieldError> {
    match validate::timeline_refusal(s) {
        None => Ok(()),
        Some(_) => Err(validate::no_steady_state_refusal(s)),
    }
}

/// One run's sums.
fn run_tally(sim: &Simulator, s: &Scenario) -> Tallied {
    let mut graph = workload::build(s, sim.fidelity, sim.reserve(s));
    let run = sim.run(&graph, true, false, &Sharing::of(s));
    graph.release_dependencies();
    Tallied {
        tally: summary::tally(&graph, &run, true),
        events: run.events,
        planned_events: run.planned_events,
        extrapolated_from: None,
    }
}

/// The sums of three runs at `counts` carried to `micro_batches`, or `None`
/// when they are not affine there or the slowest GPU is not clear.
fn extrapolate_tally(runs: &[Tally; 3], counts: [u32; 3], micro_batches: u32) -> Option<Tally> {
    if !(runs[0].same_shape(&runs[1]) && runs[1].same_shape(&runs[2])) {
        return None;
    }
    let [a, b, c] = runs.each_ref().map(Tally::values);
    let units = units_beyond(counts, micro_batches);
    let values = a
        .iter()
        .zip(&b)
        .zip(&c)
        .map(|((&a, &b), &c)| extrapolate([a, b, c], units))
        .collect::<Option<Vec<f64>>>()?;
    let mut tally = runs[2].with_values(&values);
    tally.tie_ends(runs);
    tally
        .slowest_is_clear(TOLERANCE * (1.0 + units))
        .then_some(tally)
}

/// Units of micro-batches from the last count to `micro_batches`.
fn units_beyond(counts: [u32; 3], micro_batches: u32) -> f64 {
    let unit = counts[2] - counts[1];
    f64::from(micro_batches - counts[2]) / f64::from(unit)
}

/// One sum `(value, scale)` at three evenly spaced counts carried `units`
/// beyond the last, or `None` when its two differences disagree by more
/// than [`TOLERANCE`] allows.
fn extrapolate([(v0, _), (v1, s1), (v2, s2)]: [(f64, f64); 3], units: f64) -> Option<f64> {
    let (d1, d2) = (v1 - v0, v2 - v1);
    // A sum the runs give equal up to the rounding of their times is the
    // same at every count (a per-GPU total of work done once per step): it
    // is carried as it is, not grown by its rounding.
    let rounding = ROUNDING_ULPS * f64::EPSILON * v2.abs().max(s2.abs());
    if d1.abs() <= rounding && d2.abs() <= rounding {
        return Some(v2);
    }
    // The slope over both differences: half the rounding of one.
    let value = v2 + (v2 - v0) / 2.0 * units;
    let scale = (s2 + (s2 - s1) * units).abs();
    let allowed = TOLERANCE * value.abs().max(FLOOR * scale);
    ((d2 - d1).abs() * (1.0 + units) <= allowed).then_some(value)
}

/// A step time, s, with the events processed and planned for it and the
/// counts it was extrapolated from.
pub(crate) type StepTime = (f64, u64, u64, Option<[u32; 3]>);

/// The all-overlap-off baseline's step time, s: from its steady state when
/// it allows (only the step time is extrapolated, and checked), else from
/// one full run. With the events processed and planned, and the counts
/// extrapolated from. As [`tally`], a failed steady state over the limit of
/// one run is refused when `bounded` (the figures); a caller that builds
/// the timeline has checked the whole step already.
pub(crate) fn step_time_s(
    sim: &Simulator,
    s: &Scenario,
    bounded: bool,
) -> Result<StepTime, FieldError> {
    let run_step = |s: &Scenario| {
        let graph = workload::build(s, sim.fidelity, sim.reserve(s));
        let run = sim.run(&graph, false, false, &Sharing::of(s));
        (run.step_time_s, run.events, run.planned_events)
    };
    let (mut events, mut planned) = (0, 0);
    if let Some(counts) = steady_counts(s) {
        let steps = counts.map(|m| {
            let (step, e, p) = run_step(&with_micro_batches(s, m));
            events += e;
            planned += p;
            (step, step.abs())
        });
        let extrapolated = extrapolate(steps, units_beyond(counts, s.micro_batches()));
        if let Some(step) = extrapolated.filter(|_| !sim.steady_fails) {
            return Ok((step, events, planned, Some(counts)));
        }
        if bounded {
            check_whole_step(s)?;
        }
    }
    let (step, e, p) = run_step(s);
    Ok((step, events + e, planned + p, None))
}
