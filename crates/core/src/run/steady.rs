//! The step's figures from its steady state: three short runs, extrapolated
//! exactly to the scenario's micro-batch count.
//!
//! Every schedule runs each micro-batch through the same ops
//! (`workload::build::run_cost`), so past the pipeline's fill one more unit of
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
//! up front by `workload::build::schedule::steady_counts`. Work tied to the
//! first or last micro-batch (DP buckets, FSDP gathers, held weight
//! gradients) is the same at every count and cancels in the differences.
//!
//! One run can stand for the three. Where the builder marks periods
//! (`workload::build::schedule::period_marks`: 1F1B over two stages or more), the
//! last run notes every sum at three marks one unit of micro-batches apart,
//! inside the window where every stage runs its steady phase. Between two
//! marks each sum grows by what one more unit adds to it: the run's sums,
//! plus one period, plus the next, are its sums at the next two counts. The
//! two periods are held to the check the three runs' differences are held
//! to. Past the fill a stage's period settles geometrically, not at once,
//! so where they disagree (a step still settling there) the run is made
//! again further past the fill (`schedule::MARGIN_UNITS`); where none
//! repeats, the last is joined by the two runs one and two units shorter.
//! Three runs that disagree are likewise made again further on before the
//! step is simulated whole.

use super::runner::Runner;
use crate::input::parse::FieldError;
use crate::input::validate;
use crate::model::axis::Axis;
use crate::model::scenario::Scenario;
use crate::output::summary;
use crate::output::tally::Tally;
use crate::sim::engine::RunResult;
use crate::workload;
use crate::workload::build::run_cost::with_micro_batches;
use crate::workload::graph::interference::Sharing;

pub use crate::output::periods::{ROUNDING_ULPS, TOLERANCE};

pub use super::extrapolate::FLOOR;
use super::extrapolate::{extrapolate, extrapolate_tally, units_beyond};

/// A run's sums and what obtaining them cost.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Tallied {
    /// The sums at the scenario's micro-batch count.
    pub tally: Tally,
    /// The sums one and two units of micro-batches later, as the run's two
    /// marked periods give them (see the module's doc), when it marked them.
    pub later: Option<Box<[Tally; 2]>>,
    /// Events the engine processed over the runs made.
    pub events: u64,
    /// Events the engine planned over the runs made.
    pub planned_events: u64,
    /// The three micro-batch counts extrapolated from, if they were.
    pub extrapolated_from: Option<[u32; 3]>,
    /// The micro-batch count of the run the sums are of (the last one made,
    /// when more were).
    pub micro_batches: u32,
}

pub use crate::workload::build::schedule::{
    later_steady_counts, marked_run_counts, period_marks, steady_counts,
};

/// Whether the last short run of `s` marks two periods of its steady
/// state, and so may stand for all three. The last: the first periods of
/// the first stage's steady phase may not have settled yet (on 1T the
/// first run's first period is 2.6% longer than the next, and the
/// baseline's second run's first 1e-6 s longer); two units more of
/// steady phase give them time, and where they do not, the run is made
/// again further past the fill ([`marked_run_counts`]).
fn marks_periods(s: &Scenario) -> bool {
    !marked_run_counts(s).is_empty()
}

/// The counts a step's figures are extrapolated from when its first marked
/// short run's two periods repeat: that run's, and the two its periods
/// stand for. `None` when the step has no such run ([`steady_counts`] then
/// says which three runs it has, if any). A run made later, when these
/// periods do not repeat, stands for its own counts
/// ([`marked_run_counts`]).
pub fn marked_counts(s: &Scenario) -> Option<[u32; 3]> {
    let unit = unit_of(s)?;
    marked_run_counts(s).first().map(|&m| marked_at(m, unit))
}

