//! The tied embedding's gradient all-reduce between the first and last
//! pipeline stage (model.md section 4): where it exists, what it moves, when
//! it runs, and what it leaves alone (v1 links, untied Llama models).

use overlap_core::scenario::{Mode, Workload};
use overlap_core::timeline::{GpuLanes, Interval, OpKind, Phase};
use overlap_core::{presets, simulate, Axis, Scenario, ScenarioInput, Simulation};
use proptest::prelude::*;

fn scenario(json: &str) -> Scenario {
    ScenarioInput::from_json(json)
        .unwrap()
        .resolve()
        .unwrap_or_else(|e| panic!("{e} for {json}"))
}

fn transformer(s: &mut Scenario) -> &mut overlap_core::scenario::Transformer {
    match &mut s.workload {
        Workload::Transformer(t) => t,
        Workload::MatmulAllreduce(_) | Workload::Collective(_) => panic!("a transformer preset"),
    }
}

/// Every embedding all-reduce of the timeline, with the GPU whose lane
/// shows it and the lane's axis.
fn syncs(sim: &Simulation) -> Vec<(&GpuLanes, Axis, &Interval)> {
    let mut out = Vec::new();
    for g in &sim.timeline.gpus {
        for axis in Axis::ALL {
            for iv in &g.comm[axis.index()] {
                if iv.op == OpKind::EmbeddingAllReduce {
                    out.push((g, axis, iv));
                }
            }
        }
    }
    out
}

/// A small 3D-parallel model on one node of eight A100.
fn small(tied: bool, pp: u32, schedule: &str, v: u32, tax: Option<f64>) -> Option<Scenario> {
    let tp = 2;
    let dp = 8 / (tp * pp);
    let tax = tax.map_or(String::new(), |t| format!(r#","sm_tax":{t}"#));
    let json = format!(
        r#"{{"hardware":{{"preset":"dgx-a100","nodes":1}},
        "workload":{{"layers":8,"hidden":1024,"heads":16,"seq":512,"vocab":32000,"micro_batch":1,
          "global_batch":{},"recompute":"none","tied_embeddings":{tied}}},
        "parallel":{{"tp":{tp},"pp":{pp},"dp":{dp},"schedule":"{schedule}","virtual_stages":{v}}},
        "overlap":{{"tp":true,"pp":true,"dp":true}}{tax}}}"#,
        8 * dp
    );
    ScenarioInput::from_json(&json).unwrap().resolve().ok()
}

#[test]
fn the_all_reduce_exists_exactly_where_it_applies() {
    let schedules = [
        ("gpipe", 1, false),
        ("1f1b", 1, false),
        ("interleaved", 2, false),
        ("zb-1p", 1, false),
        ("zb-2p", 1, false),
        // V shapes: the first and last virtual stage are both on stage 0.
        ("zb-v", 2, true),
        ("dualpipe-v", 2, true),
    ];
    let mut applies = 0;
    let mut ran = 0;
    for tied in [true, false] {
        for pp in [1, 2, 4] {
            for (schedule, v, v_shape) in schedules {
                for tax in [None, Some(0.1)] {
                    let Some(s) = small(tied, pp, schedule, v, tax) else {
                        continue;
                    };
                    ran += 1;
                    let want = tied && pp > 1 && !v_shape && tax.is_none();
                    let sim = simulate(&s);
                    let found = syncs(&sim);
                    let what = format!("tied {tied}, pp {pp}, {schedule}, sm_tax {tax:?}");
                    if !want {
                        assert!(found.is_empty(), "{what}: {} all-reduces", found.len());
                        continue;
                    }
                    applies += 1;
                    // One all-reduce (per TP rank and replica, one each
                    // simulated), on the lanes of its two GPUs: the first
                    // stage's and the last's, on the DP lane.
                    let stages: Vec<u32> = found.iter().map(|(g, _, _)| g.stage).collect();
                    assert_eq!(stages, [0, pp - 1], "{what}");
                    assert_eq!(found[0].2.id, found[1].2.id, "{what}");
                    for (_, axis, iv) in &found {
                        assert_eq!(*axis, Axis::Dp, "{what}");
                        assert_eq!(iv.phase, Phase::Step, "{what}");
                    }
                    // Inference has no gradients.
                    let mut inference = s.clone();
                    transformer(&mut inference).mode = Mode::Inference;
                    assert!(syncs(&simulate(&inference)).is_empty(), "{what}");
                }
            }
        }
    }
    // pp 2 and 4, five schedules each, tied and without a tax.
    assert_eq!(applies, 10);
    assert!(ran >= 60, "{ran} scenarios ran");
}

