//! What every run of a step needs, whichever part of the step it is: the
//! fidelity, the threads, the collective libraries, the room a graph
//! reserves, the engine that runs it, and the faults tests inject. The
//! steady state's short runs and the whole step take it alike, so that
//! neither reaches back to the simulator that owns it.

use crate::collective::{self, LibraryRef};
use crate::input::validate::MAX_TIMELINE_OPS;
use crate::model::fidelity::Fidelity;
use crate::model::scenario::Scenario;
use crate::sim;
use crate::workload;
use crate::workload::graph::interference::Sharing;

use super::parallel;

/// How a simulator runs a step's graphs.
#[derive(Clone, Debug)]
pub(crate) struct Runner {
    pub fidelity: Fidelity,
    /// Threads the independent runs of a step are spread over (`parallel`).
    pub threads: usize,
    /// A library put before the registry's, for every scenario
    /// (`Simulator::with_library`).
    pub library: Option<LibraryRef>,
    /// Run the plain reference engine instead of the fast one. This and
    /// the two faults below exist for tests only (the `reference` feature):
    /// without them a release build holds no branch the product never takes.
    #[cfg(feature = "reference")]
    pub plain: bool,
    /// Treat every steady state as failed (tests of the refusal that follows).
    #[cfg(feature = "reference")]
    pub steady_fails: bool,
    /// Treat every run's marked periods as not repeating (tests of the
    /// three short runs that follow).
    #[cfg(feature = "reference")]
    pub marks_fail: bool,
}

impl Runner {
    /// A runner over the machine's threads, with the registry's libraries.
    pub fn new(fidelity: Fidelity) -> Self {
        Self {
            fidelity,
            threads: parallel::available_threads(),
            library: None,
            #[cfg(feature = "reference")]
            plain: false,
            #[cfg(feature = "reference")]
            steady_fails: false,
            #[cfg(feature = "reference")]
            marks_fail: false,
        }
    }

    /// The libraries that run `scenario`'s collectives.
    pub fn libraries(&self, scenario: &Scenario) -> collective::Libraries {
        let selected = collective::Libraries::of(scenario);
        match &self.library {
            Some(library) => selected.with_first(library.clone()),
            None => selected,
        }
    }

    /// Threads for the runs of the scenario's figures: the simulator's, or
    /// fewer when that many of its largest runs would not fit in
    /// [`parallel::RUNS_MEMORY_BYTES`] at once. The largest run is the
    /// validator's count, kept from resolving the scenario
    /// (`workload::build::run_cost`).
    pub(crate) fn threads_for(&self, scenario: &Scenario) -> usize {
        if self.threads <= 1 {
            return 1;
        }
        workload::build::run_cost::budget_within(scenario, MAX_TIMELINE_OPS)
            .map_or(1, |b| parallel::runs_at_once(b.figures.ops))
            .min(self.threads)
    }
}

impl Runner {
    /// Room to reserve for the graph: its exact op count when reduced, so
    /// that building a large step does not copy its arrays as they grow.
    pub(crate) fn reserve(&self, s: &Scenario) -> usize {
        // Small steps grow their arrays a few times at most: not worth counting.
        if self.fidelity == Fidelity::Full || s.micro_batches() <= 64 {
            return 0;
        }
        workload::build::run_cost::run_cost(s).ops as usize
    }

    /// Runs the graph, recording what the report reads when `record` and the
    /// link samples the timeline draws when `samples` too.
    pub(crate) fn run(
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
            crate::output::summary::gpu_shares(graph, self.threads)
        } else {
            Vec::new()
        };
        let charged = parallel::map(&shares, shares.len(), |gpus| {
            run.charge_share(graph, gpus.clone())
        });
        run.settle(graph, charged)
    }
}

// The faults tests inject, as the steady state asks about them: the fields
// with the `reference` feature, and constant false without it, where the
// checks fold away and the product's figures are the same either way.
#[cfg(feature = "reference")]
impl Runner {
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
impl Runner {
    /// No fault injected: a product build never fails a steady state on purpose.
    pub(crate) fn steady_fails(&self) -> bool {
        false
    }

    /// No fault injected: a product build's marked periods are as they ran.
    pub(crate) fn marks_fail(&self) -> bool {
        false
    }
}
