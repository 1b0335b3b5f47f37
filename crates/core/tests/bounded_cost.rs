//! Bounded by construction: the validator predicts what a scenario costs
//! before it runs, refuses what exceeds the budget with the control to
//! change, and the engine never does more than it predicted.

use overlap_core::share_link::decode;
use overlap_core::workload::build::run_cost::cost;
use overlap_core::{parse_scenario, simulate, FieldError, Scenario, ScenarioInput};

/// The scenario runs to finite figures within its predicted cost, or it is
/// refused with a message naming a field. Either way, no hang, no abort.
fn finished_or_refused(input: ScenarioInput) -> Result<Scenario, FieldError> {
    match input.resolve() {
        Ok(s) => {
            let predicted = cost(&s);
            let sim = simulate(&s);
            assert!(sim.report.step_time_ms.is_finite() && sim.report.step_time_ms > 0.0);
            assert!(
                sim.events <= predicted.events,
                "{} > {predicted:?}",
                sim.events
            );
            assert!(
                sim.planned_events <= predicted.planned_events,
                "{} > {predicted:?}",
                sim.planned_events
            );
            Ok(s)
        }
        Err(e) => {
            let first = e
                .errors
                .into_iter()
                .next()
                .expect("a refusal names a field");
            assert!(!first.field.is_empty() && !first.message.is_empty());
            Err(first)
        }
    }
}

fn json(text: &str) -> ScenarioInput {
    ScenarioInput::from_json(text).unwrap()
}

fn link(query: &str) -> ScenarioInput {
    let d = decode(query, &[]);
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    d.input
}

/// Issue 8's `s.json`: 83,333 sends queued on one 1 MB/s NIC.
const QUEUED_SENDS: &str = r#"{"hardware":{"nodes":2,"gpus_per_node":1,"nic_gbps":0.001},"workload":{"mode":"inference","layers":2,"hidden":64,"heads":1,"seq":1,"vocab":1,"micro_batch":1,"global_batch":83333},"parallel":{"tp":1,"pp":2,"dp":1,"schedule":"gpipe"},"overlap":{"pp":true,"tp":false}}"#;

#[test]
fn queued_sends_on_a_slow_nic_finish_or_are_refused() {
    let _ = finished_or_refused(json(QUEUED_SENDS));
    for batch in ["1000", "4000", "16000"] {
        let _ = finished_or_refused(json(&QUEUED_SENDS.replace("83333", batch)));
    }
}

#[test]
fn the_same_scenario_as_a_link_finishes_or_is_refused() {
    for batch in ["83333", "4000"] {
        let _ = finished_or_refused(link(&format!(
            "?v=1&gpus_per_node=1&nic_gbps=0.001&mode=inference&layers=2&hidden=64&heads=1&seq=1&vocab=1&global_batch={batch}&tp=1&dp=1&schedule=gpipe&tp_overlap=0"
        )));
    }
}

#[test]
fn an_ordinary_looking_inference_link_finishes_or_is_refused() {
    let _ = finished_or_refused(link(
        "?v=1&nic_gbps=1&mode=inference&layers=2&global_batch=8000&schedule=gpipe",
    ));
}

#[test]
fn queued_sends_share_one_class_so_their_cost_grows_linearly() {
    // With F sends queued on one NIC the plain engine plans about F^2
    // events; the fast engine plans a bounded number per send.
    let per_send = |batch: u32| {
        let s = parse_scenario(&QUEUED_SENDS.replace("83333", &batch.to_string())).unwrap();
        simulate(&s).planned_events as f64 / f64::from(batch)
    };
    let (small, large) = (per_send(500), per_send(8000));
    assert!(large < small * 1.5, "{small} vs {large} events per send");
}

#[test]
fn one_t_with_every_overlap_at_four_chunks_is_accepted() {
    let mut s = overlap_core::presets::scenario("megatron-1t").unwrap();
    s.overlap.tp = true;
    s.overlap.pp = true;
    s.overlap.dp = true;
    s.overlap.tp_chunks = 4;
    let input = overlap_core::share_link::complete_input(&s);
    assert!(input.resolve().is_ok());
}

