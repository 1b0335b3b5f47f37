//! A field the page says changes nothing in a scenario (`Field::inert`)
//! changes nothing there: the figures stay the same, bit for bit, over the
//! field's slider range, on every preset and with each overlap switched;
//! but the baseline's, to the last few bits (`same_figures`).

use overlap_core::input::fields::{field_path_in, Kind, FIELDS};
use overlap_core::presets::PRESETS;
use overlap_core::{simulate_report, ScenarioInput};
use serde_json::{json, Value};

/// Values across the field's slider (and its valid range's ends, where the
/// step stays small).
fn values(kind: &Kind, slider: (f64, f64, f64)) -> Vec<Value> {
    let (lo, hi, _) = slider;
    match kind {
        Kind::Int { min, .. } => vec![json!(*min), json!(lo.max(2.0) as u32), json!(hi as u32)],
        Kind::Real { min, .. } => vec![json!(*min), json!(lo), json!(hi)],
        Kind::Bool => vec![json!(false), json!(true)],
        Kind::Enum(choices) => choices.iter().map(|c| json!(c.name)).collect(),
        _ => Vec::new(),
    }
}

/// The presets, then each with one overlap switch flipped: every reason a
/// field gives shows up among them.
fn scenarios() -> Vec<(String, ScenarioInput)> {
    let mut out = Vec::new();
    // 1T's figures take a fifth of a second each: its fields are those of
    // the 145.6B preset, checked here. The two production MoE presets take
    // as long; moe-didactic has their fields.
    let large = ["megatron-1t", "qwen3-235b", "deepseek-v3"];
    for p in PRESETS.iter().filter(|p| !large.contains(&p.id)) {
        out.push((p.id.to_string(), p.input()));
        let resolved = p.input().resolve().expect("a preset resolves");
        for (axis, flip) in [
            (
                "tp",
                (|i: &mut ScenarioInput, v| i.overlap.tp = Some(v)) as fn(&mut ScenarioInput, bool),
            ),
            ("dp", |i, v| i.overlap.dp = Some(v)),
        ] {
            let mut i = p.input();
            let on = match axis {
                "tp" => resolved.overlap.tp,
                _ => resolved.overlap.dp,
            };
            flip(&mut i, !on);
            out.push((format!("{} with {axis} overlap {}", p.id, !on), i));
        }
    }
    out
}

/// Whether two reports are the same figures: bit for bit, but the
/// baseline's step and the speedup, within a part in 10^12. A scenario
/// whose every overlap is off is its own baseline, and reports its step
/// time as it; one with a switch that changes nothing here (CP overlap at
/// CP 1) has its baseline simulated apart, without the exposure charges
/// and from its own runs' marks, which rounds the same time differently in
/// its last bits.
fn same_figures(a: &str, b: &str) -> bool {
    let parse = |s: &str| {
        let mut v: Value = serde_json::from_str(s).unwrap();
        let o = v.as_object_mut().unwrap();
        let kept = ["baseline_ms", "speedup"].map(|k| o.remove(k).and_then(|x| x.as_f64()));
        (v, kept)
    };
    let ((a, ka), (b, kb)) = (parse(a), parse(b));
    let close = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
        (x, y) => x == y,
    };
    a == b && ka.iter().zip(&kb).all(|(&x, &y)| close(x, y))
}

#[test]
fn a_field_said_to_change_nothing_changes_nothing() {
    let mut checked = Vec::new();
    for (name, input) in scenarios() {
        let Ok(s) = input.resolve() else { continue };
        let Ok(figures) = simulate_report(&s) else {
            continue;
        };
        let want = serde_json::to_string(&figures.report).unwrap();
        for f in FIELDS {
            let Some(why) = (f.inert)(&s) else { continue };
            for v in values(&f.kind, f.slider) {
                let mut changed = input.clone();
                (f.set)(&mut changed, Some(&v)).unwrap();
                let Ok(other) = changed.resolve() else {
                    continue;
                };
                assert_eq!(
                    (f.inert)(&other).as_deref(),
                    Some(why.as_str()),
                    "{name}: {} {v}",
                    f.path
                );
                let got =
                    simulate_report(&other).map(|r| serde_json::to_string(&r.report).unwrap());
                assert!(
                    got.as_deref().is_ok_and(|got| same_figures(got, &want)),
                    "{name}: {} = {v} changed the figures, though the page says \"{why}\":\n{got:?}\n{want}",
                    f.path
                );
            }
            checked.push(format!("{name}: {}", f.path));
        }
    }
    // Each reason is met: TP 1, TP overlap off, sequence parallelism, DP 1;
    // an axis of one GPU; scatter/gather with no pipeline or no TP group;
    // recomputation in inference; sequence parallelism with TP 1.
    for (field, case) in [
        ("overlap.tp_chunks", "megatron-1.7b"),
        ("overlap.tp_chunks", "didactic with tp overlap false"),
        ("overlap.tp_chunks", "llama3-8b-fsdp"),
        ("overlap.bucket_mb", "zb-1.5b-24"),
        ("overlap.tp", "megatron-1.7b"),
        ("overlap.pp", "one-queue"),
        ("overlap.dp", "zb-1.5b-24"),
        ("parallel.scatter_gather", "megatron-1.7b"),
        ("parallel.scatter_gather", "zb-1.5b-24"),
        ("workload.recompute", "coconet-inference"),
        ("workload.sequence_parallel", "megatron-1.7b"),
    ] {
        let want = format!("{case}: {field}");
        assert!(checked.contains(&want), "not checked: {want}");
    }
}

/// The other side: where the page says nothing, the field does change the
/// figures (here, of the scenarios the reasons above come from).
#[test]
fn where_the_page_says_nothing_the_field_matters() {
    for (id, path, a, b) in [
        ("didactic", "overlap.tp_chunks", json!(1), json!(8)),
        ("contention", "overlap.bucket_mb", json!(5.0), json!(400.0)),
    ] {
        let f = FIELDS.iter().find(|f| f.path == path).unwrap();
        let p = PRESETS.iter().find(|p| p.id == id).unwrap();
        let run = |v: &Value| {
            let mut i = p.input();
            (f.set)(&mut i, Some(v)).unwrap();
            let s = i.resolve().unwrap();
            assert_eq!((f.inert)(&s), None, "{id}: {path}");
            simulate_report(&s).unwrap().report.step_time_ms
        };
        assert_ne!(run(&a), run(&b), "{id}: {path}");
    }
}

#[test]
fn a_note_beside_a_control_names_no_field_path() {
    for (name, input) in scenarios() {
        let Ok(s) = input.resolve() else { continue };
        for f in FIELDS {
            if let Some(why) = (f.inert)(&s) {
                assert_eq!(field_path_in(&why), None, "{name}: {}: {why}", f.path);
            }
        }
    }
}
