//! The sentence that says why the step changed (`overlap_view::why`),
//! against the two reports it is made from.

use overlap_core::{presets, simulate, Axis, Report, ScenarioInput};
use overlap_view::why::{changes, parts, sentence, Part};

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
    assert!(
        text.ends_with(&format!(
            "step +{}.",
            overlap_view::format::ms(after.step_time_ms - before.step_time_ms)
        )),
        "{text}"
    );
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
    let lost = overlap_view::format::ms(b.under_compute_ms - a.under_compute_ms);
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
