//! The workload's formulas: parameters, FLOPs, bytes and kernel times of a
//! scenario's layers, experts and collectives, computed without a graph.
//! Nothing here imports the graph or the builders.

pub mod deepep_bench;
pub mod efficiency;
pub mod embedding_sync;
pub mod expert_folding;
pub(crate) mod fp8_casts;
pub mod layer_cost;
pub(crate) mod layout;
pub mod moe;
pub mod params;
pub(crate) mod plan_memo;
pub mod roofline;
pub mod stage_layers;
pub(crate) mod tp_form;
