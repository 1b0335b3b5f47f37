//! The layout search (issue 59): the best layouts and overlaps of a
//! scenario's model on N GPUs, and the step-time/memory Pareto front.
//!
//! # How a search runs
//!
//! 1. **Enumerate** (`space`): every layout of the model on the GPUs, in a
//!    fixed order. A space above [`MAX_SPACE`] is refused before anything
//!    else, naming the fields to fix.
//! 2. **Screen** each candidate, on every core, without simulating: its
//!    scenario input is the user's with the layout's fields set; the core's
//!    own checks refuse what they refuse (counted as "does not divide",
//!    or "above a limit" for a value outside its field's range); the
//!    memory of its fullest GPU, from the core's analytic model
//!    (`output::memory`), refuses what does not fit ("does not fit in
//!    memory"); and its lower bound (`bound`) is computed.
//! 3. **Simulate** the candidates left in the order of their bounds (per
//!    sample), ties broken by their canonical description, in waves of
//!    [`WAVE`]: before each wave, a candidate is **pruned** when its bound
//!    shows it can be neither among the best nor on the front
//!    ([`front::Pruner::prunes`]): the `top` best simulated so far all rank
//!    strictly before any time it could have, and a simulated candidate
//!    with no more memory has a time at or below its bound (strictly below
//!    at equal memory). The bound is a true lower bound of the simulated
//!    step (`bound`'s doc says why; `tests/search.rs` checks it on every
//!    candidate of exhaustive searches), so a pruned candidate would have
//!    changed neither list. A wave's candidates are checked against the
//!    cost budget (counted "above a limit") and simulated on every core,
//!    each on its own simulator, figures only (no timeline, no all-off
//!    baseline).
//!
//! The lists depend only on the simulated figures, and which candidates a
//! wave holds only on the waves before it: the same best list, front and
//! counts for any number of threads, and for any number of the page's
//! workers, which simulate a wave's candidates between them
//! ([`Searching`] gives the waves and takes their results).
//!
//! Memory: the candidates' layouts and screening results (under 100 bytes
//! each, [`MAX_SPACE`] at most), the proxies' figures, and the runs in
//! flight, as many at once as fit [`SIMULATIONS_MEMORY_BYTES`].

mod bound;
mod found;
mod front;
mod lead;
mod op_gaps;
mod options;
mod outcome;
mod space;

pub use bound::{
    gaps_of, lower_bound_s, model_figures, proxy, stage_figures, Bounds, Gaps, ModelFigures,
    StageFigures,
};
pub use found::{Found, FoundPoint, FoundRow, MAX_POINTS};
pub use front::{compare, dominates, front, Objective, Point, Pruner};
pub use options::{Options, DEFAULT_TOP, MAX_SPACE};
pub use outcome::{
    against, changes, csv, time_text, Checked, Figures, Outcome, Progress, Ranked, Reason, Refusals,
};
pub use space::{Dimension, Layout, Space, Switches, CP_FROM_SEQ};

use crate::input::fields;
use crate::input::parse::{ScenarioError, ScenarioInput};
use crate::input::validate;
use crate::model::fidelity::Fidelity;
use crate::model::scenario::{Scenario, Workload};
use crate::output::memory::{memory_gb_with, InFlightMemo};
use crate::run::{parallel, Simulator};

/// Candidates simulated between two pruning decisions. A constant, not the
/// number of threads, so that the counts do not depend on the machine;
/// large enough to keep 16 cores busy, small enough that a wave past the
/// point where the rest is pruned costs little.
pub const WAVE: usize = 16;

/// Memory the simulations running at once may take, bytes: the issue's
/// limit for a whole search is 1 GB, and the candidates' screening results
/// and the proxies' figures take the rest.
pub const SIMULATIONS_MEMORY_BYTES: u64 = 768 * 1024 * 1024;

