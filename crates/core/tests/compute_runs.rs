//! Compute runs in the fast engine: ops of a GPU with no collective in flight
//! that follow one another alone are timed with one event per run, not one
//! or two per op, and give the op-by-op figures (`fast_engine` compares the
//! two engines on every axis and schedule; this checks the saving itself).

use overlap_core::{simulate, simulate_plain, Fidelity, Scenario, ScenarioInput};

fn scenario(json: &str) -> Scenario {
    ScenarioInput::from_json(json).unwrap().resolve().unwrap()
}

/// One GPU, no collective at all: its stream is one chain of ops.
const LONE_GPU: &str = r#"{"hardware":{"nodes":1,"gpus_per_node":1},
    "workload":{"layers":8,"hidden":1024,"heads":8,"seq":512,"global_batch":4},
    "parallel":{"tp":1,"pp":1,"dp":1}}"#;

/// Most ops the engine plans as one run (`sim/engine/compute_run.rs`).
const MAX_RUN_OPS: usize = 256;

#[test]
fn a_lone_gpu_runs_its_step_as_runs_of_ops() {
    let s = scenario(LONE_GPU);
    let fast = simulate(&s);
    let plain = simulate_plain(&s, Fidelity::Reduced);
    let ops: usize = fast.timeline.gpus.iter().map(|g| g.compute.len()).sum();
    assert!(ops > MAX_RUN_OPS, "{ops} ops: too few to need several runs");
    // Both runs (scenario and baseline) counted: one event per run.
    let runs = 2 * ops.div_ceil(MAX_RUN_OPS) as u64;
    assert_eq!(
        fast.events, runs,
        "{ops} ops, plain engine {} events",
        plain.events
    );
    assert!(plain.events >= 2 * ops as u64);
    // Summed in the op-by-op order: equal bit for bit, not only to 1e-9.
    assert_eq!(fast.report.step_time_ms, plain.report.step_time_ms);
    for (f, p) in fast.timeline.gpus.iter().zip(&plain.timeline.gpus) {
        assert_eq!(f.compute.len(), p.compute.len());
        for (a, b) in f.compute.iter().zip(&p.compute) {
            assert_eq!((a.start_s, a.end_s), (b.start_s, b.end_s), "{a:?}");
        }
    }
}

/// Two pipeline stages with asynchronous sends: a send starts when its
/// sender's op ends, and its receiver (a member of it) is often in the
/// middle of a run of its own then.
const SENDS_DURING_RUNS: &str = r#"{"hardware":{"nodes":1,"gpus_per_node":2},
    "workload":{"layers":8,"hidden":1024,"heads":8,"seq":512,"global_batch":8},
    "parallel":{"tp":1,"pp":2,"dp":1,"schedule":"1f1b"},
    "overlap":{"pp":true}}"#;

#[test]
fn a_run_split_by_a_collective_gives_the_op_by_op_times() {
    let s = scenario(SENDS_DURING_RUNS);
    let fast = simulate(&s);
    let plain = simulate_plain(&s, Fidelity::Reduced);
    let step_s = plain.timeline.step_time_s;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * step_s;
    assert!(close(fast.timeline.step_time_s, step_s));
    let gpus = &fast.timeline.gpus;
    for (f, p) in gpus.iter().zip(&plain.timeline.gpus) {
        assert_eq!(f.compute.len(), p.compute.len());
        for (a, b) in f.compute.iter().zip(&p.compute) {
            assert!(
                close(a.start_s, b.start_s) && close(a.end_s, b.end_s),
                "fast {a:?}\nplain {b:?}"
            );
        }
    }
    // The case this test is for: a send of one stage starts while an op of
    // the other stage runs.
    let split = gpus.iter().enumerate().any(|(i, sender)| {
        sender.comm.iter().flatten().any(|c| {
            gpus.iter().enumerate().any(|(j, other)| {
                i != j
                    && other
                        .compute
                        .iter()
                        .any(|op| op.start_s < c.start_s && c.start_s < op.end_s)
            })
        })
    });
    assert!(split, "no send starts during the other stage's compute");
    assert!(fast.events < plain.events);
}
