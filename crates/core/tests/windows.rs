//! Windows and exposure (model.md 5 and 6): on any scenario and for every
//! axis, communication is its three parts (under compute, exposed, under
//! idle charged elsewhere), none negative, and the part under compute
//! (hidden) never exceeds the window, the compute that ran while the axis's
//! collectives might legally run. Windows are reported whether the overlap
//! switch is on or off.

use overlap_core::{gpu_steps, presets, simulate, Axis, Report, ScenarioInput};
use proptest::prelude::*;

mod common;
use common::small_scenario;

/// Rounding allowance: a part in a billion of the step.
fn tolerance_ms(r: &Report) -> f64 {
    1e-9 * r.step_time_ms.max(1e-6)
}

fn check(what: &str, r: &Report) {
    let tol = tolerance_ms(r);
    for axis in Axis::ALL {
        let a = r.axes.get(axis);
        let parts = [a.under_compute_ms, a.exposed_ms, a.under_idle_ms];
        assert!(
            parts.iter().all(|&x| x >= -tol)
                && (parts.iter().sum::<f64>() - a.comm_ms).abs() <= tol,
            "{what}: {} parts {parts:?} of {}",
            axis.label(),
            a.comm_ms
        );
        assert!(
            a.under_compute_ms <= a.window_ms + tol,
            "{what}: {} hides {} behind a window of {}",
            axis.label(),
            a.under_compute_ms,
            a.window_ms
        );
    }
}

/// Every simulated GPU, every axis: the time under compute never exceeds
/// the window, to a part in a billion of the step.
fn check_every_gpu(what: &str, (step_s, gpus): &(f64, Vec<overlap_core::GpuStep>)) {
    for g in gpus {
        for axis in Axis::ALL {
            let a = axis.index();
            assert!(
                g.under_compute_s[a] <= g.window_s[a] + 1e-9 * step_s,
                "{what}, rank {}: {} hides {} s behind a window of {} s",
                g.rank,
                axis.label(),
                g.under_compute_s[a],
                g.window_s[a]
            );
        }
    }
}

