//! `parallel.pipeline_layout` (model.md 4, interface.md round 4): each
//! virtual stage runs the layers its entry names, the embedding and the
//! loss where the layout puts them, stages of either alone included. The
//! zero-bubble paper's ZB-V at 30 layers on 16 GPUs and DeepSeek-V3's 61
//! layers on PP 8 x VP 4, each against a hand count; refusals naming the
//! entry; links that carry the layout; and a layout of the even split that
//! changes nothing.

mod common;

use std::collections::BTreeSet;

use common::layouts::{deepseek_v3_layout, deepseek_v3_on_pp8_vp4, zbv_30_layers_on_16_gpus};
use common::{names, refused};
use overlap_core::memory::stage_memory;
use overlap_core::model::op::{OpKind, Phase};
use overlap_core::scenario::Workload;
use overlap_core::timeline::Timeline;
use overlap_core::{share_link, simulate, Scenario, ScenarioInput};

fn scenario(json: &str) -> Scenario {
    ScenarioInput::from_json(json).unwrap().resolve().unwrap()
}

/// The layers each stage's GPU runs, read from the timeline's compute ops.
fn layers_per_stage(t: &Timeline, pp: u32) -> Vec<BTreeSet<u32>> {
    let mut out = vec![BTreeSet::new(); pp as usize];
    for g in &t.gpus {
        for iv in &g.compute {
            if iv.layer != u32::MAX {
                out[g.stage as usize].insert(iv.layer);
            }
        }
    }
    out
}

/// The stages whose GPU computes the logits (forward and backward).
fn logits_stages(t: &Timeline) -> BTreeSet<u32> {
    t.gpus
        .iter()
        .filter(|g| {
            g.compute
                .iter()
                .any(|iv| matches!(iv.op, OpKind::Logits | OpKind::LogitsBackward))
        })
        .map(|g| g.stage)
        .collect()
}

/// Model FLOPs (recomputation left out) of each stage's GPU.
fn model_flops_per_stage(t: &Timeline, pp: u32) -> Vec<f64> {
    let mut out = vec![0.0; pp as usize];
    for g in t.gpus.iter().filter(|g| g.tp_rank == 0 && g.dp_rank == 0) {
        out[g.stage as usize] += g
            .compute
            .iter()
            .filter(|iv| iv.phase != Phase::Recompute)
            .map(|iv| iv.flops)
            .sum::<f64>();
    }
    out
}

