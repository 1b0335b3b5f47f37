//! Sweeps: one field of a scenario set to each of a list of values, each
//! scenario simulated, and the report's headline figures kept as a row
//! (`overlap-lab sweep`, the page's sweep view; interface.md). A value the
//! scenario refuses is a row with the refusal, never the end of the sweep.
//!
//! The CLI and the page's worker both call [`Sweep::point`], so that a
//! curve in the page and a table on the command line are the same figures.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::input::fields::{self, Field, Kind};
use crate::model::axis::Axis;
use crate::{Report, ScenarioInput, Simulator};

/// The most values one sweep takes. A curve drawn on a page a few hundred
/// pixels wide has no use for more, and each value is a whole simulation
/// (megatron-1t takes a few hundred ms): a project choice, not a measurement.
pub const MAX_SWEEP_POINTS: usize = 256;

/// The values the page sweeps when none are chosen: at most this many over
/// the field's slider range. 32 is the benchmark curve (issue 43).
pub const SLIDER_POINTS: usize = 32;

/// One simulated value's headline figures (interface.md, `sweep --json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The field's value, as scenario JSON writes it.
    pub value: Value,
    /// The step, ms.
    pub step_time_ms: f64,
    /// The same scenario with every overlap off, ms.
    pub baseline_ms: f64,
    /// `baseline_ms / step_time_ms`.
    pub speedup: f64,
    /// The slowest GPU's busy compute time, ms.
    pub compute_ms: f64,
    /// Exposed communication per axis, ms, keyed by the axis's name.
    pub exposed_ms: BTreeMap<String, f64>,
    /// Fraction of the step the compute streams stand idle, 0..1.
    pub bubble_fraction: f64,
    /// Memory of the fullest GPU, GB.
    pub memory_gb_total: f64,
    /// Memory capacity per GPU, GB (for the plot's capacity line).
    pub memory_gb_capacity: f64,
    /// Whether the fullest GPU's memory fits its capacity.
    pub fits: bool,
}

impl Point {
    /// The row of `value` from the scenario's report.
    pub fn of(value: Value, r: &Report) -> Self {
        Self {
            value,
            step_time_ms: r.step_time_ms,
            baseline_ms: r.baseline_ms,
            speedup: r.speedup,
            compute_ms: r.compute_ms,
            // The axes the report has: EP with experts, CP with cp > 1.
            exposed_ms: Axis::ALL
                .into_iter()
                .filter(|&a| r.axes.has(a))
                .map(|a| (a.name().to_string(), r.axes.get(a).exposed_ms))
                .collect(),
            bubble_fraction: r.bubble_fraction,
            memory_gb_total: r.memory_gb.total,
            memory_gb_capacity: r.memory_gb.capacity,
            fits: r.memory_gb.fits,
        }
    }

    /// Exposed communication of one axis, ms (0 for an axis not reported).
    pub fn exposed(&self, axis: Axis) -> f64 {
        self.exposed_ms.get(axis.name()).copied().unwrap_or(0.0)
    }
}

/// One row: the value's figures, or why the scenario refused it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Row {
    /// Simulated.
    Point(Point),
    /// Refused, with the scenario's message (it names the field).
    Refused {
        /// The value as given.
        value: Value,
        /// The refusal.
        error: String,
    },
}

impl Row {
    /// The value the row is for.
    pub fn value(&self) -> &Value {
        match self {
            Row::Point(p) => &p.value,
            Row::Refused { value, .. } => value,
        }
    }

    /// The figures, unless refused.
    pub fn point(&self) -> Option<&Point> {
        match self {
            Row::Point(p) => Some(p),
            Row::Refused { .. } => None,
        }
    }
}

/// A value to sweep: parsed, or refused before any simulation (text that
/// is not of the field's kind).
#[derive(Clone, Debug, PartialEq)]
pub enum Candidate {
    /// A value of the field's type; the scenario may still refuse it.
    Value(Value),
    /// Text that is not a value of the field, with the reason.
    Unreadable {
        /// The text given.
        text: String,
        /// Why it is not a value of the field.
        error: String,
    },
}

