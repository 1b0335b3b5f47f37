//! What a run produces: the timeline, the report and its summary, and the
//! traces (Chrome, Kineto) and the HTA overlap figure read from them.

pub mod hta;
pub mod kineto;
pub mod memory;
pub mod metric;
/// A step's timeline from a shorter run: its steady period repeated.
pub mod periods;
pub mod report;
pub(crate) mod summary;
pub(crate) mod tally;
pub mod timeline;
pub mod trace;
