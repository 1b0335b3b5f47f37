//! The bottom layer: hardware, the scenario as plain data, and the names
//! every other layer speaks in (axes, lanes, ops, links). It imports nothing
//! from the layers above.

pub mod axis;
pub mod ep_overlap;
pub mod fidelity;
pub mod hardware;
pub mod link;
mod named;
pub mod op;
pub mod per_axis;
pub mod pipeline_layout;
pub mod recompute_modules;
pub mod scenario;
