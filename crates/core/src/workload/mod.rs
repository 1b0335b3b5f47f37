//! Workloads turn a scenario into a task graph: where each GPU sits, which
//! links each collective crosses, and the ops of the step. Three layers,
//! each importing only from those below it (`tests/layers.rs`):
//! - `cost`: pure formulas, a scenario's parameters, FLOPs, bytes and
//!   kernel times, with no graph;
//! - `graph`: the task graph, its queues and the cluster its collectives
//!   cross;
//! - `build`: the builders that lay a step's ops into the graph (the
//!   transformer, pipelines and their schedules, sharding, fusion).

pub mod build;
pub mod cost;
pub(crate) mod graph;

use crate::model::scenario::Scenario;

pub(crate) use build::{build, build_for_figures};

/// Operations (compute ops and collectives) one reduced run of the scenario
/// simulates, counted by the builder itself (see [`build::run_cost`]).
pub fn estimated_ops(s: &Scenario) -> u64 {
    build::run_cost::run_cost(s).ops
}
