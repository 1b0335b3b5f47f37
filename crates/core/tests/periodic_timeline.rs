//! A timeline made of one short run (`Simulator::simulate_periodic`): its
//! steady period repeated must draw the full simulation's timeline, bar
//! for bar and sample for sample, to the steady state's tolerance; its
//! figures must be the report-only figures exactly; and the largest
//! presets must be drawn that way.

use std::collections::HashMap;

use overlap_core::steady_state::marked_counts;
use overlap_core::timeline::{Interval, Timeline};
use overlap_core::{presets, simulate, simulate_report, Scenario, ScenarioInput, Simulator};
use proptest::prelude::*;

/// Times agree to this part of the step (the figures' bound,
/// `tests/steady_state.rs`).
const TOLERANCE: f64 = 1e-9;

fn close(a: f64, b: f64, scale: f64) -> bool {
    a == b || (a - b).abs() <= TOLERANCE * scale.max(a.abs()).max(b.abs())
}

/// `periodic` draws what `full` draws: the same bars on every lane in the
/// same order, their times and traffic within the tolerance, each op of
/// one one op of the other (ids map one to one), and the same link samples.
fn same_timeline(what: &str, periodic: &Timeline, full: &Timeline) {
    let step = full.step_time_s;
    assert!(
        close(periodic.step_time_s, step, step),
        "{what}: step {} against {step}",
        periodic.step_time_s
    );
    assert_eq!(periodic.gpus.len(), full.gpus.len(), "{what}: GPUs");
    let (mut to_full, mut to_periodic) = (HashMap::new(), HashMap::new());
    for (g, (p, f)) in periodic.gpus.iter().zip(&full.gpus).enumerate() {
        assert_eq!(
            (p.rank, p.stage, p.represents),
            (f.rank, f.stage, f.represents),
            "{what}: GPU {g}"
        );
        for (lane, (pl, fl)) in p.lanes().zip(f.lanes()).enumerate() {
            assert_eq!(pl.len(), fl.len(), "{what}: GPU {g} lane {lane}: bars");
            for (i, (a, b)) in pl.iter().zip(fl).enumerate() {
                let at = || format!("{what}: GPU {g} lane {lane} bar {i}: {a:?} against {b:?}");
                assert!(same_bar(a, b, step), "{}", at());
                assert_eq!(*to_full.entry(a.id).or_insert(b.id), b.id, "{}", at());
                assert_eq!(*to_periodic.entry(b.id).or_insert(a.id), a.id, "{}", at());
            }
        }
    }
    assert_eq!(periodic.links.len(), full.links.len(), "{what}: links");
    for (k, (p, f)) in periodic.links.iter().zip(&full.links).enumerate() {
        assert_eq!(
            p.samples.len(),
            f.samples.len(),
            "{what}: link {k}: samples"
        );
        for (a, b) in p.samples.iter().zip(&f.samples) {
            assert!(
                close(a.t_s, b.t_s, step)
                    && a.gbps.iter().zip(&b.gbps).all(|(x, y)| close(*x, *y, 0.0)),
                "{what}: link {k}: {a:?} against {b:?}"
            );
        }
    }
}

fn same_bar(a: &Interval, b: &Interval, step: f64) -> bool {
    let window = match (a.window, b.window) {
        (None, None) => true,
        (Some(x), Some(y)) => close(x.0, y.0, step) && close(x.1, y.1, step),
        _ => false,
    };
    window
        && (
            a.owner,
            a.op,
            a.phase,
            a.micro_batch,
            a.layer,
            a.chunk,
            a.kernel,
        ) == (
            b.owner,
            b.op,
            b.phase,
            b.micro_batch,
            b.layer,
            b.chunk,
            b.kernel,
        )
        && close(a.start_s, b.start_s, step)
        && close(a.end_s, b.end_s, step)
        && close(a.exposed_from_s, b.exposed_from_s, step)
        && close(a.exposed_s, b.exposed_s, step)
        && close(a.contention_s, b.contention_s, step)
        && close(a.bytes, b.bytes, 0.0)
        && close(a.achieved_gbps, b.achieved_gbps, 0.0)
        && close(a.flops, b.flops, 0.0)
}