/// A sweep of one field of one scenario.
pub struct Sweep {
    /// The field swept.
    pub field: &'static Field,
    /// The scenario the other fields come from.
    pub input: ScenarioInput,
    /// Reused from point to point: a field that leaves the all-off
    /// baseline unchanged (an overlap setting) simulates it once.
    simulator: Simulator,
}

/// The sweep as `sweep --json` writes it.
#[derive(Serialize)]
pub struct Table<'a> {
    /// The field's dotted path.
    pub field: &'static str,
    /// One row per value, in the order given.
    pub rows: &'a [Row],
}

/// The field at `path`, or a message naming the sweepable fields.
pub fn field(path: &str) -> Result<&'static Field, String> {
    fields::find(path).ok_or_else(|| {
        crate::scenario::clip_echoes(&format!(
            "--field {path:?}: not a scenario field; `overlap-lab fields` lists them (such as overlap.tp_chunks)"
        ))
    })
}

/// The values of a comma-separated list (`--values`, the link's `values=`),
/// each read as links write it ([`Field::parse_text`]): a name for an
/// enumerated field, 1 or 0 for a switch.
pub fn values_from_list(field: &Field, list: &str) -> Result<Vec<Candidate>, String> {
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if items.iter().all(|s| s.is_empty()) {
        return Err(format!(
            "values for {}: none given; valid is a comma-separated list such as {}",
            field.path,
            example(field)
        ));
    }
    if items.len() > MAX_SWEEP_POINTS {
        return Err(too_many(field, items.len()));
    }
    Ok(items
        .into_iter()
        .filter(|s| !s.is_empty())
        .map(|text| match field.parse_text(text) {
            Ok(v) => Candidate::Value(v),
            Err(e) => Candidate::Unreadable {
                text: text.to_string(),
                error: format!("{}: {e}", field.path),
            },
        })
        .collect())
}

fn example(field: &Field) -> String {
    match field.kind {
        Kind::Bool => "0,1".to_string(),
        Kind::Enum(c) | Kind::IntOf { choices: c, .. } | Kind::Switches { choices: c, .. } => {
            let names: Vec<&str> = c.iter().map(|c| c.name).collect();
            names.join(",")
        }
        _ => "1,2,4,8".to_string(),
    }
}

fn too_many(field: &Field, n: usize) -> String {
    format!(
        "values for {}: {n} given; a sweep takes at most {MAX_SWEEP_POINTS}",
        field.path
    )
}

/// The values of `MIN:MAX[:STEP]` for a number field: MIN, MIN+STEP, ...
/// up to MAX. STEP defaults to 1 for whole numbers and to the page
/// slider's step otherwise.
pub fn values_from_range(field: &Field, range: &str) -> Result<Vec<Candidate>, String> {
    let whole = match field.kind {
        Kind::Int { .. } => true,
        Kind::Real { .. } => false,
        _ => {
            return Err(format!(
                "--range for {}: not a number field; give its values with --values {}",
                field.path,
                example(field)
            ))
        }
    };
    let bad = || {
        crate::scenario::clip_echoes(&format!(
            "--range {range:?} for {}: valid is MIN:MAX or MIN:MAX:STEP, numbers with MIN <= MAX and STEP > 0",
            field.path
        ))
    };
    let parts: Vec<f64> = range
        .split(':')
        .map(|p| p.trim().parse::<f64>().ok().filter(|x| x.is_finite()))
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    let default_step = if whole { 1.0 } else { field.slider.2 };
    let (min, max, step) = match parts[..] {
        [min, max] => (min, max, default_step),
        [min, max, step] => (min, max, step),
        _ => return Err(bad()),
    };
    if min > max || step <= 0.0 || (whole && (min.fract() != 0.0 || step.fract() != 0.0)) {
        return Err(bad());
    }
    let count = ((max - min) / step + 1e-9).floor() + 1.0;
    if count > MAX_SWEEP_POINTS as f64 {
        return Err(too_many(field, count as usize));
    }
    Ok((0..count as usize)
        .map(|i| {
            let x = min + step * i as f64;
            Candidate::Value(number_value(x, whole))
        })
        .collect())
}

