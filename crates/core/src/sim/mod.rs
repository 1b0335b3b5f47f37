//! The simulation: an event loop over fluid compute and fluid links. It runs
//! the workload's task graph and knows nothing of the timeline or report.

pub(crate) mod engine;
pub mod network;
pub(crate) mod plain;