#[test]
fn over_budget_tp_chunks_blames_the_chunks_with_the_largest_that_fits() {
    // A long pipeline with many micro-batches: 64 chunks per GEMM overflow
    // the step's limit (its figures extrapolate from the steady state, so
    // the step itself is what is counted).
    let base = r#"{"hardware":{"nodes":16},"workload":{"layers":64,"hidden":1024,"heads":8,"seq":512,"global_batch":GB},
        "parallel":{"tp":8,"pp":16,"dp":1},"overlap":{"tp":true,"tp_chunks":CHUNKS}}"#;
    let make = |gb: u32, chunks: u32| {
        json(
            &base
                .replace("GB", &gb.to_string())
                .replace("CHUNKS", &chunks.to_string()),
        )
    };
    let e = make(20480, 64).resolve().unwrap_err();
    let first = &e.errors[0];
    assert_eq!(first.field, "overlap.tp_chunks", "{first}");
    let best: u32 = first
        .message
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("{first}"));
    assert!(make(20480, best).resolve().is_ok(), "{first}");
    assert!(make(20480, best + 1).resolve().is_err(), "{first}");
}

#[test]
fn over_budget_batch_blames_the_batch_with_the_largest_that_fits() {
    let base = r#"{"workload":{"layers":64,"global_batch":GB},"parallel":{"pp":2,"dp":2},"overlap":{"tp":false}}"#;
    let make = |gb: u64| json(&base.replace("GB", &gb.to_string()));
    let e = make(100_000_000).resolve().unwrap_err();
    let first = &e.errors[0];
    assert_eq!(first.field, "workload.global_batch", "{first}");
    let best: u64 = first.message.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(make(best).resolve().is_ok(), "{first}");
    // The next valid batch (one more micro-batch per replica) is refused.
    assert!(make(best + 2).resolve().is_err(), "{first}");
}

