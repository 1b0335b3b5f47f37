//! Overlap Lab's simulator: GPUs, links, collectives and contention for a
//! 3D-parallel transformer step. Pure Rust, no web dependency; the CLI and
//! the browser app are thin shells over [`simulate`].
//!
//! The model is `../shared/model.md`; the scenario and report formats are
//! `../shared/interface.md`.

#![warn(missing_docs)]

// The layers, bottom up. Each imports only from the layers below it
// (`tests/layers.rs` checks this): model <- workload <- sim <- output,
// and input (parsing, presets, links, validation) over model and workload.
pub mod calibration;
pub mod coconet;
pub mod collective;
pub mod input;
pub mod model;
pub mod output;
pub mod parallel;
pub mod published;
pub mod search;
pub mod sim;
pub mod steady_state;
pub mod sweep;
pub mod workload;
pub mod zero_bubble;

// The first version's flat paths, kept for the CLI, the app and course
// material that import them.
pub use input::{presets, share_link};
pub use model::hardware;
pub use output::{hta, kineto, memory, periods, report, timeline, trace};
// Reading real profiler traces, beside the export that writes them.
pub use collective::nccl as collective_cost;
pub use output::trace_import;
pub use sim::network;
pub use workload::{efficiency, interference, schedule};

/// The scenario: its validated form (`model::scenario`) and how users
/// write it (`input::parse`), under one path.
pub mod scenario {
    pub use crate::input::parse::*;
    pub use crate::model::scenario::*;
}

pub use hardware::{Hardware, HardwarePreset};
pub use input::validate::{
    counted, timeline_refusal, MAX_GPUS, MAX_SIMULATED_OPS, MAX_TIMELINE_OPS,
};
pub use model::fidelity::Fidelity;
#[cfg(feature = "reference")]
#[doc(hidden)]
pub use output::tally::GpuStep;
pub use report::Report;
pub use scenario::{parse_scenario, FieldError, Scenario, ScenarioError, ScenarioInput};
pub use steady_state::{Part, PartRan};
pub use timeline::{Axis, Lane, Timeline};
use workload::interference::Sharing;

/// A simulated step with its all-off baseline folded into the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Simulation {
    /// Every GPU's lanes and the links' bandwidth over the step.
    pub timeline: Timeline,
    /// The figures, the baseline folded in.
    pub report: Report,
    /// Events the engine processed, both runs counted (for benchmarks).
    pub events: u64,
    /// Events the engine planned, superseded ones included (its work), both
    /// runs counted: never above `workload::cost::cost(scenario).planned_events`.
    pub planned_events: u64,
    /// The micro-batch count of the short run whose steady period the
    /// timeline repeats ([`Simulator::simulate_periodic`]); `None` when the
    /// step was simulated in full.
    pub periods_from: Option<u32>,
}

/// A simulated step whose timeline may be a short run's that stands for
/// the whole step's (see [`Simulator::simulate_repeating`]).
#[derive(Clone, Debug)]
pub struct RepeatingSimulation {
    /// The whole step's lanes, or (with `repeat`) a short run's.
    pub timeline: Timeline,
    /// How the short run's lanes draw the whole step's; `None`: they are
    /// the whole step's.
    pub repeat: Option<periods::Repeat>,
    /// The whole step's figures, the baseline folded in.
    pub report: Report,
    /// Events the engine processed, the runs made counted.
    pub events: u64,
    /// Events the engine planned, superseded ones included.
    pub planned_events: u64,
}

/// A simulated step's figures without its timeline (see [`simulate_report`]).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Figures {
    /// The figures, the baseline folded in: equal to [`Simulation::report`].
    pub report: Report,
    /// Events the engine processed, both runs counted (for benchmarks).
    pub events: u64,
    /// Events the engine planned, both runs counted (see [`Simulation`]).
    pub planned_events: u64,
    /// The micro-batch counts the scenario's figures were extrapolated
    /// from (`steady_state`), or `None` when it was simulated in full.
    pub extrapolated_from: Option<[u32; 3]>,
    /// The same for the all-off baseline's step time (`None` also when it
    /// was not simulated: reused, or the scenario itself).
    pub baseline_extrapolated_from: Option<[u32; 3]>,
}

