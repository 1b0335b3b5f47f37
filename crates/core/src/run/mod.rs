//! A step's run, from its scenario to its figures and timeline: the
//! simulator that callers hold ([`Simulator`], below), what each of its
//! graphs needs to run (`runner`), the steady state's short runs and their
//! extrapolation (`steady`, `extrapolate`), and the threads they spread
//! over (`parallel`). The crate's root only re-exports it.

pub(crate) mod extrapolate;
pub mod parallel;
mod periodic;
mod runner;
pub mod steady;

use crate::collective;
use crate::input::parse::FieldError;
use crate::input::validate::timeline_refusal;
use crate::model::fidelity::Fidelity;
use crate::model::scenario::Scenario;
use crate::output::report::Report;
use crate::output::timeline::Timeline;
use crate::output::{periods, summary};
use crate::workload;
use crate::workload::graph::interference::Sharing;
pub(crate) use runner::Runner;
use steady::{Part, PartRan};

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
    /// runs counted: never above `workload::build::run_cost::cost(scenario).planned_events`.
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

/// Simulates scenarios one after another, remembering the last all-off
/// baseline: flipping an overlap switch changes the scenario but not its
/// baseline, so the page re-simulates only the scenario itself.
pub struct Simulator {
    /// How it runs a step's graphs.
    pub(crate) runner: Runner,
    /// The all-off scenario last simulated and its step time, ms.
    baseline: Option<(Scenario, f64)>,
    /// Whether the figures carry the all-off baseline; the layout search
    /// ranks step times and spares itself the baseline's runs
    /// ([`Simulator::without_baseline`]).
    baseline_wanted: bool,
}

impl Simulator {
    /// A simulator that remembers no baseline yet.
    pub fn new(fidelity: Fidelity) -> Self {
        Self {
            runner: Runner::new(fidelity),
            baseline: None,
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
    pub fn with_library(mut self, library: collective::LibraryRef) -> Self {
        self.runner.library = Some(library);
        self
    }

    /// The libraries that run `scenario`'s collectives on this simulator.
    pub fn libraries(&self, scenario: &Scenario) -> collective::Libraries {
        self.runner.libraries(scenario)
    }

    /// The same simulator with its independent runs spread over at most
    /// `threads` threads (at least one): the figures are the same whatever
    /// the number; one gives the cost of a step as its time.
    #[doc(hidden)]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.runner.threads = threads.max(1);
        self
    }

    /// A simulator whose steady states all fail to extrapolate, as a step
    /// whose three short runs disagree would: for tests of what follows.
    #[cfg(feature = "reference")]
    #[doc(hidden)]
    pub fn with_failing_steady_state(fidelity: Fidelity) -> Self {
        let mut sim = Self::new(fidelity);
        sim.runner.steady_fails = true;
        sim
    }

    /// A simulator for which no run's marked periods repeat, as on a step
    /// still settling there: its figures come from three short runs where
    /// one would do. For tests of that way round.
    #[cfg(feature = "reference")]
    #[doc(hidden)]
    pub fn with_failing_marks(fidelity: Fidelity) -> Self {
        let mut sim = Self::new(fidelity);
        sim.runner.marks_fail = true;
        sim
    }

    /// As [`Simulator::simulate_periodic`], or the refusal of [`timeline_refusal`]
    /// (naming the control and the value that would draw it) when the
    /// whole step is over [`MAX_TIMELINE_OPS`](crate::MAX_TIMELINE_OPS): what the page and
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
        if let Some((timeline, part, repeat)) = periodic::timeline(&self.runner, scenario) {
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
        let threads = self.runner.threads_for(scenario);
        let off = scenario.all_overlap_off();
        let ran = parallel::map(&parts, threads, |&part| {
            steady::run_part(&self.runner, scenario, &off, part)
        });
        self.report_from_parts(scenario, ran)
    }

    /// The independent runs [`Simulator::simulate_report`] makes the
    /// scenario's figures of, for a caller that spreads them itself (the
    /// page, over two workers): the steady state's short runs, and the
    /// baseline's unless this simulator remembers it. The longest first.
    pub fn report_parts(&self, scenario: &Scenario) -> Vec<Part> {
        let off = scenario.all_overlap_off();
        let needed =
            self.baseline_wanted && off != *scenario && self.remembered_baseline_ms(&off).is_none();
        steady::parts(scenario, needed.then_some(&off))
    }

    /// Runs one of the [`Simulator::report_parts`] of the scenario: on any
    /// simulator of the same fidelity, in any order.
    pub fn run_part(&self, scenario: &Scenario, part: Part) -> PartRan {
        steady::run_part(&self.runner, scenario, &scenario.all_overlap_off(), part)
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
        let fidelity = self.runner.fidelity;
        let with_timeline = parts.is_none();
        let off = scenario.all_overlap_off();
        let remembered = self.remembered_baseline_ms(&off);
        let (timeline, mut report, mut events, mut planned_events, extrapolated_from, baseline) =
            match parts {
                None => {
                    let mut graph = workload::build(
                        scenario,
                        fidelity,
                        self.runner.reserve(scenario),
                        &self.runner.libraries(scenario),
                    );
                    let mut run = self.runner.run(&graph, true, true, &Sharing::of(scenario));
                    graph.release_dependencies();
                    let mut report = summary::report(scenario, &graph, &run, false);
                    let timeline =
                        summary::timeline(&graph, &mut run, fidelity == Fidelity::Reduced);
                    report.hta_overlap_per_gpu = crate::output::hta::overlap_per_gpu(&timeline);
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
                    let (t, baseline) = steady::tally(&self.runner, scenario, &off, ran)?;
                    let report = t.tally.report(scenario);
                    let (events, planned) = (t.events, t.planned_events);
                    (None, report, events, planned, t.extrapolated_from, baseline)
                }
            };
        report.hta_overlap = crate::output::hta::mean(&report.hta_overlap_per_gpu);
        report.memory_gb = crate::output::memory::memory_gb(scenario);
        report.collective =
            crate::output::report::CollectiveReport::of(scenario, report.step_time_ms);
        let mut baseline_extrapolated_from = None;
        report.baseline_ms = if !self.baseline_wanted {
            f64::NAN
        } else if off == *scenario {
            report.step_time_ms
        } else if let Some(ms) = remembered {
            ms
        } else {
            let (step_s, e, p, from) = match baseline {
                Some(b) => b,
                None => steady::step_time_s(&self.runner, &off, !with_timeline)?,
            };
            events += e;
            planned_events += p;
            baseline_extrapolated_from = from;
            step_s * 1e3
        };
        if self.baseline_wanted {
            self.baseline = Some((off, report.baseline_ms));
        }
        // NaN without a baseline, as `baseline_ms`.
        report.speedup = if report.step_time_ms > 0.0 || report.baseline_ms.is_nan() {
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

impl Default for Simulator {
    fn default() -> Self {
        Self::new(Fidelity::Reduced)
    }
}
