//! Workloads turn a scenario into a task graph: where each GPU sits, which
//! links each collective crosses, and the ops of the step.

mod build;
mod cluster;
mod collective_bench;
pub mod cost;
pub mod deepep_bench;
pub mod efficiency;
pub mod embedding_sync;
pub mod expert_folding;
pub(crate) mod fp8_casts;
pub mod fusion;
pub(crate) mod graph;
pub mod hbm_ledger;
pub mod interference;
pub mod layer_cost;
mod layout;
mod matmul_allreduce;
pub mod moe;
pub mod params;
mod plan_memo;
mod pp_boundary;
pub(crate) mod queues;
pub(crate) mod recycle;
pub mod roofline;
pub mod schedule;
mod sharding;
pub mod stage_layers;
pub mod task;
mod tp_form;
mod transformer;

use crate::model::scenario::Scenario;

pub(crate) use build::{build, build_for_figures};
pub(crate) use cluster::Cluster;

/// Operations (compute ops and collectives) one reduced run of the scenario
/// simulates, counted by the builder itself (see [`cost`]).
pub fn estimated_ops(s: &Scenario) -> u64 {
    cost::run_cost(s).ops
}