/// A candidate's peak memory per op of its largest run, bytes, as
/// [`simulate_candidate`] runs it (figures only, its arrays its own).
/// Measured: each of the first 1,712 candidates the 145.6B preset's search
/// simulates, run alone on one thread, peaked at most 207 bytes per op
/// above its start (a zero-bubble step of 670,803 ops at 133 MB); the 1T
/// step's short runs, which `run::parallel::RUN_BYTES_PER_OP` was
/// measured on, take 158.
pub const CANDIDATE_BYTES_PER_OP: u64 = 210;

/// What screening made of one candidate.
#[derive(Clone, Debug)]
enum Screened {
    Refused(Reason, String),
    Kept { memory_gb: f64, bound_s: f64 },
}

/// What simulating one candidate gave.
/// What simulating a [`Candidate`] gave (it travels between the page's
/// workers as JSON, which carries every `f64` bit for bit).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Simulated {
    /// Over the cost budget, or refused by the simulator at run time.
    Refused(Reason, String),
    /// Its figures.
    Figures(outcome::Figures),
}

/// A candidate of a wave, as any thread or worker simulates it
/// ([`simulate_candidate`]): its scenario input (the user's with the
/// layout's fields set) and whether its cost is within the budget.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    /// Its place in the search's queue (in the order of the bounds).
    pub place: usize,
    /// Its scenario input.
    pub input: ScenarioInput,
    /// Its predicted ops, or why it is over the budget.
    pub budget: Result<u64, String>,
}

/// The user's scenario on the search's GPUs: its input and its fill.
fn base(input: &ScenarioInput, gpus: Option<u64>) -> Result<(ScenarioInput, Scenario), String> {
    let mut input = input.clone();
    let filled = validate::filled(&input);
    let Workload::Transformer(_) = filled.workload else {
        return Err(
            "search lays out a transformer's layers: the scenario's workload.kind must be \"transformer\""
                .to_string(),
        );
    };
    if let Some(n) = gpus {
        let node = u64::from(filled.hardware.gpus_per_node);
        if n == 0 || !n.is_multiple_of(node) {
            return Err(format!(
                "--gpus {n}: the scenario's nodes have {node} GPUs each (hardware.gpus_per_node): \
                 valid are multiples of {node}"
            ));
        }
        let nodes = n / node;
        if nodes * node > validate::MAX_GPUS {
            return Err(format!(
                "--gpus {n}: more than this simulator accepts, valid is at most {}",
                validate::MAX_GPUS
            ));
        }
        input.hardware.nodes = Some(nodes as u32);
    }
    let filled = validate::filled(&input);
    Ok((input, filled))
}

/// Which of the three reasons a refusal of the core's checks is: a value
/// outside its field's range is "above a limit", any other refusal (a
/// product that does not make the GPUs, a degree that does not divide the
/// heads, the layers or the batch, a combination the scenario format does
/// not take) "does not divide".
fn reason_of(s: &Scenario, e: &ScenarioError) -> (Reason, String) {
    let Some(first) = e.errors.first() else {
        return (Reason::Divide, e.to_string());
    };
    let out_of_range = fields::find(&first.field)
        .and_then(|f| f.resolved_number(s).map(|x| f.check_number(x).is_err()))
        .unwrap_or(false);
    let reason = if out_of_range {
        Reason::Limit
    } else {
        Reason::Divide
    };
    (reason, first.to_string())
}

/// Screens one candidate (see the module's doc).
fn screen(
    layout: &Layout,
    input: &ScenarioInput,
    filled: &Scenario,
    (bounds, in_flight): (&Bounds, &InFlightMemo),
) -> Screened {
    let s = validate::filled(&layout.apply(input, filled));
    if let Err(e) = validate::check_filled(&s) {
        let (reason, message) = reason_of(&s, &e);
        return Screened::Refused(reason, message);
    }
    let memory = memory_gb_with(&s, in_flight);
    if !memory.fits {
        return Screened::Refused(
            Reason::Memory,
            format!(
                "{}: needs {:.1} GB on its fullest GPU, which has {:.1}",
                layout.describe(),
                memory.total,
                memory.capacity
            ),
        );
    }
    Screened::Kept {
        memory_gb: memory.total,
        bound_s: bounds.of(&s),
    }
}