/// Scenarios with the axes and DP forms the small draw leaves out, on 8
/// GPUs of two DGX H100 with SMs and HBM modelled (the SM race included)
/// and 1 to 8 queues: a dense step with its DP gradients all-reduced,
/// reduce-scattered by the distributed optimizer (its parameter gathers
/// under the forward or after the optimizer) or sharded by FSDP; an MoE
/// step with its experts on an EP group; a step with context parallelism,
/// ring or all-gather.
fn wide() -> impl Strategy<Value = String> {
    (
        0usize..4,
        prop::sample::select(vec![1u32, 2, 3, 8]),
        any::<(bool, bool, bool)>(),
        prop::sample::select(vec!["none", "optimizer", "full"]),
        1u32..=3,
    )
        .prop_map(|(kind, queues, (on, param_gather, sp), sharding, m)| {
            let model = r#""layers":2,"hidden":512,"heads":8,"kv_heads":8,"seq":1024,"vocab":1000,"attention":"flash","micro_batch":1,"recompute":"none""#;
            let (workload, parallel, extra) = match kind {
                0 => (
                    format!(r#"{model},"global_batch":{},"sequence_parallel":{sp}"#, 4 * m),
                    format!(r#""tp":2,"pp":1,"dp":4,"dp_sharding":"{sharding}""#),
                    format!(r#","param_gather":{param_gather}"#),
                ),
                1 => (
                    format!(
                        r#"{model},"global_batch":{},"moe":{{"experts":8,"top_k":2,"expert_ffn_hidden":256}}"#,
                        8 * m
                    ),
                    r#""tp":1,"pp":1,"dp":8,"ep":8,"dp_sharding":"optimizer""#.to_string(),
                    format!(r#","ep":{on}"#),
                ),
                _ => (
                    format!(r#"{model},"global_batch":{}"#, 2 * m),
                    format!(
                        r#""tp":1,"cp":4,"pp":1,"dp":2,"cp_mode":"{}""#,
                        if kind == 2 { "ring" } else { "allgather" }
                    ),
                    format!(r#","cp":{on}"#),
                ),
            };
            format!(
                r#"{{"hardware":{{"preset":"dgx-h100","nodes":2,"gpus_per_node":4,"max_connections":{queues}}},
                "workload":{{{workload}}},"parallel":{{{parallel}}},
                "overlap":{{"tp":{on},"pp":{on},"dp":{on}{extra}}}}}"#
            )
        })
}

#[test]
fn presets_hide_no_more_than_their_windows() {
    for p in presets::PRESETS {
        if p.id.starts_with("megatron-1t") || p.id.contains("175b") {
            continue; // large: covered by their smaller siblings
        }
        let s = presets::scenario(p.id).unwrap();
        check(p.id, &simulate(&s).report);
        check_every_gpu(p.id, &gpu_steps(&s, false));
    }
}

/// The distributed optimizer's default (no `param_gather`): its parameter
/// gathers run after the optimizer step, and the next step's forward needs
/// them. Their window is the first forward's compute up to each bucket's
/// first layer, not the whole step (model.md 5): on `moe-didactic` it was
/// 404.35 ms of the 601.51 ms step.
#[test]
fn the_parameter_gathers_window_is_the_forward_not_the_step() {
    let s = presets::scenario("moe-didactic").unwrap();
    assert!(!s.overlap.param_gather);
    let r = simulate(&s).report;
    let dp = &r.axes[Axis::Dp];
    println!(
        "moe-didactic: DP window {} ms of a {} ms step",
        dp.window_ms, r.step_time_ms
    );
    assert!(dp.window_ms < 0.5 * r.step_time_ms, "{dp:?}");
    check("moe-didactic", &r);
}

#[test]
fn windows_are_reported_with_overlap_off() {
    // Every axis the didactic preset has (TP, PP and DP), and the ring
    // preset's CP (it has no pipeline).
    for (id, axes) in [
        ("didactic", Axis::ALL.to_vec()),
        ("long-context-ring", vec![Axis::Cp]),
    ] {
        let s = presets::scenario(id).unwrap().all_overlap_off();
        let r = simulate(&s).report;
        for axis in axes.into_iter().filter(|&a| s.has_axis(a)) {
            let a = r.axes.get(axis);
            assert!(
                a.window_ms > 0.0,
                "{id}: {} has no window with overlap off: {a:?}",
                axis.label()
            );
        }
    }
}

/// The check above is not implied by the other figures: on the contention
/// preset the DP reduction runs for most of its time while the reported
/// GPU stands idle charged to TP and the bubble, so communication minus
/// exposed time (what the windows were once checked against, and held by
/// construction) is well above the window, while the time under compute
/// is within it.
#[test]
fn time_under_idle_is_not_hidden_and_not_window() {
    let r = simulate(&presets::scenario("contention").unwrap()).report;
    check("contention", &r);
    let dp = &r.axes[Axis::Dp];
    assert!(
        dp.comm_ms - dp.exposed_ms > dp.window_ms * 1.5 && dp.under_idle_ms > 0.0,
        "{dp:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn hidden_time_never_exceeds_the_window(
        small in small_scenario::small(small_scenario::FIRST_SCHEDULES, 4, 6),
        tax in 0.0f64..0.9,
    ) {
        let json = small.json("", &format!(r#","sm_tax":{tax}"#));
        let Ok(s) = ScenarioInput::from_json(&json).unwrap().resolve() else {
            return Ok(());
        };
        check(&json, &simulate(&s).report);
    }

    #[test]
    fn hidden_time_never_exceeds_the_window_with_experts_context_and_sharding(json in wide()) {
        let Ok(s) = ScenarioInput::from_json(&json).unwrap().resolve() else {
            return Ok(());
        };
        check(&json, &simulate(&s).report);
        check_every_gpu(&json, &gpu_steps(&s, false));
    }
}
