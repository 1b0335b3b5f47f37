//! The plain event-by-event simulation: every flow its own rate and its own
//! events. Slow on large steps, simple to trust; tests compare the fast
//! engine with it.

mod engine;
mod network;

pub(crate) use engine::run;