/// The page checks every field but the cost where the reader types
/// (`resolve_unbudgeted`) and leaves the cost to its worker: the two
/// resolve to the same scenario whenever the step fits, and only the
/// budget's refusal tells them apart.
#[test]
fn resolving_without_the_budget_differs_only_by_the_budget() {
    let mut checked = 0;
    for p in overlap_core::presets::PRESETS {
        let mut on = p.input();
        on.overlap.tp = Some(true);
        on.overlap.dp = Some(true);
        for input in [p.input(), on] {
            match (input.resolve(), input.resolve_unbudgeted()) {
                (Ok(full), Ok(unbudgeted)) => assert_eq!(full, unbudgeted, "{}", p.id),
                (Err(full), Err(unbudgeted)) => assert_eq!(full, unbudgeted, "{}", p.id),
                (full, unbudgeted) => panic!("{}: {full:?} against {unbudgeted:?}", p.id),
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 2 * overlap_core::presets::PRESETS.len());
    // Over the budget: refused in full, naming the batch; accepted without.
    let over = json(
        r#"{"workload":{"layers":64,"global_batch":100000000},"parallel":{"pp":2,"dp":2},"overlap":{"tp":false}}"#,
    );
    let e = over.resolve().unwrap_err();
    assert_eq!(e.errors[0].field, "workload.global_batch", "{e}");
    assert!(over.resolve_unbudgeted().is_ok());
    // As a link: decoded with the budget, the batch goes back to the
    // preset's with the budget's message; decoded as the page decodes it,
    // the link's batch stays for the worker to refuse when it runs it.
    let query = "?v=1&preset=megatron-1t&global_batch=99999996";
    let full = decode(query, &[]);
    assert_eq!(full.errors.len(), 1, "{:?}", full.errors);
    assert_eq!(full.errors[0].field, "global_batch", "{:?}", full.errors);
    assert_ne!(full.input.workload.global_batch, Some(99_999_996));
    let page =
        overlap_core::share_link::decode_resolving(query, &[], &ScenarioInput::resolve_unbudgeted);
    assert!(page.errors.is_empty(), "{:?}", page.errors);
    assert_eq!(page.input.workload.global_batch, Some(99_999_996));
    assert!(page.input.resolve().is_err());
    // Invalid for another reason: both refuse it alike.
    let bad = json(r#"{"parallel":{"tp":3}}"#);
    assert_eq!(
        bad.resolve().unwrap_err(),
        bad.resolve_unbudgeted().unwrap_err()
    );
}

mod random {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// Random valid scenarios, slow links and large batches included:
        /// accepted ones stay within the cost the validator predicted.
        #[test]
        fn the_engine_stays_within_the_predicted_cost(
            nodes in 1u32..=4, gpn in prop::sample::select(vec![1u32, 2, 4, 8]),
            tp_i in 0usize..4, pp in 1u32..=4, v in 1u32..=2,
            layers_per in 1u32..=2, m in prop::sample::select(vec![1u32, 3, 16, 200, 2000]),
            sched in 0usize..3, recompute in 0usize..3, sp in any::<bool>(), sg in any::<bool>(),
            o_tp in any::<bool>(), o_pp in any::<bool>(), o_dp in any::<bool>(),
            chunks in 1u32..=8, bucket in 0.1f64..200.0, tax in 0.0f64..0.9,
            inference in any::<bool>(), oversub in 1.0f64..8.0,
            nic in prop::sample::select(vec![0.001f64, 0.1, 25.0, 100_000.0]),
            nvlink in prop::sample::select(vec![0.001f64, 300.0]),
            latency in prop::sample::select(vec![0.0f64, 5.0, 10_000.0]),
            interference in 0usize..3, hbm in prop::sample::select(vec![0.01f64, 200.0, 2039.0]),
        ) {
            // v1 `sm_tax`, the modelled SMs and HBM (HBM from scarce to
            // ample), or free overlap.
            let tail = match interference {
                0 => format!(r#","sm_tax":{tax}"#),
                1 => String::new(),
                _ => r#","interference":"off""#.to_string(),
            };
            let gpus = nodes * gpn;
            let tp = [1u32, 2, 4, 8][tp_i].min(gpn);
            prop_assume!(gpus % (tp * pp) == 0);
            let dp = gpus / (tp * pp);
            let schedule = ["gpipe", "1f1b", "interleaved"][sched];
            let v = if schedule == "interleaved" { v } else { 1 };
            let text = format!(
                r#"{{"hardware":{{"nodes":{nodes},"gpus_per_node":{gpn},"oversubscription":{oversub},
                  "nic_gbps":{nic},"nvlink_gbps":{nvlink},"network_latency_us":{latency},"hbm_gbps":{hbm}}},
                "workload":{{"layers":{},"hidden":256,"heads":8,"seq":128,"vocab":1000,"micro_batch":1,
                  "global_batch":{},"recompute":"{}","sequence_parallel":{sp},"mode":"{}"}},
                "parallel":{{"tp":{tp},"pp":{pp},"dp":{dp},"schedule":"{schedule}","virtual_stages":{v},"scatter_gather":{sg}}},
                "overlap":{{"tp":{o_tp},"pp":{o_pp},"dp":{o_dp},"tp_chunks":{chunks},"bucket_mb":{bucket}}}{tail}}}"#,
                layers_per * pp * v,
                dp * m * pp,
                ["none", "selective", "full"][recompute],
                if inference { "inference" } else { "train" },
            );
            let _ = finished_or_refused(json(&text));
        }
    }
}

#[test]
fn a_step_far_over_budget_is_refused_without_building_it() {
    // One stage of 4096 layers with 64 chunks per GEMM: millions of ops in
    // a single micro-batch. Counting stops at the limit, so the refusal does
    // not build the step first.
    let e = json(
        r#"{"hardware":{"nodes":1},"workload":{"layers":4096,"hidden":4096,"heads":32,"seq":4096,
        "global_batch":100000000,"sequence_parallel":true,"recompute":"full"},
        "parallel":{"tp":8,"pp":1,"dp":1},"overlap":{"tp":true,"tp_chunks":64}}"#,
    )
    .resolve()
    .unwrap_err();
    let first = &e.errors[0];
    assert!(first.message.contains("limit of"), "{first}");
    assert!(
        [
            "overlap.tp_chunks",
            "overlap.tp",
            "workload.global_batch",
            "workload.layers"
        ]
        .contains(&first.field.as_str()),
        "{first}"
    );
}

