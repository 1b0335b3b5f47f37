//! Sweeps (`overlap_core::sweep`, `overlap-lab sweep`): every row is the
//! figures `simulate` gives for the same scenario, and a value the scenario
//! refuses is a row with its message, in its place among the others.

use overlap_core::input::{companions, fields};
use overlap_core::sweep::{self, Candidate, Row, Sweep};
use overlap_core::{presets, simulate, simulate_report, Axis};
use serde_json::Value;

fn didactic() -> overlap_core::ScenarioInput {
    presets::find("didactic").unwrap().input()
}

/// The row of `value` against a fresh, separate simulation of the same
/// scenario: no state carried from one point to the next may change it.
fn check_row(row: &Row, input: &overlap_core::ScenarioInput, path: &str) {
    let mut changed = input.clone();
    (fields::field(path).set)(&mut changed, Some(row.value())).unwrap();
    // As the page's control and the sweep set it: with its companions.
    companions::follow(fields::field(path), &mut changed);
    let s = changed.resolve().unwrap();
    let r = simulate_report(&s).unwrap().report;
    let p = row.point().unwrap_or_else(|| panic!("{row:?} refused"));
    assert_eq!(p.step_time_ms, r.step_time_ms, "{path}={:?}", row.value());
    assert_eq!(p.baseline_ms, r.baseline_ms);
    assert_eq!(p.speedup, r.speedup);
    assert_eq!(p.compute_ms, r.compute_ms);
    assert_eq!(p.bubble_fraction, r.bubble_fraction);
    assert_eq!(p.memory_gb_total, r.memory_gb.total);
    assert_eq!(p.fits, r.memory_gb.fits);
    for a in Axis::ALL {
        assert_eq!(p.exposed(a), r.axes.get(a).exposed_ms, "{a:?}");
    }
}

#[test]
fn every_row_equals_simulate_of_the_same_scenario() {
    let input = didactic();
    let path = "overlap.tp_chunks";
    let values = sweep::values_from_list(fields::field(path), "1,2,4,16").unwrap();
    let rows = Sweep::new(input.clone(), fields::field(path)).rows(&values);
    assert_eq!(rows.len(), 4);
    for row in &rows {
        check_row(row, &input, path);
    }
    // The points differ: the field was set, not ignored.
    let steps: Vec<f64> = rows
        .iter()
        .map(|r| r.point().unwrap().step_time_ms)
        .collect();
    assert!(steps[0] != steps[1] && steps[1] != steps[3], "{steps:?}");
    // And `simulate` with its timeline gives the same report.
    let mut changed = input.clone();
    (fields::field(path).set)(&mut changed, Some(&Value::from(2))).unwrap();
    let full = simulate(&changed.resolve().unwrap()).report;
    assert_eq!(rows[1].point().unwrap().step_time_ms, full.step_time_ms);
    assert_eq!(rows[1].point().unwrap().baseline_ms, full.baseline_ms);
}

#[test]
fn an_enum_field_sweeps_its_choices_and_each_row_is_its_scenario() {
    let input = didactic();
    let path = "parallel.schedule";
    let values: Vec<Candidate> = sweep::slider_values(fields::field(path))
        .into_iter()
        .map(Candidate::Value)
        .collect();
    let rows = Sweep::new(input.clone(), fields::field(path)).rows(&values);
    assert_eq!(rows.len(), fields::field(path).choices().len());
    for row in rows.iter().filter(|r| r.point().is_some()) {
        check_row(row, &input, path);
    }
    // A switch too.
    let rows = Sweep::new(input.clone(), fields::field("overlap.dp")).rows(
        &sweep::slider_values(fields::field("overlap.dp"))
            .into_iter()
            .map(Candidate::Value)
            .collect::<Vec<_>>(),
    );
    assert_eq!(rows.len(), 2);
    for row in &rows {
        check_row(row, &input, "overlap.dp");
    }
}

/// Issue 58: the schedule sweep refused the V schedules the control
/// accepts. Every choice the control offers is a row, the V schedules
/// simulated with the second virtual stage the control sets with them.
#[test]
fn a_schedule_sweep_runs_every_schedule_the_control_accepts() {
    let input = didactic();
    let f = fields::field("parallel.schedule");
    let values: Vec<Candidate> = sweep::slider_values(f)
        .into_iter()
        .map(Candidate::Value)
        .collect();
    let names: Vec<&str> = f.choices().iter().map(|c| c.name).collect();
    let rows = Sweep::new(input.clone(), f).rows(&values);
    let listed: Vec<&str> = rows.iter().map(|r| r.value().as_str().unwrap()).collect();
    assert_eq!(listed, names, "every choice, in the control's order");
    for v in ["zb-v", "dualpipe-v"] {
        let row = rows.iter().find(|r| r.value() == v).unwrap();
        assert!(row.point().is_some(), "{v} refused: {row:?}");
        check_row(row, &input, "parallel.schedule");
    }
}

/// TP chunks sweep the powers of two by default, where the chunks divide
/// the sequence evenly and the step is shortest (issue 58).
#[test]
fn tp_chunks_default_to_powers_of_two() {
    let values = sweep::slider_values(fields::field("overlap.tp_chunks"));
    let powers: Vec<Value> = [1u32, 2, 4, 8, 16, 32, 64].map(Value::from).to_vec();
    assert_eq!(values, powers);
}

#[test]
fn refused_values_are_rows_in_their_place() {
    let input = didactic();
    let f = fields::field("parallel.tp");
    // 3 divides nothing, 0 is out of range, "x" is not a number, 4 is didactic's own.
    let values = sweep::values_from_list(f, "3,0,x,4").unwrap();
    let rows = Sweep::new(input.clone(), f).rows(&values);
    assert_eq!(rows.len(), 4);
    let error = |i: usize| match &rows[i] {
        Row::Refused { error, .. } => error.clone(),
        other => panic!("row {i} not refused: {other:?}"),
    };
    assert!(
        error(0).contains("parallel.tp") && error(0).contains("valid"),
        "{}",
        error(0)
    );
    assert!(
        error(1).contains("parallel.tp") && error(1).contains("valid"),
        "{}",
        error(1)
    );
    assert!(
        error(2).contains("parallel.tp") && error(2).contains("\"x\""),
        "{}",
        error(2)
    );
    assert_eq!(rows[2].value(), &Value::from("x"));
    check_row(&rows[3], &input, "parallel.tp");
    // The CSV keeps the refusal beside its value, the figures empty.
    let csv = sweep::csv(&rows);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[1].starts_with("3,,,"), "{}", lines[1]);
    assert!(
        lines[4].starts_with("4,") && lines[4].ends_with(",true,"),
        "{}",
        lines[4]
    );
    let columns = lines[0].split(',').count();
    assert_eq!(lines[4].split(',').count(), columns);
}

#[test]
fn a_bad_sweep_is_refused_with_the_field_named() {
    assert!(sweep::field("overlap.nope")
        .unwrap_err()
        .contains("overlap.nope"));
    let f = fields::field("overlap.tp_chunks");
    assert!(sweep::values_from_list(f, " , ")
        .unwrap_err()
        .contains("overlap.tp_chunks"));
    let many = vec!["1"; sweep::MAX_SWEEP_POINTS + 1].join(",");
    assert!(sweep::values_from_list(f, &many)
        .unwrap_err()
        .contains("at most"));
}
