//! Pipeline schedules on their own: each stage's program run with fixed F,
//! B and W chunk times and no communication gives the bubbles of
//! published.md section 6; every pass runs once; and in the full simulation
//! no op starts before what it depends on has finished.

mod common;
use common::refused;
use overlap_core::scenario::Schedule;
use overlap_core::schedule::{peak_in_flight, stage_program, Pass, Step};
use overlap_core::timeline::{Phase, NONE};
use overlap_core::{simulate_with, Fidelity, ScenarioInput};
use std::collections::HashMap;

/// Chunk times: forward, input gradient (B) and weight gradient (W).
#[derive(Clone, Copy)]
struct Times {
    f: f64,
    b: f64,
    w: f64,
}

/// Runs every stage's program in order, each op as soon as its stage is free
/// and its inputs exist: a forward after the previous virtual stage's
/// forward, a backward after the next virtual stage's backward (the last
/// one after its own forward), a W after its B. Returns the step time, or
/// `None` if the programs deadlock.
fn run_programs(schedule: Schedule, p: u32, m: u32, v: u32, t: Times) -> Option<f64> {
    let programs: Vec<Vec<Step>> = (0..p)
        .map(|s| stage_program(schedule, s, p, m, v, true))
        .collect();
    let last_vs = p * v - 1;
    // (pass kind, virtual stage, micro-batch) -> end time; kinds: 0 F, 1 B, 2 W.
    let mut end: HashMap<(u8, u32, u32), f64> = HashMap::new();
    let mut next = vec![0usize; p as usize];
    let mut free = vec![0.0f64; p as usize];
    loop {
        let mut progressed = false;
        for s in 0..p {
            let si = s as usize;
            while let Some(step) = programs[si].get(next[si]) {
                let vs = schedule.virtual_stage(s, step.chunk, p);
                let mb = step.micro_batch;
                let mbs = step.micro_batches(m);
                let needs: Vec<(u8, u32, u32)> = match step.pass {
                    Pass::Forward if vs == 0 => vec![],
                    Pass::Forward => vec![(0, vs - 1, mb)],
                    Pass::Backward | Pass::InputGrad if vs == last_vs => vec![(0, vs, mb)],
                    Pass::Backward | Pass::InputGrad => vec![(0, vs, mb), (1, vs + 1, mb)],
                    Pass::WeightGrad | Pass::HeldWeightGrads => {
                        mbs.clone().map(|k| (1, vs, k)).collect()
                    }
                };
                let Some(ready) = needs
                    .iter()
                    .map(|k| end.get(k).copied())
                    .try_fold(0.0f64, |a, e| e.map(|e| a.max(e)))
                else {
                    break;
                };
                let start = ready.max(free[si]);
                let (kind, dur, b_end) = match step.pass {
                    Pass::Forward => (0, t.f, None),
                    Pass::Backward => (2, t.b + t.w, Some(start + t.b + t.w)),
                    Pass::InputGrad => (1, t.b, None),
                    Pass::WeightGrad | Pass::HeldWeightGrads => (2, t.w * mbs.len() as f64, None),
                };
                if let Some(b_end) = b_end {
                    end.insert((1, vs, mb), b_end);
                }
                let e = start + dur;
                for k in mbs {
                    end.insert((kind, vs, k), e);
                }
                free[si] = e;
                next[si] += 1;
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    let done = (0..p as usize).all(|s| next[s] == programs[s].len());
    done.then(|| free.iter().copied().fold(0.0, f64::max))
}

/// Idle time of every stage: the step minus one stage's compute.
fn bubble(schedule: Schedule, p: u32, m: u32, v: u32, t: Times) -> f64 {
    let step = run_programs(schedule, p, m, v, t).expect("no deadlock");
    step - f64::from(m * v) * (t.f + t.b + t.w)
}

const TIMES: [Times; 4] = [
    Times {
        f: 1.0,
        b: 1.0,
        w: 1.0,
    },
    Times {
        f: 1.0,
        b: 1.2,
        w: 0.8,
    },
    Times {
        f: 1.3,
        b: 1.0,
        w: 0.7,
    },
    Times {
        f: 1.0,
        b: 1.5,
        w: 0.5,
    },
];

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() < 1e-9,
        "{what}: bubble {got}, formula {want}"
    );
}

// In published.md section 6 (the DualPipe README's notation) B is the whole
// backward of a chunk, here `b + w`.

#[test]
fn one_f_one_b_bubble_is_p_minus_1_times_f_plus_b() {
    for t in TIMES {
        for (p, m) in [(2, 4), (4, 8), (4, 13), (8, 24)] {
            let want = f64::from(p - 1) * (t.f + t.b + t.w);
            assert_close(bubble(Schedule::OneFOneB, p, m, 1, t), want, "1F1B");
            assert_close(bubble(Schedule::Gpipe, p, m, 1, t), want, "GPipe");
        }
    }
}

#[test]
fn zb_1p_bubble_is_p_minus_1_times_f_plus_b_minus_2w() {
    for t in TIMES {
        for (p, m) in [(2, 4), (4, 8), (4, 13), (6, 12), (8, 24)] {
            let whole_b = t.b + t.w;
            let want = f64::from(p - 1) * (t.f + whole_b - 2.0 * t.w);
            assert_close(bubble(Schedule::ZeroBubble1p, p, m, 1, t), want, "ZB-1p");
        }
    }
}

#[test]
fn zb_2p_bubble_is_the_first_forwards_alone_when_b_and_w_are_equal() {
    // ZB-H2 (Qi et al. 2024, figure 4) fills every bubble after the last
    // stage's first forward arrives; what is left is that wait, (p - 1)F.
    for t in [TIMES[0], TIMES[1], TIMES[2]] {
        for (p, m) in [(4, 12), (8, 24), (8, 64)] {
            let want = f64::from(p - 1) * t.f;
            assert_close(bubble(Schedule::ZeroBubble2p, p, m, 1, t), want, "ZB-2p");
        }
    }
}

#[test]
fn dualpipe_v_bubble_matches_its_formula_without_forward_backward_overlap() {
    // DualPipeV runs 2p chunks on p GPUs. In the README's formula
    // (PP/2 - 1)(F&B + B - 3W) with PP = 2p stages, F&B is a forward and a
    // backward run together on one GPU, overlapping their communication;
    // this simulator runs one compute stream, so the pair costs F + B and
    // the reference order gives (p - 1)(F + B - 2W): the bubble of ZB-1p on
    // chunks half as large. Exact where W is large enough to fill the
    // cool-down; not for every ratio (F 1, B 1.2, W 0.8, p 8: 10.2 against 9.8).
    for t in [TIMES[0], TIMES[2]] {
        for (p, m) in [(2, 4), (4, 8), (4, 12), (6, 15), (8, 16), (8, 24)] {
            let whole_b = t.b + t.w;
            let want = f64::from(p - 1) * (t.f + whole_b - 2.0 * t.w);
            assert_close(bubble(Schedule::DualPipeV, p, m, 2, t), want, "DualPipeV");
        }
    }
}

#[test]
fn zb_v_bubble_is_at_most_dualpipe_v_and_half_of_zb_1p() {
    for t in TIMES {
        for (p, m) in [(2, 4), (4, 8), (4, 12), (8, 16), (8, 24)] {
            let zbv = bubble(Schedule::ZeroBubbleV, p, m, 2, t);
            let dpv = bubble(Schedule::DualPipeV, p, m, 2, t);
            // ZB-1p on whole stages (two chunks' worth of F, B and W).
            let zb1p = f64::from(p - 1) * 2.0 * (t.f + t.b - t.w);
            assert!(zbv <= dpv + 1e-9, "ZB-V {zbv} above DualPipeV {dpv}");
            assert!(
                zbv <= zb1p / 2.0 + 1e-9,
                "ZB-V {zbv} above half of ZB-1p {zb1p}"
            );
        }
    }
}

#[test]
fn interleaved_bubble_is_one_f_one_b_over_v() {
    let t = TIMES[1];
    for (p, m, v) in [(4, 8, 2), (4, 12, 3), (2, 6, 2)] {
        let want = f64::from(p - 1) * (t.f + t.b + t.w);
        assert_close(
            bubble(Schedule::Interleaved, p, m, v, t),
            want,
            "interleaved",
        );
    }
}

const ALL: [(Schedule, u32); 7] = [
    (Schedule::Gpipe, 1),
    (Schedule::OneFOneB, 1),
    (Schedule::Interleaved, 2),
    (Schedule::ZeroBubble1p, 1),
    (Schedule::ZeroBubble2p, 1),
    (Schedule::ZeroBubbleV, 2),
    (Schedule::DualPipeV, 2),
];

#[test]
fn every_micro_batch_runs_f_b_and_w_once_per_chunk() {
    for (schedule, v) in ALL {
        for p in 1..=6 {
            for m in [2 * p, 2 * p + 1, 3 * p, 5 * p] {
                if schedule == Schedule::Interleaved && m % p != 0 {
                    continue;
                }
                for stage in 0..p {
                    let steps = stage_program(schedule, stage, p, m, v, true);
                    let mut f = HashMap::new();
                    let mut b = HashMap::new();
                    let mut w = HashMap::new();
                    for s in &steps {
                        assert!(s.micro_batch < m && s.chunk < v, "{schedule:?} {s:?}");
                        let counts: &mut [&mut HashMap<_, u32>] = match s.pass {
                            Pass::Forward => &mut [&mut f],
                            Pass::Backward => &mut [&mut b, &mut w],
                            Pass::InputGrad => &mut [&mut b],
                            Pass::WeightGrad | Pass::HeldWeightGrads => &mut [&mut w],
                        };
                        for mb in s.micro_batches(m) {
                            for c in counts.iter_mut() {
                                *c.entry((mb, s.chunk)).or_insert(0) += 1;
                            }
                        }
                    }
                    for map in [&f, &b, &w] {
                        assert_eq!(map.len() as u32, m * v, "{schedule:?} p {p} m {m}");
                        assert!(map.values().all(|&n| n == 1), "{schedule:?} p {p} m {m}");
                    }
                    // Within a stage, W never comes before its B nor B before its F.
                    let pos = |pass: Pass, key: (u32, u32)| {
                        steps.iter().position(|s| {
                            let same = s.pass == pass
                                || (s.pass == Pass::Backward && pass != Pass::Forward)
                                || (s.pass == Pass::HeldWeightGrads && pass == Pass::WeightGrad);
                            same && s.chunk == key.1 && s.micro_batches(m).contains(&key.0)
                        })
                    };
                    for &key in f.keys() {
                        let pf = pos(Pass::Forward, key).unwrap();
                        let pb = pos(Pass::InputGrad, key).unwrap();
                        let pw = pos(Pass::WeightGrad, key).unwrap();
                        assert!(pf < pb && pb <= pw, "{schedule:?} {key:?}");
                    }
                }
                assert!(
                    run_programs(schedule, p, m, v, TIMES[1]).is_some(),
                    "{schedule:?} p {p} m {m} deadlocks"
                );
            }
        }
    }
}

#[test]
fn activations_in_flight_follow_the_schedule() {
    let peak = |schedule, stage, p, m, v| {
        peak_in_flight(&stage_program(schedule, stage, p, m, v, true), v)
    };
    let (p, m) = (4, 16);
    for stage in 0..p {
        assert_eq!(
            peak(Schedule::OneFOneB, stage, p, m, 1),
            f64::from(p - stage)
        );
        assert_eq!(peak(Schedule::Gpipe, stage, p, m, 1), f64::from(m));
        // ZB-1p holds W back but never more than stage 0 of 1F1B.
        assert_eq!(peak(Schedule::ZeroBubble1p, stage, p, m, 1), f64::from(p));
        assert_eq!(
            peak(Schedule::ZeroBubble2p, stage, p, m, 1),
            f64::from(2 * p)
        );
    }
    // DualPipeV: PP + 1 chunks of activations with PP = 2p stages (README),
    // here in micro-batches of a whole GPU (two chunks).
    assert_eq!(
        peak(Schedule::DualPipeV, 0, p, m, 2),
        f64::from(2 * p + 1) / 2.0
    );
}

/// Every op of the simulated step after what it needs, on every GPU.
fn assert_dependencies_hold(json: &str) {
    let s = ScenarioInput::from_json(json).unwrap().resolve().unwrap();
    let sim = simulate_with(&s, Fidelity::Full);
    // Per (micro-batch, layer): end of its forward, start of its first
    // backward op, end of its last B op and start of its first W op.
    let mut fwd_end: HashMap<(u32, u32), f64> = HashMap::new();
    let mut bwd: Vec<(u32, u32, f64, f64, bool)> = Vec::new();
    for gpu in &sim.timeline.gpus {
        for iv in &gpu.compute {
            if iv.micro_batch == NONE || iv.layer == NONE {
                continue;
            }
            let key = (iv.micro_batch, iv.layer);
            match iv.phase {
                Phase::Forward => {
                    let e = fwd_end.entry(key).or_insert(0.0);
                    *e = e.max(iv.end_s);
                }
                Phase::Backward => {
                    let w = iv.op.is_weight_gradient();
                    bwd.push((key.0, key.1, iv.start_s, iv.end_s, w));
                }
                _ => {}
            }
        }
    }
    let eps = 1e-12;
    let mut b_end: HashMap<(u32, u32), f64> = HashMap::new();
    let mut first_b: HashMap<(u32, u32), f64> = HashMap::new();
    for &(mb, layer, start, end, w) in &bwd {
        let f = fwd_end[&(mb, layer)];
        assert!(
            start + eps >= f,
            "backward of mb {mb} layer {layer} before its forward"
        );
        if layer > 0 {
            let prev = fwd_end[&(mb, layer - 1)];
            assert!(
                f >= prev,
                "forward of layer {layer} before layer {}",
                layer - 1
            );
        }
        if !w {
            let e = b_end.entry((mb, layer)).or_insert(0.0);
            *e = e.max(end);
            let s = first_b.entry((mb, layer)).or_insert(f64::MAX);
            *s = s.min(start);
        }
    }
    for &(mb, layer, start, _, w) in &bwd {
        if w {
            // A W op follows the dgrad that produced its output gradient;
            // the MLP's W follows the MLP's dgrads, which come first.
            let first = first_b[&(mb, layer)];
            assert!(
                start + eps >= first,
                "W of mb {mb} layer {layer} before its B"
            );
        }
        if let Some(&after) = first_b.get(&(mb, layer + 1)) {
            let _ = after;
            let upper = b_end[&(mb, layer + 1)];
            let own_first = first_b[&(mb, layer)];
            assert!(
                own_first + eps >= upper,
                "B of mb {mb} layer {layer} before layer {} finished its B",
                layer + 1
            );
        }
    }
}

#[test]
fn the_simulated_step_never_runs_an_op_before_its_inputs() {
    for (schedule, v) in [
        ("zb-1p", 1),
        ("zb-2p", 1),
        ("zb-v", 2),
        ("dualpipe-v", 2),
        ("1f1b", 1),
    ] {
        for extra in ["", r#","sequence_parallel":true,"recompute":"selective""#] {
            let json = format!(
                r#"{{"hardware":{{"preset":"dgx-a100","nodes":2}},
                "workload":{{"layers":8,"hidden":1024,"heads":16,"seq":512,"micro_batch":1,"global_batch":16{extra}}},
                "parallel":{{"tp":2,"pp":4,"dp":2,"schedule":"{schedule}","virtual_stages":{v}}}}}"#
            );
            assert_dependencies_hold(&json);
        }
    }
}

