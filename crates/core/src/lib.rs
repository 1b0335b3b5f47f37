//! Overlap Lab's simulator: GPUs, links, collectives and contention for a
//! 3D-parallel transformer step. Pure Rust, no web dependency; the CLI and
//! the browser app are thin shells over [`simulate`].
//!
//! The model is `../shared/model.md`; the scenario and report formats are
//! `../shared/interface.md`.

mod bandwidth_model;
pub mod collective;
pub mod collective_cost;
pub mod efficiency;
mod engine;
mod exposure;
mod graph;
pub mod hardware;
pub mod hta;
pub mod kineto;
mod link_log;
pub mod network;
mod plain;
pub mod presets;
pub mod published;
mod queues;
pub mod report;
pub mod scenario;
pub mod schedule;
pub mod share_link;
mod summary;
pub mod timeline;
pub mod trace;
mod validate;
pub mod workload;

pub use hardware::{Hardware, HardwarePreset};
pub use report::Report;
pub use scenario::{parse_scenario, FieldError, Scenario, ScenarioError, ScenarioInput};
pub use timeline::{Axis, Timeline};
pub use validate::{MAX_GPUS, MAX_SIMULATED_OPS};

/// A simulated step with its all-off baseline folded into the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Simulation {
    pub timeline: Timeline,
    pub report: Report,
    /// Events the engine processed, both runs counted (for benchmarks).
    pub events: u64,
    /// Events the engine planned, superseded ones included (its work), both
    /// runs counted: never above `workload::cost::cost(scenario).planned_events`.
    pub planned_events: u64,
}

/// How much of the cluster to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fidelity {
    /// One GPU per pipeline stage stands for its TP group and DP replicas (model.md section 7).
    Reduced,
    /// Every GPU; for checking the reduction on small clusters.
    Full,
}

/// Simulates one step of the scenario and its all-overlap-off baseline.
pub fn simulate(scenario: &Scenario) -> Simulation {
    simulate_with(scenario, Fidelity::Reduced)
}

/// Simulates at the given fidelity (`Full` simulates every GPU).
pub fn simulate_with(scenario: &Scenario, fidelity: Fidelity) -> Simulation {
    Simulator::new(fidelity).simulate(scenario)
}

/// The same simulation by the plain engine, flow by flow and event by event:
/// the reference the fast engine is tested against. Its cost grows with the
/// square of concurrent flows; not for large scenarios.
#[doc(hidden)]
pub fn simulate_plain(scenario: &Scenario, fidelity: Fidelity) -> Simulation {
    let mut sim = Simulator::new(fidelity);
    sim.plain = true;
    sim.simulate(scenario)
}

/// Simulates scenarios one after another, remembering the last all-off
/// baseline: flipping an overlap switch changes the scenario but not its
/// baseline, so the page re-simulates only the scenario itself.
pub struct Simulator {
    fidelity: Fidelity,
    /// The all-off scenario last simulated and its step time, ms.
    baseline: Option<(Scenario, f64)>,
    /// Run the plain reference engine instead of the fast one.
    plain: bool,
}

impl Simulator {
    pub fn new(fidelity: Fidelity) -> Self {
        Self {
            fidelity,
            baseline: None,
            plain: false,
        }
    }

    pub fn simulate(&mut self, scenario: &Scenario) -> Simulation {
        let fidelity = self.fidelity;
        let (timeline, mut report, mut events, mut planned_events) = {
            let mut graph = workload::build(scenario, fidelity, self.reserve(scenario));
            let mut run = self.run(&graph, true, scenario.sm_tax);
            graph.release_dependencies();
            let timeline = summary::timeline(&graph, &mut run, fidelity == Fidelity::Reduced);
            let report = summary::report(scenario, &graph, &run);
            (timeline, report, run.events, run.planned_events)
            // The graph and the run are dropped here, before the baseline is built.
        };
        report.hta_overlap_per_gpu = hta::overlap_per_gpu(&timeline);
        report.hta_overlap = hta::mean(&report.hta_overlap_per_gpu);
        let off = scenario.all_overlap_off();
        report.baseline_ms = if off == *scenario {
            report.step_time_ms
        } else if let Some((_, ms)) = self.baseline.as_ref().filter(|(s, _)| *s == off) {
            *ms
        } else {
            let graph = workload::build(&off, fidelity, self.reserve(&off));
            let run = self.run(&graph, false, off.sm_tax);
            events += run.events;
            planned_events += run.planned_events;
            run.step_time_s * 1e3
        };
        self.baseline = Some((off, report.baseline_ms));
        report.speedup = if report.step_time_ms > 0.0 {
            report.baseline_ms / report.step_time_ms
        } else {
            1.0
        };
        Simulation {
            timeline,
            report,
            events,
            planned_events,
        }
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

    fn run(&self, graph: &graph::Graph, record_links: bool, sm_tax: f64) -> engine::RunResult {
        if self.plain {
            plain::run(graph, record_links, sm_tax)
        } else {
            engine::run(graph, record_links, sm_tax)
        }
    }
}

impl Default for Simulator {
    fn default() -> Self {
        Self::new(Fidelity::Reduced)
    }
}
