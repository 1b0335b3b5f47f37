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
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
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

/// One of the independent runs a step's figures are made of: of the
/// scenario itself (its sums) or of its all-off baseline (its step time),
/// at a micro-batch count (a short run of the steady state) or whole.
///
/// A run is named, not carried: whoever runs it resolves the same scenario
/// and runs it with [`crate::Simulator::run_part`], in this thread, another
/// one, or another worker of the page. Its [`PartRan`] goes back to its place
/// in the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Part {
    /// The baseline's run rather than the scenario's.
    pub baseline: bool,
    /// The micro-batch count run; `None`: the scenario's own, whole.
    pub micro_batches: Option<u32>,
}

/// What a [`Part`] gave, to be sent back to where the figures are made
/// (exactly: `serde_json` here carries every `f64` bit for bit).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PartRan(Ran);

impl PartRan {
    /// Events the engine processed for this part (benchmarks weigh a part's
    /// time by them).
    pub fn events(&self) -> u64 {
        match &self.0 {
            Ran::Tally(t) => t.events,
            Ran::Step((_, events, _)) => *events,
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Ran {
    /// The scenario's sums.
    Tally(Tallied),
    /// The baseline's step time, s, with the events processed and planned.
    Step((f64, u64, u64)),
}

/// The runs the figures of `s` need, the scenario's first (the longest),
/// then those of `baseline` when its step time is needed: the steady
/// state's three short runs where it applies (see the module's doc), else
/// one whole run.
pub(crate) fn parts(s: &Scenario, baseline: Option<&Scenario>) -> Vec<Part> {
    let mut parts = parts_of(s, false);
    if let Some(off) = baseline {
        parts.extend(parts_of(off, true));
    }
    parts
}

/// The runs of one scenario, marked as the baseline's or not: the short
/// runs largest first, so that each run of a thread fits in the memory the
/// one before it left (`workload::recycle`). [`in_count_order`] puts their
/// results back in the order of [`steady_counts`].
fn parts_of(s: &Scenario, baseline: bool) -> Vec<Part> {
    match steady_counts(s) {
        Some(counts) => counts
            .into_iter()
            .rev()
            .map(|m| Part {
                baseline,
                micro_batches: Some(m),
            })
            .collect(),
        None => vec![Part {
            baseline,
            micro_batches: None,
        }],
    }
}

/// Runs one part of the figures of `s` (whose all-off baseline is `off`).
pub(crate) fn run_part(sim: &Simulator, s: &Scenario, off: &Scenario, part: Part) -> PartRan {
    let of = if part.baseline { off } else { s };
    let scenario = match part.micro_batches {
        Some(m) => with_micro_batches(of, m),
        None => of.clone(),
    };
    PartRan(if part.baseline {
        Ran::Step(run_step(sim, &scenario))
    } else {
        Ran::Tally(run_tally(sim, &scenario))
    })
}

/// Sums at the scenario's count from its parts' runs (see [`parts`]):
/// extrapolated when its steady state allows (see the module's doc), else
/// from one full run. A step whose three runs disagree is simulated in full
/// only within the limit of one run (`input::validate::MAX_TIMELINE_OPS`):
/// over it, the refusal names `workload.global_batch` and the largest value
/// simulated in full. With runs of the baseline `off` among them, its step
/// time as [`step_time_s`] gives it (bounded).
pub(crate) fn tally(
    sim: &Simulator,
    s: &Scenario,
    off: &Scenario,
    ran: Vec<PartRan>,
) -> Result<(Tallied, Option<StepTime>), FieldError> {
    let (mut tallies, mut steps) = (Vec::new(), Vec::new());
    for PartRan(ran) in ran {
        match ran {
            Ran::Tally(t) => tallies.push(t),
            Ran::Step(step) => steps.push(step),
        }
    }
    // Runs that are not the parts listed (a caller's slip) are not trusted:
    // the parts are run here instead.
    let listed = |s: &Scenario| steady_counts(s).map_or(1, |c| c.len());
    if tallies.len() != listed(s) {
        tallies = parts_of(s, false)
            .into_iter()
            .filter_map(|part| match run_part(sim, s, off, part).0 {
                Ran::Tally(t) => Some(t),
                Ran::Step(_) => None,
            })
            .collect();
    }
    in_count_order(&mut tallies);
    in_count_order(&mut steps);
    let tally = tally_from(sim, s, steady_counts(s), tallies)?;
    let step = match steps.len() {
        0 => None,
        n if n == listed(off) => Some(step_time_from(sim, off, steady_counts(off), &steps, true)?),
        _ => Some(step_time_s(sim, off, true)?),
    };
    Ok((tally, step))
}

/// The sums at the scenario's count from its runs: the three short ones at
/// `counts`, or the one full run.
fn tally_from(
    sim: &Simulator,
    s: &Scenario,
    counts: Option<[u32; 3]>,
    runs: Vec<Tallied>,
) -> Result<Tallied, FieldError> {
    let Some(counts) = counts else {
        return Ok(runs.into_iter().next().expect("as listed: one full run"));
    };
    let events = runs.iter().map(|t| t.events).sum();
    let planned_events = runs.iter().map(|t| t.planned_events).sum();
    let runs: [Tally; 3] = runs
        .into_iter()
        .map(|t| t.tally)
        .collect::<Vec<_>>()
        .try_into()
        .unwrap_or_else(|_| unreachable!("as listed: three short runs"));
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
    let mut graph = workload::build_for_figures(s, sim.fidelity, sim.reserve(s));
    let run = sim.run(&graph, true, false, &Sharing::of(s));
    graph.release_dependencies();
    let tallied = Tallied {
        tally: summary::tally(&graph, &run, true),
        events: run.events,
        planned_events: run.planned_events,
        extrapolated_from: None,
    };
    graph.recycle();
    run.recycle();
    tallied
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
    let mut steps: Vec<(f64, u64, u64)> = crate::parallel::map(
        &parts_of(s, true),
        sim.threads_for(s),
        |&part| match run_part(sim, s, s, part).0 {
            Ran::Step(step) => step,
            Ran::Tally(_) => unreachable!("a baseline's part gives its step time"),
        },
    );
    in_count_order(&mut steps);
    step_time_from(sim, s, steady_counts(s), &steps, bounded)
}

/// The results of one scenario's runs, as [`parts_of`] lists them, in the
/// order of their micro-batch counts ([`steady_counts`]).
fn in_count_order<T>(runs: &mut [T]) {
    runs.reverse();
}

/// One run's step time, s, with the events processed and planned.
fn run_step(sim: &Simulator, s: &Scenario) -> (f64, u64, u64) {
    let graph = workload::build_for_figures(s, sim.fidelity, sim.reserve(s));
    let run = sim.run(&graph, false, false, &Sharing::of(s));
    let step = (run.step_time_s, run.events, run.planned_events);
    graph.recycle();
    run.recycle();
    step
}

/// The step time at the scenario's count from its runs: the three short
/// ones at `counts`, or the one full run.
fn step_time_from(
    sim: &Simulator,
    s: &Scenario,
    counts: Option<[u32; 3]>,
    runs: &[(f64, u64, u64)],
    bounded: bool,
) -> Result<StepTime, FieldError> {
    let events = runs.iter().map(|r| r.1).sum();
    let planned = runs.iter().map(|r| r.2).sum();
    let Some(counts) = counts else {
        return Ok((runs[0].0, events, planned, None));
    };
    let steps = [0, 1, 2].map(|i| (runs[i].0, runs[i].0.abs()));
    let extrapolated = extrapolate(steps, units_beyond(counts, s.micro_batches()));
    if let Some(step) = extrapolated.filter(|_| !sim.steady_fails) {
        return Ok((step, events, planned, Some(counts)));
    }
    if bounded {
        check_whole_step(s)?;
    }
    let (step, e, p) = run_step(sim, s);
    Ok((step, events + e, planned + p, None))
}
