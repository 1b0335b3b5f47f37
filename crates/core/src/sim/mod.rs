//! The simulation: an event loop over fluid compute and fluid links. It runs
//! the workload's task graph and knows nothing of the timeline or report.

pub mod bandwidth_model;
pub(crate) mod engine;
pub(crate) mod exposure;
pub mod link_log;
pub mod network;
pub(crate) mod plain;
#[cfg(test)]
mod queue_order;
