//! The sentence that says why the step changed (`overlap_view::why`),
//! against the two reports it is made from.

use overlap_core::{presets, simulate, Axis, Report, ScenarioInput};
use overlap_view::why::{changes, named, parts, sentence, Part, STEP_SHARE};

fn report(input: &ScenarioInput) -> Report {
    simulate(&input.resolve().expect("resolves")).report
}

fn preset(id: &str) -> ScenarioInput {
    presets::find(id).expect("preset").input()
}

/// The five parts are the step (model.md section 5), so their changes are
/// the step's change: the sentence's figures add up.
#[test]
fn the_parts_sum_to_the_step_and_their_changes_to_its_change() {
    for id in ["didactic", "contention", "one-queue", "coconet-inference"] {
        let mut input = preset(id);
        let before = report(&input);
        let sum: f64 = parts(&before).iter().map(|(_, ms)| ms).sum();
        assert!(
            (sum - before.step_time_ms).abs() <= 1e-6 * before.step_time_ms,
            "{id}: parts {sum} against step {}",
            before.step_time_ms
        );
        input.overlap.dp = Some(false);
        let after = report(&input);
        let moved: f64 = changes(&before, &after).iter().map(|(_, d)| d).sum();
        let step = after.step_time_ms - before.step_time_ms;
        assert!(
            (moved - step).abs() <= 1e-6 * before.step_time_ms,
            "{id}: {moved} against {step}"
        );
    }
}

#[test]
fn dp_overlap_off_is_blamed_on_dp_exposed() {
    let mut input = preset("didactic");
    let before = report(&input);
    input.overlap.dp = Some(false);
    let after = report(&input);
    let text = sentence(&before, &after, Some("DP overlap off")).expect("the step moved");
    let (part, delta) = changes(&before, &after)[0];
    assert_eq!(part, Part::Exposed(Axis::Dp), "{text}");
    assert!(delta > 0.0);
    assert!(text.starts_with("DP overlap off: DP exposed +"), "{text}");
    assert!(text.contains(": step +"), "{text}");
}

/// One hardware queue: DP's reduction keeps its window but runs less under
/// compute (start-order queues still let a collective launched ahead of a
/// kernel run beside it), and the sentence says how much less.
#[test]
fn one_queue_is_blamed_on_serialisation() {
    let mut input = preset("one-queue");
    input.hardware.max_connections = Some(8);
    let before = report(&input);
    input.hardware.max_connections = Some(1);
    let after = report(&input);
    let text = sentence(&before, &after, None).expect("the step moved");
    assert!(after.step_time_ms > before.step_time_ms, "{text}");
    assert!(text.contains("DP exposed +"), "{text}");
    let (b, a) = (before.axes.get(Axis::Dp), after.axes.get(Axis::Dp));
    // In the sentence's unit, that of its largest figure (the window here).
    let lost = overlap_view::format::ms_like(b.under_compute_ms - a.under_compute_ms, a.window_ms);
    assert!(
        a.under_compute_ms > 0.0 && a.window_ms > 0.5 * b.window_ms,
        "{text}"
    );
    assert!(
        text.contains("DP exposed +")
            && text.contains(&format!(
                "({lost} less of it runs under compute, though its window is "
            )),
        "{text}"
    );
}

/// Switching DP overlap on for 1T, where the gradient reductions slow the
/// compute beside them: the GPU that sets the step waits longer in the
/// bubble for the other stages' slower compute, while DP exposed falls
/// (issue 46: +336 ms of step for −71 ms of DP exposed).
#[test]
fn interference_is_named_when_compute_slows() {
    let mut input = preset("megatron-1t");
    input.overlap.dp = Some(false);
    let before = report(&input);
    input.overlap.dp = Some(true);
    let after = report(&input);
    let text = sentence(&before, &after, Some("DP overlap on")).expect("the step moved");
    let bubble_ms = |r: &Report| r.bubble_fraction * r.step_time_ms;
    let dp = after.axes[Axis::Dp].exposed_ms - before.axes[Axis::Dp].exposed_ms;
    assert!(bubble_ms(&after) > bubble_ms(&before) && dp < 0.0, "{text}");
    assert!(
        text.starts_with("DP overlap on: pipeline bubble +")
            && text.contains("slowed by the collectives now running under it"),
        "{text}"
    );
    assert!(text.contains(", while DP exposed −"), "{text}");
}

#[test]
fn an_unchanged_step_has_no_sentence() {
    let r = report(&preset("didactic"));
    assert_eq!(sentence(&r, &r, Some("nothing")), None);
}

