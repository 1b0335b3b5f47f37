//! The settings a choice brings along: choosing a value of one field also
//! sets the fields that must change with it for the choice to run. The
//! page's controls and the sweeps both call [`follow`], so that a sweep
//! lists every value the control accepts (issue 58: a sweep of the
//! schedule refused the V schedules, for want of their second virtual
//! stage, which the control sets with them).

use crate::input::fields::{self, Field};
use crate::input::fill;
use crate::input::table::ScenarioInput;
use crate::model::scenario::{DpSharding, GradSync, Schedule, Workload};

/// Sets in `input` the companions of `field`, whose new value `input`
/// already holds. A field without companions leaves `input` as it is.
pub fn follow(field: &Field, input: &mut ScenarioInput) {
    // Through the table, so that a renamed field fails here, not silently.
    let is = |path: &str| field.path == fields::field(path).path;
    if is("parallel.schedule") {
        // The V schedules run two chunks per GPU; 1F1B-style ones one;
        // interleaved keeps the reader's count.
        match input.parallel.schedule {
            Some(Schedule::Interleaved) => {}
            Some(Schedule::ZeroBubbleV | Schedule::DualPipeV) => {
                input.parallel.virtual_stages = Some(2);
            }
            _ => input.parallel.virtual_stages = Some(1),
        }
    } else if is("parallel.dp_sharding") {
        // Each sharding's own switch applies to it alone: the other's goes
        // back to its default rather than refuse the choice.
        let sharding = input.parallel.dp_sharding;
        if sharding != Some(DpSharding::Optimizer) && input.overlap.param_gather == Some(true) {
            input.overlap.param_gather = Some(false);
        }
        if sharding != Some(DpSharding::Full)
            && input.overlap.grad_sync == Some(GradSync::LastMicroBatch)
        {
            input.overlap.grad_sync = Some(GradSync::EveryMicroBatch);
        }
    }
    // A pipeline layout is written for one pp x virtual_stages and one
    // depth: a choice that no longer fits it splits the layers evenly
    // again, rather than have a sweep refuse every value but one.
    let reshapes = [
        "parallel.pp",
        "parallel.virtual_stages",
        "parallel.schedule",
        "workload.layers",
    ];
    if reshapes.into_iter().any(is) && input.parallel.pipeline_layout.is_some() {
        let s = fill::filled(input);
        if let (Some(layout), Workload::Transformer(t)) = (&s.parallel.pipeline_layout, &s.workload)
        {
            let stages = s.parallel.pp.saturating_mul(s.parallel.virtual_stages);
            if layout.check(stages, t.layers).is_err() {
                input.parallel.pipeline_layout = None;
            }
        }
    }
}
