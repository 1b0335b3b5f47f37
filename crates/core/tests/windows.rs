//! Windows and exposure (model.md 5 and 6): on any scenario and for every
//! axis, exposed time never exceeds the axis's communication, and hidden
//! time (communication minus exposed) never exceeds its window. Windows are
//! reported whether the overlap switch is on or off.

use overlap_core::{presets, simulate, Axis, Report, ScenarioInput};
use proptest::prelude::*;

/// Rounding allowance: a part in a billion of the step.
fn tolerance_ms(r: &Report) -> f64 {
    1e-9 * r.step_time_ms.max(1e-6)
}

fn check(what: &str, r: &Report) {
    let tol = tolerance_ms(r);
    for axis in Axis::ALL {
        let a = r.axes.get(axis);
        assert!(
            a.exposed_ms <= a.comm_ms + tol,
            "{what}: {} exposed {} > comm {}",
            axis.label(),
            a.exposed_ms,
            a.comm_ms
        );
        assert!(
            a.comm_ms - a.exposed_ms <= a.window_ms + tol,
            "{what}: {} hides {} behind a window of {}",
            axis.label(),
            a.comm_ms - a.exposed_ms,
            a.window_ms
        );
    }
}

#[test]
fn presets_hide_no_more_than_their_windows() {
    for p in presets::PRESETS {
        if p.id.starts_with("megatron-1t") || p.id.contains("175b") {
            continue; // large: covered by their smaller siblings
        }
        let s = presets::scenario(p.id).unwrap();
        check(p.id, &simulate(&s).report);
    }
}

#[test]
fn windows_are_reported_with_overlap_off() {
    let mut s = presets::scenario("didactic").unwrap();
    s.overlap.tp = false;
    s.overlap.pp = false;
    s.overlap.dp = false;
    let r = simulate(&s).report;
    for axis in Axis::ALL {
        let a = r.axes.get(axis);
        println!(
            "{}: comm {:.3} ms, window {:.3} ms",
            axis.label(),
            a.comm_ms,
            a.window_ms
        );
        assert!(
            a.window_ms > 0.0,
            "{} has no window with overlap off",
            axis.label()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    #[test]
    fn hidden_time_never_exceeds_the_window(
        nodes in 1u32..=4, gpn in prop::sample::select(vec![1u32, 2, 4, 8]),
        tp_i in 0usize..4, pp in 1u32..=4, v in 1u32..=2,
        layers_per in 1u32..=2, mb in 1u32..=2, m in 1u32..=4,
        sched in 0usize..3, recompute in 0usize..3, sp in any::<bool>(), sg in any::<bool>(),
        o_tp in any::<bool>(), o_pp in any::<bool>(), o_dp in any::<bool>(),
        chunks in 1u32..=6, bucket in 1.0f64..200.0, tax in 0.0f64..0.9,
        inference in any::<bool>(), nic in prop::sample::select(vec![0.01f64, 1.0, 25.0]),
        queues in prop::sample::select(vec![1u32, 2, 8]),
        hw in prop::sample::select(vec!["dgx-a100", "dgx-h100"]),
    ) {
        let gpus = nodes * gpn;
        let tp = [1u32, 2, 4, 8][tp_i].min(gpn);
        prop_assume!(gpus % (tp * pp) == 0);
        let dp = gpus / (tp * pp);
        let schedule = ["gpipe", "1f1b", "interleaved"][sched];
        let v = if schedule == "interleaved" { v } else { 1 };
        let json = format!(
            r#"{{"hardware":{{"preset":"{hw}","nodes":{nodes},"gpus_per_node":{gpn},"nic_gbps":{nic},"max_connections":{queues}}},
            "workload":{{"layers":{},"hidden":512,"heads":8,"seq":256,"vocab":1000,"micro_batch":{mb},
              "global_batch":{},"recompute":"{}","sequence_parallel":{sp},"mode":"{}"}},
            "parallel":{{"tp":{tp},"pp":{pp},"dp":{dp},"schedule":"{schedule}","virtual_stages":{v},"scatter_gather":{sg}}},
            "overlap":{{"tp":{o_tp},"pp":{o_pp},"dp":{o_dp},"tp_chunks":{chunks},"bucket_mb":{bucket}}},"sm_tax":{tax}}}"#,
            layers_per * pp * v,
            mb * dp * m * pp,
            ["none", "selective", "full"][recompute],
            if inference { "inference" } else { "train" },
        );
        let Ok(s) = ScenarioInput::from_json(&json).unwrap().resolve() else {
            return Ok(());
        };
        check(&json, &simulate(&s).report);
    }
}