/// The report of one step of the scenario and its all-overlap-off baseline,
/// without the timeline: for callers that print or compare figures (the
/// CLI's `simulate`, sweeps). Equal to `simulate(scenario).report`. A
/// validated scenario's figures fit the budget as predicted; the one
/// refusal left is decided at run time: a step whose steady state could not
/// be extrapolated and whose whole step is over [`MAX_TIMELINE_OPS`]
/// (`workload.global_batch` named, with the largest valid value).
pub fn simulate_report(scenario: &Scenario) -> Result<Figures, FieldError> {
    Simulator::new(Fidelity::Reduced).simulate_report(scenario)
}

/// Simulates one step of the scenario and its all-overlap-off baseline,
/// timeline included: the whole step at once, whatever it holds. Callers
/// facing users check [`timeline_refusal`] first, as
/// [`Simulator::try_simulate`] does.
pub fn simulate(scenario: &Scenario) -> Simulation {
    simulate_with(scenario, Fidelity::Reduced)
}

/// Simulates at the given fidelity (`Full` simulates every GPU).
pub fn simulate_with(scenario: &Scenario, fidelity: Fidelity) -> Simulation {
    Simulator::new(fidelity).simulate(scenario)
}

/// The same simulation by the plain engine, flow by flow and event by event:
/// the reference the fast engine is tested against. Its cost grows with the
/// square of concurrent flows; not for large scenarios. Behind the
/// `reference` feature, which only the crate's tests turn on: the CLI and
/// the app never run it.
#[cfg(feature = "reference")]
#[doc(hidden)]
pub fn simulate_plain(scenario: &Scenario, fidelity: Fidelity) -> Simulation {
    let mut sim = Simulator::new(fidelity);
    sim.plain = true;
    sim.simulate(scenario)
}

/// Where each simulated GPU's whole step went (model.md 5), by the fast
/// engine or the plain reference: the step's length and, per GPU, its
/// compute, exposed time, bubble and the parts of its communication. For
/// tests of the single charge on every GPU, not only the reported one
/// (hence behind the `reference` feature).
#[cfg(feature = "reference")]
#[doc(hidden)]
pub fn gpu_steps(scenario: &Scenario, plain: bool) -> (f64, Vec<GpuStep>) {
    let mut sim = Simulator::new(Fidelity::Reduced);
    sim.plain = plain;
    let graph = workload::build_for_figures(
        scenario,
        sim.fidelity,
        sim.reserve(scenario),
        &sim.libraries(scenario),
    );
    let run = sim.run(&graph, true, false, &Sharing::of(scenario));
    let tally = output::summary::tally(&graph, &run, false);
    (tally.step_s, tally.gpus.iter().map(GpuStep::from).collect())
}

/// Simulates scenarios one after another, remembering the last all-off
/// baseline: flipping an overlap switch changes the scenario but not its
/// baseline, so the page re-simulates only the scenario itself.
pub struct Simulator {
    fidelity: Fidelity,
    /// The all-off scenario last simulated and its step time, ms.
    baseline: Option<(Scenario, f64)>,
    /// Run the plain reference engine instead of the fast one. This and
    /// the two faults below exist for tests only (the `reference` feature):
    /// without them a release build holds no branch the product never takes.
    #[cfg(feature = "reference")]
    plain: bool,
    /// Treat every steady state as failed (tests of the refusal that follows).
    #[cfg(feature = "reference")]
    steady_fails: bool,
    /// Treat every run's marked periods as not repeating (tests of the
    /// three short runs that follow).
    #[cfg(feature = "reference")]
    marks_fail: bool,
    /// Threads the independent runs of a step are spread over (`parallel`).
    threads: usize,
    /// A library put before the registry's, for every scenario this
    /// simulator runs ([`Simulator::with_library`]).
    library: Option<collective::LibraryRef>,
    /// Whether the figures carry the all-off baseline; the layout search
    /// ranks step times and spares itself the baseline's runs
    /// ([`Simulator::without_baseline`]).
    baseline_wanted: bool,
}

impl Simulator {
    /// A simulator that remembers no baseline yet.
    pub fn new(fidelity: Fidelity) -> Self {
        Self {
            fidelity,
            baseline: None,
            #[cfg(feature = "reference")]
            plain: false,
            #[cfg(feature = "reference")]
            steady_fails: false,
            #[cfg(feature = "reference")]
            marks_fail: false,
            threads: parallel::available_threads(),
            library: None,
            baseline_wanted: true,
        }
    }

    /// The same simulator giving figures without the all-off baseline
    /// (`baseline_ms` and `speedup` NaN): half the runs of a step whose
    /// baseline is not remembered. The layout search (`search`) compares
    /// candidates' step times and never reads their baselines.
    pub(crate) fn without_baseline(self) -> Self {
        Self {
            baseline_wanted: false,
            ..self
        }
    }

