//! A measured job's figures beside a simulated report's, figure by figure:
//! the measured slowest GPU (`OverRanks`, as the report states times on
//! its slowest GPU) against the report. The CLI's `import --scenario` and
//! the page's "measured vs simulated" view both list these rows.

use overlap_core::{Axis, Report};

use crate::classify::UNKNOWN_AXIS;
use crate::{AxisFigures, Imported};

/// What a compared figure measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A time, ms per step.
    Ms,
    /// A share, 0..1.
    Share,
}

/// What a row compares, for a reader choosing where they differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Figure {
    /// The step.
    Step,
    /// Compute busy time.
    Compute,
    /// Communication in flight.
    Comm,
    /// Communication exposed, all axes.
    Exposed,
    /// The hidden share of communication.
    Hidden,
    /// HTA's overlap.
    Overlap,
    /// One axis's exposed communication.
    AxisExposed(Axis),
    /// Exposed communication whose axis the trace does not say
    /// ("unknown"): measured only.
    OtherExposed(String),
}

/// One figure, measured and simulated (`None`: the side has none).
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    /// What it is.
    pub figure: Figure,
    /// Its label, with the unit for times ("step ms").
    pub label: String,
    /// Its unit.
    pub unit: Unit,
    /// The measured slowest GPU's.
    pub measured: Option<f64>,
    /// The report's.
    pub simulated: Option<f64>,
}

/// Every row, in reading order (times per step, of the measured slowest
/// GPU and the report's): step, compute, communication, exposed,
/// hidden, HTA's overlap, each axis's exposed time, and the exposed time
/// of the measured axes the report has none of ("unknown" among them).
pub fn compare(m: &Imported, r: &Report) -> Vec<Compared> {
    let o = &m.over_ranks;
    let sim_comm: f64 = Axis::ALL.iter().map(|&a| r.axes.get(a).comm_ms).sum();
    let sim_exposed: f64 = Axis::ALL.iter().map(|&a| r.axes.get(a).exposed_ms).sum();
    let sim_hidden = (sim_comm > 0.0).then(|| 1.0 - sim_exposed / sim_comm);
    // Communication summed over axes on both sides, as the report sums it
    // (two axes in flight at once count twice), and the hidden share of
    // that sum.
    let comm: f64 = o.axes.values().map(|a| a.comm_ms).sum();
    let hidden = (comm > 0.0).then(|| (1.0 - o.exposed_ms / comm).clamp(0.0, 1.0));
    let row = |figure, label: &str, unit, measured, simulated| Compared {
        figure,
        label: label.to_string(),
        unit,
        measured,
        simulated,
    };
    let mut out = vec![
        row(
            Figure::Step,
            "step ms",
            Unit::Ms,
            Some(o.step_ms),
            Some(r.step_time_ms),
        ),
        row(
            Figure::Compute,
            "compute ms",
            Unit::Ms,
            Some(o.compute_ms),
            Some(r.compute_ms),
        ),
        row(
            Figure::Comm,
            "comm ms",
            Unit::Ms,
            Some(comm),
            Some(sim_comm),
        ),
        row(
            Figure::Exposed,
            "exposed ms",
            Unit::Ms,
            Some(o.exposed_ms),
            Some(sim_exposed),
        ),
        row(Figure::Hidden, "hidden", Unit::Share, hidden, sim_hidden),
        row(
            Figure::Overlap,
            "HTA overlap",
            Unit::Share,
            Some(o.overlap),
            Some(r.hta_overlap),
        ),
    ];
    let none = AxisFigures::default();
    // The axes the report has (EP with experts, CP with cp > 1) and any
    // the trace measured.
    let measured_axis = |axis: Axis| o.axes.get(axis.name()).is_some_and(|a| a.comm_ms > 0.0);
    for axis in Axis::ALL
        .into_iter()
        .filter(|&a| r.axes.has(a) || measured_axis(a))
    {
        out.push(row(
            Figure::AxisExposed(axis),
            &format!("{} exposed ms", axis.label()),
            Unit::Ms,
            Some(o.axes.get(axis.name()).unwrap_or(&none).exposed_ms),
            Some(r.axes.get(axis).exposed_ms),
        ));
    }
    for (key, a) in &o.axes {
        if a.exposed_ms > 0.0 && !Axis::ALL.iter().any(|x| x.name() == key) {
            let label = if key == UNKNOWN_AXIS {
                "unknown exposed ms".to_string()
            } else {
                format!("{} exposed ms", key.to_ascii_uppercase())
            };
            out.push(row(
                Figure::OtherExposed(key.clone()),
                &label,
                Unit::Ms,
                Some(a.exposed_ms),
                None,
            ));
        }
    }
    out
}

/// Measured and simulated steps further apart than this factor are not
/// the same job's: the comparison is shown with a warning.
pub const MAX_STEP_RATIO: f64 = 3.0;

/// The warning when the measured slowest GPU's step and the simulated step
/// differ by more than [`MAX_STEP_RATIO`], if they do.
pub fn step_mismatch(m: &Imported, r: &Report) -> Option<String> {
    let (a, b) = (m.over_ranks.step_ms, r.step_time_ms);
    if !(a > 0.0 && b > 0.0) {
        return None;
    }
    let ratio = a.max(b) / a.min(b);
    (ratio > MAX_STEP_RATIO).then(|| {
        format!(
            "the measured step ({a:.3} ms, slowest GPU) and the simulated step ({b:.3} ms) differ {ratio:.1}-fold, more than {MAX_STEP_RATIO}-fold: the scenario is likely not this job's (its model, batch, parallelism or GPUs); compare its figures with care"
        )
    })
}
