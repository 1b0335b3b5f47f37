//! `overlap-lab import [--json] [--scenario FILE] PATH...` (interface.md):
//! the measured figures of profiler traces, the simulated beside them, and
//! exit status 2 with one line for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_overlap-lab"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "overlap-lab-cli-import-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ok_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn json_lists_each_gpus_figures() {
    let v = ok_json(&cli(&["import", "--json", &data("hta/all_to_all")]));
    let gpus = v["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 2);
    for g in gpus {
        for key in [
            "step_ms",
            "compute_ms",
            "comm_ms",
            "exposed_ms",
            "hidden",
            "overlap",
        ] {
            assert!(g[key].is_number(), "{key} in {g}");
        }
        assert!(g["comm_by_kind_ms"]["NCCL AllToAll"].is_number());
        assert!(g["axes"]["unknown"]["exposed_ms"].is_number());
    }
    assert_eq!(v["world_size"], 128);
    assert_eq!(v["over_ranks"]["gpus"], 2);
    assert!(v.get("simulated").is_none());
}

#[test]
fn several_paths_and_a_scenario_beside() {
    let out = cli(&[
        "import",
        "--json",
        "--scenario",
        "preset:didactic",
        &data("hta/process_group/nccl_data.json.gz"),
        &data("hta/all_to_all/sampled_rank-1.json.gz"),
    ]);
    let v = ok_json(&out);
    let ranks: Vec<_> = v["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["rank"].as_u64())
        .collect();
    assert_eq!(ranks, vec![Some(0), Some(1)]);
    assert!(v["simulated"]["step_time_ms"].as_f64().unwrap() > 0.0);
    assert!(v["simulated"]["hta_overlap"].is_number());
    let text = cli(&[
        "import",
        "--scenario",
        "preset:didactic",
        &data("hta/all_to_all"),
    ]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("measured   simulated") && text.contains("HTA overlap"),
        "{text}"
    );
    assert!(text.contains("NCCL AllToAll"), "{text}");
}

#[test]
fn a_round_trip_through_the_kineto_export_reads() {
    let dir = fresh_dir("round-trip");
    let d = dir.to_str().unwrap();
    assert!(cli(&["trace", "--kineto", d, "preset:didactic"])
        .status
        .success());
    let imported = ok_json(&cli(&["import", "--json", d]));
    let report = ok_json(&cli(&["simulate", "--json", "preset:didactic"]));
    let got: Vec<f64> = imported["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["overlap"].as_f64().unwrap())
        .collect();
    let want: Vec<f64> = report["hta_overlap_per_gpu"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        // Whole microseconds in the file: HTA's own tolerance (tests/hta).
        assert!((g - w).abs() < 5e-3, "{g} vs {w}");
    }
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = fresh_dir("bad");
    let write = |name: &str, bytes: &[u8]| {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p.to_string_lossy().into_owned()
    };
    let cut = write(
        "cut.json",
        br#"{"traceEvents": [{"ph": "X", "cat": "kernel""#,
    );
    let shape = write("shape.json", br#"{"traceEvents": 3}"#);
    let cpu = write("cpu.json", br#"{"traceEvents": []}"#);
    let binary = write("binary.json.gz", b"\x1f\x8b\x08\0garbage garbage");
    let huge = dir.join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let huge = huge.to_string_lossy().into_owned();
    let scenario = write("scenario.json", br#"{"parallel": {"tp": 3}}"#);
    for (args, needle) in [
        (vec!["import", cut.as_str()], "ends early"),
        (vec!["import", shape.as_str()], "not a trace"),
        (vec!["import", cpu.as_str()], "no GPU kernels"),
        (vec!["import", binary.as_str()], "gzip"),
        (vec!["import", huge.as_str()], "over the 1 GiB"),
        (vec!["import", "/nonexistent/trace.json"], "cannot read"),
        (vec!["import"], "needs a PATH"),
        (
            vec!["import", "--scenario", scenario.as_str(), cpu.as_str()],
            "tp",
        ),
    ] {
        let out = cli(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}