/// Simulates one candidate whose budget [`budget`] passed.
/// Simulates `candidate`: figures only, no timeline, no all-off baseline,
/// on a simulator of its own and one thread. The same wherever it runs.
pub fn simulate_candidate(candidate: &Candidate) -> Simulated {
    if let Err(e) = &candidate.budget {
        return Simulated::Refused(Reason::Limit, e.clone());
    }
    let s = validate::filled(&candidate.input);
    let mut sim = Simulator::new(Fidelity::Reduced)
        .with_threads(1)
        .without_baseline();
    // Its arrays freed at its end, not kept for the thread's next
    // candidate, nor across its own runs' scopes (`recycle::apart` says
    // why).
    crate::workload::graph::recycle::apart(|| match sim.simulate_report(&s) {
        Ok(f) => Simulated::Figures(outcome::Figures::of(&s, &f.report)),
        Err(e) => Simulated::Refused(Reason::Limit, e.to_string()),
    })
}

/// The cost budget's refusal of a candidate (as `resolve` refuses), or the
/// operations of its largest run (what its memory grows with).
fn budget(layout: &Layout, input: &ScenarioInput, filled: &Scenario) -> Result<u64, String> {
    budget_of(&validate::filled(&layout.apply(input, filled)))
}

/// The ops of the largest run simulating `s` may make, predicted, or why
/// it is over the cost budget. Not only the steady state's first short
/// runs': where their periods do not repeat, runs further past the fill
/// follow, each within the limit of one run (`run::steady`: one marked run
/// at each later margin, `workload::build::schedule::marked_run_counts`, or
/// three, `later_steady_counts`); and where
/// three short runs disagree, the whole step runs after them, also within
/// that limit (`run::steady::tally`). The memory gate of [`search`] must
/// hold for the largest of them.
fn budget_of(s: &Scenario) -> Result<u64, String> {
    if let Some(e) = validate::budget_refusal(s) {
        return Err(e.to_string());
    }
    let within = |ops: u64| ops <= validate::MAX_TIMELINE_OPS;
    let b = crate::workload::build::run_cost::budget_within(s, validate::MAX_TIMELINE_OPS)
        .ok_or_else(|| "the step's cost could not be counted".to_string())?;
    // The later margins' runs, the marked one of each or their three: the
    // longest of a margin is its last count (its marked run), and ops grow
    // with micro-batches (a ZB-1p step of 1T at PP 32 still settling runs
    // 50 micro-batches at its last margin against 36 at its first).
    let later = crate::workload::build::schedule::later_steady_counts(s)
        .into_iter()
        .map(|[.., last]| last)
        .filter_map(|m| {
            crate::workload::build::run_cost::predict(&validate::with_micro_batches(s, m))
        })
        .map(|c| c.ops)
        .filter(|&ops| within(ops))
        .max()
        .unwrap_or(0);
    let step = if within(b.step.ops) { b.step.ops } else { 0 };
    Ok(b.figures.ops.max(later).max(step))
}

/// Searches the layouts of `input`'s model (see the module's doc).
/// `progress` hears after every wave. A refused request (not a
/// transformer, GPUs that are not whole nodes, a space above
/// [`MAX_SPACE`]) is one line naming what to change.
pub fn search(
    input: &ScenarioInput,
    options: &Options,
    mut progress: impl FnMut(&Progress),
) -> Result<Outcome, String> {
    let mut searching = Searching::start(input, options)?;
    let threads = options.threads.max(1);
    loop {
        let wave = searching.next_wave();
        if wave.is_empty() {
            return Ok(searching.finish());
        }
        let largest = wave
            .iter()
            .filter_map(|c| c.budget.as_ref().ok())
            .copied()
            .max()
            .unwrap_or(0);
        let at_once = (SIMULATIONS_MEMORY_BYTES
            / largest.saturating_mul(CANDIDATE_BYTES_PER_OP).max(1))
        .max(1) as usize;
        let results = parallel::map(&wave, threads.min(at_once), simulate_candidate);
        searching.record(&wave, results);
        progress(&searching.progress());
    }
}