#[test]
fn the_label_names_it() {
    assert_eq!(OpKind::EmbeddingAllReduce.label(), "embedding AllReduce");
    assert!(OpKind::EmbeddingAllReduce.is_comm());
}

#[test]
fn its_bytes_equal_the_hand_count() {
    // Didactic: vocab 51200 x hidden 4096 on 4 TP ranks, 2-byte gradients.
    // A ring of two sends its whole buffer once (2(n-1)/n = 1), and at this
    // size NCCL runs Simple, which adds nothing on the wire.
    let hand = 51200.0 * 4096.0 / 4.0 * 2.0;
    let mut s = presets::scenario("didactic").unwrap();
    let sim = simulate(&s);
    let found = syncs(&sim);
    assert_eq!(found.len(), 2);
    for (_, _, iv) in &found {
        assert!(
            (iv.bytes - hand).abs() <= hand * 1e-12,
            "{} vs {hand}",
            iv.bytes
        );
    }
    // 4-byte gradients: twice the bytes.
    s.overlap.grad_bytes = 4;
    let iv_bytes = syncs(&simulate(&s))[0].2.bytes;
    assert!((iv_bytes - 2.0 * hand).abs() <= hand * 1e-12, "{iv_bytes}");
    // A distributed optimizer: each replica sums the shard it owns, 1/dp.
    let mut sharded = presets::scenario("didactic").unwrap();
    sharded.parallel.dp_sharding = overlap_core::scenario::DpSharding::Optimizer;
    let iv_bytes = syncs(&simulate(&sharded))[0].2.bytes;
    assert!((iv_bytes - hand / 2.0).abs() <= hand * 1e-12, "{iv_bytes}");
    // One replica of CP 2: the shards span DP x CP (Megatron-LM's
    // `intra_dp_cp_group`), so each rank sums half again.
    let mut input = presets::find("didactic").unwrap().input();
    input.parallel.dp = Some(1);
    input.parallel.cp = Some(2);
    input.parallel.dp_sharding = Some(overlap_core::scenario::DpSharding::Optimizer);
    let s = input.resolve().unwrap_or_else(|e| panic!("{e}"));
    let iv_bytes = syncs(&simulate(&s))[0].2.bytes;
    assert!((iv_bytes - hand / 2.0).abs() <= hand * 1e-12, "{iv_bytes}");
}

/// Checks that each all-reduce starts after every backward op of its two
/// GPUs and their DP reductions, and that their optimizer steps wait on it.
fn check_order(id: &str, sim: &Simulation) {
    let found = syncs(sim);
    assert_eq!(found.len(), 2, "{id}");
    for (g, _, iv) in &found {
        let backward_end = g
            .compute
            .iter()
            .filter(|c| c.op != OpKind::Optimizer)
            .map(|c| c.end_s)
            .fold(0.0, f64::max);
        assert!(iv.start_s >= backward_end, "{id}: gpu {}", g.rank);
        for other in &g.comm[Axis::Dp.index()] {
            if other.op != OpKind::EmbeddingAllReduce {
                assert!(iv.start_s >= other.end_s, "{id}: gpu {}", g.rank);
            }
        }
        let optimizer = g
            .compute
            .iter()
            .find(|c| c.op == OpKind::Optimizer)
            .expect("an optimizer step");
        assert!(optimizer.start_s >= iv.end_s, "{id}: gpu {}", g.rank);
        // Nothing computes under it: its whole time is exposed.
        assert!(
            (iv.exposed_s - (iv.end_s - iv.start_s)).abs() <= 1e-12,
            "{id}: exposed {} of {}",
            iv.exposed_s,
            iv.end_s - iv.start_s
        );
    }
}