/// A number as the field's JSON holds it: whole numbers without ".0".
fn number_value(x: f64, whole: bool) -> Value {
    if whole && x >= 0.0 && x <= f64::from(u32::MAX) {
        Value::from(x.round() as u32)
    } else {
        // Rounded to 12 significant digits, so that 0.1 steps read 0.3, not 0.30000000000000004.
        let rounded: f64 = format!("{x:.12e}").parse().unwrap_or(x);
        Value::from(rounded)
    }
}

/// The values the page sweeps when none are chosen: every choice of an
/// enumerated field, both settings of a switch, and for a number at most
/// [`SLIDER_POINTS`] over its slider range (every step when they fit; the
/// powers of two for whole numbers from 1 to a power of two, such as chunk
/// counts, degrees and batch sizes, which divide evenly there and whose
/// best points are there (issue 58: TP chunks swept 1, 3, 5, ... and missed
/// 2, 4, 8); a geometric spread when the range spans three decades or
/// more, as message sizes do; else every k-th step from the start). Empty
/// for a field without a slider.
pub fn slider_values(field: &Field) -> Vec<Value> {
    match field.kind {
        Kind::Bool => vec![Value::Bool(false), Value::Bool(true)],
        Kind::Enum(c) => c.iter().map(|c| Value::from(c.name)).collect(),
        Kind::Switches { choices, .. } => choices
            .iter()
            .filter_map(|c| field.parse_text(c.name).ok())
            .collect(),
        // A layout is written for its own pp and layers: nothing to sweep.
        Kind::Layout => Vec::new(),
        Kind::IntOf { choices, .. } => choices
            .iter()
            .filter_map(|c| c.name.parse::<u32>().ok().map(Value::from))
            .collect(),
        Kind::Int { .. } | Kind::Real { .. } => {
            let (min, max, step) = field.slider;
            let whole = field.is_integer();
            if step <= 0.0 || step.is_nan() || max < min {
                return Vec::new();
            }
            let steps = ((max - min) / step).round() as usize + 1;
            let mut xs: Vec<f64> = if steps <= SLIDER_POINTS {
                (0..steps).map(|i| min + step * i as f64).collect()
            } else if whole && min == 1.0 && step == 1.0 && is_power_of_two(max) {
                std::iter::successors(Some(1.0), |x| Some(x * 2.0))
                    .take_while(|&x| x <= max)
                    .collect()
            } else if min > 0.0 && max / min >= 1000.0 {
                let ratio = (max / min).powf(1.0 / (SLIDER_POINTS - 1) as f64);
                (0..SLIDER_POINTS)
                    .map(|i| {
                        let x = min * ratio.powi(i as i32);
                        (x / step).round() * step
                    })
                    .collect()
            } else {
                // Every k-th step from the slider's start: evenly spaced.
                let k = steps.div_ceil(SLIDER_POINTS);
                (0..SLIDER_POINTS)
                    .map(|i| min + step * (k * i) as f64)
                    .filter(|&x| x <= max)
                    .collect()
            };
            xs.dedup();
            xs.into_iter().map(|x| number_value(x, whole)).collect()
        }
    }
}

/// Whether `x` is a whole power of two (1, 2, 4, ...).
fn is_power_of_two(x: f64) -> bool {
    x >= 1.0 && x <= f64::from(u32::MAX) && x.fract() == 0.0 && (x as u32).is_power_of_two()
}