/// Each axis's switch, set in a scenario that has the axis (its degree is
/// above one) and where the switch moves the step. A match with no catch-all arm:
/// a new axis fails to compile here until it has a scenario, so the
/// sentence cannot leave it out unnoticed.
fn switch_scenario(axis: Axis) -> (&'static str, fn(&mut ScenarioInput, bool)) {
    match axis {
        Axis::Tp => ("didactic", |i, on| i.overlap.tp = Some(on)),
        Axis::Pp => ("contention", |i, on| i.overlap.pp = Some(on)),
        Axis::Dp => ("didactic", |i, on| i.overlap.dp = Some(on)),
        Axis::Ep => ("moe-didactic", |i, on| i.overlap.ep = Some(on.into())),
        Axis::Cp => ("long-context-ring", |i, on| i.overlap.cp = Some(on)),
    }
}

/// Every unit a sentence writes its figures in.
fn units(text: &str) -> Vec<&'static str> {
    [" ms", " µs", " s"]
        .into_iter()
        .filter(|u| {
            text.match_indices(u).any(|(i, _)| {
                let next = text[i + u.len()..].chars().next();
                // " s" must end a figure, not start a word ("s.", "s,", "s ").
                next.is_none_or(|c| !c.is_alphabetic())
                    && text[..i].ends_with(|c: char| c.is_ascii_digit())
            })
        })
        .collect()
}

/// The sentence's shape holds whatever moved: no empty clause, no signed
/// zero, one unit, and every named part written.
fn assert_well_formed(text: &str) {
    assert!(
        !text.contains(": ,") && !text.contains(": :"),
        "a hole: {text}"
    );
    for zero in ["−0.0 ", "+0.0 ", "−0.00 ", "+0.00 ", "−0 ", "+0 "] {
        assert!(!text.contains(zero), "a signed zero: {text}");
    }
    assert_eq!(units(text).len(), 1, "one unit per sentence: {text}");
}

#[test]
fn every_axis_is_a_part_of_the_step() {
    let r = report(&preset("didactic"));
    let parts = parts(&r);
    for axis in Axis::ALL {
        let n = parts
            .iter()
            .filter(|(p, _)| *p == Part::Exposed(axis))
            .count();
        assert_eq!(n, 1, "{axis:?} is not one part of the step");
    }
}

/// Issue 58: "EP overlap on: , while compute +7.76 ms" and "CP overlap
/// off: : step +58.95 ms". Switching each axis's overlap, both ways, the
/// sentence names that axis's exposed time with its move.
#[test]
fn every_axis_switch_names_its_axis() {
    for axis in Axis::ALL {
        let (id, set) = switch_scenario(axis);
        for on in [false, true] {
            let mut input = preset(id);
            set(&mut input, !on);
            let before = report(&input);
            set(&mut input, on);
            let after = report(&input);
            let change = format!("{} overlap {}", axis.label(), if on { "on" } else { "off" });
            let text = sentence(&before, &after, Some(&change))
                .unwrap_or_else(|| panic!("{id}: {change} does not move the step"));
            assert!(
                text.contains(&format!("{} exposed ", axis.label())),
                "{id}: {text}"
            );
            assert_well_formed(&text);
        }
    }
}

/// Every axis that moved by more than 1% of the step is named, whatever
/// was changed: each axis's switch, and settings that move several axes.
#[test]
fn every_axis_moving_more_than_one_percent_of_the_step_is_named() {
    type Change = fn(&mut ScenarioInput);
    let cases: [(&str, Change); 4] = [
        ("moe-didactic", |i| i.overlap.dp = Some(false)),
        ("long-context-ring", |i| i.overlap.tp = Some(false)),
        ("contention", |i| i.hardware.nic_gbps = Some(50.0)),
        ("didactic", |i| i.overlap.tp_chunks = Some(2)),
    ];
    let mut checked = 0;
    for (id, change) in cases {
        let mut input = preset(id);
        let before = report(&input);
        change(&mut input);
        let after = report(&input);
        let Some(text) = sentence(&before, &after, None) else {
            continue;
        };
        assert_well_formed(&text);
        let step = before.step_time_ms.max(after.step_time_ms);
        let names = named(&before, &after);
        for axis in Axis::ALL {
            let d = after.axes[axis].exposed_ms - before.axes[axis].exposed_ms;
            if d.abs() > STEP_SHARE * step {
                checked += 1;
                assert!(
                    names.iter().any(|(p, _)| *p == Part::Exposed(axis)),
                    "{id}: {axis:?}"
                );
                assert!(
                    text.contains(&format!("{} exposed ", axis.label())),
                    "{id}: {text}"
                );
            }
        }
    }
    assert!(checked > 0, "no case moved an axis");
}