/// A search a wave at a time, for a caller that simulates each wave's
/// candidates itself: [`search`] on its threads, the page over a pool of
/// workers. [`Searching::next_wave`] prunes and gives the next wave;
/// [`Searching::record`] takes its results, in any order of running but
/// in the wave's order; the same waves, lists and counts as [`search`].
pub struct Searching {
    input: ScenarioInput,
    filled: Scenario,
    options: Options,
    layouts: Vec<Layout>,
    /// (layout index, memory, bound per sample, description), in bound order.
    queue: Vec<(usize, f64, f64, String)>,
    pruner: Pruner,
    done: Vec<(usize, f64, outcome::Figures)>,
    refusals: Refusals,
    pruned: u64,
    next: usize,
    size: u64,
    proxies: u64,
}

impl Searching {
    /// Enumerates and screens the candidates (on `options.threads`), or
    /// refuses the request in one line naming what to change.
    pub fn start(input: &ScenarioInput, options: &Options) -> Result<Self, String> {
        let (input, filled) = base(input, options.gpus)?;
        let Workload::Transformer(model) = &filled.workload else {
            unreachable!("checked by base");
        };
        let mut fix = options.fix.clone();
        fix.sort();
        fix.dedup();
        let space = Space {
            filled: &filled,
            model,
            fixed: &fix,
            max_batch: options.max_batch,
        };
        let size = space.size();
        let max_space = options.max_space.min(MAX_SPACE);
        if size > max_space {
            let free: Vec<&str> = Dimension::ALL
                .iter()
                .filter(|d| !fix.contains(d))
                .map(|d| d.path())
                .collect();
            return Err(format!(
                "the search space holds {size} candidates, more than the {max_space} one search takes: \
                 fix some of the fields it varies to the scenario's values with --fix (any of {})",
                free.join(", ")
            ));
        }
        let mut layouts = Vec::with_capacity(size as usize);
        space.for_each(|l| layouts.push(l));
        let threads = options.threads.max(1);

        // Screening, in slices of the space's order (neighbours share proxies).
        let bounds = Bounds::default();
        let in_flight = InFlightMemo::default();
        let slices: Vec<&[Layout]> = layouts.chunks(256).collect();
        let screened: Vec<Screened> = parallel::map(&slices, threads, |slice| {
            slice
                .iter()
                .map(|l| screen(l, &input, &filled, (&bounds, &in_flight)))
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .collect();

        let mut refusals = Refusals::default();
        let mut queue: Vec<(usize, f64, f64, String)> = Vec::new();
        for (i, s) in screened.iter().enumerate() {
            match s {
                Screened::Refused(reason, message) => refusals.add(*reason, message),
                Screened::Kept { memory_gb, bound_s } => {
                    let batch = f64::from(layouts[i].global_batch.max(1));
                    queue.push((i, *memory_gb, bound_s / batch, layouts[i].describe()));
                }
            }
        }
        drop(screened);
        queue.sort_by(|a, b| {
            match options.objective {
                Objective::Memory => a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)),
                _ => a.2.total_cmp(&b.2).then(a.1.total_cmp(&b.1)),
            }
            .then_with(|| a.3.cmp(&b.3))
        });
        Ok(Self {
            pruner: Pruner::new(options.objective, options.top),
            input,
            filled,
            options: options.clone(),
            layouts,
            queue,
            done: Vec::new(),
            refusals,
            pruned: 0,
            next: 0,
            size,
            proxies: bounds.proxies() as u64,
        })
    }

    /// The next wave's candidates, the ones pruned on the way counted;
    /// empty when every candidate is simulated, pruned or refused. Each
    /// candidate's budget is checked here, on `options.threads`.
    pub fn next_wave(&mut self) -> Vec<Candidate> {
        let mut wave: Vec<usize> = Vec::with_capacity(WAVE);
        while wave.is_empty() && self.next < self.queue.len() {
            while self.next < self.queue.len() && wave.len() < WAVE {
                let (_, memory, bound, _) = &self.queue[self.next];
                if !self.options.exhaustive && self.pruner.prunes(*bound, *memory) {
                    self.pruned += 1;
                } else {
                    wave.push(self.next);
                }
                self.next += 1;
            }
        }
        let (layouts, queue, input, filled) =
            (&self.layouts, &self.queue, &self.input, &self.filled);
        parallel::map(&wave, self.options.threads.max(1), |&place| {
            let layout = &layouts[queue[place].0];
            Candidate {
                place,
                input: layout.apply(input, filled),
                budget: budget(layout, input, filled),
            }
        })
    }