#[test]
fn held_weight_gradients_run_layer_by_layer_under_the_dp_reduction() {
    // ZB-1p on 4 stages: the last stage holds 3 W back. Once it has no B
    // left they run layer by layer, each layer over the held micro-batches
    // (the reference implementation's WeightGradStore.clear), so the last
    // layer's gradient is final after a few W and its DP bucket is reduced
    // while the rest still compute.
    let json = r#"{"hardware":{"preset":"dgx-a100","nodes":2},
        "workload":{"layers":8,"hidden":1024,"heads":16,"seq":512,"micro_batch":1,"global_batch":16,"recompute":"none"},
        "parallel":{"tp":2,"pp":4,"dp":2,"schedule":"zb-1p"},
        "overlap":{"dp":true,"bucket_mb":1}}"#;
    let s = ScenarioInput::from_json(json).unwrap().resolve().unwrap();
    let sim = simulate_with(&s, Fidelity::Full);
    let gpu = sim
        .timeline
        .gpus
        .iter()
        .find(|g| g.stage == 3)
        .expect("a GPU of the last stage");
    let backward: Vec<_> = gpu
        .compute
        .iter()
        .filter(|iv| iv.phase == Phase::Backward && iv.layer != NONE)
        .collect();
    let last_b = backward
        .iter()
        .rposition(|iv| !iv.op.is_weight_gradient())
        .expect("the stage runs B");
    let held: Vec<(u32, u32)> = backward[last_b + 1..]
        .iter()
        .map(|iv| (iv.layer, iv.micro_batch))
        .collect();
    // Two W ops per layer and micro-batch (MLP, attention); layers 6 and 7
    // on the last stage; after the last B, the W of micro-batches 4 to 7
    // (the 3 held back and the one that would follow that B).
    let mut expected = Vec::new();
    for layer in [7, 6] {
        for mb in 4..8 {
            expected.extend([(layer, mb), (layer, mb)]);
        }
    }
    assert_eq!(held, expected, "held W after the last B, in order");
    let last_w_end = backward.last().unwrap().end_s;
    let first_dp = gpu.comm[overlap_core::Axis::Dp.index()]
        .iter()
        .map(|iv| iv.start_s)
        .fold(f64::INFINITY, f64::min);
    let first_layer_w_start = backward[last_b + 1 + 8].start_s;
    assert!(
        first_dp < last_w_end && first_dp <= first_layer_w_start + 1e-12,
        "the first DP bucket starts under the held W: at {first_dp}, the held W of layer 6 \
         from {first_layer_w_start} to {last_w_end}"
    );
}