    /// The same simulator with `library` running every call it claims,
    /// before the libraries the scenario's fields select: a library
    /// outside the registry (a test's, or one being written) on the same
    /// scenarios.
    pub fn with_library(self, library: collective::LibraryRef) -> Self {
        Self {
            library: Some(library),
            ..self
        }
    }

    /// The libraries that run `scenario`'s collectives on this simulator.
    pub fn libraries(&self, scenario: &Scenario) -> collective::Libraries {
        let selected = collective::Libraries::of(scenario);
        match &self.library {
            Some(library) => selected.with_first(library.clone()),
            None => selected,
        }
    }

    /// The same simulator with its independent runs spread over at most
    /// `threads` threads (at least one): the figures are the same whatever
    /// the number; one gives the cost of a step as its time.
    #[doc(hidden)]
    pub fn with_threads(self, threads: usize) -> Self {
        Self {
            threads: threads.max(1),
            ..self
        }
    }

    /// A simulator whose steady states all fail to extrapolate, as a step
    /// whose three short runs disagree would: for tests of what follows.
    #[cfg(feature = "reference")]
    #[doc(hidden)]
    pub fn with_failing_steady_state(fidelity: Fidelity) -> Self {
        Self {
            steady_fails: true,
            ..Self::new(fidelity)
        }
    }

    /// A simulator for which no run's marked periods repeat, as on a step
    /// still settling there: its figures come from three short runs where
    /// one would do. For tests of that way round.
    #[cfg(feature = "reference")]
    #[doc(hidden)]
    pub fn with_failing_marks(fidelity: Fidelity) -> Self {
        Self {
            marks_fail: true,
            ..Self::new(fidelity)
        }
    }

    /// As [`Simulator::simulate_periodic`], or the refusal of [`timeline_refusal`]
    /// (naming the control and the value that would draw it) when the
    /// whole step is over [`MAX_TIMELINE_OPS`]: what the page and
    /// `overlap-lab trace` call.
    pub fn try_simulate(&mut self, scenario: &Scenario) -> Result<Simulation, FieldError> {
        match timeline_refusal(scenario) {
            Some(e) => Err(e),
            None => Ok(self.simulate_periodic(scenario)),
        }
    }

    /// Simulates the scenario, reusing the last baseline when it still
    /// applies: the whole step at once (see [`Simulator::try_simulate`]).
    pub fn simulate(&mut self, scenario: &Scenario) -> Simulation {
        let (timeline, figures) = self
            .step(scenario, None)
            .expect("a step with its timeline is simulated in full, never refused");
        Simulation {
            timeline: timeline.expect("asked for"),
            report: figures.report,
            events: figures.events,
            planned_events: figures.planned_events,
            periods_from: None,
        }
    }

    /// The step with its timeline as [`Simulator::simulate`] gives it, but
    /// made of one short run where the step's steady state allows
    /// ([`Simulator::simulate_repeating`], its period drawn as many more
    /// times as the scenario has units of micro-batches beyond the run).
    /// Its bars equal the whole run's to the steady state's tolerance
    /// (`tests/periodic_timeline.rs`).
    pub fn simulate_periodic(&mut self, scenario: &Scenario) -> Simulation {
        let run = self.simulate_repeating(scenario);
        let periods_from = run
            .repeat
            .map(|r| scenario.micro_batches() - r.periods * r.unit);
        let timeline = match run.repeat {
            None => run.timeline,
            Some(repeat) => {
                periods::whole(run.timeline, repeat).expect("checked when the run was made")
            }
        };
        Simulation {
            timeline,
            report: run.report,
            events: run.events,
            planned_events: run.planned_events,
            periods_from,
        }
    }

    /// The step's figures and a timeline that stands for its own: where the
    /// steady state allows, one short run's, whose second marked period
    /// `repeat` says how to draw again up to the scenario's micro-batches
    /// (`output::periods`), the figures extrapolated from the same run (the
    /// same as [`Simulator::simulate_report`]'s); else the whole step's, as
    /// [`Simulator::simulate`] gives it. What the page's worker sends: a
    /// seventh of the bars on 1T, drawn whole on the page.
    pub fn simulate_repeating(&mut self, scenario: &Scenario) -> RepeatingSimulation {
        if let Some((timeline, part, repeat)) = steady_state::timeline(self, scenario) {
            if let Ok(figures) = self.report_from_parts(scenario, vec![part]) {
                return RepeatingSimulation {
                    timeline,
                    repeat: Some(repeat),
                    report: figures.report,
                    events: figures.events,
                    planned_events: figures.planned_events,
                };
            }
        }
        let whole = self.simulate(scenario);
        RepeatingSimulation {
            timeline: whole.timeline,
            repeat: None,
            report: whole.report,
            events: whole.events,
            planned_events: whole.planned_events,
        }
    }

