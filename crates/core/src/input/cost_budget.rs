//! The cost budget: how many operations, events and re-ratings a scenario's
//! figures and timeline may take, predicted from small counting builds
//! (`workload::build::run_cost`) before anything runs; and each refusal over it,
//! naming the control that most directly caused the overshoot with the
//! largest value of it that fits.

use crate::input::error::FieldError;
use crate::model::scenario::{Scenario, Schedule, Workload};

/// Operations (compute ops and collectives) a step may hold for its figures,
/// counted by the builder (`workload::build::run_cost`) over the whole step. The
/// figures of a step with a steady state simulate at most three short runs
/// past the pipeline's fill (`crate::steady_state`), whatever the step
/// holds: 20 times the 1T-parameter step with every overlap on at four TP
/// chunks (3.1 million) fits.
pub const MAX_SIMULATED_OPS: u64 = 70_000_000;
/// Operations one simulated run may hold: a timeline (the whole step), and
/// every run the figures make (the steady state's short runs, or the whole
/// step where it has none). Memory grows with them, about 280 bytes per op
/// at the peak with a timeline (the graph, the engine's state and the
/// timeline's bars): the 1T-parameter step with every overlap on at four TP
/// chunks holds 3.1 million and peaks near 0.9 GB.
pub const MAX_TIMELINE_OPS: u64 = 3_500_000;
/// Events the engine may plan for one scenario and its baseline (the bound
/// `workload::build::run_cost` proves; the engine's work is linear in it). With flows
/// of one pattern sharing one class, concurrent flows no longer multiply it.
pub const MAX_PLANNED_EVENTS: u64 = 200_000_000;

/// Link usages the network may visit re-rating flows, over the runs the
/// figures make, and over the whole step for a timeline
/// (`workload::build::run_cost::Cost::rerate_work`, a bound on the work of
/// `sim::network`'s progressive filling). Events alone do not bound time
/// when many flows share one resource: each join or leave re-rates all of
/// them (issue 45's 86 s inference step: the pipeline sends of 64 replicas
/// through a 64x oversubscribed core, re-rated by every kernel's memory
/// traffic). Steps of that shape reach their bound; measured on this
/// project's 2-core machine at smaller batches, before kernels on one HBM
/// were re-rated alone (`Network::rerate_one_resource`), at about 6 ns of
/// CPU per unit, so a step at this limit would take about 12 s; since,
/// issue 45's F3 at the batch this limit allows (30,976, 2.00 G units)
/// runs in 1.9 s, about 1 ns per unit. The 1T-parameter step with every overlap on predicts
/// 761 M for its figures and 1.93 G for its whole step (its flows are
/// mostly timed alone: it runs in 0.3 s), and GPipe's whole 1T step 1.92 G:
/// this keeps them inside.
pub const MAX_RERATE_WORK: u64 = 2_000_000_000;

/// Millions, as the limits' messages write operation counts.
fn millions(n: u64) -> String {
    format!("{:.1} M", n as f64 / 1e6)
}

/// Why a step is refused whose cost cannot be predicted cheaply: its
/// smallest counting builds (`workload::build::run_cost::ShapeCost`) are over
/// [`crate::workload::build::run_cost::MAX_COUNTED_OPS`], and a step holds at least
/// as many operations as they do.
fn too_long_to_count() -> String {
    format!(
        "one pipeline fill of this step through two layers per virtual stage would already hold more than {} operations, \
         too many to predict this step's cost cheaply",
        millions(crate::workload::build::run_cost::MAX_COUNTED_OPS)
    )
}

