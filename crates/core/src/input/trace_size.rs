//! How large a trace `overlap-lab trace` writes, and the refusal of a step
//! whose trace would be larger, estimated before the step is simulated:
//! its bars (`workload::build::run_cost::Cost::bars`) at the bytes per bar of a small
//! run.

use crate::input::error::FieldError;
use crate::input::validate::{
    batch_unit, global_batch_refusal, whole_step_fits, with_micro_batches,
};
use crate::model::scenario::{Scenario, Workload};

/// The largest trace file `overlap-lab trace` writes, bytes (1 GB): past it
/// Perfetto's in-browser loader and HTA's pandas frames both struggle, and a
/// file that size is no longer something a person opens. The command says
/// which field shortens the step instead.
pub const MAX_TRACE_FILE_BYTES: u64 = 1_000_000_000;

/// How far over [`MAX_TRACE_FILE_BYTES`] a trace's estimate
/// from a small run ([`small_run_bytes_per_bar`]) must be for the step to
/// be refused before it is simulated: a step's mix of bars differs a little
/// from its small run's (the fill weighs more there), so a trace estimated
/// nearer the limit is built and measured instead.
pub const TRACE_ESTIMATE_MARGIN: f64 = 1.1;

/// The bytes per bar of the trace `trace_bytes` writes of the step run at
/// one unit of micro-batches (a fraction of the step), over its predicted
/// bars (`workload::build::run_cost::Cost::bars`): what [`trace_refusal`] scales the
/// step's bars by. `None` for a step whose timeline is refused
/// ([`crate::input::validate::timeline_refusal`] says why) or that is too long to predict.
pub fn small_run_bytes_per_bar(
    s: &Scenario,
    trace_bytes: impl Fn(&Scenario) -> u64,
) -> Option<f64> {
    let Workload::Transformer(_) = &s.workload else {
        return None;
    };
    if !whole_step_fits(s) {
        return None;
    }
    let small = with_micro_batches(s, batch_unit(s).min(s.micro_batches()));
    let bars = crate::workload::build::run_cost::run_cost_within(&small, u64::MAX)?.bars;
    Some(trace_bytes(&small) as f64 / bars.max(1) as f64)
}

/// Why `overlap-lab trace` does not write this step's trace: its size,
/// estimated as its bars (`workload::build::run_cost::Cost::bars`, predicted from
/// the small counting builds) at `bytes_per_bar` (measured on a small run,
/// [`small_run_bytes_per_bar`], before the step is simulated; or on the
/// step's own trace once built), is over
/// [`MAX_TRACE_FILE_BYTES`] times `margin`. Names
/// `workload.global_batch` and the largest value whose estimate is within
/// the limit by [`TRACE_ESTIMATE_MARGIN`] and whose timeline is drawn.
pub fn trace_refusal(s: &Scenario, bytes_per_bar: f64, margin: f64) -> Option<FieldError> {
    let bars = |x: &Scenario| {
        crate::workload::build::run_cost::run_cost_within(x, u64::MAX).map(|c| c.bars)
    };
    let estimate = |x: &Scenario| bars(x).map(|b| b as f64 * bytes_per_bar);
    let bytes = estimate(s)?;
    let limit = MAX_TRACE_FILE_BYTES as f64;
    if bytes <= limit * margin {
        return None;
    }
    let fits = |x: &Scenario| {
        estimate(x).is_some_and(|b| b <= limit / TRACE_ESTIMATE_MARGIN) && whole_step_fits(x)
    };
    let held = format!(
        "this step's trace would be about {:.2} GB ({} bars at about {:.0} bytes each), more than the \
         {:.0} GB overlap-lab trace writes",
        bytes / 1e9,
        bars(s)?,
        bytes_per_bar,
        limit / 1e9
    );
    Some(global_batch_refusal(s, &held, fits, "write"))
}