impl Sweep {
    /// A sweep of `field` over scenarios that are `input` otherwise.
    pub fn new(input: ScenarioInput, field: &'static Field) -> Self {
        Self {
            field,
            input,
            simulator: Simulator::default(),
        }
    }

    /// The same sweep simulating on one thread (the page's worker has one).
    pub fn single_threaded(self) -> Self {
        Self {
            simulator: self.simulator.with_threads(1),
            ..self
        }
    }

    /// The scenario input with the field set to `value`, and the fields
    /// that change with it as the page's control changes them (a V
    /// schedule's second virtual stage): a sweep takes every value the
    /// control accepts, and what the scenario still refuses is a row.
    pub fn input_with(&self, value: &Value) -> Result<ScenarioInput, String> {
        let mut input = self.input.clone();
        (self.field.set)(&mut input, Some(value))
            .map_err(|e| format!("{}: {e}", self.field.path))?;
        crate::input::companions::follow(self.field, &mut input);
        Ok(input)
    }

    /// The row of one value: the scenario with it, simulated for its
    /// figures (as `simulate` does), or the scenario's refusal.
    pub fn point(&mut self, candidate: &Candidate) -> Row {
        let value = match candidate {
            Candidate::Value(v) => v.clone(),
            Candidate::Unreadable { text, error } => {
                return Row::Refused {
                    value: Value::from(text.as_str()),
                    error: error.clone(),
                }
            }
        };
        let figures = self
            .input_with(&value)
            .and_then(|i| i.resolve().map_err(|e| e.to_string()))
            .and_then(|s| {
                self.simulator
                    .simulate_report(&s)
                    .map_err(|e| e.to_string())
            });
        match figures {
            Ok(f) => Row::Point(Point::of(value, &f.report)),
            Err(error) => Row::Refused { value, error },
        }
    }

    /// Every row, in the order of `values`.
    pub fn rows(&mut self, values: &[Candidate]) -> Vec<Row> {
        values.iter().map(|v| self.point(v)).collect()
    }
}

/// One size of a bus-bandwidth curve, as nccl-tests prints it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BusPoint {
    /// The buffer, bytes.
    pub bytes: f64,
    /// The simulated call, us.
    pub time_us: f64,
    /// Algorithm bandwidth, GB/s.
    pub alg_gbps: f64,
    /// Bus bandwidth, GB/s (nccl-tests' definition).
    pub bus_gbps: f64,
    /// NCCL's algorithm for this size.
    pub algorithm: String,
    /// NCCL's protocol for this size.
    pub protocol: String,
}

/// nccl-tests' sizes: powers of two from 8 B to 4 GiB (`-b 8 -e 4G -f 2`).
pub fn bus_sizes() -> impl Iterator<Item = f64> {
    (3..=32).map(|p| (1u64 << p) as f64)
}

/// The bus-bandwidth curve of one collective over every GPU of `hardware`
/// (a scenario's hardware section), each size simulated as a
/// `workload.kind: "collective"` scenario (what `overlap-lab busbw` prints).
pub fn bus_curve(
    hardware: &crate::scenario::HardwareInput,
    collective: crate::scenario::CollectiveOp,
) -> Result<Vec<BusPoint>, String> {
    let mut simulator = Simulator::default();
    bus_sizes()
        .map(|bytes| {
            let mut input = ScenarioInput {
                hardware: hardware.clone(),
                ..ScenarioInput::default()
            };
            input.workload.kind = Some(crate::scenario::WorkloadKind::Collective);
            input.workload.collective = Some(collective);
            input.workload.bytes = Some(bytes);
            let s = input.resolve().map_err(|e| e.to_string())?;
            let r = simulator
                .simulate_report(&s)
                .map_err(|e| e.to_string())?
                .report;
            let c = r
                .collective
                .ok_or("a collective scenario reports its bandwidths")?;
            Ok(BusPoint {
                bytes,
                time_us: c.time_us,
                alg_gbps: c.alg_gbps,
                bus_gbps: c.bus_gbps,
                algorithm: c.algorithm,
                protocol: c.protocol,
            })
        })
        .collect()
}