/// Why the figures of this step are over the budget, or `None` when they
/// fit: the step's operations against [`MAX_SIMULATED_OPS`], each run the
/// figures simulate against [`MAX_TIMELINE_OPS`], their events against
/// [`MAX_PLANNED_EVENTS`]. Predicted (`workload::build::run_cost::predict`) from
/// builds of at most `MAX_COUNTED_OPS`, so that a step far over budget
/// costs little to refuse.
fn overshoot(s: &Scenario) -> Option<String> {
    let whole = crate::workload::build::schedule::steady_counts(s).is_none();
    let Some(budget) = crate::workload::build::run_cost::budget_within(s, MAX_TIMELINE_OPS) else {
        return Some(too_long_to_count());
    };
    let (step, figures) = (budget.step, budget.figures);
    if step.ops > MAX_SIMULATED_OPS {
        return Some(format!(
            "this step would hold {} operations, more than the limit of {}",
            millions(step.ops),
            millions(MAX_SIMULATED_OPS)
        ));
    }
    if figures.ops > MAX_TIMELINE_OPS && !whole {
        return Some(format!(
            "the short runs this step's figures are extrapolated from would hold {} operations, \
             more than the limit of {} for one run",
            millions(figures.ops),
            millions(MAX_TIMELINE_OPS)
        ));
    }
    if figures.ops > MAX_TIMELINE_OPS {
        return Some(format!(
            "this step's figures would simulate it whole, all {} of its operations at once (no steady state \
             to extrapolate from: a GPipe, ZB-V, DualPipeV, inference or param_gather step, or too few micro-batches past \
             the pipeline's fill), more than the limit of {} for one run",
            millions(step.ops),
            millions(MAX_TIMELINE_OPS)
        ));
    }
    if figures.rerate_work > MAX_RERATE_WORK {
        return Some(format!(
            "this step's flows would share its links so densely that re-rating them could visit {} link \
             usages, more than the limit of {} (many concurrent transfers through one shared link, such \
             as an oversubscribed core)",
            millions(figures.rerate_work),
            millions(MAX_RERATE_WORK)
        ));
    }
    (figures.planned_events > MAX_PLANNED_EVENTS).then(|| {
        format!(
            "this step and its baseline could take up to {} engine events, more than the limit of {MAX_PLANNED_EVENTS}",
            figures.planned_events
        )
    })
}

fn fits(s: &Scenario) -> bool {
    overshoot(s).is_none()
}

/// Whether the whole step, and its baseline, can be simulated in one run:
/// within [`MAX_TIMELINE_OPS`], [`MAX_PLANNED_EVENTS`] and
/// [`MAX_RERATE_WORK`].
pub(crate) fn whole_step_fits(s: &Scenario) -> bool {
    crate::workload::build::run_cost::cost_within(s, MAX_TIMELINE_OPS).is_some_and(|c| {
        c.ops <= MAX_TIMELINE_OPS
            && c.planned_events <= MAX_PLANNED_EVENTS
            && c.rerate_work <= MAX_RERATE_WORK
    })
}

/// The whole step's operations (scenario or baseline, the larger), counted
/// from builds of at most one run's limit; `None` when one is over it.
fn step_ops(s: &Scenario) -> Option<u64> {
    crate::workload::build::run_cost::budget_within(s, MAX_TIMELINE_OPS).map(|b| b.step.ops)
}

/// Why the page and `overlap-lab trace` do not build this step's timeline,
/// naming the control that would bring it within [`MAX_TIMELINE_OPS`] and
/// the value that would (`workload.global_batch` for a step whose figures
/// fit); `None` when the timeline fits. The step's figures may still be
/// given (`Simulator::simulate_report`): they extrapolate from its steady
/// state. Counts the step from two small builds: cheap.
pub fn timeline_refusal(s: &Scenario) -> Option<FieldError> {
    if whole_step_fits(s) {
        return None;
    }
    let held = match step_ops(s) {
        Some(ops) if ops > MAX_TIMELINE_OPS => format!(
            "this step's timeline would hold {} operations, over the limit of {} for a timeline",
            millions(ops),
            millions(MAX_TIMELINE_OPS)
        ),
        Some(_) => format!(
            "this step's timeline and its baseline could take more engine events than the limit of \
             {MAX_PLANNED_EVENTS}, or more re-rating of flows sharing links than the limit of {}",
            millions(MAX_RERATE_WORK)
        ),
        None => format!(
            "this step's timeline would hold more operations than the limit of {} for a timeline",
            millions(MAX_TIMELINE_OPS)
        ),
    };
    Some(global_batch_refusal(s, &held, whole_step_fits, "draw"))
}

/// A refusal of the step as it is (`held` says why) naming the largest
/// `workload.global_batch` for which `fits` holds, else the fields that
/// shorten even one micro-batch per pipeline; `verb` is what lowering it
/// lets the page or command do ("draw", "write").
pub(crate) fn global_batch_refusal(
    s: &Scenario,
    held: &str,
    fits: impl Fn(&Scenario) -> bool,
    verb: &str,
) -> FieldError {
    let message = match largest_batch(s, fits) {
        Some(batch) => format!("{held}: lower workload.global_batch to {batch} to {verb} it"),
        None => format!(
            "{held}, even at one micro-batch per pipeline: lower workload.layers or overlap.tp_chunks to {verb} it"
        ),
    };
    FieldError::new("workload.global_batch", &message)
}

