//! Carrying a steady state's sums from three short runs to the whole
//! step: each sum is affine in the micro-batch count past the pipeline's
//! fill, so two equal differences carry it; sums whose differences
//! disagree by more than the tolerance are not extrapolated.

use crate::output::periods::{ROUNDING_ULPS, TOLERANCE};
use crate::output::tally::Tally;

/// The smallest part of its scale a sum is measured against (see [`TOLERANCE`]).
pub const FLOOR: f64 = 1e-3;

/// The sums of three runs at `counts` carried to `micro_batches`, or `None`
/// when they are not affine there or the slowest GPU is not clear.
pub(crate) fn extrapolate_tally(
    runs: &[Tally; 3],
    counts: [u32; 3],
    micro_batches: u32,
) -> Option<Tally> {
    if !(runs[0].same_shape(&runs[1]) && runs[1].same_shape(&runs[2])) {
        return None;
    }
    let [a, b, c] = runs.each_ref().map(Tally::values);
    let units = units_beyond(counts, micro_batches);
    let values = a
        .iter()
        .zip(&b)
        .zip(&c)
        .map(|((&a, &b), &c)| extrapolate([a, b, c], units))
        .collect::<Option<Vec<f64>>>()?;
    let mut tally = runs[2].with_values(&values);
    tally.tie_ends(runs);
    tally
        .slowest_is_clear(TOLERANCE * (1.0 + units))
        .then_some(tally)
}

/// Units of micro-batches from the last count to `micro_batches`.
pub(crate) fn units_beyond(counts: [u32; 3], micro_batches: u32) -> f64 {
    let unit = counts[2] - counts[1];
    f64::from(micro_batches - counts[2]) / f64::from(unit)
}

/// One sum `(value, scale)` at three evenly spaced counts carried `units`
/// beyond the last, or `None` when its two differences disagree by more
/// than [`TOLERANCE`] allows.
pub(crate) fn extrapolate(
    [(v0, _), (v1, s1), (v2, s2)]: [(f64, f64); 3],
    units: f64,
) -> Option<f64> {
    let (d1, d2) = (v1 - v0, v2 - v1);
    // A sum the runs give equal up to the rounding of their times is the
    // same at every count (a per-GPU total of work done once per step): it
    // is carried as it is, not grown by its rounding.
    let rounding = ROUNDING_ULPS * f64::EPSILON * v2.abs().max(s2.abs());
    if d1.abs() <= rounding && d2.abs() <= rounding {
        return Some(v2);
    }
    // The slope over both differences: half the rounding of one.
    let value = v2 + (v2 - v0) / 2.0 * units;
    let scale = (s2 + (s2 - s1) * units).abs();
    let allowed = TOLERANCE * value.abs().max(FLOOR * scale);
    ((d2 - d1).abs() * (1.0 + units) <= allowed).then_some(value)
}
