//! Overlap Lab's simulator: GPUs, links, collectives and contention for a
//! 3D-parallel transformer step. Pure Rust, no web dependency; the CLI and
//! the browser app are thin shells over [`simulate`].
//!
//! The model is `../shared/model.md`; the scenario and report formats are
//! `../shared/interface.md`.

#![warn(missing_docs)]

// The layers, bottom up. Each imports only from the layers below it
// (`tests/layers.rs` checks this): model <- collective <- workload <- sim
// <- output, input (parsing, presets, links, validation) over model and
// workload, and run (a step from its scenario to its figures) on them all.
pub mod calibration;
pub mod coconet;
pub mod collective;
pub mod input;
pub mod model;
pub mod output;
pub mod published;
pub mod run;
pub mod search;
pub mod sim;
pub mod sweep;
pub mod workload;
pub mod zero_bubble;

// The first version's flat paths, kept for the CLI, the app and course
// material that import them.
pub use collective::nccl as collective_cost;
pub use input::{presets, share_link};
pub use model::hardware;
pub use output::{hta, kineto, memory, periods, report, timeline, trace};
pub use run::steady as steady_state;
pub use run::{parallel, Figures, RepeatingSimulation, Simulation, Simulator};
pub use sim::network;
pub use workload::build::schedule;
pub use workload::cost::efficiency;
pub use workload::graph::interference;

/// The scenario: its validated form (`model::scenario`) and how users
/// write it (`input::parse`), under one path.
pub mod scenario {
    pub use crate::input::parse::*;
    pub use crate::model::ep_overlap::*;
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
    sim.runner.plain = true;
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
    sim.runner.plain = plain;
    let runner = &sim.runner;
    let graph = workload::build_for_figures(
        scenario,
        runner.fidelity,
        runner.reserve(scenario),
        &runner.libraries(scenario),
    );
    let run = runner.run(
        &graph,
        true,
        false,
        &workload::graph::interference::Sharing::of(scenario),
    );
    let tally = output::summary::tally(&graph, &run, false);
    (tally.step_s, tally.gpus.iter().map(GpuStep::from).collect())
}