#[test]
fn it_runs_after_both_stages_last_backward_and_the_optimizer_waits() {
    for id in ["didactic", "contention", "zb-1.5b-24", "zb-1.5b-24-zb2p"] {
        check_order(id, &simulate(&presets::scenario(id).unwrap()));
    }
    // With overlap off the same order holds.
    let mut off = presets::scenario("didactic").unwrap();
    off.overlap.tp = false;
    off.overlap.pp = false;
    off.overlap.dp = false;
    check_order("didactic, overlap off", &simulate(&off));
}

#[test]
fn tied_costs_the_all_reduce_and_nothing_else() {
    // With pp > 1 tied and untied models hold the same matrices per stage,
    // so the all-reduce is the only difference between them; it waits on
    // the last compute, so the step grows by at least its length.
    let tied = presets::scenario("didactic").unwrap();
    let mut untied = tied.clone();
    transformer(&mut untied).tied_embeddings = false;
    let (a, b) = (simulate(&tied), simulate(&untied));
    assert!(syncs(&b).is_empty());
    let (_, _, iv) = syncs(&a)[0];
    let grown_ms = a.report.step_time_ms - b.report.step_time_ms;
    let length_ms = (iv.end_s - iv.start_s) * 1e3;
    println!("didactic: step +{grown_ms:.3} ms, all-reduce {length_ms:.3} ms");
    assert!(
        grown_ms >= length_ms * (1.0 - 1e-9),
        "{grown_ms} < {length_ms}"
    );
    assert_eq!(a.report.compute_ms, b.report.compute_ms);
}

#[test]
fn a_v1_link_runs_without_it() {
    // The first version's model (a given sm_tax) has no embedding
    // all-reduce: tied and untied give the same figures, bit for bit.
    for id in ["didactic", "contention", "zb-1.5b-24"] {
        let mut tied = presets::scenario(id).unwrap();
        tied.sm_tax = Some(0.15);
        let mut untied = tied.clone();
        transformer(&mut untied).tied_embeddings = false;
        let (a, b) = (simulate(&tied), simulate(&untied));
        assert!(syncs(&a).is_empty(), "{id}");
        assert_eq!(a.report, b.report, "{id}");
    }
    // The v1 link of mechanics.rs, its figures as the first version gave.
    let v1 = scenario(
        r#"{"hardware":{"preset":"dgx-a100","nodes":2},"parallel":{"tp":4,"pp":2,"dp":2},
            "overlap":{"tp":true,"pp":true,"dp":true,"tp_chunks":4},"sm_tax":0.15}"#,
    );
    let r = simulate(&v1).report;
    assert!((r.step_time_ms - 105.12980185503484).abs() <= 105.1 * 1e-12);
}

#[test]
fn llama_presets_are_unchanged() {
    // Untied embeddings never all-reduce: the Llama presets keep the step
    // they had before the all-reduce existed, and so does a Llama model
    // split over pipeline stages.
    for (id, step_ms) in [
        ("llama3-8b-fsdp", LLAMA3_8B_STEP_MS),
        ("llama3-70b-fsdp", LLAMA3_70B_STEP_MS),
    ] {
        let s = presets::scenario(id).unwrap();
        let sim = simulate(&s);
        assert!(syncs(&sim).is_empty(), "{id}");
        let got = sim.report.step_time_ms;
        assert!(
            (got - step_ms).abs() <= step_ms * 1e-9,
            "{id}: {got} vs {step_ms}"
        );
    }
    let mut split = presets::scenario("llama3-8b-fsdp").unwrap();
    split.parallel.dp_sharding = overlap_core::scenario::DpSharding::Optimizer;
    split.parallel.pp = 2;
    split.parallel.dp /= 2;
    assert!(syncs(&simulate(&split)).is_empty());
}