/// Whether a later short run of `s` at `m` micro-batches holds no more
/// than one run may (`validate::MAX_TIMELINE_OPS`): the budget counts the
/// first runs only (`workload::build::run_cost::budget_within`).
pub(super) fn within_one_run(s: &Scenario, m: u32) -> bool {
    workload::build::run_cost::predict(&with_micro_batches(s, m))
        .is_some_and(|c| c.ops <= validate::MAX_TIMELINE_OPS)
}

/// Micro-batches one period of the steady state adds, where it applies.
pub(super) fn unit_of(s: &Scenario) -> Option<u32> {
    steady_counts(s).map(|[a, b, _]| b - a)
}

/// The counts a marked run at `m` micro-batches and its two periods stand
/// for.
fn marked_at(m: u32, unit: u32) -> [u32; 3] {
    [m, m + unit, m + 2 * unit]
}

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
pub struct PartRan(pub(super) Ran);

impl PartRan {
    /// Events the engine processed for this part (benchmarks weigh a part's
    /// time by them).
    pub fn events(&self) -> u64 {
        match &self.0 {
            Ran::Tally(runs) => runs.iter().map(|t| t.events).sum(),
            Ran::Step(runs) => runs.iter().map(|t| t.events).sum(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) enum Ran {
    /// The scenario's sums: of the part's run, or of the three short runs
    /// when the run's marked periods did not repeat.
    Tally(Vec<Tallied>),
    /// The baseline's step times, likewise.
    Step(Vec<Stepped>),
}

/// A baseline run's step time, s, with the events processed and planned,
/// and, when the run marked two periods, its sums (the step first) at its
/// count and one and two units later (see [`marked_steps`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(super) struct Stepped {
    step_s: f64,
    events: u64,
    planned_events: u64,
    later: Option<Vec<[f64; 3]>>,
    micro_batches: u32,
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

/// The runs of one scenario, marked as the baseline's or not: where its
/// short run marks its periods ([`period_marks`]), that one run; else the
/// short runs largest first, so that each run of a thread fits in the
/// memory the one before it left (`workload::graph::recycle`). [`in_count_order`]
/// puts their results back in the order of [`steady_counts`].
fn parts_of(s: &Scenario, baseline: bool) -> Vec<Part> {
    match steady_counts(s) {
        Some([_, _, m]) if marks_periods(s) => vec![Part {
            baseline,
            micro_batches: Some(m),
        }],
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
pub(crate) fn run_part(sim: &Runner, s: &Scenario, off: &Scenario, part: Part) -> PartRan {
    let of = if part.baseline { off } else { s };
    let scenario = match part.micro_batches {
        Some(m) => with_micro_batches(of, m),
        None => of.clone(),
    };
    let marked = match (steady_counts(of), unit_of(of)) {
        (Some(counts), Some(unit)) if part.micro_batches.is_some() && marks_periods(of) => {
            Some((counts, unit))
        }
        _ => None,
    };
    // Made only where the first run's periods do not repeat, so checked
    // only then.
    let later = || {
        marked_run_counts(of)
            .into_iter()
            .skip(1)
            .filter(|&m| within_one_run(of, m))
    };
    let run_at = |m: u32| with_micro_batches(of, m);
    PartRan(if part.baseline {
        Ran::Step(settled_or_three(
            run_step(sim, &scenario),
            marked.map(|(_, unit)| (unit, later)),
            |one| marked.is_some_and(|(_, unit)| marked_step(sim, of, unit, one).is_some()),
            |m| run_step(sim, &run_at(m)),
        ))
    } else {
        Ran::Tally(settled_or_three(
            run_tally(sim, &scenario),
            marked.map(|(_, unit)| (unit, later)),
            |one| marked.is_some_and(|(_, unit)| marked_tally(sim, of, unit, one).is_some()),
            |m| run_tally(sim, &run_at(m)),
        ))
    })
}

/// A short run's results, as a part gives them back.
trait ShortRun {
    /// Events processed and planned.
    fn events(&mut self) -> (&mut u64, &mut u64);
    /// The run without its marked periods' sums (they did not repeat).
    fn without_periods(self) -> Self;
    /// The micro-batch count run.
    fn micro_batches(&self) -> u32;
}

// Both kinds of short run keep their counts under the same names.
macro_rules! short_run {
    ($($run:ident),*) => {$(
        impl ShortRun for $run {
            fn events(&mut self) -> (&mut u64, &mut u64) {
                (&mut self.events, &mut self.planned_events)
            }
            fn without_periods(self) -> Self {
                $run {
                    later: None,
                    ..self
                }
            }
            fn micro_batches(&self) -> u32 {
                self.micro_batches
            }
        }
    )*};
}

short_run!(Tallied, Stepped);

/// Adds the events of `spent` (runs made and set aside) to `run`'s.
fn charge<T: ShortRun>(run: &mut T, spent: &mut [T]) {
    let (mut events, mut planned) = (0, 0);
    for other in spent {
        let (e, p) = other.events();
        events += *e;
        planned += *p;
    }
    let (e, p) = run.events();
    *e += events;
    *p += planned;
}

/// The run `first` of a part; or, when it marks periods of `unit`
/// micro-batches that do not repeat, the first of the same run made
/// further past the fill (at `later` counts) whose periods do; or else the
/// last of those runs (its periods dropped) and the two short runs one and
/// two units shorter, made here: on the thread, or the page's worker, that
/// has the part. Largest first, as `parts_of` lists runs. The runs set
/// aside count in the events.
fn settled_or_three<T: ShortRun, L: IntoIterator<Item = u32>>(
    first: T,
    marked: Option<(u32, impl FnOnce() -> L)>,
    repeats: impl Fn(&T) -> bool,
    run_at: impl Fn(u32) -> T,
) -> Vec<T> {
    let Some((unit, later)) = marked.filter(|_| !repeats(&first)) else {
        return vec![first];
    };
    let mut spent = vec![first];
    for m in later() {
        let mut run = run_at(m);
        if repeats(&run) {
            charge(&mut run, &mut spent);
            return vec![run];
        }
        spent.push(run);
    }
    let mut last = spent
        .pop()
        .unwrap_or_else(|| unreachable!("the first run is among them"))
        .without_periods();
    charge(&mut last, &mut spent);
    let m = last.micro_batches();
    vec![last, run_at(m - unit), run_at(m - 2 * unit)]
}

/// The run `one` at the last of `counts`, whose marked periods did not
/// repeat (they are dropped), with the other two short runs made here, in
/// the order of their counts.
fn all_three<T: ShortRun>(one: T, unit: u32, run_at: impl Fn(u32) -> T) -> Vec<T> {
    let mut runs = settled_or_three(one, Some((unit, Vec::new)), |_| false, run_at);
    in_count_order(&mut runs);
    runs
}

/// Sums at the scenario's count from its parts' runs (see [`parts`]):
/// extrapolated when its steady state allows (see the module's doc), else
/// from one full run. A step whose three runs disagree is simulated in full
/// only within the limit of one run (`input::validate::MAX_TIMELINE_OPS`):
/// over it, the refusal names `workload.global_batch` and the largest value
/// simulated in full. With runs of the baseline `off` among them, its step
/// time as [`step_time_s`] gives it (bounded).
pub(crate) fn tally(
    sim: &Runner,
    s: &Scenario,
    off: &Scenario,
    ran: Vec<PartRan>,
) -> Result<(Tallied, Option<StepTime>), FieldError> {
    let (mut tallies, mut steps) = (Vec::new(), Vec::new());
    for PartRan(ran) in ran {
        match ran {
            Ran::Tally(runs) => tallies.extend(runs),
            Ran::Step(runs) => steps.extend(runs),
        }
    }
    // Runs that are not the parts listed (a caller's slip) are not trusted:
    // the parts are run here instead.
    let listed = |s: &Scenario| parts_of(s, false).len();
    let three = |s: &Scenario| steady_counts(s).map_or(1, |c| c.len());
    if tallies.len() != listed(s) && tallies.len() != three(s) {
        tallies = parts_of(s, false)
            .into_iter()
            .flat_map(|part| match run_part(sim, s, off, part).0 {
                Ran::Tally(runs) => runs,
                Ran::Step(_) => Vec::new(),
            })
            .collect();
    }
    in_count_order(&mut tallies);
    in_count_order(&mut steps);
    let tally = tally_from(sim, s, steady_counts(s), tallies)?;
    let step = match steps.len() {
        0 => None,
        n if n == listed(off) || n == three(off) => {
            Some(step_time_from(sim, off, steady_counts(off), steps, true)?)
        }
        _ => Some(step_time_s(sim, off, true)?),
    };
    Ok((tally, step))
}

/// The sums at the scenario's count from its runs: the three short ones at
/// `counts`, or the one full run.
fn tally_from(
    sim: &Runner,
    s: &Scenario,
    counts: Option<[u32; 3]>,
    runs: Vec<Tallied>,
) -> Result<Tallied, FieldError> {
    let Some(counts) = counts else {
        return Ok(runs.into_iter().next().expect("as listed: one full run"));
    };
    let mut runs = runs;
    if let [one] = runs.as_slice() {
        let unit = counts[1] - counts[0];
        if let Some(tally) = marked_tally(sim, s, unit, one) {
            return Ok(Tallied {
                tally,
                later: None,
                extrapolated_from: Some(marked_at(one.micro_batches, unit)),
                ..*one
            });
        }
        // The marked periods did not repeat: the other two short runs
        // are made, as a part makes them.
        runs = all_three(runs.remove(0), unit, |m| {
            run_tally(sim, &with_micro_batches(s, m))
        });
    }
    let counts = counts_of(&runs).unwrap_or(counts);
    let events = runs.iter().map(|t| t.events).sum();
    let planned_events = runs.iter().map(|t| t.planned_events).sum();
    let runs: [Tally; 3] = runs
        .into_iter()
        .map(|t| t.tally)
        .collect::<Vec<_>>()
        .try_into()
        .unwrap_or_else(|_| unreachable!("as listed: three short runs"));
    let (mut counts, mut runs) = (counts, runs);
    let (mut events, mut planned_events): (u64, u64) = (events, planned_events);
    let first = counts[0];
    let mut later = later_steady_counts(s)
        .into_iter()
        .filter(|&[_, _, last]| within_one_run(s, last))
        .filter(move |c| c[0] > first && !sim.steady_fails());
    loop {
        let extrapolated = extrapolate_tally(&runs, counts, s.micro_batches());
        if let Some(tally) = extrapolated.filter(|_| !sim.steady_fails()) {
            return Ok(Tallied {
                tally,
                later: None,
                events,
                planned_events,
                extrapolated_from: Some(counts),
                micro_batches: s.micro_batches(),
            });
        }
        // A step still settling at these counts: three runs further past
        // its fill, before the whole step.
        let Some(next) = later.next() else {
            break;
        };
        let made = next.map(|m| run_tally(sim, &with_micro_batches(s, m)));
        events += made.iter().map(|r| r.events).sum::<u64>();
        planned_events += made.iter().map(|r| r.planned_events).sum::<u64>();
        runs = made.map(|r| r.tally);
        counts = next;
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

/// The sums at the scenario's count from a short run and its two marked
/// periods (`unit` micro-batches each), or `None` when it marked none,
/// they did not repeat, or the slowest GPU is not clear.
pub(super) fn marked_tally(sim: &Runner, s: &Scenario, unit: u32, one: &Tallied) -> Option<Tally> {
    let [next, last] = one.later.as_deref()?.clone();
    let marked = [one.tally.clone(), next, last];
    extrapolate_tally(
        &marked,
        marked_at(one.micro_batches, unit),
        s.micro_batches(),
    )
    .filter(|_| !sim.steady_fails() && !sim.marks_fail())
}

/// The counts three short runs in count order were made at: those of
/// [`steady_counts`], or, where a marked run was made further past the
/// fill, the later ones ([`settled_or_three`]).
fn counts_of<T: ShortRun>(runs: &[T]) -> Option<[u32; 3]> {
    let counts: [u32; 3] = runs
        .iter()
        .map(ShortRun::micro_batches)
        .collect::<Vec<_>>()
        .try_into()
        .ok()?;
    (counts[0] < counts[1] && counts[1] - counts[0] == counts[2] - counts[1]).then_some(counts)
}

/// One run's sums.
fn run_tally(sim: &Runner, s: &Scenario) -> Tallied {
    let mut graph = workload::build_for_figures(s, sim.fidelity, sim.reserve(s), &sim.libraries(s));
    let run = sim.run(&graph, true, false, &Sharing::of(s));
    graph.release_dependencies();
    let tallied = tally_of(sim, &graph, &run, s.micro_batches());
    graph.recycle();
    run.recycle();
    tallied
}

/// The sums of a recorded run, and its marked periods' when it marked them.
pub(super) fn tally_of(
    sim: &Runner,
    graph: &workload::graph::Graph,
    run: &RunResult,
    micro_batches: u32,
) -> Tallied {
    // The GPUs' sums in shares, over the threads the other runs may have
    // left idle: on 1T this run is the last to finish.
    let shares = summary::gpu_shares(graph, sim.threads);
    let sums = super::parallel::map(&shares, shares.len(), |share| {
        summary::gpu_sums(graph, run, true, share.clone())
    });
    let (tally, periods) = summary::tally_with_periods(graph, run, true, sums);
    let later = periods.map(|[first, second]| {
        let next = tally.plus(&first);
        let last = next.plus(&second);
        Box::new([next, last])
    });
    Tallied {
        tally,
        later,
        events: run.events,
        planned_events: run.planned_events,
        extrapolated_from: None,
        micro_batches,
    }
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
    sim: &Runner,
    s: &Scenario,
    bounded: bool,
) -> Result<StepTime, FieldError> {
    let mut steps: Vec<Stepped> = super::parallel::map(
        &parts_of(s, true),
        sim.threads_for(s),
        |&part| match run_part(sim, s, s, part).0 {
            Ran::Step(runs) => runs,
            Ran::Tally(_) => unreachable!("a baseline's part gives its step time"),
        },
    )
    .into_iter()
    .flatten()
    .collect();
    in_count_order(&mut steps);
    step_time_from(sim, s, steady_counts(s), steps, bounded)
}

/// The results of one scenario's runs, as [`parts_of`] lists them, in the
/// order of their micro-batch counts ([`steady_counts`]).
fn in_count_order<T>(runs: &mut [T]) {
    runs.reverse();
}

/// One run's step time, s, with the events processed and planned, and its
/// marked periods' sums.
fn run_step(sim: &Runner, s: &Scenario) -> Stepped {
    let graph = workload::build_for_figures(s, sim.fidelity, sim.reserve(s), &sim.libraries(s));
    let run = sim.run(&graph, false, false, &Sharing::of(s));
    let step = Stepped {
        step_s: run.step_time_s,
        events: run.events,
        planned_events: run.planned_events,
        later: marked_steps(&run),
        micro_batches: s.micro_batches(),
    };
    graph.recycle();
    run.recycle();
    step
}

/// The step time at the scenario's count from a short run and its two
/// marked periods (`unit` micro-batches each), or `None` when it marked
/// none or any sum it keeps did not repeat.
fn marked_step(sim: &Runner, s: &Scenario, unit: u32, one: &Stepped) -> Option<f64> {
    let sums = one.later.as_ref()?;
    let units = units_beyond(marked_at(one.micro_batches, unit), s.micro_batches());
    let scale = sums[0].map(f64::abs);
    let mut values = sums
        .iter()
        .map(|v| extrapolate([0, 1, 2].map(|k| (v[k], scale[k])), units));
    let step = values.next()??;
    (values.all(|v| v.is_some()) && !sim.steady_fails() && !sim.marks_fail()).then_some(step)
}

/// The sums a baseline run keeps (the step, then per GPU its compute busy
/// time and each axis's time in flight), each at the run's count and one
/// and two units later as its marked periods give them; `None` when it
/// marked none.
fn marked_steps(run: &RunResult) -> Option<Vec<[f64; 3]>> {
    let [a, b, c] = run.marks.as_slice() else {
        return None;
    };
    let later = |v: f64, at: [f64; 3]| [v, v + at[1] - at[0], v + at[2] - at[0]];
    let mut sums = vec![later(run.step_time_s, [a.time_s, b.time_s, c.time_s])];
    for (i, whole) in run.gpus.iter().enumerate() {
        let (a, b, c) = (&a.gpus[i], &b.gpus[i], &c.gpus[i]);
        sums.push(later(
            whole.compute_busy_s,
            [a.compute_busy_s, b.compute_busy_s, c.compute_busy_s],
        ));
        for axis in 0..Axis::COUNT {
            sums.push(later(
                whole.comm_s[axis],
                [a.comm_s[axis], b.comm_s[axis], c.comm_s[axis]],
            ));
        }
    }
    Some(sums)
}

/// The step time at the scenario's count from its runs: the three short
/// ones at `counts`, the one short run that marked its periods, or the
/// one full run.
fn step_time_from(
    sim: &Runner,
    s: &Scenario,
    counts: Option<[u32; 3]>,
    mut runs: Vec<Stepped>,
    bounded: bool,
) -> Result<StepTime, FieldError> {
    let Some(counts) = counts else {
        let run = &runs[0];
        return Ok((run.step_s, run.events, run.planned_events, None));
    };
    if let [one] = runs.as_slice() {
        let unit = counts[1] - counts[0];
        if let Some(step) = marked_step(sim, s, unit, one) {
            let from = Some(marked_at(one.micro_batches, unit));
            return Ok((step, one.events, one.planned_events, from));
        }
        runs = all_three(runs.remove(0), unit, |m| {
            run_step(sim, &with_micro_batches(s, m))
        });
    }
    let counts = counts_of(&runs).unwrap_or(counts);
    let mut events: u64 = runs.iter().map(|r| r.events).sum();
    let mut planned: u64 = runs.iter().map(|r| r.planned_events).sum();
    let mut steps = [0, 1, 2].map(|i| runs[i].step_s);
    let mut counts = counts;
    let first = counts[0];
    let mut later = later_steady_counts(s)
        .into_iter()
        .filter(|&[_, _, last]| within_one_run(s, last))
        .filter(move |c| c[0] > first && !sim.steady_fails());
    loop {
        let at = steps.map(|step| (step, step.abs()));
        let extrapolated = extrapolate(at, units_beyond(counts, s.micro_batches()));
        if let Some(step) = extrapolated.filter(|_| !sim.steady_fails()) {
            return Ok((step, events, planned, Some(counts)));
        }
        // Still settling: three runs further past the fill (see `tally_from`).
        let Some(next) = later.next() else {
            break;
        };
        let made = next.map(|m| run_step(sim, &with_micro_batches(s, m)));
        events += made.iter().map(|r| r.events).sum::<u64>();
        planned += made.iter().map(|r| r.planned_events).sum::<u64>();
        steps = made.map(|r| r.step_s);
        counts = next;
    }
    if bounded {
        check_whole_step(s)?;
    }
    let run = run_step(sim, s);
    Ok((
        run.step_s,
        events + run.events,
        planned + run.planned_events,
        None,
    ))
}