fn names(e: &overlap_core::ScenarioError, field: &str, hint: &str) {
    assert!(
        e.errors
            .iter()
            .any(|f| f.field == field && f.message.contains(hint)),
        "expected {field} with \"{hint}\": {e:?}"
    );
}

#[test]
fn bad_schedule_combinations_name_the_field_and_what_is_valid() {
    let base = |parallel: &str, batch: u32| {
        format!(
            r#"{{"hardware":{{"preset":"dgx-a100","nodes":1}},
            "workload":{{"layers":24,"hidden":1024,"heads":16,"seq":512,"micro_batch":1,"global_batch":{batch}}},
            "parallel":{parallel}}}"#
        )
    };
    let e = refused(&base(
        r#"{"tp":1,"pp":8,"dp":1,"schedule":"zb-v","virtual_stages":1}"#,
        32,
    ));
    names(&e, "parallel.virtual_stages", "valid is 2");
    let e = refused(&base(
        r#"{"tp":1,"pp":8,"dp":1,"schedule":"zb-v","virtual_stages":3}"#,
        32,
    ));
    names(&e, "parallel.virtual_stages", "valid is 2");
    // PP 1 is no pipeline, not an odd one: it runs as 1F1B (issue 45).
    let s = overlap_core::parse_scenario(&base(
        r#"{"tp":8,"pp":1,"dp":1,"schedule":"dualpipe-v","virtual_stages":2}"#,
        32,
    ))
    .expect("no pipeline: 1F1B");
    assert_eq!(s.parallel.virtual_stages, 1);
    let e = refused(&base(
        r#"{"tp":1,"pp":8,"dp":1,"schedule":"dualpipe-v","virtual_stages":2}"#,
        15,
    ));
    names(
        &e,
        "workload.global_batch",
        "at least 2 x pp = 16 micro-batches",
    );
    let e = refused(&base(
        r#"{"tp":1,"pp":8,"dp":1,"schedule":"zb-1p","virtual_stages":3}"#,
        32,
    ));
    names(&e, "parallel.virtual_stages", "with \"zb-1p\" valid is 1");
    let e = refused(&base(r#"{"tp":1,"pp":8,"dp":1,"schedule":"zb-3p"}"#, 32));
    assert!(
        e.to_string().contains("zb-2p"),
        "an unknown schedule lists the valid ones: {e}"
    );
}

#[test]
fn share_links_carry_the_new_schedules() {
    use overlap_core::share_link::{decode, encode};
    for (schedule, v) in [("zb-1p", 1), ("zb-2p", 1), ("zb-v", 2), ("dualpipe-v", 2)] {
        let json = format!(
            r#"{{"workload":{{"global_batch":16}},"parallel":{{"schedule":"{schedule}","virtual_stages":{v}}}}}"#
        );
        let input = ScenarioInput::from_json(&json).unwrap();
        let scenario = input.resolve().unwrap();
        let link = encode(&input, None);
        assert!(link.contains(&format!("schedule={schedule}")), "{link}");
        let back = decode(&link, &[]);
        assert!(back.errors.is_empty(), "{link}: {:?}", back.errors);
        assert_eq!(back.input.resolve().unwrap(), scenario, "{link}");
    }
    let bad = decode("v=1&schedule=zb-9p", &[]);
    assert!(
        bad.errors.iter().any(|e| e.message.contains("dualpipe-v")),
        "{:?}",
        bad.errors
    );
}

#[test]
fn dualpipe_v_bubble_against_the_formula_of_published_md_section_6_is_a_known_gap() {
    // published.md section 6 (the DualPipe README): (PP/2 - 1)(F&B + B - 3W),
    // with B a whole backward chunk and F&B a forward and a backward chunk
    // of two micro-batches run at once, each hiding the other's
    // communication. PP counts DualPipe's ranks; DualPipeV is DualPipe cut
    // in half, so p GPUs stand for PP = 2p and the formula reads
    // (p - 1)(F&B + B - 3W) on the same chunks. This simulator has one
    // compute stream per GPU, so F&B costs F + B here; its reference order
    // of DualPipeV's phases then idles (p - 1)(F + B - 2W) (the test
    // above), below the formula by (p - 1) times the input-gradient chunk.
    // Kept as a visible gap, pinned per chunk times, not fitted.
    for (t, lo, hi) in [(TIMES[0], 0.49, 0.51), (TIMES[2], 0.61, 0.62)] {
        for (p, m) in [(4, 8), (6, 12), (8, 16)] {
            let whole_b = t.b + t.w;
            let f_and_b = t.f + whole_b;
            let formula = f64::from(p - 1) * (f_and_b + whole_b - 3.0 * t.w);
            let simulated = bubble(Schedule::DualPipeV, p, m, 2, t);
            let ratio = simulated / formula;
            println!(
                "DualPipeV p {p} m {m} (F {}, B {}, W {}): bubble {simulated:.2}, section 6 formula \
                 {formula:.2}, ratio {ratio:.3}",
                t.f, whole_b, t.w
            );
            assert!(
                (lo..=hi).contains(&ratio),
                "DualPipeV p {p}: simulated / formula {ratio:.3} left its known-gap band [{lo}, {hi}]: \
                 if it moved closer to 1, tighten the test"
            );
        }
    }
}

/// With PP 1 there is no pipeline: every schedule gives 1F1B's figures bit
/// for bit on llama3-70b-fsdp (issue 45: zb-1p took 3056.8 ms against
/// 2815.8, and zb-v showed PP traffic), and the page notes the schedule
/// and its virtual stages inert.
#[test]
fn with_pp_one_every_schedule_gives_one_f_one_b_s_figures() {
    use overlap_core::input::fields::FIELDS;
    let base = overlap_core::presets::find("llama3-70b-fsdp")
        .unwrap()
        .input();
    let s = base.resolve().unwrap();
    assert_eq!(s.parallel.pp, 1);
    let want = serde_json::to_string(&overlap_core::simulate_report(&s).unwrap().report).unwrap();
    for (schedule, vs) in [
        ("zb-1p", 1),
        ("zb-2p", 1),
        ("zb-v", 2),
        ("dualpipe-v", 2),
        ("gpipe", 1),
        ("interleaved", 2),
    ] {
        let mut v = serde_json::to_value(&base).unwrap();
        v["parallel"]["schedule"] = serde_json::json!(schedule);
        v["parallel"]["virtual_stages"] = serde_json::json!(vs);
        let input: overlap_core::ScenarioInput = serde_json::from_value(v).unwrap();
        let x = input
            .resolve()
            .unwrap_or_else(|e| panic!("{schedule}: {e}"));
        let r = overlap_core::simulate_report(&x).unwrap().report;
        assert_eq!(serde_json::to_string(&r).unwrap(), want, "{schedule}");
        assert_eq!(
            r.axes.get(overlap_core::Axis::Pp).comm_ms,
            0.0,
            "{schedule}"
        );
        for path in ["parallel.schedule", "parallel.virtual_stages"] {
            let f = FIELDS.iter().find(|f| f.path == path).unwrap();
            assert!((f.inert)(&x).is_some(), "{path} noted inert");
        }
    }
}

/// DeepSeek-V3's Table 2 (published.md section 9) at its PP 16: bubble,
/// parameters and activations of 1F1B, ZB1P and DualPipe, DualPipe run as
/// DualPipeV on PP/2 = 8 GPUs (DualPipe README). F&B, a forward and a
/// backward chunk run together, costs F + B on this simulator's one
/// compute stream (their all-to-alls hide under each other; their compute
/// does not), which leaves DualPipe's bubble short of the table's by
/// (PP/2 - 1) input-gradient chunks: the known gap of section 6, stated
/// here exactly.
#[test]
fn deepseek_v3_table_2_bubbles_parameters_and_activations() {
    let pp = 16;
    for t in [TIMES[0], TIMES[2]] {
        let (f, b, w) = (t.f, t.b + t.w, t.w);
        let m = 2 * pp;
        assert_close(
            bubble(Schedule::OneFOneB, pp, m, 1, t),
            f64::from(pp - 1) * (f + b),
            "1F1B",
        );
        assert_close(
            bubble(Schedule::ZeroBubble1p, pp, m, 1, t),
            f64::from(pp - 1) * (f + b - 2.0 * w),
            "ZB1P",
        );
        let f_and_b = f + b;
        let table = f64::from(pp / 2 - 1) * (f_and_b + b - 3.0 * w);
        assert_close(
            bubble(Schedule::DualPipeV, pp / 2, m, 2, t),
            table - f64::from(pp / 2 - 1) * t.b,
            "DualPipe",
        );
    }
    // Parameters: each DualPipeV GPU holds two of the PP chunks, twice what
    // a 1F1B or ZB1P stage of the same PP holds.
    let layer_params = |schedule: &str, stages: u32, v: u32| {
        let s = overlap_core::parse_scenario(&format!(
            r#"{{"hardware":{{"nodes":4}},"workload":{{"layers":32,"global_batch":64}},
            "parallel":{{"tp":2,"pp":{stages},"dp":{},"schedule":"{schedule}","virtual_stages":{v}}}}}"#,
            32 / (2 * stages)
        ))
        .unwrap();
        let overlap_core::scenario::Workload::Transformer(t) = &s.workload else {
            unreachable!()
        };
        let stage = &overlap_core::memory::stage_memory(&s, t)[1];
        stage.params - stage.embedding_params
    };
    let one = layer_params("1f1b", pp, 1);
    assert_eq!(layer_params("zb-1p", pp, 1), one);
    assert_eq!(layer_params("dualpipe-v", pp / 2, 2), 2.0 * one);
    // Activations: PP micro-batches for 1F1B and ZB1P, PP + 1 chunks for
    // DualPipe (half a GPU's micro-batch each), on the first GPU.
    let peak = |schedule, stages, v| {
        peak_in_flight(&stage_program(schedule, 0, stages, 4 * pp, v, true), v)
    };
    assert_eq!(peak(Schedule::OneFOneB, pp, 1), f64::from(pp));
    assert_eq!(peak(Schedule::ZeroBubble1p, pp, 1), f64::from(pp));
    assert_eq!(
        peak(Schedule::DualPipeV, pp / 2, 2),
        f64::from(pp + 1) / 2.0
    );
}