/// The Llama presets' steps, as simulated before the embedding all-reduce
/// was added (untied: it must not move them); re-pinned when the model took
/// NCCL 2.21.5's tuning tables (-2.1% and -1.7%), and again when the presets
/// took FlashAttention-2 and torchtitan's fp32 gradient reduction
/// (`reduce_dtype`): 8B 442.9 -> 309.9 ms (attention no longer moves s^2
/// scores through HBM), 70B 2767.5 -> 2939.8 ms (twice the reduce-scatter
/// bytes on the NIC outweigh the faster attention); and again when Async
/// TP's ring steps moved to copy engines and stopped holding SMs beside the
/// GEMM pieces: 8B 309.9 -> 309.2 ms, 70B 2939.78 -> 2939.75 ms; and again
/// when GEMMs took their generation's tiles, waves and fixed cost, and HBM
/// its achievable bandwidth: 8B 309.2 -> 331.6 ms, 70B 2939.75 -> 2938.86 ms.
// Moved by causal attention (issue 55): 331.5927399874835 and
// 2938.857111445703 before.
const LLAMA3_8B_STEP_MS: f64 = 298.1068519874808;
const LLAMA3_70B_STEP_MS: f64 = 2935.296273135158;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Windows hold with the all-reduce in the step (windows.rs runs the
    /// first version's model, which has none): on every axis the time
    /// under compute stays within the window, and the all-reduce itself,
    /// with no compute after it on its GPUs, hides nothing.
    #[test]
    fn windows_hold_with_the_all_reduce(
        pp in 2u32..=4, sched in 0usize..5, o_dp in any::<bool>(), o_pp in any::<bool>(),
        m in 1u32..=3, sharding in 0usize..3, nodes in 1u32..=2,
    ) {
        let (schedule, v) = [("gpipe", 1), ("1f1b", 1), ("interleaved", 2), ("zb-1p", 1), ("zb-2p", 1)][sched];
        let gpus = nodes * 8;
        let tp = 2;
        prop_assume!(gpus % (tp * pp) == 0);
        let dp = gpus / (tp * pp);
        let json = format!(
            r#"{{"hardware":{{"preset":"dgx-h100","nodes":{nodes}}},
            "workload":{{"layers":{},"hidden":512,"heads":8,"seq":256,"vocab":8000,"micro_batch":1,
              "global_batch":{},"recompute":"none"}},
            "parallel":{{"tp":{tp},"pp":{pp},"dp":{dp},"schedule":"{schedule}","virtual_stages":{v},
              "dp_sharding":"{}"}},
            "overlap":{{"tp":true,"pp":{o_pp},"dp":{o_dp},"bucket_mb":1}}}}"#,
            2 * pp * v,
            dp * m * pp,
            ["none", "optimizer", "full"][sharding],
        );
        let Ok(s) = ScenarioInput::from_json(&json).unwrap().resolve() else {
            return Ok(());
        };
        let sim = simulate(&s);
        let found = syncs(&sim);
        prop_assert_eq!(found.len(), 2, "{}", json);
        for (_, _, iv) in &found {
            prop_assert!((iv.exposed_s - (iv.end_s - iv.start_s)).abs() <= 1e-12, "{}", json);
        }
        let r = &sim.report;
        let tol = 1e-9 * r.step_time_ms;
        for axis in Axis::ALL {
            let a = r.axes.get(axis);
            let parts = a.under_compute_ms + a.exposed_ms + a.under_idle_ms;
            prop_assert!(a.under_idle_ms >= -tol && (parts - a.comm_ms).abs() <= tol, "{}: {:?}", json, a);
            prop_assert!(a.under_compute_ms <= a.window_ms + tol, "{}: {:?}", json, a);
        }
    }
}