/// The refusal of a step whose steady state could not be extrapolated at
/// run time (its three runs disagree) and whose whole step is over
/// [`MAX_TIMELINE_OPS`]: the figures would then have to simulate it all at
/// once. Names `workload.global_batch` and the largest value simulated in
/// full here.
pub fn no_steady_state_refusal(s: &Scenario) -> FieldError {
    let ops = step_ops(s).map_or(format!("over {}", millions(MAX_TIMELINE_OPS)), millions);
    let hint = match largest_batch(s, whole_step_fits) {
        Some(batch) => format!("the largest valid global_batch here is {batch}"),
        None => "lower workload.layers or overlap.tp_chunks".to_string(),
    };
    FieldError::new(
        "workload.global_batch",
        &format!(
            "this step's short runs did not repeat exactly, so its figures cannot be extrapolated from its \
             steady state, and simulating all {ops} of its operations at once is over the limit of {} for one run: {hint}",
            millions(MAX_TIMELINE_OPS)
        ),
    )
}

/// Micro-batches per pipeline the schedule steps in.
pub(crate) fn batch_unit(s: &Scenario) -> u32 {
    match s.parallel.schedule {
        Schedule::Interleaved => s.parallel.pp,
        Schedule::ZeroBubbleV | Schedule::DualPipeV => 2 * s.parallel.pp,
        _ => 1,
    }
}

/// The scenario with `micro_batches` per pipeline.
pub(crate) fn with_micro_batches(s: &Scenario, micro_batches: u32) -> Scenario {
    crate::workload::build::run_cost::with_micro_batches(s, micro_batches)
}

/// The largest global batch below the scenario's, in the steps the schedule
/// allows, for which `ok` holds; `None` when not even one step does (or the
/// workload has no batch). Costs are affine in the micro-batch count, so the
/// largest is solved for from the whole step's cost (against the timeline's
/// limit and, for a step with a steady state, the step's), then checked;
/// should the check fail (a count near the steady state's threshold), a
/// search below it finds one that holds.
fn largest_batch(s: &Scenario, ok: impl Fn(&Scenario) -> bool) -> Option<u32> {
    use crate::workload::build::run_cost::cost_within;
    let Workload::Transformer(t) = &s.workload else {
        return None;
    };
    let unit = batch_unit(s);
    let per_mb = t.micro_batch * s.parallel.dp;
    let m = s.micro_batches();
    let units = m / unit;
    if units <= 1 || !ok(&with_micro_batches(s, unit)) {
        return None;
    }
    // Units of micro-batches within `cap` ops and, for a whole step
    // simulated at once, the events' limit.
    let step_cost = |m: u32| cost_within(&with_micro_batches(s, m), MAX_TIMELINE_OPS);
    let solve = |cap: u64, whole: bool| -> u32 {
        let (Some(one), Some(two)) = (step_cost(unit), step_cost(2 * unit)) else {
            return 1;
        };
        let steps = |at_one: u64, at_two: u64, limit: u64| {
            let slope = at_two.saturating_sub(at_one).max(1);
            1 + limit.saturating_sub(at_one) / slope
        };
        let mut k = steps(one.ops, two.ops, cap);
        if whole {
            k = k.min(steps(
                one.planned_events,
                two.planned_events,
                MAX_PLANNED_EVENTS,
            ));
        }
        u32::try_from(k).unwrap_or(u32::MAX).clamp(1, units - 1)
    };
    let whole = solve(MAX_TIMELINE_OPS, true);
    let step = solve(MAX_SIMULATED_OPS, false);
    let k = [step, whole]
        .into_iter()
        .find(|&k| ok(&with_micro_batches(s, k * unit)))
        .unwrap_or_else(|| largest(1, whole, |k| ok(&with_micro_batches(s, k * unit))));
    Some(k * unit * per_mb)
}