/// The engine stays within the cost the validator predicted for the step
/// (`workload::build::run_cost`), which counts a layout's run at its own depth.
fn within_predicted_cost(s: &Scenario, sim: &overlap_core::Simulation) {
    let predicted = overlap_core::workload::build::run_cost::cost(s);
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
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn zbv_30_layers_on_16_gpus_runs_one_layer_per_chunk_with_embedding_and_loss_at_the_ends() {
    let (hidden, m) = (4096u32, 32u32);
    let s = scenario(&zbv_30_layers_on_16_gpus(hidden, m));
    let sim = simulate(&s);
    within_predicted_cost(&s, &sim);
    let t = &sim.timeline;
    // The V: GPU g's first chunk is virtual stage g, its second 31 - g;
    // entry i >= 1 holds layer i - 1. GPU 0 holds the embedding (entry 0)
    // and the loss (entry 31) and no layer.
    let layers = layers_per_stage(t, 16);
    assert!(layers[0].is_empty(), "GPU 0 runs layers {:?}", layers[0]);
    for g in 1..16u32 {
        let expected: BTreeSet<u32> = [g - 1, 30 - g].into();
        assert_eq!(layers[g as usize], expected, "GPU {g}");
    }
    assert_eq!(logits_stages(t), [0].into());
    // Both ends' matrices on GPU 0 (an output layer apart from the input
    // embedding: its two chunks are different virtual stages).
    let Workload::Transformer(tr) = &s.workload else {
        unreachable!()
    };
    let memory = stage_memory(&s, tr);
    let vocab_matrix = 51200.0 * f64::from(hidden);
    assert_eq!(memory[0].embedding_params, 2.0 * vocab_matrix);
    assert!(memory[1..].iter().all(|m| m.embedding_params == 0.0));
    // No layer on GPU 0, no layer activations kept there; each other GPU
    // keeps its two chunks' (one layer each) as the V's schedule holds them.
    assert_eq!(memory[0].activation_bytes, 0.0);
    assert!(memory[1..].iter().all(|m| m.activation_bytes > 0.0));
    // FLOPs by hand (model FLOPs, attention unmasked): per token a layer's
    // forward is 24h^2 + 4sh (QKV 6h^2, projection 2h^2, MLP 16h^2, scores
    // and context 4sh), the logits' 2hV; a backward twice its forward.
    let (h, seq, vocab) = (f64::from(hidden), 1024.0, 51200.0);
    let tokens = 3.0 * seq * f64::from(m);
    let layer = tokens * 3.0 * (24.0 * h * h + 4.0 * seq * h);
    let logits = tokens * 3.0 * 2.0 * h * vocab;
    let flops = model_flops_per_stage(t, 16);
    assert!(
        close(flops[0], logits, 1e-9),
        "GPU 0: {} vs {logits}",
        flops[0]
    );
    for (g, &f) in flops.iter().enumerate().skip(1) {
        assert!(
            close(f, 2.0 * layer, 1e-9),
            "GPU {g}: {f} vs {}",
            2.0 * layer
        );
    }
    println!(
        "ZB-V 30 layers on 16 GPUs, {m} micro-batches: step {:.1} ms, bubble {:.1}%",
        sim.report.step_time_ms,
        100.0 * sim.report.bubble_fraction
    );
}

#[test]
fn deepseek_v3_on_pp8_vp4_runs_megatrons_split() {
    let m = 16;
    let s = scenario(&deepseek_v3_on_pp8_vp4(128, m, true));
    let sim = simulate(&s);
    within_predicted_cost(&s, &sim);
    let t = &sim.timeline;
    // Megatron's order: entry i is virtual stage i / 8 of GPU i % 8. Entry 0
    // holds layer 0, entry k in 1..=30 layers 2k - 1 and 2k, entry 31 none.
    let layers = layers_per_stage(t, 8);
    let counts: Vec<usize> = layers.iter().map(BTreeSet::len).collect();
    assert_eq!(counts, [7, 8, 8, 8, 8, 8, 8, 6]);
    let held = |entries: [u32; 4]| -> BTreeSet<u32> {
        entries
            .into_iter()
            .flat_map(|e| match e {
                0 => vec![0],
                31 => vec![],
                k => vec![2 * k - 1, 2 * k],
            })
            .collect()
    };
    for (g, got) in layers.iter().enumerate() {
        let g = g as u32;
        assert_eq!(*got, held([g, g + 8, g + 16, g + 24]), "GPU {g}");
    }
    assert_eq!(logits_stages(t), [7].into());
    let Workload::Transformer(tr) = &s.workload else {
        unreachable!()
    };
    // Untied: the input embedding on GPU 0, the output layer on GPU 7.
    let memory = stage_memory(&s, tr);
    let vocab_matrix = 129280.0 * 7168.0 / 2.0;
    let embedding: Vec<f64> = memory.iter().map(|m| m.embedding_params).collect();
    assert_eq!(
        embedding,
        [vec![vocab_matrix], vec![0.0; 6], vec![vocab_matrix]].concat()
    );
    // FLOPs by hand, in a dense layer's (D) and a MoE layer's (M) per GPU:
    // GPU 2 runs 8 M; GPU 1 the dense layers 1 and 2 and 6 M; GPU 0 the
    // dense layer 0 and 6 M; GPU 7 6 M and the logits, 2hV per token
    // forward over TP 2, a backward twice that.
    let flops = model_flops_per_stage(t, 8);
    let moe = flops[2] / 8.0;
    let dense = (flops[1] - 6.0 * moe) / 2.0;
    assert!(dense > 0.0 && dense < moe, "dense {dense} vs MoE {moe}");
    assert!(close(flops[0], dense + 6.0 * moe, 1e-9));
    for (g, &f) in flops.iter().enumerate().take(7).skip(3) {
        assert!(close(f, 8.0 * moe, 1e-9), "GPU {g}");
    }
    let tokens = 4096.0 * f64::from(m);
    let logits = tokens * 3.0 * 2.0 * 7168.0 * 129280.0 / 2.0;
    assert!(
        close(flops[7], 6.0 * moe + logits, 1e-9),
        "GPU 7: {} vs {}",
        flops[7],
        6.0 * moe + logits
    );
    println!(
        "DeepSeek-V3 on PP 8 x VP 4 (Et|(tt|)*30L), {m} micro-batches: step {:.1} ms, bubble {:.1}%, \
         layers per GPU {counts:?}",
        sim.report.step_time_ms,
        100.0 * sim.report.bubble_fraction
    );
}

#[test]
fn a_layout_of_the_even_split_changes_nothing() {
    let base = r#"{"workload":{"layers":8},"parallel":{"pp":2,"schedule":"interleaved","virtual_stages":2}}"#;
    let with = base.replace(
        r#""virtual_stages":2"#,
        r#""virtual_stages":2,"pipeline_layout":["E t*2","tt","tt","t t L"]"#,
    );
    let (a, b) = (simulate(&scenario(base)), simulate(&scenario(&with)));
    assert_eq!(
        serde_json::to_value(&a.report).unwrap(),
        serde_json::to_value(&b.report).unwrap()
    );
}

#[test]
fn each_fault_is_refused_naming_the_field_and_the_entry() {
    let with = |layout: &str| {
        format!(r#"{{"workload":{{"layers":8}},"parallel":{{"pp":2,"pipeline_layout":{layout}}}}}"#)
    };
    let field = "parallel.pipeline_layout";
    let cases = [
        (
            r#"["E t*8 L"]"#,
            "has 1 entries for pp x virtual_stages = 2",
        ),
        (r#"["E t*4", "t*4 x L"]"#, "entry 1"),
        (r#"["E t*4", "t*3 L"]"#, "holds 7 layers"),
        (r#"["t*4", "E t*4 L"]"#, "entry 0"),
        (r#"["E t*4", "t*4"]"#, "entry 1 (\"t*4\") lacks the loss"),
        (r#"["E t*4 L", "t*4"]"#, "belongs to the last virtual stage"),
        (r#"["E t*8", ""]"#, "entry 1 (\"\") is empty"),
        (r#"["E t*4", "t*4 m L"]"#, "MTP"),
        (
            r#"["E t*4|t", "t*3 L"]"#,
            "one list entry per virtual stage",
        ),
        (r#"["E t*4", "t*99999999999 L"]"#, "repeats"),
    ];
    for (layout, hint) in cases {
        let e = refused(&with(layout));
        names(&e, field, hint);
        // Entry faults also say what a layout is.
        if hint.starts_with("entry") {
            names(&e, field, "one per virtual stage in layer order");
        }
    }
    // Not a list of strings: the parser's refusal states the valid form.
    names(
        &refused(&with("[1, 2]")),
        field,
        "one per virtual stage in layer order",
    );
    // The micro-benchmark has no layers to place.
    names(
        &refused(
            r#"{"workload":{"kind":"matmul_allreduce"},"parallel":{"pipeline_layout":["E t L"]}}"#,
        ),
        field,
        "only applies to workload.kind \"transformer\"",
    );
    // An entry past the length limit is refused, and not echoed whole.
    let long = format!(r#"["E t*4", "{} L"]"#, "t".repeat(300));
    let e = refused(&with(&long));
    names(&e, field, "bytes long");
    assert!(e.errors.iter().all(|f| f.message.len() < 1000), "{e}");
}

#[test]
fn links_carry_the_layout_joined_by_bars_and_old_links_open_unchanged() {
    let s = scenario(&deepseek_v3_on_pp8_vp4(128, 16, true));
    let input = share_link::complete_input(&s);
    let link = share_link::encode(&input, None);
    assert!(
        link.contains("pp_layout=E%20t%7Ct%20t%7C"),
        "the layout in Megatron's form: {link}"
    );
    let back = share_link::decode(&link, &[]);
    assert!(back.errors.is_empty(), "{:?}", back.errors);
    let layout = back.input.parallel.pipeline_layout.clone().unwrap();
    assert_eq!(layout.0, deepseek_v3_layout());
    assert_eq!(back.input.resolve().unwrap(), s);
    // A link written before the field: no layout, the even split.
    let old = share_link::decode("v=1&layers=12&pp=4&dp=1", &[]);
    assert!(old.errors.is_empty(), "{:?}", old.errors);
    assert_eq!(old.input.parallel.pipeline_layout, None);
    assert_eq!(old.input.resolve().unwrap().parallel.pipeline_layout, None);
}

#[test]
fn a_choice_the_layout_no_longer_fits_splits_evenly_again() {
    use overlap_core::input::{companions, fields};
    let json =
        r#"{"workload":{"layers":8},"parallel":{"pp":2,"pipeline_layout":["E t*3","t*5 L"]}}"#;
    let input = ScenarioInput::from_json(json).unwrap();
    let set = |path: &str, value: serde_json::Value| {
        let f = fields::find(path).unwrap();
        let mut i = input.clone();
        (f.set)(&mut i, Some(&value)).unwrap();
        companions::follow(f, &mut i);
        i
    };
    // Another pp, a V's two chunks per GPU, another depth: the even split.
    for (path, value) in [
        ("parallel.pp", 4.into()),
        ("parallel.schedule", "zb-v".into()),
        ("workload.layers", 12.into()),
    ] {
        assert_eq!(set(path, value).parallel.pipeline_layout, None, "{path}");
    }
    set("workload.layers", 12.into()).resolve().unwrap();
    // A choice the layout still fits keeps it: interleaved at one chunk.
    let i = set("parallel.schedule", "interleaved".into());
    assert_eq!(i.parallel.pipeline_layout, input.parallel.pipeline_layout);
}
