//! `overlap-lab search`: its help, its JSON's shape, a small search as a
//! table and as CSV, and bad input refused with one line.

mod common;

use common::run_cli;
use serde_json::Value;

/// A small GPT on one DGX A100, most fields fixed so that the search is
/// quick: the layout (tp, pp, schedule, micro-batch) and sharding vary.
const SMALL: &str = r#"{"hardware":{"preset":"dgx-a100","nodes":1},
  "workload":{"layers":4,"hidden":1024,"heads":16,"seq":1024,"vocab":8192,
              "micro_batch":1,"global_batch":16,"attention":"flash"}}"#;

const FIX: &str = "workload.recompute,workload.sequence_parallel,overlap.tp,overlap.pp,overlap.dp,overlap.param_gather";

fn search(extra: &[&str]) -> (String, String, Option<i32>) {
    let mut args = vec!["search", "-", "--fix", FIX];
    args.extend_from_slice(extra);
    let out = run_cli(&args, Some(SMALL.as_bytes().to_vec()));
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code(),
    )
}

#[test]
fn help_names_every_option_and_objective() {
    let out = run_cli(&["search", "--help"], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    for needle in [
        "Usage: overlap-lab search",
        "--gpus <N>",
        "--objective <O>",
        "step",
        "memory",
        "both",
        "--top <K>",
        "[default: 10]",
        "--max-batch <B>",
        "--fix <PATH,...>",
        "--json",
        "--csv",
        "Pareto front",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}

#[test]
fn json_has_the_lists_counts_and_winner() {
    let (out, err, code) = search(&["--json", "--top", "3"]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["gpus"], 8);
    assert_eq!(v["objective"], "step");
    assert_eq!(v["global_batch"], 16);
    let counts: Vec<u64> = ["space", "refused", "pruned", "simulated"]
        .iter()
        .map(|k| v[*k].as_u64().unwrap_or_else(|| panic!("{k}: {v}")))
        .collect();
    assert_eq!(counts[1] + counts[2] + counts[3], counts[0]);
    let r = &v["refusals"];
    for k in ["memory", "divide", "limit"] {
        assert!(r[k].is_u64(), "{k}: {r}");
    }
    assert_eq!(
        r["memory"].as_u64().unwrap()
            + r["divide"].as_u64().unwrap()
            + r["limit"].as_u64().unwrap(),
        counts[1]
    );
    let best = v["best"].as_array().unwrap();
    assert_eq!(best.len(), 3);
    for (i, b) in best.iter().enumerate() {
        assert_eq!(b["rank"], i + 1);
        for k in [
            "step_time_ms",
            "time_per_sample_ms",
            "memory_gb",
            "compute_ms",
            "bubble_ms",
            "lower_bound_ms",
            "mfu",
        ] {
            assert!(b[k].is_f64(), "{k}: {b}");
        }
        assert!(b["lower_bound_ms"].as_f64() <= b["step_time_ms"].as_f64());
        assert!(b["exposed_ms"]["tp"].is_f64(), "{b}");
        assert!(b["on_front"].is_boolean());
        let l = &b["layout"];
        let gpus = ["tp", "cp", "pp", "dp"]
            .iter()
            .map(|k| l[*k].as_u64().unwrap())
            .product::<u64>();
        assert_eq!(gpus, 8, "{l}");
        assert!(
            l["schedule"].is_string() && l["overlap"]["tp"].is_boolean(),
            "{l}"
        );
    }
    let front = v["front"].as_array().unwrap();
    assert!(!front.is_empty() && front.iter().all(|f| f["on_front"] == true));
    assert!(v["winner"].as_str().unwrap().contains("ranks first"), "{v}");
    // The winner as scenario input, which `simulate` runs.
    let scenario = serde_json::to_string(&v["scenario"]).unwrap();
    let sim = run_cli(&["simulate", "--json", "-"], Some(scenario.into_bytes()));
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    let report: Value = serde_json::from_slice(&sim.stdout).unwrap();
    assert_eq!(report["step_time_ms"], best[0]["step_time_ms"]);
}

#[test]
fn a_small_search_prints_a_table_and_csv() {
    let (out, err, code) = search(&[]);
    assert_eq!(code, Some(0), "{err}");
    for needle in [
        "# search: 8 GPUs, global batch 16",
        "do not fit in memory",
        "# best 10 by step time",
        "# step-time/memory Pareto front",
        "ranks first",
        "fixed to the scenario's values: overlap.dp",
    ] {
        assert!(out.contains(needle), "{needle}: {out}");
    }
    let (csv, err, code) = search(&["--csv", "--objective", "memory"]);
    assert_eq!(code, Some(0), "{err}");
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("rank,on_front,tp,cp,pp,dp"), "{header}");
    let columns = header.split(',').count();
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| r.split(',').count() == columns),
        "{csv}"
    );
    assert!(rows[0].starts_with("1,"), "{csv}");
}

#[test]
fn bad_input_is_one_line_with_exit_status_2() {
    for (args, needle) in [
        (&["--gpus", "12"][..], "--gpus 12"),
        (&["--gpus", "0"][..], "--gpus"),
        (
            &["--fix", "parallel.dp"][..],
            "not a field the search varies",
        ),
        (&["--objective", "fast"][..], "valid are step, memory, both"),
        (&["--top", "0"][..], "--top"),
        (&["--json", "--csv"][..], "not both"),
    ] {
        let mut list = vec!["search", "-"];
        list.extend_from_slice(args);
        let out = run_cli(&list, Some(SMALL.as_bytes().to_vec()));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // Not a transformer.
    let out = run_cli(
        &["search", "-"],
        Some(br#"{"workload":{"kind":"collective"}}"#.to_vec()),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("transformer"));
}