/// Refuses, before anything runs, a scenario whose figures' predicted cost
/// exceeds the budget (`valid`: whether a variant passes every other check,
/// so that a hint with fewer stages is a scenario that runs). The field named is the control that most directly
/// caused the overshoot, with the largest value of it that fits, in this
/// order: TP overlap (its chunks multiply the layer's ops), the global batch
/// (ops grow with micro-batches), then the layers.
pub(crate) fn over_budget(s: &Scenario, valid: impl Fn(&Scenario) -> bool) -> Option<FieldError> {
    let reason = overshoot(s)?;
    let Workload::Transformer(t) = &s.workload else {
        return Some(FieldError {
            field: "overlap.tp_chunks".into(),
            message: format!("{reason}: lower overlap.tp_chunks"),
        });
    };
    let err = |field: &str, hint: String| {
        Some(FieldError {
            field: field.to_string(),
            message: format!("{reason}: {hint}"),
        })
    };
    if s.overlap.tp && s.parallel.tp > 1 {
        let with_chunks = |c: u32| {
            let mut x = s.clone();
            x.overlap.tp_chunks = c;
            x
        };
        if s.overlap.tp_chunks > 2 && fits(&with_chunks(2)) {
            let best = largest(2, s.overlap.tp_chunks - 1, |c| fits(&with_chunks(c)));
            return err(
                "overlap.tp_chunks",
                format!("the largest valid overlap.tp_chunks here is {best}"),
            );
        }
        let mut off = s.clone();
        off.overlap.tp = false;
        if fits(&off) {
            return err(
                "overlap.tp",
                "switch TP overlap off here (even 2 chunks per GEMM do not fit), or lower global_batch"
                    .to_string(),
            );
        }
    }
    if let Some(batch) = largest_batch(s, fits) {
        return err(
            "workload.global_batch",
            format!("the largest valid global_batch here is {batch}"),
        );
    }
    let unit = batch_unit(s);
    let m = s.micro_batches();
    let per_mb = t.micro_batch * s.parallel.dp;
    let stages = s.parallel.pp * s.parallel.virtual_stages;
    let with_layers = |k: u32| {
        let mut x = with_micro_batches(s, unit.min(m));
        if let Workload::Transformer(xt) = &mut x.workload {
            xt.layers = k * stages;
        }
        // A layout names the layers it was written for: the hint's depths
        // are split evenly.
        x.parallel.pipeline_layout = None;
        x
    };
    if t.layers > stages && fits(&with_layers(1)) {
        let best = largest(1, t.layers / stages - 1, |k| fits(&with_layers(k)));
        return err(
            "workload.layers",
            format!(
                "the largest valid layers here is {} (with global_batch {})",
                best * stages,
                unit.min(m) * per_mb
            ),
        );
    }
    // Fewer stages, the GPUs they free going to data parallelism: the
    // largest divisor of pp whose step, at its fewest micro-batches, fits.
    let pp = s.parallel.pp;
    let fewer = (1..pp)
        .rev()
        .filter(|p| pp.is_multiple_of(*p))
        .find_map(|p| {
            let mut x = s.clone();
            x.parallel.pp = p;
            x.parallel.dp = s.parallel.dp * (pp / p);
            x.parallel.pipeline_layout = None;
            let x = with_micro_batches(&x, batch_unit(&x));
            (valid(&x) && fits(&x)).then_some(x)
        });
    let hint = match fewer {
        Some(x) => format!(
            "even one layer per stage and one micro-batch do not fit: the largest valid pp here is {} \
             (with dp {} and global_batch {})",
            x.parallel.pp,
            x.parallel.dp,
            x.micro_batches() * per_mb_of(&x)
        ),
        None => format!(
            "even one layer per stage and one micro-batch do not fit, nor does any pp below {pp}: \
             lower workload.layers or the model's size"
        ),
    };
    err("parallel.pp", hint)
}

/// Samples per micro-batch across the data-parallel ranks.
fn per_mb_of(s: &Scenario) -> u32 {
    match &s.workload {
        Workload::Transformer(t) => t.micro_batch * s.parallel.dp,
        _ => 1,
    }
}

/// The largest `k` in `lo..=hi` with `ok(k)`, given `ok(lo)` and that `ok`
/// holds up to some point and not after (costs grow with `k`).
fn largest(lo: u32, hi: u32, ok: impl Fn(u32) -> bool) -> u32 {
    let (mut lo, mut hi) = (lo, hi);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}