    /// The scenario's figures without its timeline, reusing the last
    /// baseline when it still applies. The same report as
    /// [`Simulator::simulate`], without building a bar per operation or a
    /// sample per link rate change: far less memory and time on a large step.
    /// Refused only as [`simulate_report`] says.
    pub fn simulate_report(&mut self, scenario: &Scenario) -> Result<Figures, FieldError> {
        let parts = self.report_parts(scenario);
        let threads = self.threads_for(scenario);
        let off = scenario.all_overlap_off();
        let ran = parallel::map(&parts, threads, |&part| {
            steady_state::run_part(self, scenario, &off, part)
        });
        self.report_from_parts(scenario, ran)
    }

    /// Threads for the runs of the scenario's figures: the simulator's, or
    /// fewer when that many of its largest runs would not fit in
    /// [`parallel::RUNS_MEMORY_BYTES`] at once. The largest run is the
    /// validator's count, kept from resolving the scenario
    /// (`workload::cost`).
    pub(crate) fn threads_for(&self, scenario: &Scenario) -> usize {
        if self.threads <= 1 {
            return 1;
        }
        workload::cost::budget_within(scenario, MAX_TIMELINE_OPS)
            .map_or(1, |b| parallel::runs_at_once(b.figures.ops))
            .min(self.threads)
    }

    /// The independent runs [`Simulator::simulate_report`] makes the
    /// scenario's figures of, for a caller that spreads them itself (the
    /// page, over two workers): the steady state's short runs, and the
    /// baseline's unless this simulator remembers it. The longest first.
    pub fn report_parts(&self, scenario: &Scenario) -> Vec<Part> {
        let off = scenario.all_overlap_off();
        let needed =
            self.baseline_wanted && off != *scenario && self.remembered_baseline_ms(&off).is_none();
        steady_state::parts(scenario, needed.then_some(&off))
    }

    /// Runs one of the [`Simulator::report_parts`] of the scenario: on any
    /// simulator of the same fidelity, in any order.
    pub fn run_part(&self, scenario: &Scenario, part: Part) -> PartRan {
        steady_state::run_part(self, scenario, &scenario.all_overlap_off(), part)
    }

    /// The figures of the scenario from its parts' runs, in the order
    /// [`Simulator::report_parts`] listed them: equal to
    /// [`Simulator::simulate_report`]'s. Parts missing or not as listed are
    /// run here.
    pub fn report_from_parts(
        &mut self,
        scenario: &Scenario,
        ran: Vec<PartRan>,
    ) -> Result<Figures, FieldError> {
        Ok(self.step(scenario, Some(ran))?.1)
    }

    /// The step time, ms, this simulator remembers for the all-off `off`.
    fn remembered_baseline_ms(&self, off: &Scenario) -> Option<f64> {
        self.baseline
            .as_ref()
            .filter(|(s, _)| s == off)
            .map(|b| b.1)
    }

