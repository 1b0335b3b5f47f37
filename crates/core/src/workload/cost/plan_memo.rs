//! A roofline's GEMM plans, each made once (`roofline::Roofline`).

use crate::workload::cost::efficiency::GemmPlan;

/// Each GEMM plan made once per build. A builder asks for the same few
/// shapes (a layer's GEMMs, whole and in TP's chunks) once per layer and
/// micro-batch, and choosing the split-K part count tries every count up
/// to the SM count: 15% of a layout search's time before (issue 56). A
/// list, not a map: a transformer has a few dozen shapes. The key holds
/// every input of the plan, so a roofline changed after a plan was made
/// never reads a stale one.
#[derive(Default)]
pub(crate) struct PlanMemo(std::cell::RefCell<Vec<([u64; 11], GemmPlan)>>);

impl PlanMemo {
    /// The plan of `inputs`, made by `plan` the first time they are seen.
    pub(crate) fn get_or(&self, inputs: [f64; 11], plan: impl FnOnce() -> GemmPlan) -> GemmPlan {
        let key = inputs.map(f64::to_bits);
        if let Some((_, p)) = self.0.borrow().iter().find(|(k, _)| *k == key) {
            return *p;
        }
        let p = plan();
        self.0.borrow_mut().push((key, p));
        p
    }
}