/// Checks the periodic timeline of `s` against the full one; whether it
/// was made of one short run.
fn check(what: &str, s: &Scenario) -> bool {
    let periodic = Simulator::default().simulate_periodic(s);
    if periodic.periods_from.is_none() {
        return false;
    }
    let only = simulate_report(s).expect("within the budget");
    assert_eq!(
        serde_json::to_value(&periodic.report).unwrap(),
        serde_json::to_value(&only.report).unwrap(),
        "{what}: the figures with the timeline are not the report-only ones"
    );
    same_timeline(what, &periodic.timeline, &simulate(s).timeline);
    true
}

fn all_on(s: &Scenario) -> Scenario {
    let mut on = s.clone();
    on.overlap.tp = true;
    on.overlap.pp = true;
    on.overlap.dp = true;
    on
}

#[test]
fn repeated_periods_draw_the_full_timeline_on_the_presets() {
    let mut repeated = Vec::new();
    for p in presets::PRESETS {
        // 1T is drawn below, not simulated in full here (seconds in debug).
        if p.id == "megatron-1t" {
            continue;
        }
        let s = presets::scenario(p.id).unwrap();
        for (what, s) in [
            (p.id.to_string(), all_on(&s)),
            (format!("{} as set", p.id), s),
        ] {
            if check(&what, &s) {
                repeated.push(what);
            }
        }
    }
    println!("drawn from one short run: {repeated:?}");
    // Every step with a marked short run (145.6B, the ZB presets' 64
    // micro-batches) repeats it bar for bar, overlaps on or as set.
    for p in presets::PRESETS {
        let s = presets::scenario(p.id).unwrap();
        if p.id != "megatron-1t" && marked_counts(&s).is_some() {
            for what in [p.id.to_string(), format!("{} as set", p.id)] {
                assert!(repeated.contains(&what), "{what} was simulated in full");
            }
        }
    }
    assert!(repeated.len() >= 6, "{repeated:?}");
}

/// The page's slowest timeline: 1T (TP overlap on, as the page benchmark
/// switches it) drawn from 68 of its 512 micro-batches, bar for bar the
/// full simulation's, with the report-only figures.
#[test]
fn one_t_is_drawn_from_one_short_run() {
    let mut s = presets::scenario("megatron-1t").unwrap();
    s.overlap.tp = true;
    let periodic = Simulator::default().simulate_periodic(&s);
    let from = periodic.periods_from.expect("1T drawn from a short run");
    assert!(from < s.micro_batches() / 4, "from {from} micro-batches");
    assert!(periodic.timeline.interval_count() > 1_000_000);
    let only = simulate_report(&s).unwrap();
    assert_eq!(
        serde_json::to_value(&periodic.report).unwrap(),
        serde_json::to_value(&only.report).unwrap()
    );
    same_timeline(
        "megatron-1t, TP overlap on",
        &periodic.timeline,
        &simulate(&s).timeline,
    );
}

fn scenario(json: &str) -> Option<Scenario> {
    let input: ScenarioInput = serde_json::from_str(json).ok()?;
    input.resolve().ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn repeated_periods_draw_the_full_timeline(
        pp in 2u32..=4, dp in 1u32..=2, m in 20u32..=64, tp_chunks in 1u32..=2,
        o_tp in any::<bool>(), o_pp in any::<bool>(), o_dp in any::<bool>(),
        nodes in 1u32..=2, recompute in 0usize..3, sp in any::<bool>(),
    ) {
        let recompute = ["none", "selective", "full"][recompute];
        let tp = 8 * nodes / (pp * dp).min(8 * nodes);
        prop_assume!(tp >= 1 && tp * pp * dp == 8 * nodes);
        let json = format!(
            r#"{{"hardware":{{"preset":"dgx-a100","nodes":{nodes}}},
            "workload":{{"layers":{layers},"hidden":2048,"heads":16,"seq":2048,
              "micro_batch":1,"global_batch":{gb},"recompute":"{recompute}",
              "sequence_parallel":{sp}}},
            "parallel":{{"tp":{tp},"pp":{pp},"dp":{dp},"schedule":"1f1b"}},
            "overlap":{{"tp":{o_tp},"pp":{o_pp},"dp":{o_dp},"tp_chunks":{tp_chunks}}}}}"#,
            layers = 2 * pp,
            gb = m * dp,
            sp = sp && tp > 1,
        );
        let Some(s) = scenario(&json) else {
            return Ok(());
        };
        if !check(&json, &s) {
            println!("simulated in full: {json}");
        }
    }
}