/// The bytes of one TP collective call of a transformer scenario: the
/// [b, s, h] activation at 2 bytes a value (`layer_cost`'s
/// `activation_bytes`), split into `tp_chunks` pieces when TP overlap is on.
/// `None` without a TP group, or for the other workloads.
pub fn tp_call_bytes(s: &crate::Scenario) -> Option<f64> {
    let crate::scenario::Workload::Transformer(t) = &s.workload else {
        return None;
    };
    if s.parallel.tp <= 1 {
        return None;
    }
    let full = 2.0 * f64::from(t.micro_batch) * f64::from(t.seq) * f64::from(t.hidden);
    let chunks = if s.overlap.tp {
        s.overlap.tp_chunks.max(1)
    } else {
        1
    };
    Some(full / f64::from(chunks))
}

/// The rows as CSV: a header, then one line per value; a refused value has
/// its message in the last column and the figures empty.
pub fn csv(rows: &[Row]) -> String {
    let mut out = String::from("value,step_time_ms,baseline_ms,speedup,compute_ms");
    for a in Axis::ALL {
        out += &format!(",exposed_{}_ms", a.name());
    }
    out += ",bubble_fraction,memory_gb_total,fits,error\n";
    for row in rows {
        out += &csv_field(&Field::text(row.value()));
        match row {
            Row::Point(p) => {
                out += &format!(
                    ",{},{},{},{}",
                    p.step_time_ms, p.baseline_ms, p.speedup, p.compute_ms
                );
                for a in Axis::ALL {
                    out += &format!(",{}", p.exposed(a));
                }
                out += &format!(",{},{},{},\n", p.bubble_fraction, p.memory_gb_total, p.fits);
            }
            Row::Refused { error, .. } => {
                out += &",".repeat(4 + Axis::ALL.len() + 3);
                out += &format!(",{}\n", csv_field(error));
            }
        }
    }
    out
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_counts_its_steps() {
        let f = fields::field("overlap.tp_chunks");
        let v = values_from_range(f, "1:8:2").unwrap();
        let nums: Vec<Value> = v
            .into_iter()
            .map(|c| match c {
                Candidate::Value(v) => v,
                other => panic!("{other:?}"),
            })
            .collect();
        let expected: Vec<Value> = [1u32, 3, 5, 7].into_iter().map(Value::from).collect();
        assert_eq!(nums, expected);
        assert!(values_from_range(f, "8:1").is_err());
        assert!(values_from_range(f, "1:8:0").is_err());
        assert!(values_from_range(f, "1:100000")
            .unwrap_err()
            .contains("at most 256"));
        let r = values_from_range(fields::field("sm_tax"), "0:0.3:0.1").unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!(r[3], Candidate::Value(Value::from(0.3)));
        assert!(values_from_range(fields::field("parallel.schedule"), "1:2")
            .unwrap_err()
            .contains("--values"));
    }

    #[test]
    fn slider_values_cover_the_slider() {
        // Issue 58: the powers of two, where chunk counts divide evenly.
        let chunks = slider_values(fields::field("overlap.tp_chunks"));
        let powers: Vec<Value> = [1u32, 2, 4, 8, 16, 32, 64].map(Value::from).to_vec();
        assert_eq!(chunks, powers);
        let bytes = slider_values(fields::field("workload.bytes"));
        assert_eq!(bytes.len(), SLIDER_POINTS);
        // Geometric: the second value is a small message, not 128 MiB.
        assert!(bytes[1].as_f64().unwrap() < 1000.0, "{bytes:?}");
        let tp = slider_values(fields::field("parallel.tp"));
        assert_eq!(tp.len(), 16);
        assert_eq!(slider_values(fields::field("parallel.schedule")).len(), 7);
    }
}
