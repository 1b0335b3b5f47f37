//! The expert all-to-alls a pass has launched and not yet waited for
//! (`moe_layer` launches and waits for them): state only, so that the
//! builder's own module can hold it without importing the module that
//! extends the builder.

use crate::workload::graph::task::TaskId;

/// The all-to-alls a pass launched and has not waited for yet, with the
/// owner's compute index at launch (where their window starts); and,
/// without EP overlap, those that block the compute stream but whose
/// window is still open: a window is the axis's and the schedule's, not
/// the switch's (model.md 5), so the compute up to the op that needs their
/// result (the shared experts, the weight gradients) is reported as what
/// could have hidden them.
#[derive(Clone, Debug, Default)]
pub(super) struct EpStream {
    pub(super) pending: Vec<(TaskId, u32)>,
    pub(super) blocking: Vec<(TaskId, u32)>,
}
