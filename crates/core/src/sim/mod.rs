//! The simulation: an event loop over fluid compute and fluid links. It runs
//! the workload's task graph and knows nothing of the timeline or report.

pub mod bandwidth_model;
pub(crate) mod engine;
pub(crate) mod exposure;
pub mod link_log;
pub mod network;
// The plain reference engine: the unit tests and (the `reference` feature)
// the crate's integration tests compare the fast engine with it; the CLI
// and the app never run it, so their builds leave it out.
#[cfg(any(test, feature = "reference"))]
pub(crate) mod plain;
#[cfg(test)]
mod queue_order;
pub(crate) mod sm_race;