/// Issue 45's F1: the budget check built the step to count it and
/// allocated 8 GB before refusing. In JSON and as a link, it is refused
/// naming a field, decided by arithmetic on the shape (`ops_floor`) before
/// any counting build could be made.
#[test]
fn issue_45_f1_is_refused_before_anything_is_built() {
    use overlap_core::workload::build::run_cost::{ops_floor, MAX_COUNTED_OPS};
    const F1: &str = r#"{"hardware":{"nodes":1024},"workload":{"layers":4096,"global_batch":8192},"parallel":{"tp":2,"pp":512,"dp":8,"schedule":"interleaved","virtual_stages":8},"overlap":{"pp_chunks":64}}"#;
    const F1_LINK: &str = "v=1&nodes=1024&layers=4096&global_batch=8192&tp=2&pp=512&dp=8&schedule=interleaved&virtual_stages=8&pp_chunks=64";
    const F2B_LINK: &str = "v=1&layers=4096&global_batch=100000000&tp_chunks=64";
    // The link names the field by its key, as the page shows it.
    let d = decode(F1_LINK, &[]);
    assert_eq!(d.errors[0].field, "pp", "{:?}", d.errors);
    assert!(
        d.errors[0].message.contains("too many to predict"),
        "{:?}",
        d.errors
    );
    {
        let input = json(F1);
        let e = finished_or_refused(input.clone()).expect_err("far over budget");
        assert_eq!(e.field, "parallel.pp", "{e}");
        // The smallest counting build of the shape (one interleaved unit of
        // pp micro-batches, one layer per virtual stage) is over the
        // counting limit by arithmetic alone.
        let mut small = input;
        small.workload.global_batch = Some(512 * 8);
        small.workload.layers = Some(4096);
        let s = overlap_core::input::validate::filled(&small);
        assert!(ops_floor(&s) > MAX_COUNTED_OPS, "{}", ops_floor(&s));
    }
    // F2's second link, in both forms: refused naming the global batch, and
    // the batch it suggests is accepted and runs within its prediction.
    let d = decode(F2B_LINK, &[]);
    assert_eq!(d.errors[0].field, "global_batch", "{:?}", d.errors);
    const F2B: &str =
        r#"{"workload":{"layers":4096,"global_batch":100000000},"overlap":{"tp_chunks":64}}"#;
    let e = finished_or_refused(json(F2B)).expect_err("over budget");
    assert_eq!(e.field, "workload.global_batch", "{e}");
    assert_eq!(e.message, d.errors[0].message);
    let batch: u32 = e.message.rsplit(' ').next().unwrap().parse().unwrap();
    finished_or_refused(json(&F2B.replace("100000000", &batch.to_string())))
        .expect("the suggested batch is accepted and runs");
}

/// Issue 45's F3: an inference step of 64 pipeline replicas whose sends all
/// cross one 64x oversubscribed core ran 86.5 s, its events within bounds:
/// every kernel's memory traffic re-rated every send on the core. The
/// bound on re-rating work (`Cost::rerate_work`, with what an HBM reaches
/// through the collectives crossing it) refuses it before it runs, naming
/// the global batch; the batch it suggests is accepted, within the limit.
#[test]
fn issue_45_f3_dense_sharing_is_refused_before_it_runs() {
    use overlap_core::input::validate::MAX_RERATE_WORK;
    use overlap_core::workload::build::run_cost::budget_within;
    const F3: &str = r#"{"hardware":{"preset":"dgx-h100","nodes":2048,"gpus_per_node":4,"nic_gbps":25,"oversubscription":64,"network_latency_us":10000,"nvlink_latency_us":10000},"workload":{"mode":"inference","layers":1024,"hidden":1024,"heads":4,"seq":8192,"micro_batch":2,"global_batch":85248,"recompute":"selective"},"parallel":{"tp":1,"pp":128,"dp":64},"overlap":{"tp":false,"bucket_mb":0.1}}"#;
    let e = json(F3).resolve().unwrap_err();
    let first = &e.errors[0];
    assert_eq!(first.field, "workload.global_batch", "{first}");
    assert!(
        first.message.contains("re-rating") && first.message.contains("largest valid global_batch"),
        "{first}"
    );
    let batch: u32 = first.message.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(batch < 85248 && batch > 0, "{batch}");
    let s = json(&F3.replace("85248", &batch.to_string()))
        .resolve()
        .expect("the suggested batch is accepted");
    let b = budget_within(&s, overlap_core::MAX_TIMELINE_OPS).unwrap();
    assert!(b.figures.rerate_work <= MAX_RERATE_WORK, "{b:?}");
}