    /// Takes the results of `wave` (as [`Searching::next_wave`] gave it),
    /// one per candidate in its order.
    pub fn record(&mut self, wave: &[Candidate], results: Vec<Simulated>) {
        let mut points = Vec::new();
        for (c, r) in wave.iter().zip(results) {
            let (i, _, bound, description) = &self.queue[c.place];
            match r {
                Simulated::Refused(reason, message) => self.refusals.add(reason, &message),
                Simulated::Figures(f) => {
                    let batch = f64::from(self.layouts[*i].global_batch.max(1));
                    points.push(Point {
                        time_s: f.step_time_ms / 1e3 / batch,
                        memory_gb: f.memory_gb,
                        description: description.clone(),
                    });
                    self.done.push((*i, *bound * batch, f));
                }
            }
        }
        self.pruner.add(&points);
    }

    /// Where the search stands.
    pub fn progress(&self) -> Progress {
        Progress {
            space: self.size,
            simulated: self.done.len() as u64,
            pruned: self.pruned,
            refused: self.refusals.total(),
            remaining: (self.queue.len() - self.next) as u64,
        }
    }

    /// The search's result, once [`Searching::next_wave`] is empty.
    pub fn finish(self) -> Outcome {
        let given = self.given();
        let mut outcome = outcome::assemble(
            &self.input,
            &self.filled,
            &self.options,
            &self.layouts,
            self.done,
            outcome::Counts {
                space: self.size,
                refusals: self.refusals,
                pruned: self.pruned,
                proxies: self.proxies,
            },
        );
        outcome.given = given.and_then(|(layout, result)| {
            let best = outcome.best.first()?;
            Some(match result {
                Ok(step_ms) => against(best, &layout, step_ms, GIVEN_TOLERANCE),
                Err(why) => format!("the scenario's own layout ({}) {why}", layout.describe()),
            })
        });
        outcome
    }

    /// The scenario's own layout on the searched GPUs, with its step, ms
    /// (the search's figures where it simulated it, else simulated here),
    /// or why it has none. `None` for a best list ranked by memory.
    fn given(&self) -> Option<(Layout, Result<f64, String>)> {
        if self.options.objective == Objective::Memory {
            return None;
        }
        let layout = Layout::of(&self.filled)?;
        let description = layout.describe();
        let simulated = self
            .done
            .iter()
            .find(|(i, _, _)| self.layouts[*i].describe() == description);
        if let Some((_, _, f)) = simulated {
            return Some((layout, Ok(f.step_time_ms)));
        }
        let s = &self.filled;
        if let Err(e) = validate::check_filled(s) {
            let why = format!("does not run on these GPUs: {e}");
            return Some((layout, Err(why)));
        }
        let memory = memory_gb_with(s, &InFlightMemo::default());
        if !memory.fits {
            let why = format!(
                "does not fit: it needs {:.1} GB on its fullest GPU, which has {:.1}",
                memory.total, memory.capacity
            );
            return Some((layout, Err(why)));
        }
        let candidate = Candidate {
            place: usize::MAX,
            input: self.input.clone(),
            budget: budget_of(s),
        };
        let result = match simulate_candidate(&candidate) {
            Simulated::Figures(f) => Ok(f.step_time_ms),
            Simulated::Refused(_, why) => Err(format!("could not be simulated: {why}")),
        };
        Some((layout, result))
    }
}

/// How close to the fastest found the scenario's own layout must come to
/// be called as good (issue 59: a published layout within 10% of the best
/// found).
pub const GIVEN_TOLERANCE: f64 = 0.1;