    /// One step and its baseline: with its timeline, or (`parts`) its
    /// figures alone from the runs of its parts. Only
    /// the figures (no timeline) are ever refused.
    fn step(
        &mut self,
        scenario: &Scenario,
        parts: Option<Vec<PartRan>>,
    ) -> Result<(Option<Timeline>, Figures), FieldError> {
        let fidelity = self.fidelity;
        let with_timeline = parts.is_none();
        let off = scenario.all_overlap_off();
        let remembered = self.remembered_baseline_ms(&off);
        let (timeline, mut report, mut events, mut planned_events, extrapolated_from, baseline) =
            match parts {
                None => {
                    let mut graph = workload::build(
                        scenario,
                        fidelity,
                        self.reserve(scenario),
                        &self.libraries(scenario),
                    );
                    let mut run = self.run(&graph, true, true, &Sharing::of(scenario));
                    graph.release_dependencies();
                    let mut report = output::summary::report(scenario, &graph, &run, false);
                    let timeline =
                        output::summary::timeline(&graph, &mut run, fidelity == Fidelity::Reduced);
                    report.hta_overlap_per_gpu = hta::overlap_per_gpu(&timeline);
                    (
                        Some(timeline),
                        report,
                        run.events,
                        run.planned_events,
                        None,
                        None,
                    )
                    // The graph and the run are dropped here, before the baseline is built.
                }
                Some(ran) => {
                    // No timeline: the figures may come from the steady state,
                    // and the baseline's step time from the same parts.
                    let (t, baseline) = steady_state::tally(self, scenario, &off, ran)?;
                    let report = t.tally.report(scenario);
                    let (events, planned) = (t.events, t.planned_events);
                    (None, report, events, planned, t.extrapolated_from, baseline)
                }
            };
        report.hta_overlap = hta::mean(&report.hta_overlap_per_gpu);
        report.memory_gb = output::memory::memory_gb(scenario);
        report.collective = report::CollectiveReport::of(scenario, report.step_time_ms);
        let mut baseline_extrapolated_from = None;
        if !self.baseline_wanted {
            report.baseline_ms = f64::NAN;
            report.speedup = f64::NAN;
            return Ok((
                timeline,
                Figures {
                    report,
                    events,
                    planned_events,
                    extrapolated_from,
                    baseline_extrapolated_from,
                },
            ));
        }
        report.baseline_ms = if off == *scenario {
            report.step_time_ms
        } else if let Some(ms) = remembered {
            ms
        } else {
            let (step_s, e, p, from) = match baseline {
                Some(b) => b,
                None => steady_state::step_time_s(self, &off, !with_timeline)?,
            };
            events += e;
            planned_events += p;
            baseline_extrapolated_from = from;
            step_s * 1e3
        };
        self.baseline = Some((off, report.baseline_ms));
        report.speedup = if report.step_time_ms > 0.0 {
            report.baseline_ms / report.step_time_ms
        } else {
            1.0
        };
        Ok((
            timeline,
            Figures {
                report,
                events,
                planned_events,
                extrapolated_from,
                baseline_extrapolated_from,
            },
        ))
    }
}

impl Simulator {
    /// Room to reserve for the graph: its exact op count when reduced, so
    /// that building a large step does not copy its arrays as they grow.
    fn reserve(&self, s: &Scenario) -> usize {
        // Small steps grow their arrays a few times at most: not worth counting.
        if self.fidelity == Fidelity::Full || s.micro_batches() <= 64 {
            return 0;
        }
        workload::cost::run_cost(s).ops as usize
    }

    /// Runs the graph, recording what the report reads when `record` and the
    /// link samples the timeline draws when `samples` too.
    fn run(
        &self,
        graph: &workload::graph::Graph,
        record: bool,
        samples: bool,
        sharing: &Sharing,
    ) -> sim::engine::RunResult {
        #[cfg(feature = "reference")]
        if self.plain {
            return sim::plain::run(graph, record, sharing);
        }
        let run = sim::engine::run_uncharged(graph, record, samples, sharing);
        // The GPUs' idle time charged over the threads the other runs may
        // have left idle, in the shares the report's sums take.
        let shares = if record {
            output::summary::gpu_shares(graph, self.threads)
        } else {
            Vec::new()
        };
        let charged = parallel::map(&shares, shares.len(), |gpus| {
            run.charge_share(graph, gpus.clone())
        });
        run.settle(graph, charged)
    }
}

// The faults tests inject, as steady_state.rs asks about them: the fields
// with the `reference` feature, and constant false without it, where the
// checks fold away and the product's figures are the same either way.
#[cfg(feature = "reference")]
impl Simulator {
    /// Whether every steady state is to be treated as failed
    /// (`with_failing_steady_state`).
    pub(crate) fn steady_fails(&self) -> bool {
        self.steady_fails
    }

    /// Whether no run's marked periods are to repeat (`with_failing_marks`).
    pub(crate) fn marks_fail(&self) -> bool {
        self.marks_fail
    }
}

#[cfg(not(feature = "reference"))]
impl Simulator {
    /// No fault injected: a product build never fails a steady state on purpose.
    pub(crate) fn steady_fails(&self) -> bool {
        false
    }

    /// No fault injected: a product build's marked periods are as they ran.
    pub(crate) fn marks_fail(&self) -> bool {
        false
    }
}

impl Default for Simulator {
    fn default() -> Self {
        Self::new(Fidelity::Reduced)
    }
}
